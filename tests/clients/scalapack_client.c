/* A real ScaLAPACK program (Debian's libscalapack-openmpi, BLACS on Open MPI): C = A * B with
 * pdgemm, then A X = B with pdgesv, on a block-cyclic process grid. Each rank's local BLAS-3 and
 * LAPACK calls (dgemm_, dtrsm_, dgetrf_, ...) go through the PLT, so under gpu-offload every rank
 * offloads its own. Rank 0 prints global sums of C and X (%.17g) and the solve's scaled residual:
 * a preloaded run on the CPU prints the same lines as the bare run, bit for bit.
 *
 *   mpirun -np P scalapack_client [N [NB [NRHS]]]     (defaults 1024 128 64)
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void Cblacs_pinfo(int* me, int* np);
void Cblacs_get(int ctx, int what, int* val);
void Cblacs_gridinit(int* ctx, const char* order, int nprow, int npcol);
void Cblacs_gridinfo(int ctx, int* nprow, int* npcol, int* myrow, int* mycol);
void Cblacs_gridexit(int ctx);
int numroc_(const int* n, const int* nb, const int* iproc, const int* isrc, const int* nprocs);
void descinit_(int* desc, const int* m, const int* n, const int* mb, const int* nb, const int* irsrc, const int* icsrc,
               const int* ctx, const int* lld, int* info);
void pdgemm_(const char* ta, const char* tb, const int* m, const int* n, const int* k, const double* alpha,
             const double* a, const int* ia, const int* ja, const int* desca, const double* b, const int* ib,
             const int* jb, const int* descb, const double* beta, double* c, const int* ic, const int* jc,
             const int* descc);
void pdgesv_(const int* n, const int* nrhs, double* a, const int* ia, const int* ja, const int* desca, int* ipiv,
             double* b, const int* ib, const int* jb, const int* descb, int* info);

/* Entry (i, j) of the global matrices, the same whichever rank holds it: A is diagonally dominant. */
static double a_entry(long i, long j, long n) {
  unsigned long h = (unsigned long)(i * 2654435761UL) ^ (unsigned long)(j * 40503UL + 12345UL);
  h ^= h >> 13, h *= 0x5bd1e995UL, h ^= h >> 15;
  return (double)(h % 20001UL) / 20000.0 - 0.5 + (i == j ? (double)n : 0.0);
}
static double b_entry(long i, long j) { return sin(0.001 * (double)(i + 1) * (double)(j + 2)); }

/* Column-major local piece of a global matrix whose entry (gi, gj) is f. */
static void fill(double* local, int lld, int rows, int cols, int nb, int myrow, int mycol, int nprow, int npcol,
                 double (*f)(long, long, long), long n) {
  for (int lj = 0; lj < cols; ++lj) {
    const long gj = (long)((lj / nb) * npcol + mycol) * nb + lj % nb;
    for (int li = 0; li < rows; ++li) {
      const long gi = (long)((li / nb) * nprow + myrow) * nb + li % nb;
      local[(size_t)lj * (size_t)lld + (size_t)li] = f(gi, gj, n);
    }
  }
}
static double b_fill(long i, long j, long n) { (void)n; return b_entry(i, j); }

