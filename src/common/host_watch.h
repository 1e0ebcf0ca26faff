// "May these host bytes have changed since I started watching them?" for GPU residency: a device
// copy of a host operand is reused by a later call only while HostWatch says its bytes are
// unchanged. Every answer errs one way: "changed" when in doubt.
//
// Two mechanisms behind one interface, chosen per process at run time:
// - PageTracking (Linux 6.7+, page_tracking.h): the kernel write-protects the range and records
//   every write fault (any thread's stores, kernel writes such as read()/recv()); unchanged() is
//   one PAGEMAP_SCAN ioctl. Not used while an RDMA/fabric library is loaded or io_uring's is
//   (their devices and registered buffers write memory without a page fault).
// - ContentHash (everywhere else, and for ranges page tracking refuses, e.g. pages not present
//   or registered by another userfaultfd): a 128-bit digest of every byte (content_digest.h),
//   taken before the caller copies the range and compared by unchanged().
// File-backed and shared memory is never watched: it can change without a write by this process.
//
// GPU_OFFLOAD_RESIDENCY_CHECK=auto|pages|content (default auto) chooses for users and tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/content_digest.h"
#include "common/page_tracking.h"

namespace gofl {

enum class WatchMechanism { None, PageTracking, ContentHash };
const char* mechanism_name(WatchMechanism m);

// What watch() returns and unchanged() takes. A plain value: copy it freely, but forget() it when
// done (page tracking keeps an entry per ticket).
struct WatchTicket {
  const void* p = nullptr;
  size_t bytes = 0;
  WatchMechanism mechanism = WatchMechanism::None;
  uint64_t id = 0;        // the watcher's entry (page tracking)
  uint64_t epoch = 0;     // the process incarnation it belongs to (a forked child starts a new one)
  ContentDigest digest;   // content check
};

// One per process (the backend's): each instance has its own userfaultfd, and a range that one
// instance registered cannot be page-tracked by another. Thread-safe.
class HostWatch {
 public:
  using ParallelFor = gofl::ParallelFor;
  // `pf` spreads the content check over threads; empty: the calling thread does it all.
  explicit HostWatch(ParallelFor pf = {});
  ~HostWatch();
  HostWatch(const HostWatch&) = delete;
  HostWatch& operator=(const HostWatch&) = delete;

  // What new watches use now: probed once (lazily), re-checked cheaply for newly loaded
  // RDMA/fabric libraries. None only when GPU_OFFLOAD_RESIDENCY_CHECK=pages and page tracking is
  // unavailable.
  WatchMechanism mechanism();
  // Why PageTracking is not used ("" when it is): "no userfaultfd (...)", "no PAGEMAP_SCAN ...",
  // "RDMA or io_uring library loaded: libibverbs.so.1", "GPU_OFFLOAD_RESIDENCY_CHECK=content", ...
  // Valid until the next call.
  const char* why_not_page_tracking();

  // Starts watching [p, p + bytes). Call it BEFORE reading the range to copy it, so that a write
  // racing with the copy makes the next unchanged() false instead of matching. False (and `why`)
  // when the range cannot be watched: empty, not private anonymous memory (file-backed, shared,
  // device), not mapped.
  bool watch(const void* p, size_t bytes, WatchTicket* t, const char** why = nullptr);
  // watch() by the content check, whatever mechanism() says (residency's first, fault-free stage).
  // It leaves mechanism() alone: a check that another thread runs meanwhile keeps its answer.
  bool watch_content(const void* p, size_t bytes, WatchTicket* t, const char** why = nullptr);
  // False when any byte of the range may have changed since watch()/rearm(), and for a ticket of
  // another process incarnation, a forgotten one, or a page-tracking ticket after the process
  // switched to the content check. Page tracking: one ioctl. Content check: reads every byte, so
  // call it only for a range the program still has mapped (e.g. one it just passed to BLAS).
  bool unchanged(const WatchTicket& t);
  // Watch from now on, as if watch() were called again: call it before copying the range again,
  // or after writing it yourself (a GPU result copied out). False when it can no longer be
  // watched (then unchanged() is false).
  bool rearm(WatchTicket* t);
  // Stops watching (the page protection stays: ranges may share pages, and a lingering
  // protection only costs the program one fault per page on its next write).
  void forget(WatchTicket* t);
  // In a forked child: keep no watch (the userfaultfd and the registrations are the parent's).
  // Also done automatically when a call notices the process id changed.
  void after_fork_child();

  // Test hooks. force_mechanism: use `m` for new watches (None: back to the environment/auto).
  // prefer_user_mode_only_uffd: open the userfaultfd with UFFD_USER_MODE_ONLY first, as an
  // unprivileged process must; call before the first use.
  void force_mechanism(WatchMechanism m);
  void prefer_user_mode_only_uffd() { user_mode_only_first_ = true; }
  bool uffd_user_mode_only() const { return uffd_.user_mode_only(); }

 private:
  struct Watched {  // a page-tracked ticket: its pages and whether a re-protection hid a write
    uintptr_t start, end;
    bool written;
  };
  void check_process_locked();
  void probe_locked();
  WatchMechanism mechanism_locked();
  bool dma_library_loaded_locked();
  bool protect_locked(uintptr_t start, uintptr_t end, uint64_t self);
  bool watch_pages_locked(uintptr_t start, uintptr_t end, uint64_t id, const char** why);
  bool watch_by_digest(const void* p, size_t bytes, WatchTicket* t, const char** why);

  ParallelFor pf_;
  std::mutex mu_;
  int pid_ = 0;
  uint64_t epoch_ = 1;
  bool probed_ = false;
  bool user_mode_only_first_ = false;
  WatchMechanism forced_ = WatchMechanism::None;
  WatchMechanism requested_ = WatchMechanism::None;  // from the environment; None: auto
  bool pages_available_ = false;
  std::string why_no_pages_;       // why the kernel's write watch is unavailable
  std::string why_not_pages_now_;  // what why_not_page_tracking() returns
  unsigned long long dl_adds_seen_ = ~0ull;
  std::string dma_library_;
  Pagemap pagemap_;
  AsyncWriteProtect uffd_;
  uint64_t next_id_ = 1;
  std::unordered_map<uint64_t, Watched> watched_;
};

}  // namespace gofl
