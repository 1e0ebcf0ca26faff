// Inside libgpuoffload-cuda.so: what every GPU routine uses. The engine owns the context, the
// handles, one stream, the device memory pool and the pinned staging buffers; routines describe
// their copies and calls, and throw gofl::cuda::Failure on any error (caught in backend.cpp, which
// turns it into a gofl_gpu_status). One call runs at a time (the preload library serialises).
#pragma once

#include "cuda/cuda_libraries.h"  // cuBLAS, cuSOLVER, cuFFT, the CUDA runtime

#include <complex>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/call.h"
#include "cuda/backend_abi.h"
#include "generated/descs.h"
#include "policy/registry.h"

namespace gofl {
namespace cuda {

// ---- errors ---------------------------------------------------------------------------------------
struct Failure {
  int status;         // gofl_gpu_status
  int detail;         // library error number
  const char* where;  // step name (a string literal)
};
[[noreturn]] void fail(int status, const char* where, int detail = 0);
void check(cudaError_t e, const char* where);
void check(cublasStatus_t e, const char* where);
void check(cusolverStatus_t e, const char* where);

// ---- device memory ----------------------------------------------------------------------------------
// A device buffer from the engine's pool; returned to the pool when destroyed.
class DevMem {
 public:
  DevMem() = default;
  DevMem(void* p, size_t bytes) : p_(p), bytes_(bytes) {}
  DevMem(DevMem&& o) noexcept : p_(o.p_), bytes_(o.bytes_) { o.p_ = nullptr; o.bytes_ = 0; }
  DevMem& operator=(DevMem&& o) noexcept;
  DevMem(const DevMem&) = delete;
  DevMem& operator=(const DevMem&) = delete;
  ~DevMem();
  template <class T = void> T* get() const { return static_cast<T*>(p_); }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

class ResidentCache;

// A CUDA event owned by a routine (timing: usable with cudaEventElapsedTime). Events are reused
// across calls (the engine keeps the spare ones): making one is a driver call of several
// microseconds, and a product in column panels takes three per panel.
class Event {
 public:
  explicit Event(bool timing = false);
  ~Event();
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  Event(Event&& o) noexcept : e_(o.e_), timing_(o.timing_) { o.e_ = nullptr; }
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
  bool timing_ = false;
};

// One step of a pipeline (engine_phases.cpp): kernels queued on the compute stream once the step's
// uploads on a copy stream have arrived, and timed with events. begin() after the uploads are queued
// (copy: their stream; nullptr when the step uploads nothing), then the kernels, then end().
class PipelineStep {
 public:
  PipelineStep() : in_(false), start_(true), end_(true) {}
  void begin(cudaStream_t copy, cudaStream_t compute);
  void end(cudaStream_t compute);
  cudaEvent_t done() const { return end_.get(); }  // recorded after the step's kernels
  void wait() const;                               // until they are done (throws on a failure)
  double seconds() const;                          // their time, after wait()ing for them

 private:
  Event in_, start_, end_;
};

// GPU_OFFLOAD_* settings are read through the registry (policy/registry.h: setting_long, ...).

struct HostView;  // the host side of a transfer (engine_state.h)

// ---- the engine ----------------------------------------------------------------------------------
class Engine {
 public:
  static Engine& get();

  // Created by start(); valid while the backend runs.
  cudaStream_t stream() const { return stream_; }
  // The library handles, made when the first routine that uses the library runs (engine_setup.cpp):
  // a program that never offloads a LAPACK routine never creates a cuSOLVER handle. The first use
  // waits for the handle prepare() began making, or makes it; throws on failure.
  cublasHandle_t blas();
  cusolverDnHandle_t solver();
  cusolverDnParams_t params();
  enum Library : unsigned { kCublas = 1, kCusolver = 2, kCufft = 4 };
  static CudaLibrary library_of(unsigned bit) {  // one Library bit's library
    return bit == kCublas ? CudaLibrary::Cublas : bit == kCusolver ? CudaLibrary::Cusolver : CudaLibrary::Cufft;
  }
  // Loads `lib` if it is not loaded yet and notes the time its loading took, if no one noted it yet,
  // as this call's one-time cost (throws Failure when it cannot be loaded). On the call's thread.
  void load_library(CudaLibrary lib);

