#include "trace/writer.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <string>
#include <unordered_set>

#include "common/clock.h"
#include "common/fs.h"
#include "generated/table.h"

namespace gofl {
namespace {

// The file is mapped (MAP_SHARED) and records are stored straight into it: a process killed by any
// signal, SIGKILL included, or replaced by exec leaves every record it wrote, with no handler and no
// buffer to flush. Space is reserved in chunks (posix_fallocate, so that a full disk is an error
// here, never a SIGBUS in the program) and the file is trimmed to its records at exit; until then
// its tail is zero records, which readers take as the end.
//
// No descriptor is kept: a program that closes every descriptor (close_range, closefrom) or dup2s
// onto a number and then opens its own file must never find trace records in it. Every operation
// on the file opens the path this process created and checks its device and inode first.
constexpr uint64_t kFirstChunkRecords = 256;
constexpr uint64_t kMaxChunkRecords = 16384;  // 3.8 MB: what the mapping holds at most

struct Writer {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  bool enabled = false;
  bool failed = false;          // could not create or grow the file: tracing off, said once
  bool exiting = false;         // trace_flush ran: the file is trimmed after every record
  std::string dir;              // absolute: a program that changes directory still writes here
  uint64_t start_realtime_ns = 0, start_monotonic_ns = 0;  // when tracing began in this process
  TraceInfo info{5, 2, ""};
  std::string profile;
  std::string path;             // the file this process created ("" until the first record)
  dev_t dev = 0;                // ... and its identity
  ino_t ino = 0;
  char* map = nullptr;          // the file's unused end, mapped shared: from map_offset to `capacity`
  uint64_t map_offset = 0;      // (a window, not the whole file: a long trace takes no more memory)
  size_t map_bytes = 0;
  uint64_t capacity = 0;        // record slots the file has room for
  uint64_t used = 0;            // records written
  std::unordered_set<uint64_t>* sites = nullptr;  // leaked on purpose: used until the very end
};

Writer& W() {
  static Writer* w = new Writer;  // never destroyed: other threads may trace during exit
  return *w;
}

void read_cmdline(char* out, size_t cap) {
  out[0] = '\0';
  int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  ssize_t r = read(fd, out, cap - 1);
  close(fd);
  if (r <= 0) { out[0] = '\0'; return; }
  for (ssize_t i = 0; i < r - 1; ++i)
    if (out[i] == '\0') out[i] = ' ';
  out[r] = '\0';
}

std::string program_base() {
  char buf[256];
  ssize_t r = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (r <= 0) return "program";
  buf[r] = '\0';
  const char* slash = strrchr(buf, '/');
  std::string b = slash ? slash + 1 : buf;
  for (char& ch : b)
    if (!(isalnum((unsigned char)ch) || ch == '-' || ch == '_' || ch == '.')) ch = '_';
  return b.empty() ? "program" : b;
}

std::string absolute(const char* dir) {
  if (dir[0] == '/') return dir;
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return dir;
  return std::string(cwd) + "/" + dir;
}

uint64_t file_bytes(uint64_t records) { return sizeof(gofl_file_header) + records * sizeof(gofl_record); }

// The descriptor still names the file this process created (not one the program opened since).
bool is_own(const Writer& w, int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_dev == w.dev && st.st_ino == w.ino;
}

// The trace file again, for one operation; -1 (errno set) when the path no longer names it.
int open_own(const Writer& w) {
  const int fd = open(w.path.c_str(), O_RDWR | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return -1;
  if (!is_own(w, fd)) {
    close(fd);
    errno = ESTALE;
    return -1;
  }
  return fd;
}

// Where the next record goes, in the mapping.
char* next_slot(const Writer& w) { return w.map + (file_bytes(w.used) - w.map_offset); }

void unmap(Writer& w) {
  if (w.map) munmap(w.map, w.map_bytes);
  w.map = nullptr;
  w.map_offset = w.map_bytes = 0;
}

// Reserves room for more records and maps it, from the page of the next record on. Caller holds
// the lock; fd is the trace file.
int grow(Writer& w, int fd) {
  const uint64_t chunk = std::min(std::max(w.capacity, kFirstChunkRecords), kMaxChunkRecords);
  const uint64_t capacity = w.capacity + chunk;
  const uint64_t page = uint64_t(sysconf(_SC_PAGESIZE));
  const uint64_t from = file_bytes(w.used) / page * page;
  const size_t bytes = size_t(file_bytes(capacity) - from);
  if (!is_own(w, fd)) return ESTALE;
  if (const int err = posix_fallocate(fd, 0, off_t(file_bytes(capacity)))) return err;
  void* m = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(from));
  if (m == MAP_FAILED) return errno;
#ifdef MADV_POPULATE_WRITE
  // One call instead of a page fault every 17 records (Linux 5.14; older kernels just fault).
  madvise(m, bytes, MADV_POPULATE_WRITE);
#endif
  unmap(w);
  w.map = static_cast<char*>(m);
  w.map_offset = from;
  w.map_bytes = bytes;
  w.capacity = capacity;
  return 0;
}

// Cuts the file to the records written (the exit's tidy end). Caller holds the lock.
void trim(Writer& w) {
  const int fd = open_own(w);
  if (fd < 0) return;  // renamed or removed: its zero tail still reads as the end
  if (ftruncate(fd, off_t(file_bytes(w.used))) == 0) w.capacity = w.used;
  close(fd);
}

// Tracing stops for this process: what was written stays, cut to its records; a file without a
// record (a full disk at the start) is removed.
void stop(Writer& w, const char* what, int err) {
  w.failed = true;
  if (w.path.empty()) return;
  if (w.used == 0) {
    struct stat st;
    if (lstat(w.path.c_str(), &st) == 0 && st.st_dev == w.dev && st.st_ino == w.ino) unlink(w.path.c_str());
    fprintf(stderr, "gpu-offload: %s the trace file %s: %s; it is removed and tracing is off for this process\n",
            what, w.path.c_str(), strerror(err));
  } else {
    trim(w);
    fprintf(stderr,
            "gpu-offload: %s the trace file %s: %s; tracing is off for this process (the file keeps the first "
            "%llu records)\n",
            what, w.path.c_str(), strerror(err), (unsigned long long)w.used);
  }
  unmap(w);
  w.capacity = 0;
}

gofl_file_header make_header(const Writer& w) {
  gofl_file_header h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, GOFL_TRACE_MAGIC, 8);
  h.byte_order = GOFL_TRACE_BYTE_ORDER;
  h.version = GOFL_TRACE_VERSION;
  h.record_size = sizeof(gofl_record);
  h.ops_hash = GOFL_OPS_HASH;
  h.n_ops = GOFL_N_OPS;
  h.pid = getpid();
  h.ppid = getppid();
  h.start_realtime_ns = w.start_realtime_ns;
  h.start_monotonic_ns = w.start_monotonic_ns;
  h.level = w.info.level;
  h.device_mode = w.info.device_mode;
  gethostname(h.host, sizeof h.host - 1);
  read_cmdline(h.program, sizeof h.program);
  snprintf(h.profile, sizeof h.profile, "%s", w.profile.c_str());
  return h;
}

// Caller holds the lock. Creates the file exclusively: an existing file or a planted symlink is
// never opened, a new name is tried instead.
bool create_file(Writer& w) {
  if (!make_dirs(w.dir)) {
    fprintf(stderr, "gpu-offload: cannot create the trace folder %s: %s; tracing is off for this process\n",
            w.dir.c_str(), strerror(errno));
    w.failed = true;
    return false;
  }
  uint64_t seed = clock_ns(CLOCK_MONOTONIC) ^ (uint64_t(getpid()) << 32);
  try {
    seed ^= std::random_device{}();
  } catch (...) {
    // No entropy source: the clock and the pid still make names unlikely to repeat.
  }
  std::mt19937_64 rd(seed);
  const std::string base = program_base();
  int err = 0;
  for (int attempt = 0; attempt < 32; ++attempt) {
    char name[512];
    snprintf(name, sizeof name, "%s/%s.%d.%08x%s", w.dir.c_str(), base.c_str(), int(getpid()), unsigned(rd()),
             GOFL_TRACE_SUFFIX);
    const int fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
    if (fd < 0) {
      err = errno;
      if (err != EEXIST) break;
      continue;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
      err = errno;
      close(fd);
      break;
    }
    w.path = name;
    w.dev = st.st_dev;
    w.ino = st.st_ino;
    err = grow(w, fd);
    close(fd);
    if (err) {
      stop(w, "cannot make room in", err);
      return false;
    }
    const gofl_file_header h = make_header(w);
    memcpy(w.map, &h, sizeof h);
    return true;
  }
  fprintf(stderr,
          "gpu-offload: cannot write a trace file in %s: %s; tracing is off for this process "
          "(choose a writable folder with --trace DIR)\n",
          w.dir.c_str(), strerror(err));
  w.failed = true;
  return false;
}

// Caller holds the lock. The record's kind is stored last: a process killed in the middle leaves a
// slot of kind 0, which readers take as the end, never a half-written record.
void append_locked(Writer& w, const gofl_record& r) {
  if (w.failed) return;
  if (!w.map && !create_file(w)) return;
  if (w.used == w.capacity) {
    const int fd = open_own(w);
    const int err = fd < 0 ? errno : grow(w, fd);
    if (fd >= 0) close(fd);
    if (err) {
      stop(w, "cannot extend", err);
      return;
    }
  }
  char* slot = next_slot(w);
  static_assert(offsetof(gofl_record, kind) == 0, "the kind is stored last, apart from the rest");
  memcpy(slot + sizeof r.kind, reinterpret_cast<const char*>(&r) + sizeof r.kind, sizeof r - sizeof r.kind);
  __atomic_store_n(reinterpret_cast<uint32_t*>(slot), r.kind, __ATOMIC_RELEASE);
  ++w.used;
  if (w.exiting) trim(w);  // records made while the process ends: the file stays tidy after each
}

// The record naming a call site: built outside the writer's lock, since dladdr takes the dynamic
// linker's lock (a thread inside dlopen running a constructor that calls BLAS holds that one).
gofl_record site_record(uint64_t addr) {
  gofl_record r;
  memset(&r, 0, sizeof r);
  r.kind = GOFL_REC_SITE;
  r.u.site.addr = addr;
  Dl_info di{};
  if (addr && dladdr(reinterpret_cast<void*>(addr), &di) && di.dli_fname) {
    r.u.site.offset = addr - reinterpret_cast<uint64_t>(di.dli_fbase);
    snprintf(r.u.site.module, sizeof r.u.site.module, "%s", di.dli_fname);
  }
  return r;
}

bool site_known_locked(Writer& w, uint64_t addr) {
  if (!w.sites) w.sites = new std::unordered_set<uint64_t>;
  return w.sites->count(addr) != 0;
}

// Caller holds the lock: names `addr` with a SITE record the first time it appears. The lock is
// let go meanwhile (site_record), so the caller's state may have changed when it returns.
void name_site_locked(Writer& w, uint64_t addr) {
  if (site_known_locked(w, addr)) return;
  pthread_mutex_unlock(&w.mu);
  const gofl_record site = site_record(addr);
  pthread_mutex_lock(&w.mu);
  // Another thread may have named it meanwhile; the first one writes it.
  if (!w.failed && w.sites->insert(addr).second) append_locked(w, site);
}

}  // namespace

