/* A one-routine BLAS whose dgemm_ marks C with SCOPE_MARK: tells which library a call reached
 * (scope_client.c builds two of them, 1 and 2); and the same for FFTW, below. */
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

/* And a one-transform FFTW: a plan remembers the library that made it and its output; executing it
 * writes SCOPE_MARK there, and executing or destroying a plan of the other library writes -1 (the
 * real FFTW would run or free another library's plan). */
struct fftw_plan_s {
  int lib;
  double* out;
};
static struct fftw_plan_s plan_store[8];
static int plans_made;

struct fftw_plan_s* fftw_plan_dft_1d(int n, double (*in)[2], double (*out)[2], int sign, unsigned flags) {
  (void)n, (void)in, (void)sign, (void)flags;
  struct fftw_plan_s* p = &plan_store[plans_made++ % 8];
  p->lib = SCOPE_MARK;
  p->out = &out[0][0];
  return p;
}

void fftw_execute(const struct fftw_plan_s* p) { p->out[0] = p->lib == SCOPE_MARK ? SCOPE_MARK : -1; }

void fftw_destroy_plan(struct fftw_plan_s* p) {
  if (p->lib != SCOPE_MARK) p->out[0] = -1;
}
