/* An FFTW program for test_fftw.py: every plan creator the library intercepts, in double and single
   precision, on fixed inputs, with plans executed twice and with new arrays. It prints a checksum of
   every result ("sum LABEL ..." with %.17g) and, before each execute the trace must show, the line
   "exec OP N HOWMANY RANK IN_BYTES OUT_BYTES": the bytes each array spans (OUT_BYTES 0: in place, one
   buffer). Plans use FFTW_ESTIMATE so that every run computes the same bits. */
#ifndef SUITE

#include <fftw3.h>
#include <math.h>
#include <stdio.h>

static void expect(const char* prec, const char* kind, int n, int howmany, int rank, size_t in_bytes,
                   size_t out_bytes) {
  printf("exec %s%s %d %d %d %zu %zu\n", prec, kind, n, howmany, rank, in_bytes, out_bytes);
}

/* Position-dependent, so a permuted result changes the checksum. */
static double weight(size_t i) { return (double)(i % 7 + 1); }

/* The suite is written once: this file includes itself for each precision, with P(x) naming the FFTW
   function x of that precision, R its real type and L(x) this file's own function x for it. */
#define SUITE
#define P(x) fftw_##x
#define R double
#define L(x) x##_d
#define PREC "d"
#include __FILE__
#undef P
#undef R
#undef L
#undef PREC
#define P(x) fftwf_##x
#define R float
#define L(x) x##_s
#define PREC "s"
#include __FILE__

int main(void) {
  suite_d();
  suite_s();
  return 0;
}

#else /* SUITE: one precision */

typedef P(complex) L(cplx);
#define CX sizeof(L(cplx))
#define RE sizeof(R)

static void L(fill_real)(R* x, size_t n, int seed) {
  for (size_t i = 0; i < n; ++i) x[i] = (R)(sin(0.37 * (double)(i + 1) * (seed + 1)) + 0.1 * (double)(i % 5));
}

static void L(fill_cplx)(L(cplx) * x, size_t n, int seed) {
  for (size_t i = 0; i < n; ++i) {
    x[i][0] = (R)sin(0.23 * (double)(i + 1) * (seed + 2));
    x[i][1] = (R)cos(0.31 * (double)(i + 3) * (seed + 1));
  }
}

static void L(sum_real)(const char* label, const R* x, size_t n) {
  double s = 0;
  for (size_t i = 0; i < n; ++i) s += (double)x[i] * weight(i);
  printf("sum %s_%s %.17g\n", PREC, label, s);
}

static void L(sum_cplx)(const char* label, const L(cplx) * x, size_t n) {
  double re = 0, im = 0;
  for (size_t i = 0; i < n; ++i) {
    re += (double)x[i][0] * weight(i);
    im += (double)x[i][1] * weight(i);
  }
  printf("sum %s_%s %.17g %.17g\n", PREC, label, re, im);
}

