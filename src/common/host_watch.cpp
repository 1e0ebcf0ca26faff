#include "common/host_watch.h"
#include "policy/registry.h"

#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace gofl {

namespace {

// Libraries whose presence means memory may be written without a page fault: RDMA/fabric
// devices DMA into registered (pinned) buffers, and io_uring's registered buffers are written
// by the kernel through its own mapping of the pinned pages.
constexpr const char* kDmaLibraries[] = {"libibverbs.so", "libfabric.so", "libucp.so", "libuct.so",
                                         "libpsm2.so",    "libmlx5.so",   "liburing.so"};

struct DlScan {
  unsigned long long seen;  // the loader's load count at the last scan
  unsigned long long adds = 0;
  bool first = true;
  bool same = false;
  std::string found;
};

int dl_scan(dl_phdr_info* info, size_t size, void* data) {
  auto* s = static_cast<DlScan*>(data);
  if (s->first) {
    s->first = false;
    if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds)) {
      s->adds = info->dlpi_adds;
      if (s->adds == s->seen) {
        s->same = true;
        return 1;
      }
    }
  }
  const char* name = info->dlpi_name ? info->dlpi_name : "";
  const char* slash = strrchr(name, '/');
  const char* base = slash ? slash + 1 : name;
  for (const char* lib : kDmaLibraries) {
    if (strncmp(base, lib, strlen(lib)) == 0) {
      s->found = base;
      return 1;
    }
  }
  return 0;
}

void page_bounds(const void* p, size_t bytes, uintptr_t* start, uintptr_t* end) {
  const uintptr_t mask = host_page_size() - 1;
  *start = reinterpret_cast<uintptr_t>(p) & ~mask;
  *end = (reinterpret_cast<uintptr_t>(p) + bytes + mask) & ~mask;
}

}  // namespace

const char* mechanism_name(WatchMechanism m) {
  switch (m) {
    case WatchMechanism::PageTracking: return "pages";
    case WatchMechanism::ContentHash: return "content";
    case WatchMechanism::None: break;
  }
  return "none";
}

HostWatch::HostWatch(ParallelFor pf) : pf_(std::move(pf)) {}

HostWatch::~HostWatch() = default;  // closing the userfaultfd unregisters and unprotects its ranges

void HostWatch::check_process_locked() {
  const int pid = static_cast<int>(getpid());
  if (pid_ == 0) pid_ = pid;
  if (pid == pid_) return;
  // A forked child: the userfaultfd is the parent's, the pagemap descriptor reads the parent's
  // address space, and the child's copies of the ranges are neither registered nor protected.
  uffd_.close();
  pagemap_.close();
  watched_.clear();
  ++epoch_;
  probed_ = false;
  pid_ = pid;
}

void HostWatch::after_fork_child() {
  std::lock_guard<std::mutex> lock(mu_);
  pid_ = -1;  // whatever getpid() says now is a new incarnation
  check_process_locked();
}

void HostWatch::probe_locked() {
  probed_ = true;
  requested_ = WatchMechanism::None;
  switch (setting_choice(SettingId::RESIDENCY_CHECK, 0)) {  // auto|pages|content
    case 1: requested_ = WatchMechanism::PageTracking; break;
    case 2: requested_ = WatchMechanism::ContentHash; break;
    default: break;
  }
  why_no_pages_.clear();
  pagemap_.open(&why_no_pages_);
  pages_available_ = pagemap_.has_scan() && uffd_.open(user_mode_only_first_, &why_no_pages_);
}

bool HostWatch::dma_library_loaded_locked() {
  if (!dma_library_.empty()) return true;  // stays: unloading leaves no proof the DMA stopped
  DlScan scan;
  scan.seen = dl_adds_seen_;
  dl_iterate_phdr(dl_scan, &scan);
  if (scan.same) return false;
  dl_adds_seen_ = scan.adds;
  dma_library_ = scan.found;
  return !dma_library_.empty();
}

WatchMechanism HostWatch::mechanism_locked() {
  check_process_locked();
  if (!probed_) probe_locked();
  const WatchMechanism want = forced_ != WatchMechanism::None ? forced_ : requested_;
  if (want == WatchMechanism::ContentHash) {
    why_not_pages_now_ = forced_ != WatchMechanism::None ? "content check forced" : "GPU_OFFLOAD_RESIDENCY_CHECK=content";
    return WatchMechanism::ContentHash;
  }
  if (!pages_available_) {
    why_not_pages_now_ = why_no_pages_;
    return want == WatchMechanism::PageTracking ? WatchMechanism::None : WatchMechanism::ContentHash;
  }
  // Asked for explicitly, page tracking stays on with such a library: the user vouches for it.
  if (want != WatchMechanism::PageTracking && dma_library_loaded_locked()) {
    why_not_pages_now_ = "RDMA or io_uring library loaded: " + dma_library_;
    return WatchMechanism::ContentHash;
  }
  why_not_pages_now_.clear();
  return WatchMechanism::PageTracking;
}

WatchMechanism HostWatch::mechanism() {
  std::lock_guard<std::mutex> lock(mu_);
  return mechanism_locked();
}

const char* HostWatch::why_not_page_tracking() {
  std::lock_guard<std::mutex> lock(mu_);
  mechanism_locked();
  return why_not_pages_now_.c_str();
}

void HostWatch::force_mechanism(WatchMechanism m) {
  std::lock_guard<std::mutex> lock(mu_);
  forced_ = m;
}

bool HostWatch::protect_locked(uintptr_t start, uintptr_t end, uint64_t self) {
  // Re-protecting a page erases the evidence of writes since its last protection: every other
  // watched range holding such a page learns of the write here.
  return pagemap_.protect_written(start, end, [&](uintptr_t s, uintptr_t e) {
    for (auto& [id, w] : watched_) {
      if (id != self && w.start < e && s < w.end) w.written = true;
    }
  });
}

