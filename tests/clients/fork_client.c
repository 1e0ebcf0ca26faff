/* fork(): the parent calls dgemm_ PRE times, forks; the child calls it CHILD times and exits normally
 * (its trace is written at exit); the parent waits, then calls it POST more times.
 * stdout: deterministic result hashes; stderr: "parent pid P" and "child pid C ppid P".
 * Usage: fork_client PRE CHILD POST */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

void dgemm_(const char*, const char*, const int*, const int*, const int*, const double*, const double*, const int*,
            const double*, const int*, const double*, double*, const int*);

enum { N = 24, LD = 27 };
static double a[LD * N], b[LD * N], c[LD * N];

static uint64_t calls(int count, int m) {
  int n = N - 1, k = N - 2, ld = LD;
  double alpha = 0.5, beta = -0.25;
  uint64_t h = 1469598103934665603ull;
  for (int i = 0; i < count; ++i) {
    dgemm_("N", "T", &m, &n, &k, &alpha, a, &ld, b, &ld, &beta, c, &ld);
    const unsigned char* p = (const unsigned char*)c;
    for (size_t x = 0; x < sizeof c; ++x) h = (h ^ p[x]) * 1099511628211ull;
  }
  return h;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s PRE CHILD POST\n", argv[0]);
    return 2;
  }
  int pre = atoi(argv[1]), child = atoi(argv[2]), post = atoi(argv[3]);
  for (int i = 0; i < LD * N; ++i) {
    a[i] = (double)(i % 17 - 8) / 8.0;
    b[i] = (double)(i % 13 - 6) / 4.0;
  }
  /* m tells the processes' calls apart in the traces: 21 before the fork, 22 in the child, 23 after. */
  printf("pre %016llx\n", (unsigned long long)calls(pre, 21));
  fprintf(stderr, "parent pid %ld\n", (long)getpid());
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) return 3;
  if (pid == 0) {
    fprintf(stderr, "child pid %ld ppid %ld\n", (long)getpid(), (long)getppid());
    printf("child %016llx\n", (unsigned long long)calls(child, 22));
    exit(0);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    fprintf(stderr, "child failed (status %d)\n", status);
    return 4;
  }
  printf("post %016llx\n", (unsigned long long)calls(post, 23));
  return 0;
}
