/* BLAS ?copy with every kind of increment, from one thread, several at once, and across fork():
 * its output must be byte for byte the same with and without the library, whose split copies
 * (src/preload/copy_split.h) run the library's own copy on pieces (test_split_copies.py).
 * Usage:
 *   copy_client cases BYTES   s, d, c, z through ?copy_ and cblas_?copy, x increments 1, -1, 3, -3, 0 and
 *                             y increments 1, -1, 2, -2, 0, with n just below BYTES / element size and
 *                             well above it: "@case SYMBOL N INCX INCY" before each call and a hash of
 *                             the whole destination buffer (untouched elements included) after it
 *   copy_client threads T N   T threads at once, 20 strided dcopy calls of N elements each
 *   copy_client fork N        strided copies of N elements in the parent, with another thread copying
 *                             while it forks, in the child, and in the parent again
 * Every mode ends with "pool threads K": the library's own threads (named gofl-pool) in the process. */
#define _GNU_SOURCE
#include <cblas.h>
#include <dirent.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void scopy_(const int*, const void*, const int*, void*, const int*);
void dcopy_(const int*, const void*, const int*, void*, const int*);
void ccopy_(const int*, const void*, const int*, void*, const int*);
void zcopy_(const int*, const void*, const int*, void*, const int*);