  // Before a call runs (engine_setup.cpp): the handles of the libraries it uses (`libraries`:
  // Library bits) that do not exist yet start being made on a helper thread, overlapping the
  // call's copy-in, and the pinned staging buffers grow to the call's largest operand.
  void prepare(const gofl_call& c, unsigned libraries);
  // After the call: helper threads are joined (none outlives a call).
  void settle();
  // One-time costs (trace/record.h, gofl_setup_record): noted as they happen, taken by the library
  // after the start and after each call. A call's setup is noted only when it set something up.
  void note_setup(int phase, double seconds);
  int take_setup(gofl_setup_phase* out, int max);
  // The first GPU call of each operation: its whole time is noted as GOFL_SP_FIRST_CALL, with the
  // device memory its allocations took.
  void note_call_done(const gofl_call& c, double seconds);

  // Device memory from the pool (throws GOFL_GPU_NO_MEMORY). Contents are undefined.
  DevMem alloc(size_t bytes);

  // Copy-in: a rows x cols column-major host matrix with leading dimension ld into packed device
  // memory (device leading dimension = max(rows, 1)), staged through pinned buffers. Contiguous
  // host data (ld == rows) is one range. Asynchronous on stream(); host memory is only read.
  // `on`: the stream that carries the DMAs (default stream()); pipelined routines upload on
  // copy_stream() and make stream() wait for an event recorded after the upload.
  void upload(void* dev, const void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem,
              cudaStream_t on = nullptr);
  void upload_vec(void* dev, const void* host, size_t bytes) { upload(dev, host, int64_t(bytes), 1, int64_t(bytes), 1); }
  // upload() of an n x n matrix the routine reads one triangle of ('U': rows [0, j] of column j,
  // 'L': rows [j, n)): the host copies only the triangle into the pinned buffers, half of a large
  // matrix's bytes, and the DMA moves whole columns. The device copy's other triangle holds whatever
  // the pinned buffer held: only a routine that never reads it may use it (symm, trsm, symv, potrf,
  // the symmetric eigensolvers, ...: the table's one_triangle lists those written back one triangle).
  void upload_triangle(void* dev, const void* host, int64_t n, int64_t ld, size_t elem, char uplo,
                       cudaStream_t on = nullptr);
  // upload() of the rows permuted on the way (on stream()): row i of the device matrix is row
  // rows_from[i] (0-based, each in [0, rows)) of the host one. LU solves apply LAPACK's row
  // interchanges here, while the host copies B anyway, instead of on the GPU, where 8192 swaps done
  // one after another took half of cuSOLVER's getrs (bench/results/h200-solve-probe-2026-12-01.log).
  void upload_rows(void* dev, const void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem,
                   const int64_t* rows_from);

  // A host matrix the routine only reads, on the device (residency, cuda/resident.h): a kept copy
  // whose host bytes are unchanged serves without a copy, a sub-matrix of one too; otherwise it is
  // uploaded (on `on`, as upload() does) and kept for later calls when worthwhile. Valid until the
  // call ends. Its device leading dimension is `ld` (rows, unless it is part of a larger copy).
  struct Input {
    const void* dev = nullptr;
    int64_t ld = 1;
    DevMem owned;  // the upload, when it is not kept
    template <class T> const T* get() const { return static_cast<const T*>(dev); }
  };
  Input input(const void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem, cudaStream_t on = nullptr);
  // input() of an n x n matrix the routine reads one triangle of: a kept copy serves, or residency
  // keeps a whole upload, as in input(); otherwise upload_triangle(), and the copy serves this call
  // only (its other triangle is not the program's).
  Input input_triangle(const void* host, int64_t n, int64_t ld, size_t elem, char uplo, cudaStream_t on = nullptr);
  // input() when a kept copy serves or residency keeps this upload (done on `on`); otherwise false,
  // nothing uploaded, and *spare is a device buffer of the packed size for the routine to fill as it
  // likes (a pipelined routine uploads it piece by piece).
  bool input_if_resident(const void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem, cudaStream_t on,
                         Input* in, DevMem* spare);
  // Only a kept copy, never an upload: false when there is none (the routine uploads as it likes).
  bool kept(const void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem, Input* in);
  // After a download() that wrote every element of the host matrix from packed `dev`: the host now
  // holds exactly dev, so dev may serve later calls as that matrix's copy.
  void keep_output(DevMem&& dev, void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem);
  // Residency settings (from the preload library), and the cache itself (backend.cpp).
  void set_residency(bool on, int64_t reserve_bytes, double reserve_fraction);
  ResidentCache* resident() const;
  // Frees kept copies until the free device memory, less `need`, is above the reserve.
  void make_room(uint64_t need);
  // The call ended (ok: it succeeded): its new kept copies become valid or are dropped.
  void end_call(bool ok);

