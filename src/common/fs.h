// Small file-system helpers shared by the preload library and the command-line tool.
#pragma once

#include <stddef.h>

#include <string>

namespace gofl {

// mkdir -p: true when `dir` exists as a folder afterwards. On failure errno says why and *failed
// (if given) names the component mkdir could not make; it is empty when `dir` exists but is not
// a folder.
bool make_dirs(const std::string& dir, std::string* failed = nullptr);

// Opens `path` for reading only if it is a regular file: a FIFO, a device or a folder is refused
// before anything could block on it or read from it without end. Returns a blocking, close-on-exec
// descriptor, or -1 with *why ("is a directory", "not a regular file (a FIFO)", strerror) and
// errno set (ENOENT for a missing file, EISDIR, EINVAL for other special files).
int open_regular_file(const char* path, std::string* why);

// The whole content of a regular file (open_regular_file) of at most `cap` bytes. False with *why
// and errno set when it cannot be opened, is larger than `cap` (EFBIG) or a read fails.
bool read_regular_file(const std::string& path, size_t cap, std::string* text, std::string* why);

}  // namespace gofl
