// One large call, timed, for the multi-GPU table (scripts/device_run.sh multigpu): dgemm_, dgetrf_,
// dpotrf_ ('L') or dsyevd_ ('V', 'L') on an n x n matrix, from a plain C program whose CPU library
// is the system OpenBLAS. Run it under gpu-offload with --device cpu, --device gpu --split off (one
// GPU) and --split force (the split engines on every usable GPU). A warm-up call of the same routine
// at n = 2048 first starts the GPU (and the split engines), so the time is the call's own. Prints
// the seconds, the GPUs the call was split over (gpu_offload_last_call_split; 0: one GPU or the
// CPU, -1: not under gpu-offload), LAPACK's info and a checksum to compare across runs.
//
//   multigpu_bench ROUTINE N        e.g. multigpu_bench dgemm 32768
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);
void dpotrf_(const char*, const int*, double*, const int*, int*);
void dsyevd_(const char*, const char*, const int*, double*, const int*, double*, double*, const int*, int*, const int*,
             int*);

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// A well-conditioned symmetric positive definite matrix (serves all four routines).
static void fill(double* a, int n) {
  for (size_t j = 0; j < (size_t)n; ++j)
    for (size_t i = 0; i < (size_t)n; ++i) {
      const size_t lo = i < j ? i : j, hi = i < j ? j : i;
      a[i + j * n] = (double)((lo * 7919 + hi * 104729) % 1000) / 1000.0 - 0.5 + (i == j ? n : 0);
    }
}

// Runs ROUTINE once on the n x n matrices a (and b), filled by fill(); returns its info (0 for dgemm)
// and the checksum in *sum.
static int run(const char* r, int n, double* a, double* b, double* c, double* w, double* sum) {
  const double one = 1, zero = 0;
  int info = 0;
  if (!strcmp(r, "dgemm")) {
    dgemm_("N", "N", &n, &n, &n, &one, a, &n, b, &n, &zero, c, &n);
    a = c;
  } else if (!strcmp(r, "dgetrf")) {
    int* ipiv = malloc(sizeof(int) * n);
    dgetrf_(&n, &n, a, &n, ipiv, &info);
    free(ipiv);
  } else if (!strcmp(r, "dpotrf")) {
    dpotrf_("L", &n, a, &n, &info);
  } else {
    int lwork = -1, liwork = -1, iw = 0;
    double wq = 0;
    dsyevd_("V", "L", &n, a, &n, w, &wq, &lwork, &iw, &liwork, &info);
    lwork = (int)wq;
    liwork = iw;
    double* work = malloc(sizeof(double) * (size_t)lwork);
    int* iwork = malloc(sizeof(int) * (size_t)liwork);
    dsyevd_("V", "L", &n, a, &n, w, work, &lwork, iwork, &liwork, &info);
    free(work);
    free(iwork);
    for (int i = 0; i < n; ++i) *sum += w[i];
    return info;
  }
  const size_t nn = (size_t)n * n;
  for (size_t i = 0; i < nn; i += nn / 4096 + 1) *sum += a[i];
  return info;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: multigpu_bench dgemm|dgetrf|dpotrf|dsyevd N\n");
    return 2;
  }
  const char* r = argv[1];
  const int n = atoi(argv[2]);
  if (n < 1 || (strcmp(r, "dgemm") && strcmp(r, "dgetrf") && strcmp(r, "dpotrf") && strcmp(r, "dsyevd"))) {
    fprintf(stderr, "multigpu_bench: unknown routine '%s' or size '%s'\n", r, argv[2]);
    return 2;
  }
  const size_t nn = (size_t)n * n;
  double *a = malloc(nn * 8), *b = malloc(nn * 8), *c = malloc(nn * 8), *w = malloc((size_t)n * 8);
  if (!a || !b || !c || !w) {
    fprintf(stderr, "multigpu_bench: out of memory for n = %d\n", n);
    return 1;
  }
  int (*split)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "gpu_offload_last_call_split");
  double sum = 0;
  const int warm = n < 2048 ? n : 2048;
  fill(a, warm);
  fill(b, warm);
  run(r, warm, a, b, c, w, &sum);  // warm-up: the GPU's and the engines' start
  sum = 0;
  fill(a, n);
  fill(b, n);
  const double t0 = now();
  const int info = run(r, n, a, b, c, w, &sum);
  const double t = now() - t0;
  printf("%s n=%d seconds %.3f split_gpus %d info %d checksum %.10e\n", r, n, t, split ? split() : -1, info, sum);
  return 0;
}