void trace_configure(const char* dir, const TraceInfo& info) {
  Writer& w = W();
  pthread_mutex_lock(&w.mu);
  w.dir = absolute(dir);
  w.start_realtime_ns = clock_ns(CLOCK_REALTIME);
  w.start_monotonic_ns = clock_ns(CLOCK_MONOTONIC);
  w.info = info;
  w.profile = info.profile ? info.profile : "";
  w.enabled = true;
  pthread_mutex_unlock(&w.mu);
}

bool trace_enabled() { return W().enabled; }

void trace_call(const gofl_call_record& rec, uint32_t resident) {
  Writer& w = W();
  if (!w.enabled) return;
  pthread_mutex_lock(&w.mu);
  name_site_locked(w, rec.site);
  if (!w.failed) {
    gofl_record r;
    r.kind = GOFL_REC_CALL;
    r.resident = resident;
    r.u.call = rec;
    append_locked(w, r);
  }
  pthread_mutex_unlock(&w.mu);
}

void trace_gpu_start(uint64_t t_start_ns, uint64_t duration_ns, bool ok, const char* message,
                     const gofl_start_gpu* gpu, uint32_t tid) {
  Writer& w = W();
  if (!w.enabled) return;
  gofl_record r;
  memset(&r, 0, sizeof r);
  r.kind = GOFL_REC_GPU_START;
  r.u.start.t_start_ns = t_start_ns;
  r.u.start.duration_ns = duration_ns;
  r.u.start.tid = tid ? tid : uint32_t(syscall(SYS_gettid));
  r.u.start.ok = ok ? 1 : 0;
  if (ok && gpu) {
    r.u.start.gpu = *gpu;
    r.u.start.gpu.no_message = '\0';
  } else if (!ok && message) {
    snprintf(r.u.start.message, sizeof r.u.start.message, "%s", message);
  }
  pthread_mutex_lock(&w.mu);
  if (!w.failed) append_locked(w, r);
  pthread_mutex_unlock(&w.mu);
}

