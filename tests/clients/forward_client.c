/* Calls fake_blas.c's routines with Fortran hidden string lengths of unusual values (as gfortran passes
 * them for CHARACTER*(*) arguments like 'Vectors'), and prints, for each call, the line the fake routine
 * must print if every argument reached it unchanged ("sent ...") before the routine's own ("...").
 * The test checks each pair is equal, with and without the library. */
#include <complex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*, size_t, size_t);
void dgemm_64_(const char*, const char*, const int64_t*, const int64_t*, const int64_t*, const double*,
               const double*, const int64_t*, const double*, const int64_t*, const double*, double*,
               const int64_t*, size_t, size_t);
void cblas_zgemm(int, int, int, int, int, int, const void*, const void*, int, const void*, int, const void*, void*,
                 int);
void dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*, const int*, int*,
             const int*, int*, size_t, size_t);
void zheevr_(const char*, const char*, const char*, const int*, double complex*, const int*, const double*,
             const double*, const int*, const int*, const double*, int*, double*, double complex*, const int*,
             int*, double complex*, const int*, double*, const int*, int*, const int*, int*, size_t, size_t,
             size_t);

static double a[64 * 64], b[64 * 64], c[64 * 64], w[64], work[4096];
static double complex za[64 * 64], zb[64 * 64], zc[64 * 64], zz[64 * 64], zwork[4096];
static int iwork[4096], isuppz[128];

int main(void) {
  int m = 37, n = 29, k = 23, lda = 41, ldb = 43, ldc = 47;
  double alpha = 1.5, beta = 0.5;
  printf("sent dgemm_ %c %c %d %d %d %p %p %d %p %d %p %p %d %zu %zu\n", 'N', 't', m, n, k, (void*)&alpha,
         (void*)a, lda, (void*)b, ldb, (void*)&beta, (void*)c, ldc, (size_t)12, (size_t)9);
  fflush(stdout);
  dgemm_("No transpose", "transpose", &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 12, 9);
  printf("result dgemm_ %g\n", c[0]);

  int64_t m8 = 31, n8 = 33, k8 = 35, lda8 = 40, ldb8 = 50, ldc8 = 60;
  printf("sent dgemm_64_ %c %c %lld %lld %lld %p %p %lld %p %lld %p %p %lld %zu %zu\n", 'C', 'N', (long long)m8,
         (long long)n8, (long long)k8, (void*)&alpha, (void*)a, (long long)lda8, (void*)b, (long long)ldb8,
         (void*)&beta, (void*)c, (long long)ldc8, (size_t)19, (size_t)1);
  fflush(stdout);
  dgemm_64_("Conjugate transpose", "N", &m8, &n8, &k8, &alpha, a, &lda8, b, &ldb8, &beta, c, &ldc8, 19, 1);
  printf("result dgemm_64_ %g\n", c[0]);

  double complex zalpha = 1.0 - 2.0 * I, zbeta = 0.25;
  printf("sent cblas_zgemm %d %d %d %d %d %d %p %p %d %p %d %p %p %d\n", 101, 113, 112, 21, 19, 17, (void*)&zalpha,
         (void*)za, 25, (void*)zb, 27, (void*)&zbeta, (void*)zc, 29);
  fflush(stdout);
  cblas_zgemm(101, 113, 112, 21, 19, 17, &zalpha, za, 25, zb, 27, &zbeta, zc, 29);
  printf("result cblas_zgemm %g\n", creal(zc[0]));

  int ns = 45, ldas = 50, lwork = -1, liwork = -1, info = -5;
  printf("sent dsyevd_ %c %c %d %p %d %p %p %d %p %d %p %zu %zu\n", 'V', 'U', ns, (void*)a, ldas, (void*)w,
         (void*)work, lwork, (void*)iwork, liwork, (void*)&info, (size_t)7, (size_t)5);
  fflush(stdout);
  dsyevd_("Vectors", "Upper", &ns, a, &ldas, w, work, &lwork, iwork, &liwork, &info, 7, 5);
  printf("result dsyevd_ %g %d %d\n", work[0], iwork[0], info);

  int nz = 39, ldaz = 41, il = 2, iu = 9, mfound = -1, ldz = 43, lzw = 333, lrw = 444, liw = 555;
  double vl = -1.0, vu = 1.0, abstol = 1e-9;
  printf("sent zheevr_ %c %c %c %d %p %d %p %p %d %d %p %p %p %p %d %p %p %d %p %d %p %d %p %zu %zu %zu\n", 'V',
         'I', 'L', nz, (void*)za, ldaz, (void*)&vl, (void*)&vu, il, iu, (void*)&abstol, (void*)&mfound, (void*)w,
         (void*)zz, ldz, (void*)isuppz, (void*)zwork, lzw, (void*)work, lrw, (void*)iwork, liw, (void*)&info,
         (size_t)7, (size_t)13, (size_t)5);
  fflush(stdout);
  zheevr_("Vectors", "Index interval", "Lower", &nz, za, &ldaz, &vl, &vu, &il, &iu, &abstol, &mfound, w, zz, &ldz,
          isuppz, zwork, &lzw, work, &lrw, iwork, &liw, &info, 7, 13, 5);
  printf("result zheevr_ %d %d\n", mfound, info);
  return 0;
}