static void L(complex_plans)(void) {
  /* 1-d, out of place: executed twice, then on new arrays. */
  {
    const int n = 64;
    L(cplx)* in = P(alloc_complex)(n);
    L(cplx)* out = P(alloc_complex)(n);
    L(cplx)* in2 = P(alloc_complex)(n);
    L(cplx)* out2 = P(alloc_complex)(n);
    P(plan) p = P(plan_dft_1d)(n, in, out, FFTW_FORWARD, FFTW_ESTIMATE);
    L(fill_cplx)(in, n, 1);
    expect(PREC, "fft", n, 1, 1, n * CX, n * CX);
    P(execute)(p);
    L(sum_cplx)("c2c_1d_first", out, n);
    L(fill_cplx)(in, n, 2);
    expect(PREC, "fft", n, 1, 1, n * CX, n * CX);
    P(execute)(p);
    L(sum_cplx)("c2c_1d_second", out, n);
    L(fill_cplx)(in2, n, 3);
    expect(PREC, "fft", n, 1, 1, n * CX, n * CX);
    P(execute_dft)(p, in2, out2);
    L(sum_cplx)("c2c_1d_new_arrays", out2, n);
    P(destroy_plan)(p);
    P(free)(in); P(free)(out); P(free)(in2); P(free)(out2);
  }
  /* 2-d, in place, backward. */
  {
    const int n0 = 16, n1 = 12;
    L(cplx)* a = P(alloc_complex)(n0 * n1);
    P(plan) p = P(plan_dft_2d)(n0, n1, a, a, FFTW_BACKWARD, FFTW_ESTIMATE);
    L(fill_cplx)(a, n0 * n1, 4);
    expect(PREC, "fft", n0 * n1, 1, 2, n0 * n1 * CX, 0);
    P(execute)(p);
    L(sum_cplx)("c2c_2d_inplace", a, n0 * n1);
    P(destroy_plan)(p);
    P(free)(a);
  }
  /* 3-d, large enough (about 2.4e6 flops) to pass the default decision threshold. */
  {
    const int n0 = 32, n1 = 32, n2 = 32, total = n0 * n1 * n2;
    L(cplx)* in = P(alloc_complex)(total);
    L(cplx)* out = P(alloc_complex)(total);
    P(plan) p = P(plan_dft_3d)(n0, n1, n2, in, out, FFTW_FORWARD, FFTW_ESTIMATE);
    L(fill_cplx)(in, total, 5);
    expect(PREC, "fft", total, 1, 3, total * CX, total * CX);
    P(execute)(p);
    L(sum_cplx)("c2c_3d", out, total);
    P(destroy_plan)(p);
    P(free)(in); P(free)(out);
  }
  /* Any rank. */
  {
    const int n[2] = {10, 14};
    L(cplx)* in = P(alloc_complex)(140);
    L(cplx)* out = P(alloc_complex)(140);
    P(plan) p = P(plan_dft)(2, n, in, out, FFTW_FORWARD, FFTW_ESTIMATE);
    L(fill_cplx)(in, 140, 6);
    expect(PREC, "fft", 140, 1, 2, 140 * CX, 140 * CX);
    P(execute)(p);
    L(sum_cplx)("c2c_rank2", out, 140);
    P(destroy_plan)(p);
    P(free)(in); P(free)(out);
  }
}

static void L(real_plans)(void) {
  /* r2c 1-d, then on new arrays; c2r 1-d executed twice (it overwrites its input). */
  {
    const int n = 100, h = n / 2 + 1;
    R* x = P(alloc_real)(n);
    R* x2 = P(alloc_real)(n);
    L(cplx)* y = P(alloc_complex)(h);
    L(cplx)* y2 = P(alloc_complex)(h);
    P(plan) f = P(plan_dft_r2c_1d)(n, x, y, FFTW_ESTIMATE);
    P(plan) b = P(plan_dft_c2r_1d)(n, y, x, FFTW_ESTIMATE);
    L(fill_real)(x, n, 7);
    expect(PREC, "fft_r2c", n, 1, 1, n * RE, h * CX);
    P(execute)(f);
    L(sum_cplx)("r2c_1d", y, h);
    L(fill_real)(x2, n, 8);
    expect(PREC, "fft_r2c", n, 1, 1, n * RE, h * CX);
    P(execute_dft_r2c)(f, x2, y2);
    L(sum_cplx)("r2c_1d_new_arrays", y2, h);
    expect(PREC, "fft_c2r", n, 1, 1, h * CX, n * RE);
    P(execute)(b);
    L(sum_real)("c2r_1d_first", x, n);
    L(fill_cplx)(y, h, 9);
    y[0][1] = 0; /* a Hermitian input's DC term is real */
    expect(PREC, "fft_c2r", n, 1, 1, h * CX, n * RE);
    P(execute)(b);
    L(sum_real)("c2r_1d_second", x, n);
    expect(PREC, "fft_c2r", n, 1, 1, h * CX, n * RE);
    P(execute_dft_c2r)(b, y2, x2);
    L(sum_real)("c2r_1d_new_arrays", x2, n);
    P(destroy_plan)(f); P(destroy_plan)(b);
    P(free)(x); P(free)(x2); P(free)(y); P(free)(y2);
  }
  /* 2-d in place: the real array is padded to 2*(n1/2+1) along the last dimension. */
  {
    const int n0 = 12, n1 = 18, h = n1 / 2 + 1;
    L(cplx)* a = P(alloc_complex)(n0 * h);
    R* ar = (R*)a;
    P(plan) f = P(plan_dft_r2c_2d)(n0, n1, ar, a, FFTW_ESTIMATE);
    P(plan) b = P(plan_dft_c2r_2d)(n0, n1, a, ar, FFTW_ESTIMATE);
    for (int i = 0; i < n0; ++i) L(fill_real)(ar + i * 2 * h, n1, 10 + i);
    expect(PREC, "fft_r2c", n0 * n1, 1, 2, n0 * h * CX, 0);
    P(execute)(f);
    L(sum_cplx)("r2c_2d_inplace", a, n0 * h);
    expect(PREC, "fft_c2r", n0 * n1, 1, 2, n0 * h * CX, 0);
    P(execute)(b);
    double s = 0;
    for (int i = 0; i < n0; ++i)
      for (int j = 0; j < n1; ++j) s += (double)ar[i * 2 * h + j] * weight((size_t)(i * n1 + j));
    printf("sum %s_c2r_2d_inplace %.17g\n", PREC, s);
    P(destroy_plan)(f); P(destroy_plan)(b);
    P(free)(a);
  }
  /* 3-d, and any rank. */
  {
    const int n0 = 6, n1 = 8, n2 = 10, total = n0 * n1 * n2, half = n0 * n1 * (n2 / 2 + 1);
    const int nr[2] = {9, 16};
    R* x = P(alloc_real)(total);
    L(cplx)* y = P(alloc_complex)(half);
    P(plan) f = P(plan_dft_r2c_3d)(n0, n1, n2, x, y, FFTW_ESTIMATE);
    P(plan) b = P(plan_dft_c2r_3d)(n0, n1, n2, y, x, FFTW_ESTIMATE);
    P(plan) fr = P(plan_dft_r2c)(2, nr, x, y, FFTW_ESTIMATE);
    P(plan) br = P(plan_dft_c2r)(2, nr, y, x, FFTW_ESTIMATE);
    L(fill_real)(x, total, 11);
    expect(PREC, "fft_r2c", total, 1, 3, total * RE, half * CX);
    P(execute)(f);
    L(sum_cplx)("r2c_3d", y, half);
    expect(PREC, "fft_c2r", total, 1, 3, half * CX, total * RE);
    P(execute)(b);
    L(sum_real)("c2r_3d", x, total);
    L(fill_real)(x, 144, 12);
    expect(PREC, "fft_r2c", 144, 1, 2, 144 * RE, 9 * 9 * CX);
    P(execute)(fr);
    L(sum_cplx)("r2c_rank2", y, 9 * 9);
    expect(PREC, "fft_c2r", 144, 1, 2, 9 * 9 * CX, 144 * RE);
    P(execute)(br);
    L(sum_real)("c2r_rank2", x, 144);
    P(destroy_plan)(f); P(destroy_plan)(b); P(destroy_plan)(fr); P(destroy_plan)(br);
    P(free)(x); P(free)(y);
  }
}

