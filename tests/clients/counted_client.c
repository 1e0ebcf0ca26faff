/* Many tiny calls, as Quantum ESPRESSO and NWChem make them, for test_counted.py: below the work
 * threshold, so that while calls are recorded all but the first 64 of each call site and size class
 * are counted (src/preload/counted.h). Each mode prints "calls N" (the calls it made of its routine)
 * and a checksum of its results (the same with and without the library).
 *
 *   counted_client copy COUNT           COUNT dcopy_ of 18 elements, from one call site
 *   counted_client getrf COUNT          COUNT dgetrf_ of 8 x 8 (reference LAPACK calls dtrsm_ and
 *                                       dgemm_ inside it: nested calls)
 *   counted_client fft COUNT            COUNT fftw_execute of one 60-point complex transform
 *   counted_client threads T COUNT      T threads, each COUNT dcopy_ calls, all joined (ended) before
 *                                       the process exits
 *   counted_client fork COUNT           COUNT dcopy_, then a child makes COUNT / 2 more and exits
 *                                       (its own trace and summary), then the parent COUNT / 4 more
 *   counted_client convert COUNT        COUNT times: 50 dcopy_ of the program's own, then one dgetrf_
 *                                       (copying dominates, but it is the program's work, not a
 *                                       conversion NumPy or SciPy makes) */
#include <fftw3.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void dcopy_(const int*, const double*, const int*, double*, const int*);
void dgetrf_(const int*, const int*, double*, const int*, int*, int*);

enum { COPY_N = 18, LU_N = 8 };

static double copies(long count, double seed) {
  double x[COPY_N], y[COPY_N];
  int n = COPY_N, one = 1;
  double sum = 0;
  for (int i = 0; i < COPY_N; ++i) x[i] = seed + i;
  for (long k = 0; k < count; ++k) {
    x[k % COPY_N] += 1.0;
    dcopy_(&n, x, &one, y, &one);
    sum += y[k % COPY_N];
  }
  return sum;
}

static double factorizations(long count) {
  double a[LU_N * LU_N];
  int n = LU_N, ipiv[LU_N], info = 0;
  double sum = 0;
  for (long k = 0; k < count; ++k) {
    for (int i = 0; i < LU_N * LU_N; ++i) a[i] = (double)((i * 7 + k) % 11) + (i % (LU_N + 1) == 0 ? 20.0 : 0.0);
    dgetrf_(&n, &n, a, &n, ipiv, &info);
    sum += a[LU_N * LU_N - 1] + info;
  }
  return sum;
}

static double transforms(long count) {
  fftw_complex* in = fftw_malloc(sizeof(fftw_complex) * 60);
  fftw_complex* out = fftw_malloc(sizeof(fftw_complex) * 60);
  fftw_plan p = fftw_plan_dft_1d(60, in, out, FFTW_FORWARD, FFTW_ESTIMATE);
  double sum = 0;
  for (long k = 0; k < count; ++k) {
    for (int i = 0; i < 60; ++i) {
      in[i][0] = (double)((i + k) % 5);
      in[i][1] = 0.5;
    }
    fftw_execute(p);
    sum += out[k % 60][0];
  }
  fftw_destroy_plan(p);
  fftw_free(in);
  fftw_free(out);
  return sum;
}

static long g_count;
static void* worker(void* arg) {
  double* result = arg;
  *result = copies(g_count, *result);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const char* mode = argv[1];
  const long count = atol(argv[argc - 1]);
  if (strcmp(mode, "copy") == 0) {
    printf("calls %ld\nsum %.17g\n", count, copies(count, 1.0));
  } else if (strcmp(mode, "getrf") == 0) {
    printf("calls %ld\nsum %.17g\n", count, factorizations(count));
  } else if (strcmp(mode, "fft") == 0) {
    printf("calls %ld\nsum %.17g\n", count, transforms(count));
  } else if (strcmp(mode, "threads") == 0 && argc == 4) {
    const int threads = atoi(argv[2]);
    pthread_t th[64];
    double result[64];
    if (threads < 1 || threads > 64) return 2;
    g_count = count;
    for (int t = 0; t < threads; ++t) {
      result[t] = t;
      if (pthread_create(&th[t], NULL, worker, &result[t]) != 0) return 3;
    }
    double sum = 0;
    for (int t = 0; t < threads; ++t) {
      pthread_join(th[t], NULL);
      sum += result[t];
    }
    printf("calls %ld\nsum %.17g\n", count * threads, sum);
  } else if (strcmp(mode, "convert") == 0) {
    double sum = 0;
    for (long k = 0; k < count; ++k) sum += copies(50, (double)k) + factorizations(1);
    printf("calls %ld\nsum %.17g\n", count, sum);
  } else if (strcmp(mode, "fork") == 0) {
    double sum = copies(count, 1.0);
    fflush(stdout);
    const pid_t child = fork();
    if (child == 0) {
      printf("child calls %ld\nsum %.17g\n", count / 2, copies(count / 2, 2.0));
      fflush(stdout);
      exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    sum += copies(count / 4, 3.0);
    printf("parent calls %ld\nsum %.17g\n", count + count / 4, sum);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 4;
  } else {
    return 2;
  }
  return 0;
}