static void sums(const double* local, int lld, int rows, int cols, double out[2]) {
  out[0] = out[1] = 0;
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) {
      const double v = local[(size_t)j * (size_t)lld + (size_t)i];
      out[0] += v, out[1] += fabs(v);
    }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int n = argc > 1 ? atoi(argv[1]) : 1024, nb = argc > 2 ? atoi(argv[2]) : 128,
            nrhs = argc > 3 ? atoi(argv[3]) : 64;
  int me, np, ctx, nprow, npcol, myrow, mycol, info = 0;
  if (n < 1 || nb < 1 || nrhs < 1) {
    fprintf(stderr, "usage: scalapack_client [N [NB [NRHS]]] (whole numbers >= 1)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  Cblacs_pinfo(&me, &np);
  int pr = 1;
  for (int d = 1; d * d <= np; ++d)
    if (np % d == 0) pr = d;
  Cblacs_get(-1, 0, &ctx);
  Cblacs_gridinit(&ctx, "Row", pr, np / pr);
  Cblacs_gridinfo(ctx, &nprow, &npcol, &myrow, &mycol);

  const int zero = 0, one = 1;
  const int mloc = numroc_(&n, &nb, &myrow, &zero, &nprow), nloc = numroc_(&n, &nb, &mycol, &zero, &npcol);
  const int rloc = numroc_(&nrhs, &nb, &mycol, &zero, &npcol);
  const int lld = mloc > 1 ? mloc : 1;
  int desca[9], descb[9];
  descinit_(desca, &n, &n, &nb, &nb, &zero, &zero, &ctx, &lld, &info);
  descinit_(descb, &n, &nrhs, &nb, &nb, &zero, &zero, &ctx, &lld, &info);
  double* a = malloc(sizeof(double) * (size_t)lld * (size_t)(nloc > 0 ? nloc : 1));
  double* a2 = malloc(sizeof(double) * (size_t)lld * (size_t)(nloc > 0 ? nloc : 1));
  double* c = malloc(sizeof(double) * (size_t)lld * (size_t)(nloc > 0 ? nloc : 1));
  double* x = malloc(sizeof(double) * (size_t)lld * (size_t)(rloc > 0 ? rloc : 1));
  int* ipiv = malloc(sizeof(int) * (size_t)(mloc + nb));
  fill(a, lld, mloc, nloc, nb, myrow, mycol, nprow, npcol, a_entry, n);
  fill(a2, lld, mloc, nloc, nb, myrow, mycol, nprow, npcol, b_fill, n);  /* B of the product: n x n */
  fill(x, lld, mloc, rloc, nb, myrow, mycol, nprow, npcol, b_fill, n);   /* right-hand sides */

  const double alpha = 1.0, beta = 0.0;
  double t0 = MPI_Wtime();
  pdgemm_("N", "N", &n, &n, &n, &alpha, a, &one, &one, desca, a2, &one, &one, desca, &beta, c, &one, &one, desca);
  const double t_gemm = MPI_Wtime() - t0;
  t0 = MPI_Wtime();
  pdgesv_(&n, &nrhs, a, &one, &one, desca, ipiv, x, &one, &one, descb, &info);
  const double t_gesv = MPI_Wtime() - t0;

  /* Residual max |A x - b| of the first and last right-hand side over every rank's share of the
   * rows, against the regenerated A and B: each rank needs X's full columns, so gather them. */
  double local[5] = {0, 0, 0, 0, 0}, global[5];
  sums(c, lld, mloc, nloc, local);
  sums(x, lld, mloc, rloc, local + 2);
  double* xfull = calloc((size_t)n * (size_t)nrhs, sizeof(double));
  double* xall = malloc(sizeof(double) * (size_t)n * (size_t)nrhs);
  for (int lj = 0; lj < rloc; ++lj) {
    const long gj = (long)((lj / nb) * npcol + mycol) * nb + lj % nb;
    for (int li = 0; li < mloc; ++li) {
      const long gi = (long)((li / nb) * nprow + myrow) * nb + li % nb;
      xfull[gj * n + gi] = x[(size_t)lj * (size_t)lld + (size_t)li];
    }
  }
  MPI_Allreduce(xfull, xall, n * nrhs, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  double resid = 0;
  const long checked[2] = {0, nrhs - 1};  /* two columns: a full check would cost n^2 nrhs */
  for (long i = me; i < n; i += np)
    for (int jj = 0; jj < 2; ++jj) {
      const long j = checked[jj];
      double r = -b_entry(i, j);
      for (long k = 0; k < n; ++k) r += a_entry(i, k, n) * xall[j * n + k];
      if (fabs(r) > resid) resid = fabs(r);
    }
  local[4] = resid;
  MPI_Reduce(local, global, 4, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  MPI_Reduce(local + 4, global + 4, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  double times[2] = {t_gemm, t_gesv}, tmax[2];
  MPI_Reduce(times, tmax, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (me == 0) {
    printf("grid %dx%d n %d nb %d nrhs %d\n", nprow, npcol, n, nb, nrhs);
    printf("pdgemm sum %.17g abs %.17g\n", global[0], global[1]);
    printf("pdgesv info %d sum %.17g abs %.17g residual %.3g\n", info, global[2], global[3], global[4]);
    fprintf(stderr, "time pdgemm %.3f s pdgesv %.3f s\n", tmax[0], tmax[1]);
  }
  free(a), free(a2), free(c), free(x), free(ipiv), free(xfull), free(xall);
  Cblacs_gridexit(ctx);
  MPI_Finalize();
  return 0;
}
