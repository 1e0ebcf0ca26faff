// LAPACK reads some arguments only in some modes: dsyevr/zheevr read IL and IU only for
// RANGE = 'I' (and VL, VU only for 'V'), so a C caller may pass NULL for them. The library must not
// read them either. Prints the eigenvalues found for ranges 'A' and 'V' with NULL where allowed.
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>

void dsyevr_(const char*, const char*, const char*, const int*, double*, const int*, const double*, const double*,
             const int*, const int*, const double*, int*, double*, double*, const int*, int*, double*, const int*,
             int*, const int*, int*);
void zheevr_(const char*, const char*, const char*, const int*, double complex*, const int*, const double*,
             const double*, const int*, const int*, const double*, int*, double*, double complex*, const int*, int*,
             double complex*, const int*, double*, const int*, int*, const int*, int*);

int main(void) {
  enum { N = 60 };
  int n = N, lda = N, m = 0, info = 0, isuppz[2 * N], iwork[10 * N], liwork = 10 * N, lwork = 26 * N * 4;
  int lrwork = 24 * N * 4;
  double a[N * N], w[N], z[N * N], work[26 * N * 4], abstol = 0, vl = -1e9, vu = 1e9, rwork[24 * N * 4];
  double complex za[N * N], zz[N * N], zwork[26 * N * 4];
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < N; ++i) {
      a[i + j * N] = (i == j) ? 2.0 + i : 1.0 / (1 + i + j);
      za[i + j * N] = (i == j) ? 2.0 + i : (1.0 / (1 + i + j)) + I * (i > j ? 0.1 : -0.1);
    }
  // Range 'A': IL, IU, VL and VU are all unreferenced.
  dsyevr_("V", "A", "U", &n, a, &lda, NULL, NULL, NULL, NULL, &abstol, &m, w, z, &lda, isuppz, work, &lwork, iwork,
          &liwork, &info);
  printf("dsyevr A info %d m %d w0 %.17g wlast %.17g\n", info, m, w[0], w[m - 1]);
  // Range 'V': IL and IU are unreferenced.
  zheevr_("N", "V", "L", &n, za, &lda, &vl, &vu, NULL, NULL, &abstol, &m, w, zz, &lda, isuppz, zwork, &lwork, rwork,
          &lrwork, iwork, &liwork, &info);
  printf("zheevr V info %d m %d w0 %.17g wlast %.17g\n", info, m, w[0], w[m - 1]);
  return 0;
}