  // Marks the end of the copy-in phase and the start of the computation (for the phase times).
  void begin_compute();
  // Waits for everything queued so far and checks for errors. Call it before the copy-out: after
  // it returns, the computation has succeeded (device info values can then be read).
  void finish_compute();

  // Copy-out: packed device matrix to the host matrix (only rows x cols is written; the gaps a
  // larger ld leaves between columns are never touched). Only after finish_compute(). Synchronous:
  // when it returns the host memory holds the data.
  void download(void* host, const void* dev, int64_t rows, int64_t cols, int64_t ld, size_t elem,
                cudaStream_t on = nullptr);
  void download_vec(void* host, const void* dev, size_t bytes) { download(host, dev, int64_t(bytes), 1, int64_t(bytes), 1); }
  // Copy-out of one triangle ('U' or 'L', diagonal included) of a packed n x n device matrix: the
  // other triangle and the ld gaps of the host matrix are never touched (syrk/herk, potrf, ...).
  void download_triangle(void* host, const void* dev, int64_t n, int64_t ld, size_t elem, char uplo);
  // Copy-out of several packed device matrices, each after its event (a column panel of C after the
  // kernel that wrote it; null: no wait): one pipeline of chunks runs across all of them, so the
  // DMAs of the next part proceed while the host copies out the previous one. done(i) runs when
  // parts[i] is in host memory (empty parts are skipped); it may throw to stop, and must not copy
  // (later parts' DMAs into the staging buffers may be in flight; after a throw they stay queued
  // until recover()). Synchronous like download(); the time spent waiting for the events is not
  // counted as copy-out.
  struct OutPart {
    void* host;
    const void* dev;
    int64_t rows, cols, ld;
    size_t elem;
    cudaEvent_t ready;
    char uplo = 0;  // 'U' or 'L': only that triangle (diagonal included) of a square part is written
  };
  void download_parts(const std::vector<OutPart>& parts, cudaStream_t on, const std::function<void(size_t)>& done);
  // Pipelines (copies overlapped with the computation): the side streams for uploads (0) and
  // downloads (1), and the phase accounting such a routine does itself: copy_in/copy_out still
  // accumulate the time spent in upload()/download(); add_compute() adds the computation's own
  // time (measured with events), and end_pipeline() waits for every stream and checks errors.
  cudaStream_t copy_stream(int i) const;
  void add_compute(double seconds);
  void end_pipeline();
  // The routine's downloads write outputs that the CPU library overwrites completely without
  // reading them (gemm with beta = 0): a failure after part of them was written still lets the CPU
  // run the call again, so it is not reported as COPY_OUT_FAILED. Reset by begin_call().
  void set_rerunnable();
  bool rerunnable() const;

  // Small device-to-host read during the computation (e.g. an info value), synchronous.
  void read_small(void* host, const void* dev, size_t bytes);

  // A device int for cuSOLVER's info output (zeroed), valid until the next call.
  int* dev_info();

  // Test-only fault injection: true if `point` should fail now ("alloc", "h2d", "compute", ...).
  bool fault(const char* point) const;
  // True when the test switch asks for a corrupted result (verify mode must catch it). download()
  // applies it by itself: the first download() of a call whose elem is the call's scalar or real
  // size gets 1 + |x| added to its first element (download_vec is never corrupted).
  bool corrupt_result() const;

  // Phase times and bytes of the current call (filled by upload/begin_compute/finish/download).
  void reset_call_stats();
  void fill_result(gofl_gpu_result* r);
  // reset_call_stats() plus what the engine keeps per call (the precision, for corrupt_result()).
  void begin_call(const gofl_call& c);
  // True once a download() of the current call has written program memory (a later failure is
  // then GOFL_GPU_COPY_OUT_FAILED).
  bool output_written() const;

