/* Linked directly against libgpuoffload.so (absolute RUNPATH, no LD_PRELOAD) and a BLAS: the tests
 * copy it, make it setuid and check that a privileged run ignores GPU_OFFLOAD_* (secure_getenv).
 * It calls dgemm_ three times and prints a hash of the results (stdout), and whether the kernel started it
 * in secure mode (stderr: "at_secure 0|1"). */
#include <stdint.h>
#include <stdio.h>
#include <sys/auxv.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*);

int main(void) {
  enum { N = 33 };
  static double a[N * N], b[N * N], c[N * N];
  int n = N;
  double one = 1, half = 0.5;
  for (int i = 0; i < N * N; ++i) {
    a[i] = (double)(i % 11 - 5) / 4.0;
    b[i] = (double)(i % 7 - 3) / 2.0;
  }
  uint64_t h = 1469598103934665603ull;
  for (int r = 0; r < 3; ++r) {
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &half, c, &n);
    const unsigned char* p = (const unsigned char*)c;
    for (size_t x = 0; x < sizeof c; ++x) h = (h ^ p[x]) * 1099511628211ull;
  }
  printf("hash %016llx\n", (unsigned long long)h);
  fprintf(stderr, "at_secure %lu\n", getauxval(AT_SECURE));
  return 0;
}
