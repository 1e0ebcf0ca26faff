/* The GPU start of --device auto runs on a thread of its own while the program goes on. This
 * client makes worthwhile dgemm_ calls (n = 160) under a profile whose start-up is free, so that
 * its first decided call begins the start, and then does what a program may do while the start is
 * still running:
 *   exit   CALLS calls, then exit() at once (the start may be inside dlopen or CUDA's init);
 *   fork   one call, fork() at once: the child makes CALLS calls and exits; the parent waits, then
 *          makes CALLS calls;
 *   wait   calls until one ran on the GPU (gpu_offload_last_call) or CALLS calls were made.
 * Every result is checked against a plain triple loop; stdout: one line per process,
 * "<who> calls K bad B first-gpu G" (G: the 1-based call that ran on the GPU first, 0: none).
 * Usage: start_client exit|fork|wait CALLS */
#include <dlfcn.h>
#include <execinfo.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*);

enum { N = 160 };
static double a[N * N], b[N * N], c[N * N], ref[N * N];

typedef void (*last_call_fn)(int*, int*, int*);

static int on_gpu(void) {
  last_call_fn f = (last_call_fn)dlsym(RTLD_DEFAULT, "gpu_offload_last_call");
  int device = 0, reason = 0, status = 0;
  if (f) f(&device, &reason, &status);
  return device == 1;
}

/* K calls; returns the number of wrong results, and the first call that ran on the GPU in *gpu. */
static int calls(int k, int* gpu) {
  int n = N, bad = 0;
  double one = 1, zero = 0;
  *gpu = 0;
  for (int i = 1; i <= k; ++i) {
    memset(c, 0, sizeof c);
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
    double err = 0, big = 0;
    for (int x = 0; x < N * N; ++x) {
      err = fmax(err, fabs(c[x] - ref[x]));
      big = fmax(big, fabs(ref[x]));
    }
    bad += !(err <= 1e-12 * big);
    if (!*gpu && on_gpu()) *gpu = i;
  }
  return bad;
}

static void report(const char* who, int k, int bad, int gpu) {
  printf("%s calls %d bad %d first-gpu %d\n", who, k, bad, gpu);
  fflush(stdout);
}

/* A crash prints where it happened (library and offset) before the default action. */
static void on_crash(int sig) {
  void* frames[64];
  int n = backtrace(frames, 64);
  static const char msg[] = "start_client: crashed; stack:\n";
  if (write(2, msg, sizeof msg - 1) < 0) {}
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

int main(int argc, char** argv) {
  signal(SIGSEGV, on_crash);
  signal(SIGABRT, on_crash);
  signal(SIGBUS, on_crash);
  if (argc != 3) {
    fprintf(stderr, "usage: %s exit|fork|wait CALLS\n", argv[0]);
    return 2;
  }
  const int k = atoi(argv[2]);
  for (int i = 0; i < N * N; ++i) {
    a[i] = (double)(i % 17 - 8) / 8.0;
    b[i] = (double)(i % 13 - 6) / 4.0;
  }
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < N; ++i) {
      double s = 0;
      for (int l = 0; l < N; ++l) s += a[i + l * N] * b[l + j * N];
      ref[i + j * N] = s;
    }
  int gpu = 0, bad = 0;
  if (!strcmp(argv[1], "exit")) {
    bad = calls(k, &gpu);
    report("exit", k, bad, gpu);
    exit(bad ? 1 : 0);
  }
  if (!strcmp(argv[1], "fork")) {
    bad = calls(1, &gpu);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 3;
    if (pid == 0) {
      int cg = 0;
      int cb = calls(k, &cg);
      report("child", k, cb, cg);
      exit(cb ? 1 : 0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "child failed (status %d)\n", status);
      return 4;
    }
    int pg = 0;
    bad += calls(k, &pg);
    report("parent", k + 1, bad, gpu ? gpu : pg ? pg + 1 : 0);
    return bad ? 1 : 0;
  }
  if (!strcmp(argv[1], "wait")) {
    int i = 0;
    for (; i < k && !gpu; ++i) {
      int g = 0;
      bad += calls(1, &g);
      if (g) gpu = i + 1;
    }
    report("wait", i, bad, gpu);
    return bad ? 1 : 0;
  }
  fprintf(stderr, "usage: %s exit|fork|wait CALLS\n", argv[0]);
  return 2;
}
