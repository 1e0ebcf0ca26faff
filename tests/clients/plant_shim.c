/* Test-only LD_PRELOAD shim standing in for an attacker who guessed the trace file's exact name: when
 * the process opens a path ending in ".gofltrace", the shim first plants something at that very path,
 * then lets the open go ahead.
 *   attempt 0: a symlink to $PLANT_VICTIM     attempt 1: a regular file containing "PLANTED\n"
 *   later attempts: nothing (or, with PLANT_ALL=1, a regular file every time)
 * Each attempt is logged to $PLANT_LOG as "ATTEMPT FLAGS(octal) RESULT ERRNO PATH". */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int open_fn(const char*, int, ...);
typedef int openat_fn(int, const char*, int, ...);

static int g_attempt;

static int is_trace(const char* path) {
  static const char suffix[] = ".gofltrace";
  size_t lp = strlen(path), ls = sizeof suffix - 1;
  return lp > ls && strcmp(path + lp - ls, suffix) == 0;
}

static int planted_open(const char* sym, int dirfd, const char* path, int flags, mode_t mode) {
  open_fn* real = (open_fn*)dlsym(RTLD_NEXT, "open");
  openat_fn* real_at = (openat_fn*)dlsym(RTLD_NEXT, sym);
  if (!real || !real_at) abort();
  if (!is_trace(path)) return real_at(dirfd, path, flags, mode);
  int k = __atomic_fetch_add(&g_attempt, 1, __ATOMIC_SEQ_CST);
  const char* victim = getenv("PLANT_VICTIM");
  int all = getenv("PLANT_ALL") && atoi(getenv("PLANT_ALL")) == 1;
  if (k == 0 && victim && !all) {
    if (symlinkat(victim, dirfd, path) != 0) abort();
  } else if (k == 1 || all) {
    int fd = real_at(dirfd, path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, "PLANTED\n", 8) != 8) abort();
    close(fd);
  }
  int r = real_at(dirfd, path, flags, mode);
  int e = errno;
  const char* log = getenv("PLANT_LOG");
  if (log) {
    int lfd = real(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (lfd >= 0) {
      char line[1024];
      int len = snprintf(line, sizeof line, "%d %o %d %d %s\n", k, (unsigned)flags, r, r < 0 ? e : 0, path);
      if (write(lfd, line, (size_t)len) != len) abort();
      close(lfd);
    }
  }
  errno = e;
  return r;
}

#define MODE_ARG(flags, mode)                          \
  mode_t mode = 0;                                     \
  if ((flags) & (O_CREAT | O_TMPFILE)) {               \
    va_list ap;                                        \
    va_start(ap, flags);                               \
    mode = (mode_t)va_arg(ap, int);                    \
    va_end(ap);                                        \
  }

int open(const char* path, int flags, ...) {
  MODE_ARG(flags, mode);
  return planted_open("openat", AT_FDCWD, path, flags, mode);
}

int open64(const char* path, int flags, ...) {
  MODE_ARG(flags, mode);
  return planted_open("openat64", AT_FDCWD, path, flags, mode);
}

int openat(int dirfd, const char* path, int flags, ...) {
  MODE_ARG(flags, mode);
  return planted_open("openat", dirfd, path, flags, mode);
}

int openat64(int dirfd, const char* path, int flags, ...) {
  MODE_ARG(flags, mode);
  return planted_open("openat64", dirfd, path, flags, mode);
}
