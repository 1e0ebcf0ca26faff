/* Which library does each caller's dgemm_ reach? Two plugins, each linked against its own BLAS
 * (scope_blas 1 and 2), loaded with RTLD_LOCAL, called in turn: without any global dgemm_, each
 * reaches its own. Linked against scope_blas 1 itself (argument "global"), every caller reaches
 * that one, as the dynamic linker searches the global scope first. The same for their FFTW plans
 * (made, executed, destroyed). Under gpu-offload the output must be the same. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#ifdef SCOPE_GLOBAL
void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);
#endif

int main(int argc, char** argv) {
  (void)argc;
  const char* dir = argv[1];
  char path[4096];
  double (*call[2])(void), (*fft[2])(void);
  for (int i = 0; i < 2; ++i) {
    snprintf(path, sizeof path, "%s/libgofl_scope_module%d.so", dir, i + 1);
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      fprintf(stderr, "%s\n", dlerror());
      return 2;
    }
    char name[32];
    snprintf(name, sizeof name, "scope_call%d", i + 1);
    call[i] = (double (*)(void))dlsym(h, name);
    snprintf(name, sizeof name, "scope_fft%d", i + 1);
    fft[i] = (double (*)(void))dlsym(h, name);
    if (!call[i] || !fft[i]) return 3;
  }
  for (int r = 0; r < 3; ++r) printf("module1 -> %g, module2 -> %g\n", call[0](), call[1]());
  for (int r = 0; r < 3; ++r) printf("fft module1 -> %g, module2 -> %g\n", fft[0](), fft[1]());
#ifdef SCOPE_GLOBAL
  const int n = 2;
  const double one = 1, zero = 0, a[4] = {1, 2, 3, 4};
  double c[4] = {0, 0, 0, 0};
  dgemm_("N", "N", &n, &n, &n, &one, a, &n, a, &n, &zero, c, &n, 1, 1);
  printf("program -> %g\n", c[0]);
#endif
  return 0;
}
