#include "trace/reader.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>

#include <algorithm>

#include "common/fs.h"
#include "common/table.h"

namespace gofl {
namespace {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  return buf;
}

constexpr uint32_t kOtherByteOrder = 0x04030201u;  // GOFL_TRACE_BYTE_ORDER as the other byte order reads it
// Longer than any call or GPU start could take (about 3 years): a damaged or crafted field.
constexpr uint64_t kMaxDurationNs = uint64_t(1e17);
const char* const kOtherVersion = "it was written by another gpu-offload version; read it with the gpu-offload that wrote it";

bool ends_with(const std::string& s, const char* suffix) {
  const size_t n = strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

}  // namespace

std::string trace_text(const char* field, size_t cap) { return std::string(field, strnlen(field, cap)); }

TraceReader::~TraceReader() {
  if (f_) fclose(f_);
}

void TraceReader::open(const std::string& path) {
  path_ = path;
  const char* p = path.c_str();
  // The file is open only while it is checked here and while its records are read (next), so that
  // a folder of thousands of traces needs two descriptors, not thousands.
  std::string why;
  const int fd = open_regular_file(p, &why);
  if (fd < 0) throw TraceError(format("%s: cannot open it: %s", p, why.c_str()));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    throw TraceError(format("%s: cannot open it: %s", p, strerror(err)));
  }
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  const uint64_t size = uint64_t(st.st_size);
  ssize_t r;
  do r = pread(fd, &header_, sizeof header_, 0); while (r < 0 && errno == EINTR);
  const int read_err = errno;
  close(fd);
  if (r < 0) throw TraceError(format("%s: reading its header failed: %s", p, strerror(read_err)));
  const size_t got = size_t(r);
  const gofl_file_header& h = header_;
  const size_t magic_len = strlen(GOFL_TRACE_MAGIC);
  auto truncated = [&] {
    return TraceError(format("%s: truncated header (%llu bytes; a trace header has %zu): its writer stopped "
                             "before the header was complete",
                             p, (unsigned long long)size, sizeof header_));
  };
  // The magic first: a file that is not a trace at all should not be called truncated.
  if (got < magic_len && memcmp(h.magic, GOFL_TRACE_MAGIC, got) == 0) throw truncated();
  if (got < magic_len || memcmp(h.magic, GOFL_TRACE_MAGIC, magic_len) != 0) {
    if (got >= magic_len && memcmp(h.magic, GOFL_TRACE_MAGIC, magic_len - 1) == 0)
      throw TraceError(format("%s: trace format %s, this gpu-offload reads %s: %s", p,
                              trace_text(h.magic, magic_len).c_str(), GOFL_TRACE_MAGIC, kOtherVersion));
    throw TraceError(format("%s: not a gpu-offload trace (wrong magic: it does not start with %s)", p,
                            GOFL_TRACE_MAGIC));
  }
  if (got < sizeof header_) throw truncated();
  if (h.byte_order != GOFL_TRACE_BYTE_ORDER) {
    if (h.byte_order == kOtherByteOrder)
      throw TraceError(format("%s: wrong byte order: it was written by another gpu-offload version running on a "
                              "machine of the other byte order; read it on a machine like the one that wrote it",
                              p));
    throw TraceError(format("%s: wrong byte order mark 0x%08x (expected 0x%08x): the file is damaged or %s", p,
                            h.byte_order, GOFL_TRACE_BYTE_ORDER, kOtherVersion));
  }
  // Versions 1 and 2 differ only in lacking setup (1) and counted (1, 2) records: read as they are.
  if (h.version < GOFL_TRACE_OLDEST_VERSION || h.version > GOFL_TRACE_VERSION)
    throw TraceError(format("%s: trace format version %u, this gpu-offload reads versions %d to %d: %s", p, h.version,
                            GOFL_TRACE_OLDEST_VERSION, GOFL_TRACE_VERSION, kOtherVersion));
  if (h.record_size != sizeof(gofl_record))
    throw TraceError(format("%s: record size %u bytes, this gpu-offload's records have %zu: %s", p, h.record_size,
                            sizeof(gofl_record), kOtherVersion));
  if (h.ops_hash != GOFL_OPS_HASH || h.n_ops != GOFL_N_OPS)
    throw TraceError(format("%s: ops_hash 0x%08x (%u operations) differs from this gpu-offload's table of "
                            "operations (0x%08x, %d operations): %s",
                            p, h.ops_hash, h.n_ops, GOFL_OPS_HASH, GOFL_N_OPS, kOtherVersion));

  n_records_ = (size - sizeof header_) / sizeof(gofl_record);
  tail_bytes_ = (size - sizeof header_) % sizeof(gofl_record);
  index_ = 0;
}