void trace_setup(uint16_t op, uint64_t t_ns, const gofl_setup_phase* phases, int n) {
  Writer& w = W();
  if (!w.enabled || n <= 0 || !phases) return;
  gofl_record r;
  memset(&r, 0, sizeof r);
  r.kind = GOFL_REC_SETUP;
  r.u.setup.t_ns = t_ns;
  r.u.setup.tid = uint32_t(syscall(SYS_gettid));
  r.u.setup.op = op;
  r.u.setup.n_phases = uint16_t(n < GOFL_SETUP_MAX_PHASES ? n : GOFL_SETUP_MAX_PHASES);
  memcpy(r.u.setup.phases, phases, sizeof(gofl_setup_phase) * r.u.setup.n_phases);
  pthread_mutex_lock(&w.mu);
  if (!w.failed) append_locked(w, r);
  pthread_mutex_unlock(&w.mu);
}

void trace_gpu_absent(const char* message) {
  Writer& w = W();
  if (!w.enabled) return;
  gofl_record r;
  memset(&r, 0, sizeof r);
  r.kind = GOFL_REC_GPU_ABSENT;
  r.u.start.tid = uint32_t(syscall(SYS_gettid));
  snprintf(r.u.start.message, sizeof r.u.start.message, "%s", message);
  pthread_mutex_lock(&w.mu);
  if (!w.failed) append_locked(w, r);
  pthread_mutex_unlock(&w.mu);
}

