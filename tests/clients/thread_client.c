/* 8 threads call dgemm at the same time, 50 times each, sizes 64..96 (alternating dgemm_ and
 * cblas_dgemm). stdout: the sizes each thread uses and a hash of its results (deterministic, compared
 * with and without the library); stderr: "thread I tid TID" so the test can match trace records to
 * threads. Usage: thread_client [threads] [calls] */
#define _GNU_SOURCE
#include <cblas.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*);

enum { MAXN = 96, LD = MAXN + 3 };
static int g_calls = 50;
static pthread_barrier_t g_barrier;

struct job {
  int index;
  uint64_t hash;
  long tid;
};

static void dims(int t, int i, int* m, int* n, int* k) {
  *m = 64 + (t * 7 + i * 13) % 33;
  *n = 64 + (t * 5 + i * 11 + 3) % 33;
  *k = 64 + (t * 3 + i * 17 + 7) % 33;
}

static void* worker(void* arg) {
  struct job* j = (struct job*)arg;
  double* a = calloc((size_t)LD * MAXN, sizeof(double));
  double* b = calloc((size_t)LD * MAXN, sizeof(double));
  double* c = calloc((size_t)LD * MAXN, sizeof(double));
  uint64_t seed = 0x1234567ull + (uint64_t)j->index * 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < LD * MAXN; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    a[i] = (double)((int)((seed >> 33) % 2001) - 1000) / 512.0;
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    b[i] = (double)((int)((seed >> 33) % 2001) - 1000) / 512.0;
  }
  j->tid = (long)syscall(SYS_gettid);
  uint64_t h = 1469598103934665603ull;
  pthread_barrier_wait(&g_barrier);
  for (int i = 0; i < g_calls; ++i) {
    int m, n, k, ld = LD;
    double alpha = 1.0 / (1 + i % 3), beta = 0.5;
    dims(j->index, i, &m, &n, &k);
    if (i % 2 == 0)
      dgemm_("N", i % 4 ? "T" : "N", &m, &n, &k, &alpha, a, &ld, b, &ld, &beta, c, &ld);
    else
      cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, n, k, alpha, a, ld, b, ld, beta, c, ld);
    const unsigned char* p = (const unsigned char*)c;
    for (size_t x = 0; x < sizeof(double) * LD * (size_t)n; ++x) h = (h ^ p[x]) * 1099511628211ull;
  }
  j->hash = h;
  free(a); free(b); free(c);
  return NULL;
}

int main(int argc, char** argv) {
  int nthreads = argc > 1 ? atoi(argv[1]) : 8;
  if (argc > 2) g_calls = atoi(argv[2]);
  pthread_t th[64];
  struct job jobs[64];
  if (nthreads < 1 || nthreads > 64) return 2;
  pthread_barrier_init(&g_barrier, NULL, (unsigned)nthreads);
  for (int t = 0; t < nthreads; ++t) {
    jobs[t].index = t;
    jobs[t].hash = 0;
    if (pthread_create(&th[t], NULL, worker, &jobs[t]) != 0) return 3;
  }
  for (int t = 0; t < nthreads; ++t) pthread_join(th[t], NULL);
  for (int t = 0; t < nthreads; ++t) {
    printf("thread %d sizes", t);
    for (int i = 0; i < g_calls; ++i) {
      int m, n, k;
      dims(t, i, &m, &n, &k);
      printf(" %d,%d,%d,%s", m, n, k, i % 2 == 0 ? "fortran" : "cblas");
    }
    printf("\nthread %d hash %016llx\n", t, (unsigned long long)jobs[t].hash);
    fprintf(stderr, "thread %d tid %ld\n", t, jobs[t].tid);
  }
  return 0;
}
