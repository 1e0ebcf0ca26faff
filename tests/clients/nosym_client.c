/* Links no BLAS. Looks up dgemm_ with dlsym(RTLD_DEFAULT) and calls it: without the library there is
 * no such symbol (exit 3); under the library the lookup finds its wrapper, which has no real function
 * to forward to and must stop like an unresolved symbol would (exit 127, a message naming dgemm_). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

typedef void dgemm_t(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                     const int*, const double*, const int*, const double*, double*, const int*);

int main(int argc, char** argv) {
  const char* name = argc > 1 ? argv[1] : "dgemm_";
  void* f = dlsym(RTLD_DEFAULT, name);
  if (!f) {
    printf("no %s in this process\n", name);
    return 3;
  }
  printf("calling %s\n", name);
  fflush(stdout);
  int n = 3;
  double one = 1, zero = 0, a[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, c[9] = {0};
  ((dgemm_t*)f)("N", "N", &n, &n, &n, &one, a, &n, a, &n, &zero, c, &n);
  printf("returned from %s: c[0] = %g\n", name, c[0]);
  return 0;
}
