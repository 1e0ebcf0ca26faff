#include "common/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

namespace gofl {
namespace {

// What a file that is not a regular one is, for messages; errno set to match.
std::string not_regular(mode_t mode) {
  if (S_ISDIR(mode)) {
    errno = EISDIR;
    return "is a directory";
  }
  errno = EINVAL;
  if (S_ISFIFO(mode)) return "not a regular file (a FIFO)";
  if (S_ISCHR(mode)) return "not a regular file (a character device)";
  if (S_ISBLK(mode)) return "not a regular file (a block device)";
  if (S_ISSOCK(mode)) return "not a regular file (a socket)";
  return "not a regular file";
}

}  // namespace

bool make_dirs(const std::string& dir, std::string* failed) {
  if (failed) failed->clear();
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string part = dir.substr(0, pos);
    if (mkdir(part.c_str(), 0777) != 0 && errno != EEXIST) {
      if (failed) *failed = part;
      return false;
    }
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return false;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return false;
  }
  return true;
}

int open_regular_file(const char* path, std::string* why) {
  // stat first, so that a device is not even opened; O_NONBLOCK, so that a FIFO put in its place
  // between the two cannot block the open; fstat then checks what was really opened.
  struct stat st;
  if (stat(path, &st) != 0) {
    const int err = errno;
    if (why) *why = strerror(err);
    errno = err;
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    const std::string w = not_regular(st.st_mode);
    if (why) *why = w;
    return -1;
  }
  const int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (why) *why = strerror(err);
    errno = err;
    return -1;
  }
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string w = S_ISREG(st.st_mode) ? std::string(strerror(errno)) : not_regular(st.st_mode);
    const int err = errno;
    close(fd);
    if (why) *why = w;
    errno = err;
    return -1;
  }
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

bool read_regular_file(const std::string& path, size_t cap, std::string* text, std::string* why) {
  const int fd = open_regular_file(path.c_str(), why);
  if (fd < 0) return false;
  text->clear();
  char buf[8192];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      if (why) *why = strerror(err);
      close(fd);
      errno = err;
      return false;
    }
    if (n == 0) break;
    if (text->size() + size_t(n) > cap) {
      close(fd);
      if (why) *why = "larger than " + std::to_string(cap >> 20) + " MB";
      errno = EFBIG;
      return false;
    }
    text->append(buf, size_t(n));
  }
  close(fd);
  return true;
}

}  // namespace gofl