void trace_counted(const gofl_counted_record* recs, size_t n) {
  Writer& w = W();
  if (!w.enabled || n == 0) return;
  pthread_mutex_lock(&w.mu);
  for (size_t i = 0; i < n && !w.failed; ++i) {
    name_site_locked(w, recs[i].site);
    if (w.failed) break;
    gofl_record r;
    memset(&r, 0, sizeof r);
    r.kind = GOFL_REC_COUNTED;
    r.u.counted = recs[i];
    append_locked(w, r);
  }
  pthread_mutex_unlock(&w.mu);
}

void trace_flush() {
  Writer& w = W();
  if (!w.enabled) return;
  pthread_mutex_lock(&w.mu);
  if (w.map && !w.failed) trim(w);
  w.exiting = true;
  pthread_mutex_unlock(&w.mu);
}

void trace_fork_prepare() { pthread_mutex_lock(&W().mu); }
void trace_fork_parent() { pthread_mutex_unlock(&W().mu); }

void trace_fork_child() {
  Writer& w = W();
  pthread_mutex_init(&w.mu, nullptr);
  // The parent's file stays the parent's: its mapping is dropped unused, the child makes its own.
  unmap(w);
  w.capacity = w.used = 0;
  w.path.clear();
  w.failed = false;
  w.exiting = false;
  w.start_realtime_ns = clock_ns(CLOCK_REALTIME);
  w.start_monotonic_ns = clock_ns(CLOCK_MONOTONIC);
  if (w.sites) w.sites->clear();
}

}  // namespace gofl
