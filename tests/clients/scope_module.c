/* A plugin linked against one of the scope_blas libraries (SCOPE_MARK names which): calls dgemm_
 * as any BLAS client does, and returns what the library it reached wrote; likewise for an FFTW
 * plan made, executed and destroyed. */
#include <stddef.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);

double SCOPE_ENTRY(void) {
  const int n = 2;
  const double one = 1, zero = 0, a[4] = {1, 2, 3, 4};
  double c[4] = {0, 0, 0, 0};
  dgemm_("N", "N", &n, &n, &n, &one, a, &n, a, &n, &zero, c, &n, 1, 1);
  return c[0];
}

void* fftw_plan_dft_1d(int, double (*)[2], double (*)[2], int, unsigned);
void fftw_execute(const void*);
void fftw_destroy_plan(void*);

double SCOPE_FFT(void) {
  double in[8][2] = {{0}}, out[8][2] = {{0}};
  void* p = fftw_plan_dft_1d(8, in, out, -1, 64 /* FFTW_ESTIMATE */);
  fftw_execute(p);
  fftw_destroy_plan(p);
  return out[0][0];
}