  // Backend lifecycle (backend.cpp). start() picks the GPU (engine_device.cpp; `gpus`: the GPU
  // setting) and makes everything on it; the calling thread's own CUDA context is given back.
  // `libraries` (Library bits): those the call that starts the GPU will use, loaded on a helper
  // thread while the context is made (cuda_libraries.h; GPU_OFFLOAD_LIBRARIES_AHEAD=0: at first use).
  int start(const char* gpus, unsigned libraries, char* msg, size_t len);
  int device() const { return device_; }  // the CUDA device number it runs on
  // The GPUs a split call spreads over (cuda/split.h): the usable GPUs, device() first.
  const std::vector<int>& split_devices() const { return split_devices_; }
  void* context() const { return ctx_; }  // its context (CUcontext), null if unknown
  void device_info(gofl_gpu_device* out) const;
  // Releases pooled device memory beyond the cache limit (engine_memory.cpp), which keeps room for a
  // repeat of a call that needed `call_bytes` (0: only the floor).
  void trim(uint64_t call_bytes = 0);
  void set_fault(const char* spec);
  bool started() const { return impl_ != nullptr; }
  // After a failed call: wait for queued work, clear the CUDA error state; marks the context lost
  // when the error is sticky (every later call then fails fast).
  void recover();
  bool lost() const;
  uint64_t cached_bytes() const;          // device memory held for reuse (free for our next call)
  void release_cached(uint64_t keep);     // free pooled blocks, largest first, until <= keep

 private:
  Engine() = default;
  // blas() and solver(): the handle of `library` that prepare() began making, or made now.
  void* take_handle(unsigned library);
  // input() (uplo 0) and input_triangle() (a square matrix's 'U' or 'L' triangle).
  Input input_of(const void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem, char uplo, cudaStream_t on);
  cudaStream_t stream_ = nullptr;
  cudaStream_t side_[2] = {nullptr, nullptr};
  cublasHandle_t blas_ = nullptr;
  cusolverDnHandle_t solver_ = nullptr;
  cusolverDnParams_t params_ = nullptr;
  char description_[256] = "";
  int device_ = 0;
  std::vector<int> split_devices_;
  void* ctx_ = nullptr;
  gofl_gpu_device gpu_{};
  // Picks device_ and fills gpu_ (engine_device.cpp); false with the reason when no GPU is usable.
  bool place(const char* gpus, int count, std::string* why);
  char fault_[32] = "";
  friend class DevMem;
  friend class Event;
  // Event's spares (engine_phases.cpp): a reused event, or a new one; an event given back.
  cudaEvent_t take_event(bool timing);
  void keep_event(cudaEvent_t e, bool timing);
  void release(void* p, size_t bytes);
  // The pinned staging ring, big enough for transfers of `bytes` (engine_setup.cpp): allocated at
  // the first transfer, grown between calls; a failed growth keeps the smaller ring.
  void fit_staging(size_t bytes);
  // What upload() and upload_rows() share (engine_copies.cpp); a null view copies nothing.
  void upload_view(void* dev, const HostView* view, cudaStream_t on);
  // Waits for stream() (and the side streams too when side_streams) and throws on any error, a
  // kernel launch's included; `where` (a string literal) names a failed wait.
  void wait_checked(bool side_streams, const char* where);
  struct Impl;
  Impl* impl_ = nullptr;
};

// ---- threads and the engine's GPU (engine_device.cpp) ---------------------------------------------
// The calling thread's current CUDA context, given back when this ends.
class KeepThreadContext {
 public:
  KeepThreadContext();
  ~KeepThreadContext();
  KeepThreadContext(const KeepThreadContext&) = delete;
  KeepThreadContext& operator=(const KeepThreadContext&) = delete;

 private:
  void* prev_ = nullptr;
  bool saved_ = false;
};
// For one backend call on a program thread: the engine's context current, the thread's own back after.
class ThreadOnGpu {
 public:
  explicit ThreadOnGpu(const Engine& e);

