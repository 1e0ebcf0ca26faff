/* A stand-in BLAS/LAPACK for forward_client.c: each routine prints every argument it received, hidden
 * string lengths included, and writes recognisable outputs. Under the library, what it receives must be
 * exactly what the client passed. */
#include <complex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

void dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc, size_t lta, size_t ltb) {
  printf("dgemm_ %c %c %d %d %d %p %p %d %p %d %p %p %d %zu %zu\n", *ta, *tb, *m, *n, *k, (const void*)alpha,
         (const void*)a, *lda, (const void*)b, *ldb, (const void*)beta, (void*)c, *ldc, lta, ltb);
  c[0] = 42.0;
}

void dgemm_64_(const char* ta, const char* tb, const int64_t* m, const int64_t* n, const int64_t* k,
               const double* alpha, const double* a, const int64_t* lda, const double* b, const int64_t* ldb,
               const double* beta, double* c, const int64_t* ldc, size_t lta, size_t ltb) {
  printf("dgemm_64_ %c %c %lld %lld %lld %p %p %lld %p %lld %p %p %lld %zu %zu\n", *ta, *tb, (long long)*m,
         (long long)*n, (long long)*k, (const void*)alpha, (const void*)a, (long long)*lda, (const void*)b,
         (long long)*ldb, (const void*)beta, (void*)c, (long long)*ldc, lta, ltb);
  c[0] = 43.0;
}

void cblas_zgemm(int layout, int ta, int tb, int m, int n, int k, const void* alpha, const void* a, int lda,
                 const void* b, int ldb, const void* beta, void* c, int ldc) {
  printf("cblas_zgemm %d %d %d %d %d %d %p %p %d %p %d %p %p %d\n", layout, ta, tb, m, n, k, alpha, a, lda, b, ldb,
         beta, c, ldc);
  *(double complex*)c = 44.0;
}

void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w, double* work,
             const int* lwork, int* iwork, const int* liwork, int* info, size_t ljobz, size_t luplo) {
  printf("dsyevd_ %c %c %d %p %d %p %p %d %p %d %p %zu %zu\n", *jobz, *uplo, *n, (void*)a, *lda, (void*)w,
         (void*)work, *lwork, (void*)iwork, *liwork, (void*)info, ljobz, luplo);
  work[0] = 1234;
  iwork[0] = 99;
  *info = 0;
}

/* 23 arguments and 3 hidden lengths: most of them are passed on the stack. */
void zheevr_(const char* jobz, const char* range, const char* uplo, const int* n, double complex* a, const int* lda,
             const double* vl, const double* vu, const int* il, const int* iu, const double* abstol, int* m,
             double* w, double complex* z, const int* ldz, int* isuppz, double complex* work, const int* lwork,
             double* rwork, const int* lrwork, int* iwork, const int* liwork, int* info, size_t l1, size_t l2,
             size_t l3) {
  printf("zheevr_ %c %c %c %d %p %d %p %p %d %d %p %p %p %p %d %p %p %d %p %d %p %d %p %zu %zu %zu\n", *jobz,
         *range, *uplo, *n, (void*)a, *lda, (const void*)vl, (const void*)vu, *il, *iu, (const void*)abstol,
         (void*)m, (void*)w, (void*)z, *ldz, (void*)isuppz, (void*)work, *lwork, (void*)rwork, *lrwork,
         (void*)iwork, *liwork, (void*)info, l1, l2, l3);
  *m = 3;
  *info = 7;  /* as if the algorithm had failed to converge */
}
