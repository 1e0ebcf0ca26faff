#include "common/page_tracking.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace gofl {

namespace {

// Linux 6.7+ uapi that Debian's kernel headers predate: include/uapi/linux/fs.h (PAGEMAP_SCAN)
// and include/uapi/linux/userfaultfd.h (the feature bits).
struct PageRegion {
  uint64_t start;
  uint64_t end;  // exclusive
  uint64_t categories;
};
struct PmScanArg {
  uint64_t size;
  uint64_t flags;
  uint64_t start;
  uint64_t end;
  uint64_t walk_end;  // written by the kernel: where the walk stopped
  uint64_t vec;
  uint64_t vec_len;
  uint64_t max_pages;  // 0: no limit
  uint64_t category_inverted;
  uint64_t category_mask;
  uint64_t category_anyof_mask;
  uint64_t return_mask;
};
static_assert(sizeof(PmScanArg) == 96, "struct pm_scan_arg is twelve __u64");
static_assert(sizeof(PageRegion) == 24, "struct page_region is three __u64");
constexpr unsigned long kPagemapScan = _IOWR('f', 16, PmScanArg);
constexpr uint64_t kPageIsWritten = 1u << 1;
constexpr uint64_t kPageIsFile = 1u << 2;
constexpr uint64_t kPageIsPresent = 1u << 3;
constexpr uint64_t kScanWpMatching = 1u << 0;
constexpr uint64_t kScanCheckWpAsync = 1u << 1;
constexpr uint64_t kUffdFeatureWpUnpopulated = 1u << 13;
constexpr uint64_t kUffdFeatureWpAsync = 1u << 15;

// /proc/pid/pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst).
constexpr uint64_t kEntryPresent = 1ull << 63;
constexpr uint64_t kEntryFileOrShared = 1ull << 61;

int scan(int fd, PmScanArg* arg) {
  arg->size = sizeof(*arg);
  int n;
  do n = ioctl(fd, kPagemapScan, arg);
  while (n < 0 && errno == EINTR);
  return n;
}

}  // namespace

size_t host_page_size() {
  static const size_t size = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return size;
}

bool Pagemap::open(std::string* why) {
  close();
  fd_ = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    if (why) *why = std::string("cannot open /proc/self/pagemap: ") + strerror(errno);
    return false;
  }
  // Probe PAGEMAP_SCAN on a page this process surely has: the one holding this static.
  static const char probe = 0;
  const uintptr_t page = reinterpret_cast<uintptr_t>(&probe) & ~(host_page_size() - 1);
  PageRegion region;
  PmScanArg arg{};
  arg.start = page;
  arg.end = page + host_page_size();
  arg.vec = reinterpret_cast<uintptr_t>(&region);
  arg.vec_len = 1;
  arg.return_mask = kPageIsPresent;
  scan_ = scan(fd_, &arg) >= 0;
  if (!scan_ && why) *why = std::string("no PAGEMAP_SCAN (Linux 6.7+): ") + strerror(errno);
  return true;
}

void Pagemap::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  scan_ = false;
}

bool Pagemap::kind(uintptr_t start, uintptr_t end, PageRangeKind* out) const {
  *out = PageRangeKind{};
  if (fd_ < 0) return false;
  return scan_ ? kind_by_scan(start, end, out) : kind_by_entries(start, end, out);
}

bool Pagemap::kind_by_scan(uintptr_t start, uintptr_t end, PageRangeKind* out) const {
  PageRegion regions[32];
  uintptr_t covered = start;  // the walk reports every mapped page; what it skips is a hole
  while (covered < end) {
    PmScanArg arg{};
    arg.start = covered;
    arg.end = end;
    arg.vec = reinterpret_cast<uintptr_t>(regions);
    arg.vec_len = sizeof(regions) / sizeof(regions[0]);
    arg.return_mask = kPageIsPresent | kPageIsFile;
    const int n = scan(fd_, &arg);
    if (n < 0) return false;
    for (int i = 0; i < n; ++i) {
      if (regions[i].start != covered) out->hole = true;
      if (!(regions[i].categories & kPageIsPresent)) out->not_present = true;
      if (regions[i].categories & kPageIsFile) out->shared = true;
      covered = regions[i].end;
    }
    if (arg.walk_end >= end || n < static_cast<int>(arg.vec_len)) {
      if (covered < end) out->hole = true;
      break;
    }
    if (arg.walk_end > covered) out->hole = true;  // skipped before the vector filled up
    covered = arg.walk_end;
  }
  return true;
}

