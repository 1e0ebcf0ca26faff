// The kernel's own write watch (Linux 6.7+), the preferred mechanism of HostWatch (host_watch.h):
// a userfaultfd with asynchronous write protection (UFFD_FEATURE_WP_ASYNC) write-protects a range,
// the kernel itself resolves every later write fault by clearing the page's uffd-wp bit (stores by
// any thread, and kernel writes such as read() into the range, which fault the same way), and the
// PAGEMAP_SCAN ioctl of /proc/self/pagemap later says which pages lost the bit. No handler thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace gofl {

size_t host_page_size();

// What a page range is, read off /proc/self/pagemap (PAGEMAP_SCAN where the kernel has it, else
// one 64-bit entry per page).
struct PageRangeKind {
  bool hole = false;         // some page is not mapped, or is a device (PFN) mapping
  bool shared = false;       // some present page is file-backed or shared memory
  bool not_present = false;  // some page is not in memory (never touched, swapped, reclaimed)
  bool private_anonymous_present() const { return !hole && !shared && !not_present; }
};

// The calling process's /proc/self/pagemap. A forked child must open its own: the descriptor
// keeps naming the address space of the process that opened it.
class Pagemap {
 public:
  ~Pagemap() { close(); }
  bool open(std::string* why);
  void close();
  bool is_open() const { return fd_ >= 0; }
  bool has_scan() const { return scan_; }  // the PAGEMAP_SCAN ioctl answers

  // [start, end) page aligned. False when the kernel cannot say (the range is then treated as
  // not private anonymous memory).
  bool kind(uintptr_t start, uintptr_t end, PageRangeKind* out) const;

  // Page tracking only (has_scan(), the range registered with an async write-protect
  // userfaultfd). Write-protects every page written since its last protection, each page
  // atomically with reading its state, and calls written(start, end) for each run of such pages.
  // False when the scan fails (e.g. part of the range is not registered).
  bool protect_written(uintptr_t start, uintptr_t end,
                       const std::function<void(uintptr_t, uintptr_t)>& written) const;
  // Page tracking only: true when every page of [start, end) is present, in a mapping registered
  // for asynchronous write protection and, when `check_written`, not written since it was
  // protected. A hole or a new mapping makes it false. One ioctl, about 5-10 ns per page.
  bool tracked(uintptr_t start, uintptr_t end, bool check_written) const;

 private:
  bool kind_by_scan(uintptr_t start, uintptr_t end, PageRangeKind* out) const;
  bool kind_by_entries(uintptr_t start, uintptr_t end, PageRangeKind* out) const;
  int fd_ = -1;
  bool scan_ = false;
};

// One userfaultfd with UFFD_FEATURE_WP_ASYNC (and WP_UNPOPULATED, which PAGE_IS_WPALLOWED needs for
// anonymous memory). Closing it makes the kernel unregister and unprotect its ranges.
class AsyncWriteProtect {
 public:
  ~AsyncWriteProtect() { close(); }
  // Tries userfaultfd(2), then with UFFD_USER_MODE_ONLY (what an unprivileged process gets when
  // vm.unprivileged_userfaultfd=0), then /dev/userfaultfd; `user_mode_only_first` starts with
  // the second (a test hook: as root the first always succeeds).
  bool open(bool user_mode_only_first, std::string* why);
  // In a forked child this only drops the child's reference: the parent keeps its userfaultfd.
  void close();
  bool is_open() const { return fd_ >= 0; }
  bool user_mode_only() const { return user_mode_only_; }
  // Registers [start, end) (page aligned) for write-protect tracking. 0, or the errno: EBUSY when
  // another userfaultfd of the process has registered part of it.
  int register_range(uintptr_t start, uintptr_t end) const;

 private:
  int fd_ = -1;
  bool user_mode_only_ = false;
};

}  // namespace gofl
