// Could a ?copy wrapper make NumPy's conversions cheaper without changing a result? numpy.linalg
// turns a C-ordered n x n matrix into Fortran order with n copy calls, each reading one column
// (stride n: one element per cache line and, past 512 columns, per 4 KiB page). Each way below does
// exactly those n calls, one at a time, into the same output, which is checked bitwise.
//   strided_copy [--contiguous] LIBOPENBLAS64.so [N] [THREADS...]
// Ways: NumPy's bundled OpenBLAS dcopy (what runs now), a plain loop, a loop with software prefetch,
// and each call split across T threads (OpenMP; the library would need a pool of its own).
// --contiguous: each call reads a row instead (stride 1, as NumPy copies a Fortran-ordered operand):
// whether contiguous copies, which the library never splits, would gain from threads too.
#include <dlfcn.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

typedef void (*copy_t)(const int64_t*, const double*, const int64_t*, double*, const int64_t*);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void loop_copy(int64_t n, const double* x, int64_t incx, double* y) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i * incx];
}

static void prefetch_copy(int64_t n, const double* x, int64_t incx, double* y) {
  for (int64_t i = 0; i < n; ++i) {
    if (i + 16 < n) __builtin_prefetch(x + (i + 16) * incx, 0, 0);
    y[i] = x[i * incx];
  }
}

static void threaded_copy(int64_t n, const double* x, int64_t incx, double* y, int threads) {
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i * incx];
}

int main(int argc, char** argv) {
  const int contiguous = argc > 1 && strcmp(argv[1], "--contiguous") == 0;
  if (contiguous) --argc, ++argv;
  if (argc < 2) {
    fprintf(stderr, "usage: %s LIBOPENBLAS64.so [N] [THREADS...]\n", argv[0]);
    return 2;
  }
  int64_t n = argc > 2 ? atol(argv[2]) : 8192, one = 1;
  const int64_t stride = contiguous ? 1 : n;  // between a call's elements; calls start at row r * (n / stride)
  void* h = dlopen(argv[1], RTLD_NOW);
  copy_t blas = h ? (copy_t)dlsym(h, "scipy_dcopy_64_") : NULL;
  if (!blas) {
    fprintf(stderr, "no scipy_dcopy_64_ in %s\n", argv[1]);
    return 2;
  }
  const size_t bytes = sizeof(double) * (size_t)n * (size_t)n;
  // Like NumPy's large arrays: 2 MiB aligned, transparent huge pages asked for.
  double* a = aligned_alloc(1 << 21, bytes);
  double* ref = aligned_alloc(1 << 21, bytes);
  double* out = aligned_alloc(1 << 21, bytes);
  madvise(a, bytes, MADV_HUGEPAGE);
  madvise(ref, bytes, MADV_HUGEPAGE);
  madvise(out, bytes, MADV_HUGEPAGE);
  for (int64_t i = 0; i < n * n; ++i) a[i] = (double)i * 0.5;
  memset(ref, 0, bytes);
  memset(out, 0, bytes);
  int nt = argc > 3 ? argc - 3 : 3;
  int threads[16] = {2, 4, 8};
  for (int i = 0; i < nt && i < 16 && argc > 3; ++i) threads[i] = atoi(argv[3 + i]);
  printf("n = %ld: n dcopy calls of n elements, stride %s (best of 3)\n", (long)n, contiguous ? "1" : "n");
  printf("%-28s %10s %12s\n", "way", "seconds", "ns/element");
  for (int way = 0; way < 3 + nt; ++way) {
    double best = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      double* y = way == 0 ? ref : out;
      const double t0 = now();
      for (int64_t r = 0; r < n; ++r) {
        const double* x = a + (contiguous ? r * n : r);
        if (way == 0) blas(&n, x, &stride, y + r * n, &one);
        else if (way == 1) loop_copy(n, x, stride, y + r * n);
        else if (way == 2) prefetch_copy(n, x, stride, y + r * n);
        else threaded_copy(n, x, stride, y + r * n, threads[way - 3]);
      }
      const double t = now() - t0;
      if (t < best) best = t;
      if (way > 0 && memcmp(ref, out, bytes) != 0) {
        printf("FAIL: way %d changed the result\n", way);
        return 1;
      }
    }
    char label[64];
    if (way == 0) snprintf(label, sizeof label, "OpenBLAS dcopy (now)");
    else if (way == 1) snprintf(label, sizeof label, "plain loop");
    else if (way == 2) snprintf(label, sizeof label, "loop, prefetch 16 ahead");
    else snprintf(label, sizeof label, "each call on %d threads", threads[way - 3]);
    printf("%-28s %10.3f %12.2f\n", label, best, best / ((double)n * n) * 1e9);
  }
  return 0;
}