static uint64_t fnv1a(uint64_t h, const void* p, size_t bytes) {
  const unsigned char* b = p;
  for (size_t i = 0; i < bytes; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* Arbitrary bit patterns, NaN payloads included: a copy must keep every bit. */
static void fill(void* p, size_t bytes, uint64_t seed) {
  unsigned char* b = p;
  for (size_t i = 0; i < bytes; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    b[i] = (unsigned char)(seed >> 56);
  }
}

static int pool_threads(void) {
  DIR* d = opendir("/proc/self/task");
  if (!d) return -1;
  int count = 0;
  struct dirent* e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char path[320], comm[32] = "";
    snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
    FILE* f = fopen(path, "r");
    if (!f) continue;
    if (fgets(comm, sizeof comm, f) && strcmp(comm, "gofl-pool\n") == 0) ++count;
    fclose(f);
  }
  closedir(d);
  return count;
}

static size_t span(int n, int inc) { return 1 + (size_t)(n - 1) * (size_t)(inc < 0 ? -inc : inc); }

static void one_case(char t, int cblas, int n, int incx, int incy) {
  static const size_t sizes[] = {['s'] = 4, ['d'] = 8, ['c'] = 8, ['z'] = 16};
  const size_t es = sizes[(int)t];
  const size_t xb = span(n, incx) * es, yb = span(n, incy) * es;
  void* x = malloc(xb);
  void* y = malloc(yb);
  fill(x, xb, (uint64_t)n * 31 + (uint64_t)(incx + 7) * 7 + (uint64_t)t);
  fill(y, yb, 0xfeedull + (uint64_t)incy);
  printf("@case %s%ccopy%s %d %d %d\n", cblas ? "cblas_" : "", t, cblas ? "" : "_", n, incx, incy);
  if (cblas) {
    if (t == 's') cblas_scopy(n, x, incx, y, incy);
    if (t == 'd') cblas_dcopy(n, x, incx, y, incy);
    if (t == 'c') cblas_ccopy(n, x, incx, y, incy);
    if (t == 'z') cblas_zcopy(n, x, incx, y, incy);
  } else {
    if (t == 's') scopy_(&n, x, &incx, y, &incy);
    if (t == 'd') dcopy_(&n, x, &incx, y, &incy);
    if (t == 'c') ccopy_(&n, x, &incx, y, &incy);
    if (t == 'z') zcopy_(&n, x, &incx, y, &incy);
  }
  printf("%016llx\n", (unsigned long long)fnv1a(1469598103934665603ull, y, yb));
  free(x);
  free(y);
}

static int cases(long bytes) {
  static const int incxs[] = {1, -1, 3, -3, 0}, incys[] = {1, -1, 2, -2, 0};
  const char* types = "sdcz";
  for (const char* t = types; *t; ++t) {
    const long es = *t == 's' ? 4 : *t == 'z' ? 16 : 8;
    const int ns[] = {(int)(bytes / es - 1), (int)(4 * bytes / es + 37)};
    for (int k = 0; k < 2; ++k)
      for (int cblas = 0; cblas < 2; ++cblas)
        for (int i = 0; i < 5; ++i)
          for (int j = 0; j < 5; ++j) one_case(*t, cblas, ns[k], incxs[i], incys[j]);
  }
  return 0;
}

struct job {
  int index, n, rounds;
  uint64_t hash;
  int bad;
};

/* Strided dcopy calls of n elements (x increment 7, y 1, then back with y increment 5), each checked
 * against a plain loop. */
static void* copier(void* arg) {
  struct job* j = arg;
  const int n = j->n, ix = 7, iy = 5, one = 1;
  double* x = malloc(sizeof(double) * span(n, ix));
  double* y = malloc(sizeof(double) * (size_t)n);
  double* z = malloc(sizeof(double) * span(n, iy));
  fill(x, sizeof(double) * span(n, ix), 99 + (uint64_t)j->index);
  uint64_t h = 1469598103934665603ull;
  for (int r = 0; r < j->rounds; ++r) {
    memset(y, 0, sizeof(double) * (size_t)n);
    memset(z, 0, sizeof(double) * span(n, iy));
    if (r % 2) cblas_dcopy(n, x, ix, y, 1);
    else dcopy_(&n, x, &ix, y, &one);
    dcopy_(&n, y, &one, z, &iy);
    for (int i = 0; i < n; ++i)
      if (memcmp(&y[i], &x[(size_t)i * ix], sizeof(double)) || memcmp(&z[(size_t)i * iy], &y[i], sizeof(double))) j->bad = 1;
    h = fnv1a(h, z, sizeof(double) * span(n, iy));
  }
  j->hash = h;
  free(x);
  free(y);
  free(z);
  return NULL;
}

static int threads(int count, int n) {
  pthread_t th[64];
  struct job jobs[64];
  if (count > 64) count = 64;
  for (int i = 0; i < count; ++i) {
    jobs[i] = (struct job){i, n, 20, 0, 0};
    pthread_create(&th[i], NULL, copier, &jobs[i]);
  }
  int bad = 0;
  for (int i = 0; i < count; ++i) {
    pthread_join(th[i], NULL);
    printf("thread %d %016llx\n", i, (unsigned long long)jobs[i].hash);
    bad |= jobs[i].bad;
  }
  if (bad) printf("a copy differed from the plain loop\n");
  return bad;
}

static volatile int g_stop;

static void* background(void* arg) {
  struct job* j = arg;
  while (!g_stop) {
    j->rounds = 1;
    copier(j);
  }
  return NULL;
}

static int forked(int n) {
  struct job parent = {0, n, 3, 0, 0}, busy = {1, n, 1, 0, 0};
  copier(&parent);
  printf("parent %016llx pool threads %d\n", (unsigned long long)parent.hash, pool_threads() > 0);
  fflush(stdout);
  /* Another thread is copying (often inside a split) while this one forks. */
  pthread_t bg;
  pthread_create(&bg, NULL, background, &busy);
  usleep(20000);
  pid_t pid = fork();
  if (pid == 0) {
    struct job child = {2, n, 3, 0, 0};
    copier(&child);
    printf("child %016llx pool threads %d\n", (unsigned long long)child.hash, pool_threads() > 0);
    exit(child.bad ? 1 : 0);
  }
  g_stop = 1;
  pthread_join(bg, NULL);
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    printf("child failed (status %d)\n", status);
    return 1;
  }
  struct job after = {3, n, 3, 0, 0};
  copier(&after);
  printf("after %016llx\n", (unsigned long long)after.hash);
  return parent.bad | busy.bad | after.bad;
}

int main(int argc, char** argv) {
  int rc = 2;
  if (argc == 3 && !strcmp(argv[1], "cases")) rc = cases(atol(argv[2]));
  else if (argc == 4 && !strcmp(argv[1], "threads")) rc = threads(atoi(argv[2]), atoi(argv[3]));
  else if (argc == 3 && !strcmp(argv[1], "fork")) rc = forked(atoi(argv[2]));
  else fprintf(stderr, "usage: %s cases BYTES | threads T N | fork N\n", argv[0]);
  if (rc != 2) printf("pool threads %d\n", pool_threads());
  return rc;
}
