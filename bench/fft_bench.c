/* FFTW on the CPU against FFTW through gpu-offload, side by side in one process, copies included.
 *
 * Each transform is planned twice on the same input: straight in libfftw3 (found with dlsym in the
 * library's own scope, so the preload library never sees that plan; FFTW_MEASURE, with the threads
 * the command line asks for) and through the exported fftw_ names (which the preload library
 * intercepts; under --device gpu or auto it may run on cuFFT). Both are executed REPS times; the table
 * gives FFTW's best time, the first call through gpu-offload (which makes the cuFFT plan), its best
 * time, the speed-up of best over best, where the last call ran, and the largest difference relative
 * to the largest magnitude of FFTW's result.
 *
 * Build: cc -O2 bench/fft_bench.c -o fft_bench -lfftw3 -ldl -lm
 * Run:   gpu-offload run --device gpu -- ./fft_bench [--threads 16] [--reps 3] [--small] [--only NAME]
 *                                                 [--cube N] [--times]
 *        (bench/fft_bench.sh does both, with the FFTW threads library found at run time).
 * --cube N runs one complex-double 3D transform of N^3 points instead of the table's cases; --times adds,
 * under each row, every execute's seconds ("times FFTW ..." and "times gpu-offload ...", the first of
 * which made the cuFFT plan), for bench/headline.py. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef fftw_plan (*many_dft_fn)(int, const int*, int, fftw_complex*, const int*, int, int, fftw_complex*, const int*,
                                 int, int, int, unsigned);
typedef fftw_plan (*many_r2c_fn)(int, const int*, int, double*, const int*, int, int, fftw_complex*, const int*, int,
                                 int, unsigned);
typedef void (*exec_fn)(fftw_plan);

static void* lib;  /* libfftw3, its own scope */
static void* sym(const char* name) {
  void* p = dlsym(lib, name);
  if (!p) {
    fprintf(stderr, "fft_bench: libfftw3 has no %s\n", name);
    exit(2);
  }
  return p;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

struct Case {
  const char* name;
  int r2c;  /* 0: complex to complex, 1: real to complex */
  int rank;
  int n[3];
  int howmany;
  int small;  /* part of --small: what --device auto should keep on FFTW */
};

static const struct Case cases[] = {
    {"c2c 2D 4096^2", 0, 2, {4096, 4096}, 1, 0},
    {"c2c 2D 8192^2", 0, 2, {8192, 8192}, 1, 0},
    {"c2c 3D 256^3", 0, 3, {256, 256, 256}, 1, 0},
    {"c2c 3D 512^3", 0, 3, {512, 512, 512}, 1, 0},
    {"r2c 3D 512^3", 1, 3, {512, 512, 512}, 1, 0},
    {"c2c 1D 65536 x 1024", 0, 1, {65536}, 1024, 0},
    {"c2c 1D 1024", 0, 1, {1024}, 1, 1},
    {"c2c 2D 64^2", 0, 2, {64, 64}, 1, 1},
    {"r2c 3D 32^3", 1, 3, {32, 32, 32}, 1, 1},
    {"c2c 1D 4096 x 16", 0, 1, {4096}, 16, 1},
};

/* Where the last intercepted call ran (libgpuoffload.so's test API; absent without the library). */
static const char* last_device(void) {
  void (*f)(int*, int*, int*) = (void (*)(int*, int*, int*))dlsym(RTLD_DEFAULT, "gpu_offload_last_call");
  if (!f) return "-";
  int device = -1, reason = -1, status = -1;
  f(&device, &reason, &status);
  return device == 1 ? "gpu" : device == 0 ? "cpu" : "-";
}

/* The transforms of a batch one after another (distance: one transform's elements). A distance of 0
   would make every transform of the batch read and write the same arrays. */
static fftw_plan make(const struct Case* c, int real_lib, void* in, fftw_complex* out, unsigned flags) {
  int idist = 1, odist = 1;
  for (int d = 0; d < c->rank; ++d) {
    idist *= c->n[d];
    odist *= c->r2c && d == c->rank - 1 ? c->n[d] / 2 + 1 : c->n[d];
  }
  if (c->r2c) {
    many_r2c_fn f = real_lib ? (many_r2c_fn)sym("fftw_plan_many_dft_r2c") : fftw_plan_many_dft_r2c;
    return f(c->rank, c->n, c->howmany, (double*)in, NULL, 1, idist, out, NULL, 1, odist, flags);
  }
  many_dft_fn f = real_lib ? (many_dft_fn)sym("fftw_plan_many_dft") : fftw_plan_many_dft;
  return f(c->rank, c->n, c->howmany, (fftw_complex*)in, NULL, 1, idist, out, NULL, 1, odist, FFTW_FORWARD, flags);
}

int main(int argc, char** argv) {
  int threads = 16, reps = 3, small = 0, cube = 0, times = 0;
  const char* only = NULL;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--small")) small = 1;
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!strcmp(argv[i], "--cube") && i + 1 < argc) cube = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--times")) times = 1;
    else {
      fprintf(stderr, "usage: fft_bench [--threads N] [--reps N] [--small] [--only NAME] [--cube N] [--times]\n");
      return 2;
    }
  }
  lib = dlopen("libfftw3.so.3", RTLD_NOW | RTLD_NOLOAD);
  if (!lib) lib = dlopen("libfftw3.so.3", RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "fft_bench: cannot load libfftw3.so.3\n");
    return 2;
  }
  /* FFTW's threads: libfftw3_threads (or _omp), loaded by name so that a host without it still runs. */
  int threaded = 0;
  const char* tlibs[] = {"libfftw3_threads.so.3", "libfftw3_omp.so.3"};
  for (int i = 0; i < 2 && !threaded && threads > 1; ++i) {
    void* t = dlopen(tlibs[i], RTLD_NOW | RTLD_GLOBAL);
    if (!t) continue;
    int (*init)(void) = (int (*)(void))dlsym(t, "fftw_init_threads");
    void (*with)(int) = (void (*)(int))dlsym(t, "fftw_plan_with_nthreads");
    if (init && with && init()) {
      with(threads);
      threaded = 1;
      printf("FFTW threads: %d (%s)\n", threads, tlibs[i]);
    }
  }
  if (!threaded) printf("FFTW threads: 1 (%s)\n", threads > 1 ? "NO libfftw3_threads.so.3 or libfftw3_omp.so.3 on this host: install libfftw3-double3" : "asked for");
  /* FFTW_MEASURE on the largest sizes could plan for minutes: FFT_PLAN_S seconds per plan (default 15). */
  const char* limit = getenv("FFT_PLAN_S");
  ((void (*)(double))sym("fftw_set_timelimit"))(limit && atof(limit) > 0 ? atof(limit) : 15.0);

  printf("%-22s %10s %12s %10s %8s %6s %9s\n", "transform", "FFTW ms", "first GPU ms", "GPU ms", "speedup", "ran", "rel err");
  int bad = 0;
  char cube_name[32];
  snprintf(cube_name, sizeof cube_name, "c2c 3D %d^3", cube);
  const struct Case cube_case = {cube_name, 0, 3, {cube, cube, cube}, 1, 0};
  const size_t n_cases = cube > 0 ? 1 : sizeof cases / sizeof cases[0];
  if (reps > 64) reps = 64;
  for (size_t k = 0; k < n_cases; ++k) {
    const struct Case* c = cube > 0 ? &cube_case : &cases[k];
    if (cube <= 0 && (c->small != small || (only && strcmp(only, c->name)))) continue;
    size_t npts = (size_t)c->howmany, nout = (size_t)c->howmany;
    for (int d = 0; d < c->rank; ++d) {
      npts *= (size_t)c->n[d];
      nout *= (size_t)(c->r2c && d == c->rank - 1 ? c->n[d] / 2 + 1 : c->n[d]);
    }
    const size_t in_bytes = npts * (c->r2c ? sizeof(double) : sizeof(fftw_complex));
    double* in = fftw_malloc(in_bytes);
    fftw_complex* out_cpu = fftw_malloc(nout * sizeof(fftw_complex));
    fftw_complex* out_gpu = fftw_malloc(nout * sizeof(fftw_complex));
    if (!in || !out_cpu || !out_gpu) {
      printf("%-22s out of host memory\n", c->name);
      continue;
    }
    double t0 = now();
    fftw_plan pc = make(c, 1, in, out_cpu, FFTW_MEASURE);  /* MEASURE overwrites the arrays: plan first */
    const double plan_s = now() - t0;
    fftw_plan pg = make(c, 0, in, out_gpu, FFTW_ESTIMATE);
    const size_t nreal = in_bytes / sizeof(double);
    for (size_t i = 0; i < nreal; ++i) in[i] = sin(0.001 * (double)i) + (double)(i % 13) * 0.01;
    exec_fn real_exec = (exec_fn)sym("fftw_execute");
    double best_cpu = 1e300, best_gpu = 1e300, first_gpu = 0, t_cpu[64], t_gpu[65];
    for (int r = 0; r < reps; ++r) {
      t0 = now();
      real_exec(pc);
      const double t = t_cpu[r] = now() - t0;
      if (t < best_cpu) best_cpu = t;
    }
    for (int r = 0; r < reps + 1; ++r) {  /* one more: the first makes the cuFFT plan */
      t0 = now();
      fftw_execute(pg);
      const double t = t_gpu[r] = now() - t0;
      if (r == 0) first_gpu = t;
      else if (t < best_gpu) best_gpu = t;
    }
    const char* ran = last_device();
    double num = 0, den = 0;
    for (size_t i = 0; i < nout; ++i)
      for (int q = 0; q < 2; ++q) {
        num = fmax(num, fabs(out_gpu[i][q] - out_cpu[i][q]));
        den = fmax(den, fabs(out_cpu[i][q]));
      }
    const double err = den > 0 ? num / den : num;
    if (!(err <= 1e-8)) bad = 1;
    printf("%-22s %10.2f %12.2f %10.2f %7.1fx %6s %9.1e   (FFTW planning %.1f s)\n", c->name, 1e3 * best_cpu,
           1e3 * first_gpu, 1e3 * best_gpu, best_cpu / best_gpu, ran, err, plan_s);
    if (times) {
      printf("times FFTW");
      for (int r = 0; r < reps; ++r) printf(" %.6f", t_cpu[r]);
      printf("\ntimes gpu-offload");
      for (int r = 0; r < reps + 1; ++r) printf(" %.6f", t_gpu[r]);
      printf("\n");
    }
    fflush(stdout);
    ((exec_fn)sym("fftw_destroy_plan"))(pc);
    fftw_destroy_plan(pg);
    fftw_free(in);
    fftw_free(out_cpu);
    fftw_free(out_gpu);
  }
  printf("%s\n", bad ? "FAIL: a result differs from FFTW's beyond 1e-8" : "PASS: every result within 1e-8 of FFTW's");
  return bad;
}
