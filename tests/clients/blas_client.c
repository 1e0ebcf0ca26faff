/* A C client of BLAS, CBLAS and LAPACK, linked with -lblas -llapack (so LD_LIBRARY_PATH chooses
 * reference BLAS/LAPACK or OpenBLAS). Deterministic, non-trivial inputs, odd sizes, leading dimensions
 * larger than the rows. It prints:
 *   - every result array as hex of its raw bytes (so two runs compare bitwise), and every info value;
 *   - one "@call SYMBOL M N K QUERY INFO ROW_MAJOR" line after each BLAS/LAPACK call it makes, with the
 *     dimensions the trace must show (named as in ops/operations.py), whether it was a workspace query,
 *     the info the routine returned and whether it was a row-major CBLAS call. The test compares these lines with the application-level trace records.
 * Fortran routines are called both without hidden string lengths (as C programs usually do) and with
 * them (as gfortran does): the library must forward both unchanged.
 * Usage: blas_client [blas|lapack|all] [s|d|c|z]... (default: all precisions) */
#include <cblas.h>
#include <complex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(x) #x
#define STR(x) STR_(x)

/* Every BLAS output array is printed with this many elements: it covers every extent used below. */
#define PR_EXT 240

static uint64_t g_seed = 0x9E3779B97F4A7C15ull;

/* Small multiples of 1/256: exact in every precision, so inputs are bitwise the same in all runs. */
static double rnd(void) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  return (double)((int)((g_seed >> 33) % 2001) - 1000) / 256.0;
}

/* Hides a function's declared type from the compiler, to call it with the hidden-length prototype. */
static void* launder(void* p) {
  __asm__("" : "+r"(p));
  return p;
}

static void out(const char* prec, const char* what, const void* p, size_t bytes) {
  static const char hex[] = "0123456789abcdef";
  const unsigned char* b = (const unsigned char*)p;
  printf("%s %s =", prec, what);
  for (size_t i = 0; i < bytes; ++i) {
    if (i % 8 == 0) putchar(' ');
    putchar(hex[b[i] >> 4]);
    putchar(hex[b[i] & 15]);
  }
  putchar('\n');
}

static void out_info(const char* what, int info) { printf("info %s = %d\n", what, info); }

/* The layout of the latest CBLAS call, recorded by ORD() around its first argument. */
static int g_row_major;
#define ORD(order) (g_row_major = (order) == CblasRowMajor, (order))

static void expect(const char* sym, long m, long n, long k, int query, int info) {
  int row_major = strncmp(sym, "cblas_", 6) == 0 ? g_row_major : 0;
  printf("@call %s %ld %ld %ld %d %d %d\n", sym, m, n, k, query, info, row_major);
}

#define P s
#define T float
#define R float
#define CPLX 0
#include "blas_client_prec.h"
#undef P
#undef T
#undef R
#undef CPLX

#define P d
#define T double
#define R double
#define CPLX 0
#include "blas_client_prec.h"
#undef P
#undef T
#undef R
#undef CPLX

#define P c
#define T float complex
#define R float
#define CPLX 1
#include "blas_client_prec.h"
#undef P
#undef T
#undef R
#undef CPLX

#define P z
#define T double complex
#define R double
#define CPLX 1
#include "blas_client_prec.h"
#undef P
#undef T
#undef R
#undef CPLX

int main(int argc, char** argv) {
  const char* what = argc > 1 ? argv[1] : "all";
  const char* precs = argc > 2 ? argv[2] : "sdcz";
  int blas = !strcmp(what, "all") || !strcmp(what, "blas");
  int lapack = !strcmp(what, "all") || !strcmp(what, "lapack");
  if (!blas && !lapack) {
    fprintf(stderr, "usage: %s [blas|lapack|all] [sdcz]\n", argv[0]);
    return 2;
  }
  for (const char* p = precs; *p; ++p) {
    switch (*p) {
      case 's': if (blas) sblas_tests(); if (lapack) slapack_tests(); break;
      case 'd': if (blas) dblas_tests(); if (lapack) dlapack_tests(); break;
      case 'c': if (blas) cblas_tests(); if (lapack) clapack_tests(); break;
      case 'z': if (blas) zblas_tests(); if (lapack) zlapack_tests(); break;
      default: fprintf(stderr, "unknown precision %c\n", *p); return 2;
    }
  }
  printf("done\n");
  return 0;
}
