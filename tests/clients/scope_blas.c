/* A one-routine BLAS whose dgemm_ marks C with SCOPE_MARK: tells which library a call reached
 * (scope_client.c builds two of them, 1 and 2). */
#include <stddef.h>

void dgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc, size_t lta, size_t ltb) {
  (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta;
  (void)ldc, (void)lta, (void)ltb;
  c[0] = SCOPE_MARK;
}

/* dpotrf_ marks A likewise: six arguments, all in registers, so jit_client.c's generated code can
 * call it without forwarding a stack. */
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t luplo) {
  (void)uplo, (void)n, (void)lda, (void)luplo;
  a[0] = SCOPE_MARK;
  *info = 0;
}