 private:
  KeepThreadContext keep_;
};

// ---- types ------------------------------------------------------------------------------------------
// Precision traits: T is float, double, std::complex<float> or std::complex<double> (the descriptors'
// own, generated/descs.h).
using desc::is_complex;
using desc::real_of;
template <class T> using real_t = typename real_of<T>::type;

template <class T> constexpr cudaDataType data_type() {
  if constexpr (std::is_same_v<T, float>) return CUDA_R_32F;
  else if constexpr (std::is_same_v<T, double>) return CUDA_R_64F;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return CUDA_C_32F;
  else return CUDA_C_64F;
}

inline cublasOperation_t op_of(char t) { return t == 'N' ? CUBLAS_OP_N : (t == 'T' ? CUBLAS_OP_T : CUBLAS_OP_C); }
inline cublasFillMode_t fill_of(char u) { return u == 'U' ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER; }
inline cublasSideMode_t side_of(char s) { return s == 'L' ? CUBLAS_SIDE_LEFT : CUBLAS_SIDE_RIGHT; }
inline cublasDiagType_t diag_of(char d) { return d == 'U' ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT; }

// ---- routine registry -------------------------------------------------------------------------------
// A routine is planned and run from its call's descriptor (generated/descs.h; an FFTW execute: from
// the call's transform). The backend plans a call once, for the decision (can it run, the device
// memory it needs), and runs only a call its plan accepted: run checks nothing again.
using PlanFn = int (*)(const gofl_call&, uint64_t* device_bytes);  // GOFL_GPU_OK / UNSUPPORTED / INVALID_ARGS
using RunFn = void (*)(Engine&, const gofl_call&);                 // throws Failure; writes outputs on success
class WarmLane;
using WarmFn = void (*)(WarmLane&);                   // warm.h: the routine's library work, on a small problem
struct Routine {
  PlanFn plan = nullptr;
  RunFn run = nullptr;
  unsigned libraries = 0;  // Engine::Library bits: the libraries it uses (the table's, per family)
  WarmFn warm = nullptr;   // the table's warm-up (warm.h); null: not warmed
  // The same at a larger size (warm.h, WarmLane::kLargeN), for a family whose larger calls use other
  // kernels; null: its small warm-up serves every size.
  WarmFn warm_large = nullptr;
};
// The table, indexed by op id, filled at the first need from the operation table's list
// (generated/gpu_routines.h: each family file defines its routines' bodies, <name>_body<T>()).
Routine* routines();

// The call's arguments as routine D reads them: its descriptor, or (D = gofl_call) the call itself.
template <class D> const D& args_of(const gofl_call& c) {
  if constexpr (std::is_same_v<D, gofl_call>) return c;
  else return *static_cast<const D*>(c.desc);
}
// A routine from a family's typed functions over D: `int supports(const D&)` (nullptr: every call),
// `uint64_t bytes(const D&)` (nullptr: none) and `void run(Engine&, const D&)` or
// `void run(Engine&, const gofl_call&, const D&)` (when it needs the call: its operands, the CPU function).
template <class D, auto Supports, auto Bytes, auto Run> Routine routine() {
  Routine r;
  r.plan = [](const gofl_call& c, uint64_t* device_bytes) -> int {
    // A descriptor of another routine's type (a table row bound to the wrong body) is never read.
    if constexpr (!std::is_same_v<D, gofl_call>) {
      if (c.desc_size != sizeof(D)) return GOFL_GPU_INVALID_ARGS;
    }
    const D& d = args_of<D>(c);
    int status = GOFL_GPU_OK;
    if constexpr (!std::is_same_v<decltype(Supports), std::nullptr_t>) status = Supports(d);
    if constexpr (!std::is_same_v<decltype(Bytes), std::nullptr_t>) {
      if (status == GOFL_GPU_OK && device_bytes) *device_bytes = Bytes(d);
    }
    return status;
  };
  r.run = [](Engine& e, const gofl_call& c) {
    if constexpr (std::is_invocable_v<decltype(Run), Engine&, const gofl_call&, const D&>) Run(e, c, args_of<D>(c));
    else Run(e, args_of<D>(c));
  };
  return r;
}

// LAPACK argument checks in the CPU library's order: returns GOFL_GPU_INVALID_ARGS when any check
// the CPU library makes would fail, so the CPU library reports it through its own xerbla.
inline int invalid_if(bool bad) { return bad ? GOFL_GPU_INVALID_ARGS : GOFL_GPU_OK; }

}  // namespace cuda
}  // namespace gofl