bool Pagemap::kind_by_entries(uintptr_t start, uintptr_t end, PageRangeKind* out) const {
  // An unmapped page reads as an empty entry, like an untouched one: msync tells them apart.
  if (msync(reinterpret_cast<void*>(start), end - start, MS_ASYNC) != 0) out->hole = true;
  std::vector<uint64_t> entries(8192);
  for (uintptr_t page = start; page < end;) {
    const size_t want = std::min<size_t>(entries.size(), (end - page) / host_page_size());
    const off_t at = static_cast<off_t>(page / host_page_size() * sizeof(uint64_t));
    const ssize_t got = pread(fd_, entries.data(), want * sizeof(uint64_t), at);
    if (got <= 0) return false;
    const size_t n = static_cast<size_t>(got) / sizeof(uint64_t);
    for (size_t i = 0; i < n; ++i) {
      if (!(entries[i] & kEntryPresent)) out->not_present = true;
      else if (entries[i] & kEntryFileOrShared) out->shared = true;
    }
    page += n * host_page_size();
  }
  return true;
}

bool Pagemap::protect_written(uintptr_t start, uintptr_t end,
                              const std::function<void(uintptr_t, uintptr_t)>& written) const {
  if (fd_ < 0 || !scan_) return false;
  PageRegion regions[64];
  while (start < end) {
    PmScanArg arg{};
    arg.flags = kScanWpMatching | kScanCheckWpAsync;
    arg.start = start;
    arg.end = end;
    arg.vec = reinterpret_cast<uintptr_t>(regions);
    arg.vec_len = sizeof(regions) / sizeof(regions[0]);
    arg.category_mask = kPageIsWritten;
    arg.return_mask = kPageIsWritten;
    const int n = scan(fd_, &arg);
    if (n < 0) return false;
    for (int i = 0; i < n; ++i) written(regions[i].start, regions[i].end);
    if (arg.walk_end <= start) return false;  // no progress: never loop forever
    start = arg.walk_end;
  }
  return true;
}

bool Pagemap::tracked(uintptr_t start, uintptr_t end, bool check_written) const {
  if (fd_ < 0 || !scan_) return false;
  // Reports only the first page that is not present (or, when asked, was written): a clean page
  // costs no output and no page lookup. A page table missing altogether (a huge page zapped by
  // MADV_DONTNEED) counts as not present; a page outside a registered mapping fails the scan
  // (EPERM); only a range with no mapping at all is skipped by the walk, which msync() finds.
  // (File-backed and device mappings were refused before registration, by kind().)
  PageRegion region{};
  PmScanArg arg{};
  arg.flags = kScanCheckWpAsync;
  arg.start = start;
  arg.end = end;
  arg.vec = reinterpret_cast<uintptr_t>(&region);
  arg.vec_len = 1;
  arg.max_pages = 1;
  arg.category_inverted = kPageIsPresent;
  arg.category_anyof_mask = kPageIsPresent | (check_written ? kPageIsWritten : 0);
  arg.return_mask = kPageIsPresent | kPageIsWritten;
  if (scan(fd_, &arg) != 0) return false;
  return msync(reinterpret_cast<void*>(start), end - start, MS_ASYNC) == 0;
}

bool AsyncWriteProtect::open(bool user_mode_only_first, std::string* why) {
  close();
  std::string tried;
  auto note = [&](const char* how) {
    if (!tried.empty()) tried += ", ";
    tried += how;
    tried += ": ";
    tried += strerror(errno);
  };
  const int flags = O_CLOEXEC | O_NONBLOCK;
  for (int attempt = 0; attempt < 2 && fd_ < 0; ++attempt) {
    const bool user_only = (attempt == 0) == user_mode_only_first;
    fd_ = static_cast<int>(syscall(SYS_userfaultfd, flags | (user_only ? UFFD_USER_MODE_ONLY : 0)));
    if (fd_ >= 0) user_mode_only_ = user_only;
    else note(user_only ? "userfaultfd(UFFD_USER_MODE_ONLY)" : "userfaultfd");
  }
  if (fd_ < 0) {
    const int dev = ::open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
    if (dev >= 0) {
      fd_ = ioctl(dev, USERFAULTFD_IOC_NEW, flags);
      if (fd_ < 0) note("USERFAULTFD_IOC_NEW");
      ::close(dev);
    } else {
      note("/dev/userfaultfd");
    }
  }
  if (fd_ < 0) {
    if (why) *why = "no userfaultfd (" + tried + ")";
    return false;
  }
  uffdio_api api{};
  api.api = UFFD_API;
  api.features = kUffdFeatureWpAsync | kUffdFeatureWpUnpopulated;
  if (ioctl(fd_, UFFDIO_API, &api) != 0) {
    if (why) *why = std::string("userfaultfd lacks asynchronous write protection (Linux 6.7+): ") + strerror(errno);
    close();
    return false;
  }
  return true;
}

void AsyncWriteProtect::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  user_mode_only_ = false;
}

int AsyncWriteProtect::register_range(uintptr_t start, uintptr_t end) const {
  if (fd_ < 0) return EBADF;
  uffdio_register reg{};
  reg.range.start = start;
  reg.range.len = end - start;
  reg.mode = UFFDIO_REGISTER_MODE_WP;
  return ioctl(fd_, UFFDIO_REGISTER, &reg) == 0 ? 0 : errno;
}

}  // namespace gofl
