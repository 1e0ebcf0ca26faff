// Nanoseconds per call for calls below the work threshold: dgemm n=4, dgemm with no work (m=0),
// cblas_dgemm n=4, dgetrf n=4, the ?copy of one row as NumPy makes it (dcopy_ and cblas_dcopy of
// 8 strided elements), dcopy_ of 18 contiguous elements and fftw_execute of a 60-point complex
// transform (the calls Quantum ESPRESSO and NWChem make by the million). Run it with and without the
// library (bench/overhead.sh) and subtract: the difference is what gpu-offload adds to every small
// call. `overhead ITERS copy` times only the copies.
#include <cblas.h>
#include <fftw3.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
            const int*, const double*, const int*, const double*, double*, const int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void dcopy_(const int*, const double*, const int*, double*, const int*);

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
  const int copies_only = argc > 2 && argv[2][0] == 'c';
  int n = 4, zero_m = 0, info = 0, ipiv[4], row = 8, stride = 8, unit = 1;
  double a[72], b[16], c[16], lu[16], one = 1.0, beta = 0.0;
  for (int i = 0; i < 72; ++i) a[i] = 1.0 + i;
  for (int i = 0; i < 16; ++i) { b[i] = 2.0 - i; c[i] = 0; }
  // Warm up: resolves the real functions once, outside the timed loops.
  dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &beta, c, &n);
  printf("%-28s %10s\n", "call", "ns/call");
  // One row of an 8 x 8 C-ordered matrix into a Fortran-ordered column: NumPy's conversion step.
  TIME("dcopy_ n=8 incx=8", iters, dcopy_(&row, a + (it & 1), &stride, lu + (it & 7), &unit));
  TIME("cblas_dcopy n=8 incx=8", iters, cblas_dcopy(row, a + (it & 1), stride, lu + (it & 7), unit));
  int eighteen = 18;
  TIME("dcopy_ n=18", iters, dcopy_(&eighteen, a + (it & 1), &unit, a + 40, &unit));
  if (copies_only) return lu[0] == 12345.0;
  // Interleaved re, im (fftw_complex is a C99 complex where cblas.h brought complex.h in).
  double* in = fftw_malloc(sizeof(fftw_complex) * 60);
  double* out = fftw_malloc(sizeof(fftw_complex) * 60);
  fftw_plan plan = fftw_plan_dft_1d(60, (fftw_complex*)in, (fftw_complex*)out, FFTW_FORWARD, FFTW_ESTIMATE);
  for (int i = 0; i < 120; ++i) in[i] = 1.0 / (1 + i);
  TIME("fftw_execute 60-point c2c", iters, fftw_execute(plan));
  TIME("dgemm_ n=4", iters, dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &beta, c, &n));
  TIME("dgemm_ m=0 (no work)", iters, dgemm_("N", "N", &zero_m, &n, &n, &one, a, &n, b, &n, &beta, c, &n));
  TIME("cblas_dgemm n=4", iters,
       cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0, a, n, b, n, 0.0, c, n));
  TIME("dgetrf_ n=4", iters / 4, {
    for (int i = 0; i < 16; ++i) lu[i] = a[i] + (i % 5 == 0 ? 10.0 : 0.0);
    dgetrf_(&n, &n, lu, &n, ipiv, &info);
  });
  const int alive = c[0] == 12345.0 || out[0] == 12345.0;  // keep the results alive
  fftw_destroy_plan(plan);
  fftw_free(in);
  fftw_free(out);
  return alive;
}