// The file again, at the first record: the same file open() checked, or an error.
FILE* TraceReader::reopen(uint64_t at) const {
  const char* p = path_.c_str();
  std::string why;
  const int fd = open_regular_file(p, &why);
  if (fd < 0) throw TraceError(format("%s: cannot open it again to read its records: %s", p, why.c_str()));
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_dev != dev_ || st.st_ino != ino_) {
    close(fd);
    throw TraceError(format("%s: the file was replaced while it was read", p));
  }
  FILE* f = fdopen(fd, "rb");
  if (!f) {
    close(fd);
    throw TraceError(format("%s: cannot read it: %s", p, strerror(errno)));
  }
  setvbuf(f, nullptr, _IOFBF, 1 << 20);
  if (fseeko(f, off_t(sizeof header_ + at * sizeof(gofl_record)), SEEK_SET) != 0) {
    fclose(f);
    throw TraceError(format("%s: cannot read it: %s", p, strerror(errno)));
  }
  return f;
}

bool TraceReader::next(gofl_record* rec) {
  if (index_ >= n_records_) return false;
  if (!f_) f_ = reopen(index_);
  if (fread(rec, sizeof *rec, 1, f_) != 1)
    throw TraceError(format("%s: reading record %llu failed: %s", path_.c_str(), (unsigned long long)index_,
                            ferror(f_) ? strerror(errno) : "the file became shorter while it was read"));
  // Kind 0 is space the writer had reserved but not yet used when it stopped (a process killed or
  // replaced by exec before it could trim its file): the records end there.
  if (rec->kind == 0) index_ = n_records_;
  else check_record(*rec), ++index_;
  // Verify mode: the GPU ran the call (into private outputs), then the CPU; reason VERIFY says so.
  // Writers before this reader recorded device CPU for every verify call: one whose GPU run
  // succeeded (no failure status, GPU times recorded) ran on the GPU too, as newer writers record it.
  if (rec->kind == GOFL_REC_CALL) {
    gofl_call_record& c = rec->u.call;
    if (c.reason == GOFL_R_VERIFY && c.device == GOFL_DEV_CPU && c.gpu_status == 0 &&
        (c.copy_in_s > 0 || c.compute_s > 0 || c.copy_out_s > 0))
      c.device = GOFL_DEV_GPU;
  }
  if (index_ == n_records_) {
    fclose(f_);
    f_ = nullptr;
  }
  return rec->kind != 0;
}

// Ids index the op and symbol tables: a damaged record must stop here, not index out of bounds later.
// Values no call can have (an endless duration, infinite work) would be summed into every total.
void TraceReader::check_record(const gofl_record& r) const {
  const char* p = path_.c_str();
  const unsigned long long i = index_;
  if (r.kind == GOFL_REC_SITE || r.kind == GOFL_REC_GPU_ABSENT) return;
  if (r.kind == GOFL_REC_GPU_START) {
    if (r.u.start.ok != 0 && r.u.start.ok != 1)
      throw TraceError(format("%s: record %llu is a GPU start with outcome %d: the file is damaged", p, i, r.u.start.ok));
    if (r.u.start.ok == 1 && (r.u.start.gpu.recorded > 2 || (r.u.start.gpu.recorded && r.u.start.gpu.index < 0)))
      throw TraceError(format("%s: record %llu is a GPU start on GPU %d (recorded %u): the file is damaged", p, i,
                              r.u.start.gpu.index, r.u.start.gpu.recorded));
    if (r.u.start.ok == 1 && r.u.start.gpu.recorded == 2 && r.u.start.gpu.waited_ns > r.u.start.duration_ns)
      throw TraceError(format("%s: record %llu is a GPU start waited for longer than it took: the file is damaged", p, i));
    if (r.u.start.duration_ns > kMaxDurationNs)
      throw TraceError(format("%s: record %llu is a GPU start that took %llu ns: the file is damaged", p, i,
                              (unsigned long long)r.u.start.duration_ns));
    return;
  }
  if (r.kind == GOFL_REC_SETUP && header_.version >= 2) {
    const gofl_setup_record& s = r.u.setup;
    if (s.n_phases > GOFL_SETUP_MAX_PHASES || (s.op != GOFL_SETUP_AT_START && s.op >= GOFL_N_OPS))
      throw TraceError(format("%s: record %llu is a setup record of %u phases for operation %u: the file is damaged", p,
                              i, s.n_phases, s.op));
    for (int k = 0; k < s.n_phases; ++k)
      if (s.phases[k].phase == 0 || s.phases[k].phase >= GOFL_SP_END || s.phases[k].duration_ns > kMaxDurationNs)
        throw TraceError(format("%s: record %llu is a setup record with phase %u of %llu ns: the file is damaged", p,
                                i, s.phases[k].phase, (unsigned long long)s.phases[k].duration_ns));
    return;
  }
  if (r.kind == GOFL_REC_COUNTED && header_.version >= 3) {
    check_counted(r.u.counted);
    return;
  }
  if (r.kind != GOFL_REC_CALL)
    throw TraceError(format("%s: record %llu has unknown kind %u: the file is damaged", p, i, r.kind));
  const gofl_call_record& c = r.u.call;
  check_op_sym(c.op, c.sym);
  if (c.n_operands > GOFL_MAX_OPERANDS || c.device > GOFL_DEV_GPU || c.reason >= GOFL_R_COUNT)
    throw TraceError(format("%s: record %llu has %u operands, device %u and reason %u: the file is damaged", p, i,
                            c.n_operands, c.device, c.reason));
  if (c.duration_ns > kMaxDurationNs || c.t_start_ns > UINT64_MAX - c.duration_ns)
    throw TraceError(format("%s: record %llu is a call that took %llu ns: the file is damaged", p, i,
                            (unsigned long long)c.duration_ns));
  const double seconds[] = {c.pred_cpu_s, c.pred_gpu_s, c.copy_in_s, c.compute_s, c.copy_out_s};
  bool finite = std::isfinite(c.flops) && c.flops >= 0;
  for (double s : seconds) finite = finite && std::isfinite(s) && s >= 0;
  if (!finite)
    throw TraceError(format("%s: record %llu has work %g flops and times %g, %g, %g, %g, %g s, not all finite and "
                            ">= 0: the file is damaged",
                            p, i, c.flops, seconds[0], seconds[1], seconds[2], seconds[3], seconds[4]));
}

