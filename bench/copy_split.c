// The worker of bench/copy_split.py: NumPy's conversion copies, timed per call, through whatever
// `scipy_dcopy_64_` the process binds (the library's wrapper when it is preloaded, else OpenBLAS's).
//   copy_split LIBSCIPY_OPENBLAS64.so N...
// For each n, on an n x n C-ordered matrix, the n calls numpy.linalg makes (best of a few passes):
//   to-fortran  copy(n, a + r, n, out + r*n, 1)    strided source (before a LAPACK call)
//   from-fortran copy(n, a + r*n, 1, out + r, n)   strided destination (results back)
//   contiguous  copy(n, a + r*n, 1, out + r*n, 1)  (never split: the reference for memory speed)
// One line per (n, pattern): "n pattern seconds_per_call fnv1a_hash_of_the_output".
#include <dlfcn.h>
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

static uint64_t fnv1a(const void* p, size_t bytes) {
  const unsigned char* b = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s LIBSCIPY_OPENBLAS64.so N...\n", argv[0]);
    return 2;
  }
  // RTLD_GLOBAL and a lookup in the global scope: a preloaded wrapper comes first, as for NumPy.
  if (!dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL)) {
    fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  copy_t copy = (copy_t)dlsym(RTLD_DEFAULT, "scipy_dcopy_64_");
  if (!copy) {
    fprintf(stderr, "no scipy_dcopy_64_ in %s\n", argv[1]);
    return 2;
  }
  const int64_t one = 1;
  for (int arg = 2; arg < argc; ++arg) {
    const int64_t n = atol(argv[arg]);
    const size_t bytes = sizeof(double) * (size_t)n * (size_t)n;
    // Like NumPy's large arrays: 2 MiB aligned, transparent huge pages asked for.
    double* a = aligned_alloc(1 << 21, (bytes + (1 << 21) - 1) & ~(size_t)((1 << 21) - 1));
    double* out = aligned_alloc(1 << 21, (bytes + (1 << 21) - 1) & ~(size_t)((1 << 21) - 1));
    if (!a || !out) return 3;
    madvise(a, bytes, MADV_HUGEPAGE);
    madvise(out, bytes, MADV_HUGEPAGE);
    for (int64_t i = 0; i < n * n; ++i) a[i] = (double)i * 0.5 - 3.0;
    const int passes = n >= 4096 ? 3 : 7;
    for (int pattern = 0; pattern < 3; ++pattern) {
      memset(out, 0, bytes);
      double best = 1e30;
      for (int pass = 0; pass < passes; ++pass) {
        const double t0 = now();
        for (int64_t r = 0; r < n; ++r) {
          if (pattern == 0) copy(&n, a + r, &n, out + r * n, &one);
          else if (pattern == 1) copy(&n, a + r * n, &one, out + r, &n);
          else copy(&n, a + r * n, &one, out + r * n, &one);
        }
        const double t = now() - t0;
        if (t < best) best = t;
      }
      static const char* const names[] = {"to-fortran", "from-fortran", "contiguous"};
      printf("%ld %s %.9f %016llx\n", (long)n, names[pattern], best / (double)n, (unsigned long long)fnv1a(out, bytes));
      fflush(stdout);
    }
    free(a);
    free(out);
  }
  return 0;
}
