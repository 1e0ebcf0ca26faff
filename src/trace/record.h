// The trace format: the only definition, included by the writer (libgpuoffload.so) and every reader
// (gpu-offload report / dump / estimate). A file is one gofl_file_header followed by fixed-size records.
#pragma once

#include <stdint.h>

#include "common/operands.h"

#include "trace/codes.h"  // gofl_device, gofl_reason, gofl_gpu_status, gofl_device_mode

#ifdef __cplusplus
extern "C" {
#endif

#define GOFL_TRACE_MAGIC "GOFLTRC1"         // 8 bytes, file start
#define GOFL_TRACE_BYTE_ORDER 0x01020304u    // written natively: a reader on another byte order sees 0x04030201
#define GOFL_TRACE_VERSION 3                 // 3: counted calls (GOFL_REC_COUNTED); 2: setup records (GOFL_REC_SETUP)
#define GOFL_TRACE_OLDEST_VERSION 1          // the oldest version readers accept
#define GOFL_TRACE_SUFFIX ".gofltrace"
#define GOFL_SYM_FFTW 0xFFFFu                // gofl_call_record.sym of FFTW executes (not a BLAS symbol)

enum gofl_record_kind {
  GOFL_REC_CALL = 1,  // one intercepted call
  GOFL_REC_SITE = 2,  // names a call-site address the first time it appears: module + offset
  GOFL_REC_GPU_START = 3,  // the process started the GPU backend (or tried to): when, how long, outcome
  GOFL_REC_GPU_ABSENT = 4, // at exit, no start was tried and none could have succeeded: why (u.start.message)
  GOFL_REC_SETUP = 5,      // one-time costs: the GPU start's phases, or a routine's first GPU call (version 2)
  GOFL_REC_COUNTED = 6,    // calls below the threshold counted, not recorded one by one (version 3)
};

enum gofl_flag {
  GOFL_F_NESTED = 1u << 0,
  GOFL_F_QUERY = 1u << 1,
  GOFL_F_ROW_MAJOR = 1u << 2,
  GOFL_F_INFO_NONZERO = 1u << 3,   // LAPACK info != 0 after the call
  GOFL_F_VERIFY_MISMATCH = 1u << 4,
  GOFL_F_ILP64 = 1u << 5,
  GOFL_F_SPLIT = 1u << 6,          // ran over several GPUs in one call (cuBLASXt / cusolverMg)
  GOFL_F_COPY_SPLIT = 1u << 7,     // a ?copy run in pieces on the library's threads (preload/copy_split.h)
  GOFL_F_CORE_SPARED = 1u << 8,    // ran on the CPU with one library thread fewer, beside the GPU's one-time work (preload/spare_core.h)
  GOFL_F_AFTER_COUNTED = 1u << 9,  // counted calls (GOFL_REC_COUNTED) came on this thread since its previous record:
                                   // the time since that record's end is not the time outside any call
  GOFL_F_CORES_HELD = 1u << 10,    // a GPU call made while other threads' CPU calls held the cores: its host copies
                                   // ran on the calling thread alone while they did (gofl_call.cpu_calls_now)
  GOFL_F_STAGED = 1u << 11,        // a GPU call whose operands its own thread copied into pinned memory before it took the
                                   // GPU, and whose outputs it wrote after (cuda/thread_stage.h); its copy times include that
};

enum gofl_role { GOFL_IN = 1, GOFL_INOUT = 2, GOFL_OUT = 3 };

// How a GPU call's operand reached the device (gofl_record.resident: 2 bits per operand, operand i
// at bits 2i..2i+1). Traces written before residency hold 0 there: every operand copied.
enum gofl_residency {
  GOFL_RES_COPIED = 0,  // copied from host memory by this call (or not an input)
  GOFL_RES_KEPT = 1,    // a device copy an earlier call uploaded; the host bytes were unchanged since
  GOFL_RES_OUTPUT = 2,  // an earlier GPU call's result, still on the device; unchanged on the host since
};
#define GOFL_RESIDENCY_OF(bits, i) (((bits) >> (2 * (i))) & 3u)

typedef struct gofl_operand {
  uint64_t addr;
  uint64_t bytes;      // extent the routine may touch (ld * (cols - 1) + rows elements)
  uint32_t fp_in;      // fingerprint before the call (inputs), 0 if not read
  uint32_t fp_out;     // fingerprint after the call (outputs), 0 if not written
} gofl_operand;

typedef struct gofl_call_record {
  uint16_t op;          // index into the generated op table (ops.inc)
  uint16_t sym;         // which exported symbol was called (symbols.inc)
  uint32_t flags;       // gofl_flag bits
  uint32_t tid;
  uint8_t device;       // gofl_device
  uint8_t reason;       // gofl_reason
  uint8_t depth;        // nesting depth (0 = the application's own call)
  uint8_t n_operands;
  uint64_t t_start_ns;  // CLOCK_MONOTONIC
  uint64_t duration_ns;
  int64_t dims[3];      // m, n, k as the routine names them (see ops/operations.py)
  double flops;         // estimated work
  uint64_t site;        // return address in the caller
  int32_t info;         // LAPACK info (0 for BLAS)
  float verify_error;   // verify mode: largest difference relative to the largest value
  float pred_cpu_s;     // the model's predictions (0 when no prediction was made)
  float pred_gpu_s;
  float copy_in_s;      // GPU side, when it ran there
  float compute_s;
  float copy_out_s;
  uint16_t gpu_status;  // why a GPU attempt failed (gofl_gpu_status), 0 if none
  uint16_t gpu_detail;  // the CUDA / cuBLAS / cuSOLVER error number
  gofl_operand operands[GOFL_MAX_OPERANDS];
} gofl_call_record;

typedef struct gofl_site_record {
  uint64_t addr;        // the call-site address as it appears in call records
  uint64_t offset;      // its offset inside the module
  char module[176];     // the module's path (truncated, NUL-terminated)
} gofl_site_record;

// The GPU a started process runs on, in a start record with ok == 1. Traces written before the GPU
// was recorded hold zeros there (an empty message): `recorded` is 0. Readers that print an ok
// record's message as text still print nothing: its first byte stays NUL.
// `recorded` 2 adds waited_ns (a start that ran beside the program's calls); in a record of 1 the
// program waited for the whole start (duration_ns).
typedef struct gofl_start_gpu {
  char no_message;      // always '\0'
  uint8_t recorded;     // 1: the fields below name the GPU; 2: and waited_ns is set
  uint16_t count;       // GPUs CUDA showed the process
  int32_t index;        // the CUDA device number it ran on
  char bus_id[24];      // its PCI bus id ("00000000:18:00.0")
  char name[64];        // "NVIDIA H200"
  char chosen_by[96];   // why that one: "local rank 1 (OMPI_COMM_WORLD_LOCAL_RANK) of 2 usable GPUs", ...
  uint64_t waited_ns;   // recorded 2: how long the program's threads waited for the start
} gofl_start_gpu;

typedef struct gofl_start_record {
  uint64_t t_start_ns;  // CLOCK_MONOTONIC, like the calls' t_start_ns
  uint64_t duration_ns; // loading the backend, the driver's start, the context: not in any call's time
  uint32_t tid;         // the thread whose call started it
  int32_t ok;           // 1: the GPU runs (gpu says which); 0: it cannot be used (message says why)
  union {
    char message[200];  // ok == 0: why it cannot be used (NUL-terminated)
    gofl_start_gpu gpu; // ok == 1
  };
} gofl_start_record;

// How long the program waited for a start: all of it, unless the record says otherwise.
static inline uint64_t gofl_start_waited_ns(const gofl_start_record* s) {
  return s->ok == 1 && s->gpu.recorded == 2 ? s->gpu.waited_ns : s->duration_ns;
}

// One-time costs, split (trace/codes.h, GOFL_SETUP_PHASES). Written after the start record for the
// start (op == GOFL_SETUP_AT_START), and after a GPU call that set something up: the first GPU call
// of each operation (with its whole backend time as GOFL_SP_FIRST_CALL), or a later one that
// created a library handle or grew the staging buffers.
#define GOFL_SETUP_AT_START 0xFFFFu
#define GOFL_SETUP_MAX_PHASES 12
typedef struct gofl_setup_phase {
  uint32_t phase;       // gofl_setup_phase_id
  uint32_t reserved;
  uint64_t duration_ns;
} gofl_setup_phase;

typedef struct gofl_setup_record {
  uint64_t t_ns;        // CLOCK_MONOTONIC when the start or the call ended
  uint32_t tid;
  uint16_t op;          // the call's operation, or GOFL_SETUP_AT_START
  uint16_t n_phases;    // entries used in phases
  gofl_setup_phase phases[GOFL_SETUP_MAX_PHASES];
} gofl_setup_record;

// Calls below the work threshold that were counted instead of recorded one by one (preload/counted.h),
// written at exit: one record per operation, exported symbol, call site, size class and nesting,
// summed over the process's threads. Only a sample of the calls is timed (the first, then one in 16,
// later one in 256): the time is estimated. A record of nested calls (GOFL_F_NESTED) or of workspace
// queries (GOFL_F_QUERY) stands for calls of that kind only.
typedef struct gofl_counted_record {
  uint16_t op;          // as in gofl_call_record
  uint16_t sym;         // ... (GOFL_SYM_FFTW for FFTW executes)
  uint32_t flags;       // GOFL_F_NESTED, GOFL_F_QUERY, GOFL_F_ILP64, GOFL_F_ROW_MAJOR of the first call counted
  uint8_t device;       // always GOFL_DEV_CPU
  uint8_t reason;       // why the calls ran there, as their own records would say (below threshold, nested, ...)
  uint8_t size_class;   // gofl_size_class(flops, dims[0]) of every call counted here
  uint8_t reserved0;
  uint32_t reserved1;
  uint64_t site;        // return address in the caller (named by a SITE record like a call's)
  uint64_t calls;       // calls this record stands for (at least 1)
  uint64_t timed_calls; // of which timed (1 .. calls)
  uint64_t timed_ns;    // their summed duration
  uint64_t estimated_ns;// the calls' estimated time: timed_ns * calls / timed_calls
  double flops;         // the calls' summed estimated work
  int64_t dims[3];      // m, n, k of the first call counted (the others are of the same size class)
  uint64_t first_start_ns;  // CLOCK_MONOTONIC start of the first call counted (it is always timed)
  uint64_t last_start_ns;   // ... of the last timed one
} gofl_counted_record;

// The size class counted calls are grouped by: 1 + floor(log2(flops)) (at most 127) for a call with work of
// at least 1 flop, else 128 + the bit length of its first dimension (a ?copy's element count); 128 for none.
static inline uint8_t gofl_size_class(double flops, int64_t first_dim) {
  if (flops >= 1.0) {
    union { double d; uint64_t u; } bits;
    bits.d = flops;
    const int e = (int)((bits.u >> 52) & 0x7ff) - 1022;  // 1 for [1, 2), 2 for [2, 4), ...
    return (uint8_t)(e > 127 ? 127 : e);
  }
  const uint64_t n = first_dim > 0 ? (uint64_t)first_dim : 0;
  return (uint8_t)(128 + (n ? 64 - __builtin_clzll(n) : 0));
}

typedef struct gofl_record {
  uint32_t kind;        // gofl_record_kind
  uint32_t resident;    // GOFL_REC_CALL: gofl_residency of each operand (GOFL_RESIDENCY_OF); else 0
  union {
    gofl_call_record call;
    gofl_site_record site;
    gofl_start_record start;
    gofl_setup_record setup;
    gofl_counted_record counted;
  } u;
} gofl_record;

typedef struct gofl_file_header {
  char magic[8];         // GOFL_TRACE_MAGIC
  uint32_t byte_order;   // GOFL_TRACE_BYTE_ORDER
  uint16_t version;      // GOFL_TRACE_VERSION
  uint16_t record_size;  // sizeof(gofl_record)
  uint32_t ops_hash;     // GOFL_OPS_HASH of the writer's op table
  uint32_t n_ops;
  int32_t pid;
  int32_t ppid;
  uint64_t start_realtime_ns;
  uint64_t start_monotonic_ns;
  int32_t level;          // decision level in force (1-10)
  int32_t device_mode;    // gofl_device_mode
  char host[64];
  char program[256];      // the command line, truncated
  char profile[128];      // which profile was in use
  char reserved[8];
} gofl_file_header;

#ifdef __cplusplus
}
static_assert(sizeof(gofl_start_gpu) == 200, "the GPU of a start record fills the message it replaces");
static_assert(sizeof(gofl_setup_record) <= sizeof(gofl_call_record), "a setup record fits the record's union");
static_assert(sizeof(gofl_counted_record) <= sizeof(gofl_call_record), "a counted record fits the record's union");
static_assert(sizeof(gofl_record) == 232, "trace record size is part of the format");
static_assert(sizeof(gofl_file_header) == 512, "trace header size is part of the format");
#endif
