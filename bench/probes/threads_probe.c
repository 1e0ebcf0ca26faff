// Many threads calling BLAS at once, as PySCF's OpenMP loops do: T threads, each making K calls of
// dsymm (side L, upper, n x n times n x r, beta 0: n^2 + 2 n r doubles moved, 2 n^2 r flops) on its
// own arrays, with one element of A changed before each call (the program fills A anew each time, so
// nothing kept on the GPU may serve it). Prints the calls per second of all threads together, the
// median and largest time of one call, and a checksum of every C (the same under every device).
// One call before the timed ones starts the GPU (under --device gpu), outside the timing.
// Under one GPU that serves one call at a time, T threads' rate is 1 / (the time the GPU is held
// for a call); with one thread it is 1 / (the whole call).
//   threads_probe [N [R [T [K]]]]      defaults 956 135 16 20 (PySCF C16H34's dsymm: 956 functions,
//                                     about 8.4 MB read a call; its 16 threads)
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../bench_time.h"

void dsymm_(const char*, const char*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*);

static int n = 956, r = 135, nthreads = 16, calls = 20;
static double* times;  // [thread][call]
static double* sums;   // [thread]

static pthread_barrier_t start;

static void* worker(void* arg) {
  const int t = (int)(long)arg;
  const size_t nn = (size_t)n * n, nr = (size_t)n * r;
  double *a = malloc(nn * 8), *b = malloc(nr * 8), *c = malloc(nr * 8), one = 1, zero = 0, s = 0;
  if (!a || !b || !c) { fprintf(stderr, "out of memory\n"); exit(1); }
  for (size_t i = 0; i < nn; ++i) a[i] = (double)((i + t) % 97) / 97 - 0.5;
  for (size_t i = 0; i < nr; ++i) b[i] = (double)((i * 7 + t) % 89) / 89 - 0.5;
  pthread_barrier_wait(&start);
  for (int k = 0; k < calls; ++k) {
    a[(size_t)k % nn] += 0.25;
    const double t0 = now();
    dsymm_("L", "U", &n, &r, &one, a, &n, b, &n, &zero, c, &n);
    times[(size_t)t * calls + k] = now() - t0;
    for (size_t i = 0; i < nr; i += 4099) s += c[i];
  }
  sums[t] = s;
  free(a); free(b); free(c);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc > 1) n = atoi(argv[1]);
  if (argc > 2) r = atoi(argv[2]);
  if (argc > 3) nthreads = atoi(argv[3]);
  if (argc > 4) calls = atoi(argv[4]);
  if (n <= 0 || r <= 0 || nthreads <= 0 || calls <= 0) { fprintf(stderr, "usage: threads_probe [N [R [T [K]]]]\n"); return 2; }
  times = calloc((size_t)nthreads * calls, sizeof(double));
  sums = calloc((size_t)nthreads, sizeof(double));
  pthread_t* th = malloc(sizeof(pthread_t) * (size_t)nthreads);
  {  // One untimed call first: under --device gpu it pays the GPU's start and the first call's set-up
     // (about 0.3-0.4 s on an H100 host, a third of a 640-call run), so the timed calls show the
     // rate at which the GPU serves them.
    const size_t nn = (size_t)n * n, nr = (size_t)n * r;
    double *a = calloc(nn, 8), *b = calloc(nr, 8), *c = calloc(nr, 8), one = 1, zero = 0;
    if (!a || !b || !c) { fprintf(stderr, "out of memory\n"); return 1; }
    dsymm_("L", "U", &n, &r, &one, a, &n, b, &n, &zero, c, &n);
    free(a); free(b); free(c);
  }
  pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1);
  for (int t = 0; t < nthreads; ++t) pthread_create(&th[t], NULL, worker, (void*)(long)t);
  pthread_barrier_wait(&start);
  const double t0 = now();
  for (int t = 0; t < nthreads; ++t) pthread_join(th[t], NULL);
  const double wall = now() - t0;
  const size_t m = (size_t)nthreads * calls;
  double sum = 0;
  for (int t = 0; t < nthreads; ++t) sum += sums[t];
  qsort(times, m, sizeof(double), cmp_double);
  printf("n %d r %d threads %d calls %zu: %.3f s, %.1f calls/s, a call median %.2f ms, max %.2f ms, checksum %.10e\n",
         n, r, nthreads, m, wall, (double)m / wall, times[m / 2] * 1e3, times[m - 1] * 1e3, sum);
  return 0;
}