void TraceReader::check_op_sym(uint16_t op, uint16_t sym) const {
  const char* p = path_.c_str();
  const unsigned long long i = index_;
  if (op >= GOFL_N_OPS)
    throw TraceError(format("%s: record %llu names operation %u of %d: the file is damaged", p, i, op, GOFL_N_OPS));
  const bool sym_ok = sym == GOFL_SYM_FFTW ? gofl_ops[op].kind == GOFL_KIND_FFT
                                           : sym < GOFL_N_SYMS && gofl_syms[sym].op == op;
  if (!sym_ok)
    throw TraceError(format("%s: record %llu names symbol %u, which does not belong to %s: the file is damaged", p, i,
                            sym, gofl_ops[op].name));
}

// Counts and times are summed into every total: a record standing for no call, or for more timed
// calls than calls, or times no run could take, is damaged.
void TraceReader::check_counted(const gofl_counted_record& c) const {
  const char* p = path_.c_str();
  const unsigned long long i = index_;
  check_op_sym(c.op, c.sym);
  if (c.device > GOFL_DEV_GPU || c.reason >= GOFL_R_COUNT)
    throw TraceError(format("%s: record %llu is a counted record with device %u and reason %u: the file is damaged", p,
                            i, c.device, c.reason));
  if (c.calls == 0 || c.timed_calls == 0 || c.timed_calls > c.calls || c.calls > kMaxDurationNs)
    throw TraceError(format("%s: record %llu is a counted record of %llu calls, %llu of them timed: the file is damaged",
                            p, i, (unsigned long long)c.calls, (unsigned long long)c.timed_calls));
  if (c.timed_ns > kMaxDurationNs || c.estimated_ns > kMaxDurationNs || c.timed_ns > c.estimated_ns)
    throw TraceError(format("%s: record %llu is a counted record of %llu ns (%llu ns timed): the file is damaged", p, i,
                            (unsigned long long)c.estimated_ns, (unsigned long long)c.timed_ns));
  if (!std::isfinite(c.flops) || c.flops < 0)
    throw TraceError(format("%s: record %llu is a counted record of %g flops: the file is damaged", p, i, c.flops));
}

const TraceSite* TraceReader::site(uint64_t addr) {
  if (!sites_loaded_) {
    sites_loaded_ = true;
    // A second handle, so that the caller's position in the file is untouched.
    FILE* f = reopen(0);
    gofl_record r;
    for (uint64_t i = 0; i < n_records_ && fread(&r, sizeof r, 1, f) == 1 && r.kind != 0; ++i) {
      if (r.kind != GOFL_REC_SITE) continue;
      TraceSite& s = sites_[r.u.site.addr];
      s.module = trace_text(r.u.site.module, sizeof r.u.site.module);
      s.offset = r.u.site.offset;
    }
    fclose(f);
  }
  auto it = sites_.find(addr);
  return it == sites_.end() ? nullptr : &it->second;
}

std::vector<std::string> trace_paths(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (const std::string& a : args) {
    struct stat st;
    if (stat(a.c_str(), &st) != 0)
      throw TraceError(format("%s: %s", a.c_str(), errno == ENOENT ? "no such file or folder" : strerror(errno)));
    if (!S_ISDIR(st.st_mode)) {
      out.push_back(a);
      continue;
    }
    DIR* d = opendir(a.c_str());
    if (!d) throw TraceError(format("%s: cannot read the folder: %s", a.c_str(), strerror(errno)));
    std::vector<std::string> names;
    while (const dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (ends_with(name, GOFL_TRACE_SUFFIX) && name != GOFL_TRACE_SUFFIX) names.push_back(name);
    }
    closedir(d);
    if (names.empty())
      throw TraceError(format("%s: no trace files (*%s) in this folder; make some with gpu-offload run --trace %s "
                              "PROGRAM",
                              a.c_str(), GOFL_TRACE_SUFFIX, a.c_str()));
    std::sort(names.begin(), names.end());
    const std::string sep = (a.empty() || a.back() == '/') ? "" : "/";
    for (const std::string& n : names) out.push_back(a + sep + n);
  }
  return out;
}

}  // namespace gofl
