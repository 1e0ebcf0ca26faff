#include "trace/writer.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <random>
#include <string>
#include <unordered_set>

#include "common/clock.h"
#include "common/fs.h"
#include "generated/table.h"

namespace gofl {
namespace {

constexpr size_t kBufferRecords = 256;

struct Writer {
  pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
  bool enabled = false;
  bool failed = false;          // could not create the file: tracing off, said once
  bool final_flush_done = false;
  int fd = -1;
  std::string dir;              // absolute: a program that changes directory still writes here
  uint64_t start_realtime_ns = 0, start_monotonic_ns = 0;  // when tracing began in this process
  TraceInfo info{5, 2, ""};
  std::string profile;
  gofl_record buf[kBufferRecords];
  size_t n = 0;
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

bool write_all(int fd, const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    len -= size_t(w);
  }
  return true;
}

std::string absolute(const char* dir) {
  if (dir[0] == '/') return dir;
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return dir;
  return std::string(cwd) + "/" + dir;
}

// Caller holds the lock. Creates the file exclusively: an existing file or a planted symlink is
// never opened, a new name is tried instead.
bool open_file(Writer& w) {
  if (w.fd >= 0) return true;
  if (w.failed) return false;
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
    int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd >= 0) {
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
      if (!write_all(fd, &h, sizeof h)) {
        err = errno;
        close(fd);
        break;
      }
      w.fd = fd;
      return true;
    }
    err = errno;
    if (err != EEXIST) break;
  }
  fprintf(stderr,
          "gpu-offload: cannot write a trace file in %s: %s; tracing is off for this process "
          "(choose a writable folder with --trace DIR)\n",
          w.dir.c_str(), strerror(err));
  w.failed = true;
  return false;
}

void flush_locked(Writer& w) {
  if (w.n == 0) return;
  if (open_file(w) && !write_all(w.fd, w.buf, w.n * sizeof(gofl_record))) {
    fprintf(stderr, "gpu-offload: writing the trace failed: %s; tracing is off for this process\n", strerror(errno));
    close(w.fd);
    w.fd = -1;
    w.failed = true;
  }
  w.n = 0;
}

void append_locked(Writer& w, const gofl_record& r) {
  w.buf[w.n++] = r;
  if (w.n == kBufferRecords || w.final_flush_done) flush_locked(w);
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
  if (!site_known_locked(w, rec.site)) {
    pthread_mutex_unlock(&w.mu);
    const gofl_record site = site_record(rec.site);
    pthread_mutex_lock(&w.mu);
    // Another thread may have named it meanwhile; the first one writes it.
    if (!w.failed && w.sites->insert(rec.site).second) append_locked(w, site);
  }
  if (!w.failed) {
    gofl_record r;
    r.kind = GOFL_REC_CALL;
    r.resident = resident;
    r.u.call = rec;
    append_locked(w, r);
  }
  pthread_mutex_unlock(&w.mu);
}

void trace_gpu_start(uint64_t t_start_ns, uint64_t duration_ns, bool ok, const char* message) {
  Writer& w = W();
  if (!w.enabled) return;
  gofl_record r;
  memset(&r, 0, sizeof r);
  r.kind = GOFL_REC_GPU_START;
  r.u.start.t_start_ns = t_start_ns;
  r.u.start.duration_ns = duration_ns;
  r.u.start.tid = uint32_t(syscall(SYS_gettid));
  r.u.start.ok = ok ? 1 : 0;
  if (message) snprintf(r.u.start.message, sizeof r.u.start.message, "%s", message);
  pthread_mutex_lock(&w.mu);
  if (!w.failed) append_locked(w, r);
  pthread_mutex_unlock(&w.mu);
}

void trace_flush() {
  Writer& w = W();
  if (!w.enabled) return;
  pthread_mutex_lock(&w.mu);
  flush_locked(w);
  w.final_flush_done = true;  // records after exit began are written straight away
  pthread_mutex_unlock(&w.mu);
}

void trace_fork_prepare() { pthread_mutex_lock(&W().mu); }
void trace_fork_parent() { pthread_mutex_unlock(&W().mu); }

void trace_fork_child() {
  Writer& w = W();
  pthread_mutex_init(&w.mu, nullptr);
  w.n = 0;  // the parent writes these
  if (w.fd >= 0) close(w.fd);
  w.fd = -1;
  w.failed = false;
  w.final_flush_done = false;
  w.start_realtime_ns = clock_ns(CLOCK_REALTIME);
  w.start_monotonic_ns = clock_ns(CLOCK_MONOTONIC);
  if (w.sites) w.sites->clear();
}

}  // namespace gofl