static void L(many_and_guru_plans)(void) {
  /* Advanced interface: 5 contiguous transforms of 32, and 3 interleaved ones of 16 (stride 3). */
  {
    const int n = 32, n16 = 16;
    L(cplx)* in = P(alloc_complex)(5 * n);
    L(cplx)* out = P(alloc_complex)(5 * n);
    P(plan) p = P(plan_many_dft)(1, &n, 5, in, NULL, 1, n, out, NULL, 1, n, FFTW_FORWARD, FFTW_ESTIMATE);
    P(plan) q = P(plan_many_dft)(1, &n16, 3, in, NULL, 3, 1, out, NULL, 3, 1, FFTW_BACKWARD, FFTW_ESTIMATE);
    L(fill_cplx)(in, 5 * n, 13);
    expect(PREC, "fft", n, 5, 1, 5 * n * CX, 5 * n * CX);
    P(execute)(p);
    L(sum_cplx)("many_dft", out, 5 * n);
    /* 16 points 3 apart, 3 transforms 1 apart: elements 0 to 15*3 + 2*1. */
    expect(PREC, "fft", n16, 3, 1, 48 * CX, 48 * CX);
    P(execute)(q);
    L(sum_cplx)("many_dft_strided", out, 3 * n16);
    P(destroy_plan)(p); P(destroy_plan)(q);
    P(free)(in); P(free)(out);
  }
  /* Advanced real: 4 transforms of 8x10, and 3 inverse ones of 20. */
  {
    const int n[2] = {8, 10}, h = 8 * (10 / 2 + 1), m = 20, mh = m / 2 + 1;
    R* x = P(alloc_real)(4 * 80);
    L(cplx)* y = P(alloc_complex)(4 * h);
    P(plan) f = P(plan_many_dft_r2c)(2, n, 4, x, NULL, 1, 80, y, NULL, 1, h, FFTW_ESTIMATE);
    P(plan) b = P(plan_many_dft_c2r)(1, &m, 3, y, NULL, 1, mh, x, NULL, 1, m, FFTW_ESTIMATE);
    L(fill_real)(x, 4 * 80, 14);
    expect(PREC, "fft_r2c", 80, 4, 2, 4 * 80 * RE, 4 * h * CX);
    P(execute)(f);
    L(sum_cplx)("many_r2c", y, 4 * h);
    expect(PREC, "fft_c2r", m, 3, 1, 3 * mh * CX, 3 * m * RE);
    P(execute)(b);
    L(sum_real)("many_c2r", x, 3 * m);
    P(destroy_plan)(f); P(destroy_plan)(b);
    P(free)(x); P(free)(y);
  }
  /* Guru: a 2x2 batch of 6x5 transforms; and 4 real transforms of 16 with their own strides. */
  {
    P(iodim) dims[2] = {{6, 5, 5}, {5, 1, 1}};
    P(iodim) batch[2] = {{2, 60, 60}, {2, 30, 30}};
    L(cplx)* in = P(alloc_complex)(120);
    L(cplx)* out = P(alloc_complex)(120);
    P(plan) p = P(plan_guru_dft)(2, dims, 2, batch, in, out, FFTW_FORWARD, FFTW_ESTIMATE);
    L(fill_cplx)(in, 120, 15);
    expect(PREC, "fft", 30, 4, 2, 120 * CX, 120 * CX);
    P(execute)(p);
    L(sum_cplx)("guru_dft", out, 120);
    expect(PREC, "fft", 30, 4, 2, 120 * CX, 120 * CX);
    P(execute)(p);
    L(sum_cplx)("guru_dft_again", out, 120);
    P(destroy_plan)(p);
    P(free)(in); P(free)(out);

    P(iodim) d16 = {16, 1, 1};
    P(iodim) fwd = {4, 16, 9}, bwd = {4, 9, 16};
    R* x = P(alloc_real)(64);
    L(cplx)* y = P(alloc_complex)(36);
    P(plan) f = P(plan_guru_dft_r2c)(1, &d16, 1, &fwd, x, y, FFTW_ESTIMATE);
    P(plan) b = P(plan_guru_dft_c2r)(1, &d16, 1, &bwd, y, x, FFTW_ESTIMATE);
    L(fill_real)(x, 64, 16);
    expect(PREC, "fft_r2c", 16, 4, 1, 64 * RE, 36 * CX);
    P(execute)(f);
    L(sum_cplx)("guru_r2c", y, 36);
    expect(PREC, "fft_c2r", 16, 4, 1, 36 * CX, 64 * RE);
    P(execute)(b);
    L(sum_real)("guru_c2r", x, 64);
    P(destroy_plan)(f); P(destroy_plan)(b);
    P(free)(x); P(free)(y);
  }
}