bool HostWatch::watch_pages_locked(uintptr_t start, uintptr_t end, uint64_t id, const char** why) {
  const int err = uffd_.register_range(start, end);
  if (err != 0) {
    *why = err == EBUSY ? "registered by another userfaultfd" : "userfaultfd registration refused";
    return false;
  }
  if (!protect_locked(start, end, id) || !pagemap_.tracked(start, end, false)) {
    *why = "write protection did not take";
    return false;
  }
  watched_[id] = Watched{start, end, false};
  return true;
}

bool HostWatch::watch(const void* p, size_t bytes, WatchTicket* t, const char** why) {
  const char* ignored;
  if (!why) why = &ignored;
  *why = "";
  *t = WatchTicket{};
  if (!p || bytes == 0) {
    *why = "empty range";
    return false;
  }
  uintptr_t start, end;
  page_bounds(p, bytes, &start, &end);
  {
    std::lock_guard<std::mutex> lock(mu_);
    const WatchMechanism m = mechanism_locked();
    t->p = p;
    t->bytes = bytes;
    t->epoch = epoch_;
    if (m == WatchMechanism::None) {
      *why = "page tracking unavailable and GPU_OFFLOAD_RESIDENCY_CHECK=pages";
      return false;
    }
    if (m == WatchMechanism::PageTracking) {
      PageRangeKind kind;
      if (!pagemap_.kind(start, end, &kind)) {
        *why = "PAGEMAP_SCAN failed";
        return false;
      }
      if (kind.hole) {
        *why = "not mapped, or a device mapping";
        return false;
      }
      if (kind.shared) {
        *why = "file-backed or shared memory";
        return false;
      }
      // Pages not present yet, or a range another userfaultfd owns: the content check can still
      // watch private memory.
      const uint64_t id = next_id_++;
      if (!kind.not_present && watch_pages_locked(start, end, id, why)) {
        t->mechanism = WatchMechanism::PageTracking;
        t->id = id;
        return true;
      }
    }
  }
  return watch_by_digest(p, bytes, t, why);
}

bool HostWatch::watch_content(const void* p, size_t bytes, WatchTicket* t, const char** why) {
  const char* ignored;
  if (!why) why = &ignored;
  *why = "";
  *t = WatchTicket{};
  if (!p || bytes == 0) {
    *why = "empty range";
    return false;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    check_process_locked();
    if (!probed_) probe_locked();  // the digest's check of the pages reads /proc/self/pagemap
    t->p = p;
    t->bytes = bytes;
    t->epoch = epoch_;
  }
  return watch_by_digest(p, bytes, t, why);
}

bool HostWatch::watch_by_digest(const void* p, size_t bytes, WatchTicket* t, const char** why) {
  // Digest first: reading the range brings every page in, so that the check below sees present
  // pages and can tell private memory from shared memory.
  const ContentDigest digest = content_digest(p, bytes, pf_);
  uintptr_t start, end;
  page_bounds(p, bytes, &start, &end);
  std::lock_guard<std::mutex> lock(mu_);
  check_process_locked();
  if (t->epoch != epoch_) {
    *why = "the process forked meanwhile";
    return false;
  }
  PageRangeKind kind;
  if (!pagemap_.kind(start, end, &kind)) {
    *why = "cannot read /proc/self/pagemap";
    return false;
  }
  if (kind.hole || kind.shared || kind.not_present) {
    *why = kind.hole ? "not mapped, or a device mapping" : kind.shared ? "file-backed or shared memory" : "pages not present";
    return false;
  }
  t->mechanism = WatchMechanism::ContentHash;
  t->digest = digest;
  return true;
}

bool HostWatch::unchanged(const WatchTicket& t) {
  if (!t.p || t.bytes == 0) return false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    check_process_locked();
    if (t.epoch != epoch_) return false;
    if (t.mechanism == WatchMechanism::PageTracking) {
      if (mechanism_locked() != WatchMechanism::PageTracking) return false;
      const auto it = watched_.find(t.id);
      if (it == watched_.end() || it->second.written) return false;
      return pagemap_.tracked(it->second.start, it->second.end, true);
    }
    if (t.mechanism != WatchMechanism::ContentHash) return false;
    // Still mapped private memory? Then reading it is safe and means what it says.
    uintptr_t start, end;
    page_bounds(t.p, t.bytes, &start, &end);
    PageRangeKind kind;
    if (!pagemap_.kind(start, end, &kind) || kind.hole || kind.shared) return false;
  }
  return content_digest(t.p, t.bytes, pf_) == t.digest;
}

bool HostWatch::rearm(WatchTicket* t) {
  const void* p = t->p;
  const size_t bytes = t->bytes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    check_process_locked();
    if (t->epoch == epoch_ && t->mechanism == WatchMechanism::PageTracking &&
        mechanism_locked() == WatchMechanism::PageTracking) {
      const auto it = watched_.find(t->id);
      if (it != watched_.end() && protect_locked(it->second.start, it->second.end, t->id) &&
          pagemap_.tracked(it->second.start, it->second.end, false)) {
        it->second.written = false;
        return true;
      }
    }
    if (t->epoch == epoch_) watched_.erase(t->id);
  }
  return watch(p, bytes, t);
}

void HostWatch::forget(WatchTicket* t) {
  std::lock_guard<std::mutex> lock(mu_);
  check_process_locked();
  if (t->epoch == epoch_) watched_.erase(t->id);
  *t = WatchTicket{};
}

}  // namespace gofl
