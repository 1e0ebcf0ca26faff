// The fuzzer's bytes as a file that can be opened by path: a memfd (no disk, no clean-up), named
// /proc/self/fd/N. Readers then take exactly the code path a trace or settings file on disk takes.
#pragma once

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>

class FuzzFile {
 public:
  FuzzFile(const uint8_t* data, size_t size) {
    fd_ = memfd_create("gofl-fuzz", MFD_CLOEXEC);
    if (fd_ < 0) abort();
    for (size_t done = 0; done < size;) {
      const ssize_t w = write(fd_, data + done, size - done);
      if (w <= 0) abort();
      done += size_t(w);
    }
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~FuzzFile() { close(fd_); }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};
