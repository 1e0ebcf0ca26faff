// Nanoseconds per call for calls below the work threshold: dgemm n=4, dgemm with no work (m=0),
// cblas_dgemm n=4 and dgetrf n=4. Run it with and without the library (bench/overhead.sh) and
// subtract: the difference is what gpu-offload adds to every small call.
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
            const int*, const double*, const int*, const double*, double*, const int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#define BEST_OF 7
#define TIME(label, iters, body)                                   \
  do {                                                             \
    double best = 1e30;                                            \
    for (int rep = 0; rep < BEST_OF; ++rep) {                      \
      double t0 = now();                                           \
      for (long it = 0; it < (iters); ++it) { body; }              \
      double dt = (now() - t0) / (iters) * 1e9;                    \
      if (dt < best) best = dt;                                    \
    }                                                              \
    printf("%-28s %10.2f\n", label, best);                         \
  } while (0)

int main(int argc, char** argv) {
  long iters = argc > 1 ? atol(argv[1]) : 2000000;
  int n = 4, zero_m = 0, info = 0, ipiv[4];
  double a[16], b[16], c[16], lu[16], one = 1.0, beta = 0.0;
  for (int i = 0; i < 16; ++i) { a[i] = 1.0 + i; b[i] = 2.0 - i; c[i] = 0; }
  // Warm up: resolves the real functions once, outside the timed loops.
  dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &beta, c, &n);
  printf("%-28s %10s\n", "call", "ns/call");
  TIME("dgemm_ n=4", iters, dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &beta, c, &n));
  TIME("dgemm_ m=0 (no work)", iters, dgemm_("N", "N", &zero_m, &n, &n, &one, a, &n, b, &n, &beta, c, &n));
  TIME("cblas_dgemm n=4", iters,
       cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n));
  TIME("dgetrf_ n=4", iters / 4, {
    for (int i = 0; i < 16; ++i) lu[i] = a[i] + (i % 5 == 0 ? 10.0 : 0.0);
    dgetrf_(&n, &n, lu, &n, ipiv, &info);
  });
  return c[0] == 12345.0;  // keep the results alive
}