static void L(untracked_and_reused)(void) {
  /* A real-to-real plan is not tracked: its execute runs, and leaves no record. */
  {
    const int n = 32;
    R* x = P(alloc_real)(n);
    R* y = P(alloc_real)(n);
    P(plan) p = P(plan_r2r_1d)(n, x, y, FFTW_REDFT10, FFTW_ESTIMATE);
    L(fill_real)(x, n, 17);
    P(execute)(p);
    L(sum_real)("r2r_untracked", y, n);
    P(destroy_plan)(p);
    P(free)(x); P(free)(y);
  }
  /* A destroyed plan's address may come back for the next plan: the next execute must see the new size. */
  {
    L(cplx)* in = P(alloc_complex)(40);
    L(cplx)* out = P(alloc_complex)(40);
    L(fill_cplx)(in, 40, 18);
    for (int n = 40; n >= 24; n -= 16) {
      P(plan) p = P(plan_dft_1d)(n, in, out, FFTW_FORWARD, FFTW_ESTIMATE);
      expect(PREC, "fft", n, 1, 1, n * CX, n * CX);
      P(execute)(p);
      L(sum_cplx)(n == 40 ? "reuse_40" : "reuse_24", out, (size_t)n);
      P(destroy_plan)(p);
    }
    P(free)(in); P(free)(out);
  }
}

static void L(suite)(void) {
  L(complex_plans)();
  L(real_plans)();
  L(many_and_guru_plans)();
  L(untracked_and_reused)();
}

#undef CX
#undef RE

#endif /* SUITE */
