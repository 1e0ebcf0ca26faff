/* What a traced program may do to its descriptors and how it may end, for test_trace_safety.py.
 * Every mode calls dgemm_ BEFORE times (over 256: a writer that buffers has its file open by then),
 * does its thing, then calls it AFTER times (over a trace chunk of 256 records: the file must grow).
 *   close_range DATA  close_range(3, ~0U, 0), then opens DATA and writes "hello\n" into it
 *   closefrom DATA    the same with closefrom(3)
 *   dup2 DATA         opens DATA, writes "hello\n", dup2s it onto every descriptor 3..63
 *   sigint | sigkill  raises the signal after BEFORE + AFTER calls (the default action: no exit handlers)
 *   exec              execs /bin/true after BEFORE + AFTER calls
 *   loop              calls dgemm_ until killed, printing "calls N" after each (for a signal from outside)
 *   plain             nothing
 * stdout: "calls N" lines (loop, PROGRESS=1) and "data ok" when DATA still holds exactly "hello\n".
 * Usage: trace_safety_client MODE BEFORE AFTER [DATA] */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*);

enum { N = 8 };
static double a[N * N], b[N * N], c[N * N];
static long done;
static int progress;

static void calls(long count) {
  int n = N;
  double one = 1.0, zero = 0.0;
  for (long i = 0; i < count; ++i) {
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
    ++done;
    if (progress) {
      printf("calls %ld\n", done);
      fflush(stdout);
    }
  }
}

static int open_data(const char* path) {
  int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0 || write(fd, "hello\n", 6) != 6) {
    perror(path);
    exit(3);
  }
  return fd;
}

static void check_data(const char* path) {
  char buf[64];
  int fd = open(path, O_RDONLY);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof buf);
  if (n == 6 && memcmp(buf, "hello\n", 6) == 0) printf("data ok\n");
  else printf("data damaged: %zd bytes\n", n);
}

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s MODE BEFORE AFTER [DATA]\n", argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  long before = atol(argv[2]), after = atol(argv[3]);
  const char* data = argc > 4 ? argv[4] : NULL;
  progress = getenv("PROGRESS") && atoi(getenv("PROGRESS")) == 1;
  for (int i = 0; i < N * N; ++i) a[i] = b[i] = (double)(i % 7) / 7.0;
  calls(before);
  if (!strcmp(mode, "close_range") || !strcmp(mode, "closefrom") || !strcmp(mode, "dup2")) {
    if (!data) return 2;
    if (!strcmp(mode, "close_range")) {
      if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0) return 4;
      open_data(data);
    } else if (!strcmp(mode, "closefrom")) {
      closefrom(3);
      open_data(data);
    } else {
      int fd = open_data(data);
      for (int t = 3; t < 64; ++t)
        if (t != fd) dup2(fd, t);
    }
    calls(after);
    check_data(data);
    return 0;
  }
  if (!strcmp(mode, "loop")) {
    progress = 1;
    for (;;) calls(1);
  }
  calls(after);
  fflush(stdout);
  if (!strcmp(mode, "sigint")) raise(SIGINT);
  if (!strcmp(mode, "sigkill")) raise(SIGKILL);
  if (!strcmp(mode, "exec")) {
    execl("/bin/true", "true", (char*)NULL);
    return 5;
  }
  return strcmp(mode, "plain") == 0 ? 0 : 2;
}
