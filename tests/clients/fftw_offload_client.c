/* FFTW transforms above the decision's threshold (1e6 flops), for test_fftw_offload.py: every kind in
   double and single precision, batched, strided, in place, new-array executes, a c2r that may destroy
   its input, plus one small transform; fftw_plan_with_nthreads when the threads library is linked.
   Prints a %.17g checksum of every result and of every c2r input after the transform ("sum ..."),
   so that runs on FFTW through the library can be compared bit for bit with plain runs. */
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static double weight(size_t i) { return (double)(i % 7 + 1); }

#define SUITE(P, R, PREC)                                                                                        \
  static void sum_##PREC(const char* label, const R* x, size_t reals) {                                          \
    double s = 0;                                                                                                 \
    for (size_t i = 0; i < reals; ++i) s += (double)x[i] * weight(i);                                            \
    printf("sum %s_%s %.17g\n", #PREC, label, s);                                                                \
  }                                                                                                               \
  static void fill_##PREC(R* x, size_t reals, int seed) {                                                         \
    for (size_t i = 0; i < reals; ++i) x[i] = (R)(sin(0.37 * (double)(i + 1) * (seed + 1)) + 0.1 * (i % 5));    \
  }                                                                                                               \
  static void suite_##PREC(void) {                                                                                \
    /* 2-D complex, out of place, executed twice and on new arrays (5 N log2 N = 5.2e6 flops). */               \
    {                                                                                                             \
      const int n0 = 256, n1 = 256, n = n0 * n1;                                                                  \
      P##complex* in = P##alloc_complex(n);                                                                       \
      P##complex* out = P##alloc_complex(n);                                                                      \
      P##complex* in2 = P##alloc_complex(n);                                                                      \
      P##complex* out2 = P##alloc_complex(n);                                                                     \
      P##plan p = P##plan_dft_2d(n0, n1, in, out, FFTW_FORWARD, FFTW_ESTIMATE);                                   \
      fill_##PREC((R*)in, 2 * (size_t)n, 1);                                                                      \
      P##execute(p);                                                                                              \
      sum_##PREC("c2c_2d", (R*)out, 2 * (size_t)n);                                                               \
      P##execute(p);                                                                                              \
      sum_##PREC("c2c_2d_again", (R*)out, 2 * (size_t)n);                                                         \
      fill_##PREC((R*)in2, 2 * (size_t)n, 2);                                                                     \
      P##execute_dft(p, in2, out2);                                                                               \
      sum_##PREC("c2c_2d_new_arrays", (R*)out2, 2 * (size_t)n);                                                   \
      P##destroy_plan(p);                                                                                         \
      /* In place, backward. */                                                                                   \
      p = P##plan_dft_2d(n0, n1, in, in, FFTW_BACKWARD, FFTW_ESTIMATE);                                           \
      P##execute(p);                                                                                              \
      sum_##PREC("c2c_2d_inplace", (R*)in, 2 * (size_t)n);                                                        \
      P##destroy_plan(p);                                                                                         \
      P##free(in); P##free(out); P##free(in2); P##free(out2);                                                     \
    }                                                                                                             \
    /* 3-D real: r2c, then c2r of the spectrum (which FFTW may overwrite: its checksum too). */                  \
    {                                                                                                             \
      const int n0 = 48, n1 = 40, n2 = 36, nr = n0 * n1 * n2, nc = n0 * n1 * (n2 / 2 + 1);                       \
      R* x = P##alloc_real(nr);                                                                                   \
      R* y = P##alloc_real(nr);                                                                                   \
      P##complex* spec = P##alloc_complex(nc);                                                                    \
      P##plan f = P##plan_dft_r2c_3d(n0, n1, n2, x, spec, FFTW_ESTIMATE);                                         \
      P##plan b = P##plan_dft_c2r_3d(n0, n1, n2, spec, y, FFTW_ESTIMATE);                                         \
      fill_##PREC(x, (size_t)nr, 3);                                                                              \
      P##execute(f);                                                                                              \
      sum_##PREC("r2c_3d", (R*)spec, 2 * (size_t)nc);                                                             \
      P##execute(b);                                                                                              \
      sum_##PREC("c2r_3d", y, (size_t)nr);                                                                        \
      sum_##PREC("c2r_3d_input_after", (R*)spec, 2 * (size_t)nc);                                                 \
      P##destroy_plan(f); P##destroy_plan(b);                                                                     \
      P##free(x); P##free(y); P##free(spec);                                                                      \
    }                                                                                                             \
    /* Batched and strided: 64 interleaved 1-D transforms of 4096 points (many, stride 64, dist 1). */           \
    {                                                                                                             \
      const int n = 4096, howmany = 64;                                                                           \
      P##complex* in = P##alloc_complex(n * howmany);                                                             \
      P##complex* out = P##alloc_complex(n * howmany);                                                            \
      P##plan p = P##plan_many_dft(1, &n, howmany, in, NULL, howmany, 1, out, NULL, howmany, 1, FFTW_FORWARD,     \
                                   FFTW_ESTIMATE);                                                                \
      fill_##PREC((R*)in, 2 * (size_t)n * howmany, 4);                                                            \
      P##execute(p);                                                                                              \
      sum_##PREC("many_strided", (R*)out, 2 * (size_t)n * howmany);                                               \
      P##destroy_plan(p);                                                                                         \
      P##free(in); P##free(out);                                                                                  \
    }                                                                                                             \
    /* Small: below the threshold. */                                                                             \
    {                                                                                                             \
      const int n = 256;                                                                                          \
      P##complex* a = P##alloc_complex(n);                                                                        \
      P##plan p = P##plan_dft_1d(n, a, a, FFTW_FORWARD, FFTW_ESTIMATE);                                           \
      fill_##PREC((R*)a, 2 * (size_t)n, 5);                                                                       \
      P##execute(p);                                                                                              \
      sum_##PREC("small", (R*)a, 2 * (size_t)n);                                                                  \
      P##destroy_plan(p);                                                                                         \
      P##free(a);                                                                                                 \
    }                                                                                                             \
  }

SUITE(fftw_, double, d)
SUITE(fftwf_, float, s)

int main(void) {
  suite_d();
  suite_s();
  return 0;
}
