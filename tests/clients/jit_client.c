/* Calls from code outside every module, as JIT-compiled code calls BLAS (numba through SciPy's
 * cython_blas pointers): two generated call sites, each calling dpotrf_ three times. The BLAS is
 * private (scope_blas 1, loaded RTLD_LOCAL), so nothing in the global scope defines dpotrf_: the
 * dynamic linker's answer for such a caller is the first loaded object that defines it. Prints what
 * each call reached; under gpu-offload the output must be the same. x86-64 only (exit 77 elsewhere). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

typedef void (*potrf_t)(const char*, const int*, double*, const int*, int*, size_t);

int main(int argc, char** argv) {
#if defined(__x86_64__)
  (void)argc;
  char path[4096];
  snprintf(path, sizeof path, "%s/libgofl_scope_blas1.so", argv[1]);
  void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    fprintf(stderr, "%s\n", dlerror());
    return 2;
  }
  /* gpu-offload's wrapper when it is preloaded, else the private library's own function. */
  void* target = dlsym(RTLD_DEFAULT, "dpotrf_");
  if (!target) target = dlsym(h, "dpotrf_");
  if (!target) return 3;
  /* push rbx (keeps the stack aligned); movabs rax, target; call rax; pop rbx; ret */
  unsigned char code[] = {0x53, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xd0, 0x5b, 0xc3};
  memcpy(code + 3, &target, sizeof target);
  unsigned char* page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return 4;
  memcpy(page, code, sizeof code);
  memcpy(page + 64, code, sizeof code);
  if (mprotect(page, 4096, PROT_READ | PROT_EXEC)) return 5;
  potrf_t site[2] = {(potrf_t)(uintptr_t)page, (potrf_t)(uintptr_t)(page + 64)};
  for (int r = 0; r < 3; ++r) {
    for (int s = 0; s < 2; ++s) {
      const int n = 2;
      double a[4] = {4, 2, 2, 3};
      int info = -1;
      site[s]("L", &n, a, &n, &info, 1);
      printf("site %d -> %g info %d\n", s + 1, a[0], info);
    }
  }
  return 0;
#else
  (void)argc, (void)argv;
  return 77;
#endif
}
