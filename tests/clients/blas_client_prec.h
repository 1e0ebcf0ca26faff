/* One precision of blas_client.c: included four times with P (s d c z), T (element type),
 * R (real type) and CPLX (0 or 1) defined. A poor man's template; every routine is called
 * through its Fortran name and, for BLAS, through CBLAS too. */

#undef F
#undef CB
#undef NAME
#undef CSC
#define F(x) CAT(P, x)
#define CB(x) CAT(cblas_, F(x))
#define NAME(x) STR(F(x))
#if CPLX
#define CSC(x) (&(x))
#define SCAL(re, im) ((T)(re) + (T)(im) * I)
#define TRANS_C "C"
#define CBLAS_TRANS_C CblasConjTrans
#else
#define CSC(x) (x)
#define SCAL(re, im) ((T)(re))
#define TRANS_C "T"
#define CBLAS_TRANS_C CblasTrans
#endif

/* ---- Fortran prototypes, as C programs usually write them: without hidden string lengths. ---- */
void F(gemm_)(const char*, const char*, const int*, const int*, const int*, const T*, const T*, const int*,
              const T*, const int*, const T*, T*, const int*);
void F(symm_)(const char*, const char*, const int*, const int*, const T*, const T*, const int*, const T*,
              const int*, const T*, T*, const int*);
void F(syrk_)(const char*, const char*, const int*, const int*, const T*, const T*, const int*, const T*, T*,
              const int*);
void F(syr2k_)(const char*, const char*, const int*, const int*, const T*, const T*, const int*, const T*,
               const int*, const T*, T*, const int*);
#if CPLX
void F(hemm_)(const char*, const char*, const int*, const int*, const T*, const T*, const int*, const T*,
              const int*, const T*, T*, const int*);
void F(herk_)(const char*, const char*, const int*, const int*, const R*, const T*, const int*, const R*, T*,
              const int*);
void F(her2k_)(const char*, const char*, const int*, const int*, const T*, const T*, const int*, const T*,
               const int*, const R*, T*, const int*);
#endif
void F(trmm_)(const char*, const char*, const char*, const char*, const int*, const int*, const T*, const T*,
              const int*, T*, const int*);
void F(trsm_)(const char*, const char*, const char*, const char*, const int*, const int*, const T*, const T*,
              const int*, T*, const int*);
void F(gemv_)(const char*, const int*, const int*, const T*, const T*, const int*, const T*, const int*, const T*,
              T*, const int*);
#if CPLX
void F(hemv_)(const char*, const int*, const T*, const T*, const int*, const T*, const int*, const T*, T*, const int*);
#else
void F(symv_)(const char*, const int*, const T*, const T*, const int*, const T*, const int*, const T*, T*, const int*);
#endif
void F(trsv_)(const char*, const char*, const char*, const int*, const T*, const int*, T*, const int*);

void F(getrf_)(const int*, const int*, T*, const int*, int*, int*);
void F(getrs_)(const char*, const int*, const int*, const T*, const int*, const int*, T*, const int*, int*);
void F(gesv_)(const int*, const int*, T*, const int*, int*, T*, const int*, int*);
void F(getri_)(const int*, T*, const int*, const int*, T*, const int*, int*);
void F(potrf_)(const char*, const int*, T*, const int*, int*);
void F(potrs_)(const char*, const int*, const int*, const T*, const int*, T*, const int*, int*);
void F(posv_)(const char*, const int*, const int*, T*, const int*, T*, const int*, int*);
#if CPLX
void F(heevd_)(const char*, const char*, const int*, T*, const int*, R*, T*, const int*, R*, const int*, int*,
               const int*, int*);
void F(heev_)(const char*, const char*, const int*, T*, const int*, R*, T*, const int*, R*, int*);
void F(heevr_)(const char*, const char*, const char*, const int*, T*, const int*, const R*, const R*, const int*,
               const int*, const R*, int*, R*, T*, const int*, int*, T*, const int*, R*, const int*, int*,
               const int*, int*);
void F(gesvd_)(const char*, const char*, const int*, const int*, T*, const int*, R*, T*, const int*, T*,
               const int*, T*, const int*, R*, int*);
void F(gesdd_)(const char*, const int*, const int*, T*, const int*, R*, T*, const int*, T*, const int*, T*,
               const int*, R*, int*, int*);
void F(ungqr_)(const int*, const int*, const int*, T*, const int*, const T*, T*, const int*, int*);
void F(gelsd_)(const int*, const int*, const int*, T*, const int*, T*, const int*, R*, const R*, int*, T*,
               const int*, R*, int*, int*);
void F(geev_)(const char*, const char*, const int*, T*, const int*, T*, T*, const int*, T*, const int*, T*,
              const int*, R*, int*);
#else
void F(syevd_)(const char*, const char*, const int*, T*, const int*, R*, T*, const int*, int*, const int*, int*);
void F(syev_)(const char*, const char*, const int*, T*, const int*, R*, T*, const int*, int*);
void F(syevr_)(const char*, const char*, const char*, const int*, T*, const int*, const R*, const R*, const int*,
               const int*, const R*, int*, R*, T*, const int*, int*, T*, const int*, int*, const int*, int*);
void F(gesvd_)(const char*, const char*, const int*, const int*, T*, const int*, R*, T*, const int*, T*,
               const int*, T*, const int*, int*);
void F(gesdd_)(const char*, const int*, const int*, T*, const int*, R*, T*, const int*, T*, const int*, T*,
               const int*, int*, int*);
void F(orgqr_)(const int*, const int*, const int*, T*, const int*, const T*, T*, const int*, int*);
void F(gelsd_)(const int*, const int*, const int*, T*, const int*, T*, const int*, R*, const R*, int*, T*,
               const int*, int*, int*);
void F(geev_)(const char*, const char*, const int*, T*, const int*, R*, R*, T*, const int*, T*, const int*, T*,
              const int*, int*);
#endif
void F(geqrf_)(const int*, const int*, T*, const int*, T*, T*, const int*, int*);
void F(gels_)(const char*, const int*, const int*, const int*, T*, const int*, T*, const int*, T*, const int*,
              int*);

/* The same routines as a Fortran compiler declares them: hidden lengths (size_t) at the end. */
typedef void F(gemm_len_t)(const char*, const char*, const int*, const int*, const int*, const T*, const T*,
                           const int*, const T*, const int*, const T*, T*, const int*, size_t, size_t);
typedef void F(trsm_len_t)(const char*, const char*, const char*, const char*, const int*, const int*, const T*,
                           const T*, const int*, T*, const int*, size_t, size_t, size_t, size_t);
typedef void F(potrf_len_t)(const char*, const int*, T*, const int*, int*, size_t);
typedef void F(getrs_len_t)(const char*, const int*, const int*, const T*, const int*, const int*, T*, const int*,
                            int*, size_t);
#if CPLX
typedef void F(heevd_len_t)(const char*, const char*, const int*, T*, const int*, R*, T*, const int*, R*,
                            const int*, int*, const int*, int*, size_t, size_t);
typedef void F(gesvd_len_t)(const char*, const char*, const int*, const int*, T*, const int*, R*, T*, const int*,
                            T*, const int*, T*, const int*, R*, int*, size_t, size_t);
#else
typedef void F(syevd_len_t)(const char*, const char*, const int*, T*, const int*, R*, T*, const int*, int*,
                            const int*, int*, size_t, size_t);
typedef void F(gesvd_len_t)(const char*, const char*, const int*, const int*, T*, const int*, R*, T*, const int*,
                            T*, const int*, T*, const int*, int*, size_t, size_t);
#endif
#define WITH_LEN(name) ((F(CAT(name, len_t))*)launder((void*)F(name)))

/* ---- helpers of this precision ---- */
static T* F(mk)(size_t n) {
  T* p = (T*)calloc(n ? n : 1, sizeof(T));
  if (!p) abort();
  for (size_t i = 0; i < n; ++i) {
    double re = rnd();
#if CPLX
    double im = rnd();
    p[i] = (T)re + (T)im * I;
#else
    p[i] = (T)re;
#endif
  }
  return p;
}

static T* F(dup)(const T* src, size_t n) {
  T* p = (T*)malloc((n ? n : 1) * sizeof(T));
  if (!p) abort();
  memcpy(p, src, n * sizeof(T));
  return p;
}

static void F(pr)(const char* what, const T* p, size_t n) { out(NAME(), what, p, n * sizeof(T)); }

/* A Hermitian (symmetric) positive definite n x n matrix in a buffer with leading dimension ld:
 * M^H M + n I with a random M. With spd == 0, symmetric/Hermitian but indefinite. */
static T* F(mk_herm)(int n, int ld, int spd) {
  T* m = F(mk)((size_t)n * n);
  T* a = (T*)calloc((size_t)ld * n, sizeof(T));
  if (!a) abort();
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      T s = 0;
      for (int l = 0; l < n; ++l) {
#if CPLX
        s += conj(m[l + (size_t)i * n]) * m[l + (size_t)j * n];
#else
        s += m[l + (size_t)i * n] * m[l + (size_t)j * n];
#endif
      }
      if (i == j) s = (T)(spd ? creal(s) + n : creal(s) - 4.0 * n);  /* real diagonal */
      a[i + (size_t)j * ld] = s;
    }
  free(m);
  return a;
}

static int F(lw)(T w) {
  int l = (int)creal(w);
  return l < 1 ? 1 : l;
}

/* ============================== BLAS ============================== */
static void F(blas_tests)(void) {
  enum { M = 13, N = 11, K = 9, BUF = 40 * 40 };
  const int m = M, n = N, k = K;
  T alpha = SCAL(1.5, -0.5), beta = SCAL(-0.75, 0.25);
  const char* combos[][2] = {{"N", "N"}, {"T", "N"}, {"N", "T"}, {"T", "T"}, {"C", "N"}, {"N", "C"}, {"c", "t"}};
  char what[64];

  /* gemm, Fortran: every transpose combination, lda/ldb/ldc larger than the rows. */
  for (size_t t = 0; t < sizeof combos / sizeof combos[0]; ++t) {
    const char* ta = combos[t][0];
    const char* tb = combos[t][1];
    int arows = (ta[0] == 'N' || ta[0] == 'n') ? m : k;
    int brows = (tb[0] == 'N' || tb[0] == 'n') ? k : n;
    int lda = arows + 3, ldb = brows + 2, ldc = m + 5;
    T* a = F(mk)(BUF);
    T* b = F(mk)(BUF);
    T* c = F(mk)(BUF);
    F(gemm_)(ta, tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
    expect(NAME(gemm_), m, n, k, 0, 0);
    snprintf(what, sizeof what, "gemm_ %s%s c", ta, tb);
    F(pr)(what, c, PR_EXT);
    free(a); free(b); free(c);
  }
  { /* gemm with hidden lengths (as gfortran passes them), beta = 0 and k = 1 */
    int lda = m + 1, ldb = 2, ldc = m + 2, k1 = 1;
    T zero = 0;
    T* a = F(mk)(BUF);
    T* b = F(mk)(BUF);
    T* c = F(mk)(BUF);
    WITH_LEN(gemm_)("N", "N", &m, &n, &k1, &alpha, a, &lda, b, &ldb, &zero, c, &ldc, 1, 1);
    expect(NAME(gemm_), m, n, k1, 0, 0);
    F(pr)("gemm_ len c", c, PR_EXT);
    free(a); free(b); free(c);
  }
  /* gemm, CBLAS: both layouts. */
  {
    const enum CBLAS_ORDER orders[] = {CblasColMajor, CblasRowMajor};
    const enum CBLAS_TRANSPOSE tr[][2] = {{CblasNoTrans, CblasNoTrans}, {CblasTrans, CBLAS_TRANS_C},
                                          {CBLAS_TRANS_C, CblasNoTrans}, {CblasNoTrans, CblasTrans}};
    for (int o = 0; o < 2; ++o)
      for (int t = 0; t < 4; ++t) {
        int rm = orders[o] == CblasRowMajor;
        int ar = tr[t][0] == CblasNoTrans ? m : k, ac = tr[t][0] == CblasNoTrans ? k : m;
        int br = tr[t][1] == CblasNoTrans ? k : n, bc = tr[t][1] == CblasNoTrans ? n : k;
        int lda = (rm ? ac : ar) + 3, ldb = (rm ? bc : br) + 1, ldc = (rm ? n : m) + 4;
        T* a = F(mk)(BUF);
        T* b = F(mk)(BUF);
        T* c = F(mk)(BUF);
        CB(gemm)(ORD(orders[o]), tr[t][0], tr[t][1], m, n, k, CSC(alpha), a, lda, b, ldb, CSC(beta), c, ldc);
        expect(STR(CB(gemm)), m, n, k, 0, 0);
        snprintf(what, sizeof what, "cblas_gemm o%d t%d c", o, t);
        F(pr)(what, c, PR_EXT);
        free(a); free(b); free(c);
      }
  }

  /* symm / hemm */
  {
    const char* sides[] = {"L", "R"};
    const char* uplos[] = {"U", "L"};
    for (int s = 0; s < 2; ++s) {
      int na = s == 0 ? m : n;
      int lda = na + 2, ldb = m + 1, ldc = m + 3;
      T* a = F(mk)(BUF);
      T* b = F(mk)(BUF);
      T* c = F(mk)(BUF);
      F(symm_)(sides[s], uplos[s], &m, &n, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
      expect(NAME(symm_), m, n, 0, 0, 0);
      snprintf(what, sizeof what, "symm_ %s%s c", sides[s], uplos[s]);
      F(pr)(what, c, PR_EXT);
      CB(symm)(ORD(s ? CblasRowMajor : CblasColMajor), s ? CblasRight : CblasLeft, s ? CblasLower : CblasUpper, m, n,
               CSC(alpha), a, lda, b, s ? n + 1 : ldb, CSC(beta), c, s ? n + 3 : ldc);
      expect(STR(CB(symm)), m, n, 0, 0, 0);
      F(pr)("cblas_symm c", c, PR_EXT);
#if CPLX
      for (int i = 0; i < na; ++i) a[i + (size_t)i * lda] = creal(a[i + (size_t)i * lda]);
      F(hemm_)(sides[s], uplos[1 - s], &m, &n, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
      expect(NAME(hemm_), m, n, 0, 0, 0);
      snprintf(what, sizeof what, "hemm_ %s c", sides[s]);
      F(pr)(what, c, PR_EXT);
      CB(hemm)(ORD(s ? CblasColMajor : CblasRowMajor), s ? CblasRight : CblasLeft, CblasUpper, m, n, CSC(alpha), a,
               lda, b, s ? ldb : n + 2, CSC(beta), c, s ? ldc : n + 1);
      expect(STR(CB(hemm)), m, n, 0, 0, 0);
      F(pr)("cblas_hemm c", c, PR_EXT);
#endif
      free(a); free(b); free(c);
    }
  }

  /* syrk / herk / syr2k / her2k */
  {
    const char* trs[] = {"N", "T"};
    for (int t = 0; t < 2; ++t) {
      int ar = t == 0 ? n : k;
      int lda = ar + 2, ldb = ar + 1, ldc = n + 3;
      T* a = F(mk)(BUF);
      T* b = F(mk)(BUF);
      T* c = F(mk)(BUF);
      F(syrk_)(t ? "L" : "U", trs[t], &n, &k, &alpha, a, &lda, &beta, c, &ldc);
      expect(NAME(syrk_), n, n, k, 0, 0);
      F(pr)(t ? "syrk_ LT c" : "syrk_ UN c", c, PR_EXT);
      CB(syrk)(ORD(t ? CblasRowMajor : CblasColMajor), t ? CblasUpper : CblasLower, t ? CblasTrans : CblasNoTrans, n, k,
               CSC(alpha), a, t ? n + 2 : lda, CSC(beta), c, ldc);
      expect(STR(CB(syrk)), n, n, k, 0, 0);
      F(pr)("cblas_syrk c", c, PR_EXT);
      F(syr2k_)(t ? "U" : "L", trs[t], &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc);
      expect(NAME(syr2k_), n, n, k, 0, 0);
      F(pr)("syr2k_ c", c, PR_EXT);
      CB(syr2k)(ORD(t ? CblasColMajor : CblasRowMajor), CblasUpper, t ? CblasTrans : CblasNoTrans, n, k, CSC(alpha), a,
                t ? lda : k + 2, b, t ? ldb : k + 1, CSC(beta), c, ldc);
      expect(STR(CB(syr2k)), n, n, k, 0, 0);
      F(pr)("cblas_syr2k c", c, PR_EXT);
#if CPLX
      R ra = (R)0.5, rb = (R)-1.25;
      const char* htr = t ? "C" : "N";
      F(herk_)(t ? "U" : "L", htr, &n, &k, &ra, a, &lda, &rb, c, &ldc);
      expect(NAME(herk_), n, n, k, 0, 0);
      F(pr)("herk_ c", c, PR_EXT);
      CB(herk)(ORD(t ? CblasRowMajor : CblasColMajor), CblasLower, t ? CblasConjTrans : CblasNoTrans, n, k, ra, a,
               t ? n + 2 : lda, rb, c, ldc);
      expect(STR(CB(herk)), n, n, k, 0, 0);
      F(pr)("cblas_herk c", c, PR_EXT);
      F(her2k_)(t ? "L" : "U", htr, &n, &k, &alpha, a, &lda, b, &ldb, &rb, c, &ldc);
      expect(NAME(her2k_), n, n, k, 0, 0);
      F(pr)("her2k_ c", c, PR_EXT);
      CB(her2k)(ORD(t ? CblasColMajor : CblasRowMajor), CblasUpper, t ? CblasConjTrans : CblasNoTrans, n, k, CSC(alpha),
                a, t ? lda : k + 2, b, t ? ldb : k + 1, rb, c, ldc);
      expect(STR(CB(her2k)), n, n, k, 0, 0);
      F(pr)("cblas_her2k c", c, PR_EXT);
#endif
      free(a); free(b); free(c);
    }
  }

  /* trmm / trsm: triangular A with a dominant diagonal so that trsm is well conditioned. */
  {
    const char* cfg[][4] = {{"L", "U", "N", "N"}, {"R", "L", "T", "U"}, {"L", "L", TRANS_C, "N"},
                            {"R", "U", "N", "U"}};
    for (int t = 0; t < 4; ++t) {
      int na = cfg[t][0][0] == 'L' ? m : n;
      int lda = na + 2, ldb = m + 3;
      T* a = F(mk)(BUF);
      for (int i = 0; i < na; ++i) a[i + (size_t)i * lda] += (T)8;
      T* b = F(mk)(BUF);
      F(trmm_)(cfg[t][0], cfg[t][1], cfg[t][2], cfg[t][3], &m, &n, &alpha, a, &lda, b, &ldb);
      expect(NAME(trmm_), m, n, 0, 0, 0);
      snprintf(what, sizeof what, "trmm_ %s%s%s%s b", cfg[t][0], cfg[t][1], cfg[t][2], cfg[t][3]);
      F(pr)(what, b, PR_EXT);
      if (t % 2)
        WITH_LEN(trsm_)(cfg[t][0], cfg[t][1], cfg[t][2], cfg[t][3], &m, &n, &alpha, a, &lda, b, &ldb, 1, 1, 1, 1);
      else
        F(trsm_)(cfg[t][0], cfg[t][1], cfg[t][2], cfg[t][3], &m, &n, &alpha, a, &lda, b, &ldb);
      expect(NAME(trsm_), m, n, 0, 0, 0);
      snprintf(what, sizeof what, "trsm_ %s%s%s%s b", cfg[t][0], cfg[t][1], cfg[t][2], cfg[t][3]);
      F(pr)(what, b, PR_EXT);
      int rm = t % 2;
      int ldb2 = rm ? n + 2 : ldb;
      CB(trmm)(ORD(rm ? CblasRowMajor : CblasColMajor), cfg[t][0][0] == 'L' ? CblasLeft : CblasRight,
               cfg[t][1][0] == 'U' ? CblasUpper : CblasLower, cfg[t][2][0] == 'N' ? CblasNoTrans : CBLAS_TRANS_C,
               cfg[t][3][0] == 'U' ? CblasUnit : CblasNonUnit, m, n, CSC(alpha), a, lda, b, ldb2);
      expect(STR(CB(trmm)), m, n, 0, 0, 0);
      F(pr)("cblas_trmm b", b, PR_EXT);
      CB(trsm)(ORD(rm ? CblasRowMajor : CblasColMajor), cfg[t][0][0] == 'L' ? CblasLeft : CblasRight,
               cfg[t][1][0] == 'U' ? CblasUpper : CblasLower, cfg[t][2][0] == 'N' ? CblasNoTrans : CblasTrans,
               cfg[t][3][0] == 'U' ? CblasUnit : CblasNonUnit, m, n, CSC(alpha), a, lda, b, ldb2);
      expect(STR(CB(trsm)), m, n, 0, 0, 0);
      F(pr)("cblas_trsm b", b, PR_EXT);
      free(a); free(b);
    }
  }

  /* BLAS-2: gemv, symv/hemv, trsv with strided vectors, negative increments included (a negative
   * increment walks the vector backwards from the end of its storage). */
  {
    const char* trs[] = {"N", "T", TRANS_C};
    const int incs[] = {1, -2, 3};
    for (int t = 0; t < 3; ++t) {
      int lda = m + 2, incx = incs[t], incy = incs[(t + 1) % 3];
      T* a = F(mk)(BUF);
      T* x = F(mk)(BUF);
      T* y = F(mk)(BUF);
      F(gemv_)(trs[t], &m, &n, &alpha, a, &lda, x, &incx, &beta, y, &incy);
      expect(NAME(gemv_), m, n, 0, 0, 0);
      F(pr)("gemv_ y", y, 3 * (size_t)m);
      CB(gemv)(ORD(t == 1 ? CblasRowMajor : CblasColMajor), t ? CBLAS_TRANS_C : CblasNoTrans, m, n, CSC(alpha), a,
               t == 1 ? n + 2 : lda, x, incx, CSC(beta), y, incy);
      expect(STR(CB(gemv)), m, n, 0, 0, 0);
      F(pr)("cblas_gemv y", y, 3 * (size_t)m);
      free(a); free(x); free(y);
    }
    for (int t = 0; t < 2; ++t) {
      int lda = n + 2, incx = t ? -1 : 2, incy = t ? 3 : -2;
      const char* uplo = t ? "L" : "U";
      T* a = F(mk)(BUF);
      T* x = F(mk)(BUF);
      T* y = F(mk)(BUF);
#if CPLX
      F(hemv_)(uplo, &n, &alpha, a, &lda, x, &incx, &beta, y, &incy);
      expect(NAME(hemv_), n, n, 0, 0, 0);
      F(pr)("hemv_ y", y, 3 * (size_t)n);
      CB(hemv)(ORD(t ? CblasRowMajor : CblasColMajor), t ? CblasLower : CblasUpper, n, CSC(alpha), a, lda, x, incx,
               CSC(beta), y, incy);
      expect(STR(CB(hemv)), n, n, 0, 0, 0);
      F(pr)("cblas_hemv y", y, 3 * (size_t)n);
#else
      F(symv_)(uplo, &n, &alpha, a, &lda, x, &incx, &beta, y, &incy);
      expect(NAME(symv_), n, n, 0, 0, 0);
      F(pr)("symv_ y", y, 3 * (size_t)n);
      CB(symv)(ORD(t ? CblasRowMajor : CblasColMajor), t ? CblasLower : CblasUpper, n, CSC(alpha), a, lda, x, incx,
               CSC(beta), y, incy);
      expect(STR(CB(symv)), n, n, 0, 0, 0);
      F(pr)("cblas_symv y", y, 3 * (size_t)n);
#endif
      free(a); free(x); free(y);
    }
    const int tincs[] = {1, -3, 2};
    for (int t = 0; t < 3; ++t) {
      int lda = n + 1, incx = tincs[t];
      const char* uplo = t % 2 ? "L" : "U";
      const char* diag = t == 2 ? "U" : "N";
      T* a = F(mk)(BUF);
      T* x = F(mk)(BUF);
      for (int i = 0; i < n; ++i) a[i + (size_t)i * lda] += (T)8; /* a solvable triangle */
      F(trsv_)(uplo, trs[t], diag, &n, a, &lda, x, &incx);
      expect(NAME(trsv_), n, n, 0, 0, 0);
      F(pr)("trsv_ x", x, 3 * (size_t)n);
      CB(trsv)(ORD(t == 1 ? CblasRowMajor : CblasColMajor), t % 2 ? CblasLower : CblasUpper,
               t == 0 ? CblasNoTrans : t == 1 ? CBLAS_TRANS_C : CblasTrans, t == 2 ? CblasUnit : CblasNonUnit, n, a,
               lda, x, incx);
      expect(STR(CB(trsv)), n, n, 0, 0, 0);
      F(pr)("cblas_trsv x", x, 3 * (size_t)n);
      free(a); free(x);
    }
  }
}

/* ============================== LAPACK ============================== */
static void F(lapack_tests)(void) {
  enum { N = 17, NRHS = 3, LDA = N + 2, LDB = N + 4, MR = 19, NR = 13, LDR = MR + 2 };
  const int n = N, nrhs = NRHS, lda = LDA, ldb = LDB, mr = MR, nr = NR, ldr = LDR;
  const int m1 = -1;
  int info, ipiv[40];
  T wq[4];
  R rq[4];
  int iq[4];

  /* ---- LU ---- */
  T* a = F(mk)((size_t)LDA * N);
  T* b = F(mk)((size_t)LDB * NRHS);
  T* lu = F(dup)(a, (size_t)LDA * N);
  F(getrf_)(&n, &n, lu, &lda, ipiv, &info);
  expect(NAME(getrf_), n, n, 0, 0, info);
  F(pr)("getrf a", lu, (size_t)LDA * N);
  out(NAME(), "getrf ipiv", ipiv, sizeof(int) * N);
  out_info(NAME(getrf_), info);
  {
    T* x = F(dup)(b, (size_t)LDB * NRHS);
    F(getrs_)("N", &n, &nrhs, lu, &lda, ipiv, x, &ldb, &info);
    expect(NAME(getrs_), n, n, nrhs, 0, info);
    F(pr)("getrs N b", x, (size_t)LDB * NRHS);
    out_info(NAME(getrs_), info);
    WITH_LEN(getrs_)(TRANS_C, &n, &nrhs, lu, &lda, ipiv, x, &ldb, &info, 1);
    expect(NAME(getrs_), n, n, nrhs, 0, info);
    F(pr)("getrs C b", x, (size_t)LDB * NRHS);
    out_info(NAME(getrs_), info);
    free(x);
  }
  {
    T* inv = F(dup)(lu, (size_t)LDA * N);
    F(getri_)(&n, inv, &lda, ipiv, wq, &m1, &info);
    expect(NAME(getri_), n, n, 0, 1, info);
    F(pr)("getri query", wq, 1);
    int lw = F(lw)(wq[0]);
    T* work = F(mk)((size_t)lw);
    F(getri_)(&n, inv, &lda, ipiv, work, &lw, &info);
    expect(NAME(getri_), n, n, 0, 0, info);
    F(pr)("getri a", inv, (size_t)LDA * N);
    out_info(NAME(getri_), info);
    free(work); free(inv);
  }
  {
    T* a2 = F(dup)(a, (size_t)LDA * N);
    T* x = F(dup)(b, (size_t)LDB * NRHS);
    F(gesv_)(&n, &nrhs, a2, &lda, ipiv, x, &ldb, &info);
    expect(NAME(gesv_), n, n, nrhs, 0, info);
    F(pr)("gesv a", a2, (size_t)LDA * N);
    F(pr)("gesv b", x, (size_t)LDB * NRHS);
    out(NAME(), "gesv ipiv", ipiv, sizeof(int) * N);
    out_info(NAME(gesv_), info);
    free(a2); free(x);
  }
  { /* singular: a zero column makes U(4,4) exactly zero: info = 4 */
    int ms = 15, ns = 11, lds = 16;
    T* s = F(mk)((size_t)lds * ns);
    for (int i = 0; i < lds; ++i) s[i + 3 * (size_t)lds] = 0;
    F(getrf_)(&ms, &ns, s, &lds, ipiv, &info);
    expect(NAME(getrf_), ms, ns, 0, 0, info);
    F(pr)("getrf singular a", s, (size_t)lds * ns);
    out_info(NAME(getrf_) "singular", info);
    free(s);
  }
  free(lu);
  free(a);

  /* ---- Cholesky ---- */
  {
    T* spd = F(mk_herm)(n, lda, 1);
    T* c = F(dup)(spd, (size_t)LDA * N);
    F(potrf_)("L", &n, c, &lda, &info);
    expect(NAME(potrf_), n, n, 0, 0, info);
    F(pr)("potrf L a", c, (size_t)LDA * N);
    out_info(NAME(potrf_), info);
    T* x = F(dup)(b, (size_t)LDB * NRHS);
    F(potrs_)("L", &n, &nrhs, c, &lda, x, &ldb, &info);
    expect(NAME(potrs_), n, n, nrhs, 0, info);
    F(pr)("potrs b", x, (size_t)LDB * NRHS);
    out_info(NAME(potrs_), info);
    memcpy(c, spd, sizeof(T) * LDA * N);
    WITH_LEN(potrf_)("U", &n, c, &lda, &info, 1);
    expect(NAME(potrf_), n, n, 0, 0, info);
    F(pr)("potrf U a", c, (size_t)LDA * N);
    out_info(NAME(potrf_), info);
    memcpy(c, spd, sizeof(T) * LDA * N);
    memcpy(x, b, sizeof(T) * LDB * NRHS);
    F(posv_)("U", &n, &nrhs, c, &lda, x, &ldb, &info);
    expect(NAME(posv_), n, n, nrhs, 0, info);
    F(pr)("posv a", c, (size_t)LDA * N);
    F(pr)("posv b", x, (size_t)LDB * NRHS);
    out_info(NAME(posv_), info);
    /* not positive definite: info > 0 */
    T* ind = F(mk_herm)(n, lda, 0);
    F(potrf_)("L", &n, ind, &lda, &info);
    expect(NAME(potrf_), n, n, 0, 0, info);
    F(pr)("potrf indefinite a", ind, (size_t)LDA * N);
    out_info(NAME(potrf_) "indefinite", info);
    free(ind); free(x); free(c); free(spd);
  }

  /* ---- symmetric / Hermitian eigenproblems ---- */
  {
    T* h = F(mk_herm)(n, lda, 0);
    R w[N];
    int ldz = n + 1, il = 2, iu = 6, mfound = 0, isuppz[2 * N];
    R vl = 0, vu = 0, abstol = 0;
    T* a2 = F(dup)(h, (size_t)LDA * N);
#if CPLX
    F(heevd_)("V", "L", &n, a2, &lda, w, wq, &m1, rq, &m1, iq, &m1, &info);
    expect(NAME(heevd_), n, n, 0, 1, info);
    F(pr)("heevd query work", wq, 1);
    out(NAME(), "heevd query rwork", rq, sizeof(R));
    out(NAME(), "heevd query iwork", iq, sizeof(int));
    {
      int lw = F(lw)(wq[0]), lrw = (int)rq[0], liw = iq[0];
      T* work = F(mk)((size_t)lw);
      R* rwork = (R*)calloc((size_t)lrw, sizeof(R));
      int* iwork = (int*)calloc((size_t)liw, sizeof(int));
      WITH_LEN(heevd_)("V", "L", &n, a2, &lda, w, work, &lw, rwork, &lrw, iwork, &liw, &info, 1, 1);
      expect(NAME(heevd_), n, n, 0, 0, info);
      F(pr)("heevd a", a2, (size_t)LDA * N);
      out(NAME(), "heevd w", w, sizeof w);
      out_info(NAME(heevd_), info);
      memcpy(a2, h, sizeof(T) * LDA * N);
      F(heevd_)("N", "U", &n, a2, &lda, w, work, &lw, rwork, &lrw, iwork, &liw, &info);
      expect(NAME(heevd_), n, n, 0, 0, info);
      out(NAME(), "heevd N w", w, sizeof w);
      free(work); free(rwork); free(iwork);
    }
    memcpy(a2, h, sizeof(T) * LDA * N);
    {
      R rwork[3 * N];
      F(heev_)("V", "U", &n, a2, &lda, w, wq, &m1, rwork, &info);
      expect(NAME(heev_), n, n, 0, 1, info);
      F(pr)("heev query", wq, 1);
      int lw = F(lw)(wq[0]);
      T* work = F(mk)((size_t)lw);
      F(heev_)("V", "U", &n, a2, &lda, w, work, &lw, rwork, &info);
      expect(NAME(heev_), n, n, 0, 0, info);
      F(pr)("heev a", a2, (size_t)LDA * N);
      out(NAME(), "heev w", w, sizeof w);
      out_info(NAME(heev_), info);
      free(work);
    }
    for (int r = 0; r < 2; ++r) {
      const char* range = r ? "I" : "A";
      T* z = (T*)calloc((size_t)ldz * N, sizeof(T));
      memcpy(a2, h, sizeof(T) * LDA * N);
      memset(isuppz, 0, sizeof isuppz);
      F(heevr_)("V", range, "L", &n, a2, &lda, &vl, &vu, &il, &iu, &abstol, &mfound, w, z, &ldz, isuppz, wq, &m1,
                rq, &m1, iq, &m1, &info);
      expect(NAME(heevr_), n, n, 0, 1, info);
      F(pr)("heevr query", wq, 1);
      int lw = F(lw)(wq[0]), lrw = (int)rq[0], liw = iq[0];
      T* work = F(mk)((size_t)lw);
      R* rwork = (R*)calloc((size_t)lrw, sizeof(R));
      int* iwork = (int*)calloc((size_t)liw, sizeof(int));
      F(heevr_)("V", range, "L", &n, a2, &lda, &vl, &vu, &il, &iu, &abstol, &mfound, w, z, &ldz, isuppz, work, &lw,
                rwork, &lrw, iwork, &liw, &info);
      expect(NAME(heevr_), n, n, 0, 0, info);
      out(NAME(), r ? "heevr I m" : "heevr A m", &mfound, sizeof mfound);
      out(NAME(), "heevr w", w, sizeof w);
      F(pr)("heevr z", z, (size_t)ldz * N);
      out(NAME(), "heevr isuppz", isuppz, sizeof isuppz);
      out_info(NAME(heevr_), info);
      free(work); free(rwork); free(iwork); free(z);
    }
#else
    F(syevd_)("V", "L", &n, a2, &lda, w, wq, &m1, iq, &m1, &info);
    expect(NAME(syevd_), n, n, 0, 1, info);
    F(pr)("syevd query work", wq, 1);
    out(NAME(), "syevd query iwork", iq, sizeof(int));
    {
      int lw = F(lw)(wq[0]), liw = iq[0];
      T* work = F(mk)((size_t)lw);
      int* iwork = (int*)calloc((size_t)liw, sizeof(int));
      WITH_LEN(syevd_)("V", "L", &n, a2, &lda, w, work, &lw, iwork, &liw, &info, 1, 1);
      expect(NAME(syevd_), n, n, 0, 0, info);
      F(pr)("syevd a", a2, (size_t)LDA * N);
      out(NAME(), "syevd w", w, sizeof w);
      out_info(NAME(syevd_), info);
      memcpy(a2, h, sizeof(T) * LDA * N);
      F(syevd_)("N", "U", &n, a2, &lda, w, work, &lw, iwork, &liw, &info);
      expect(NAME(syevd_), n, n, 0, 0, info);
      out(NAME(), "syevd N w", w, sizeof w);
      free(work); free(iwork);
    }
    (void)rq;
    memcpy(a2, h, sizeof(T) * LDA * N);
    {
      F(syev_)("V", "U", &n, a2, &lda, w, wq, &m1, &info);
      expect(NAME(syev_), n, n, 0, 1, info);
      F(pr)("syev query", wq, 1);
      int lw = F(lw)(wq[0]);
      T* work = F(mk)((size_t)lw);
      F(syev_)("V", "U", &n, a2, &lda, w, work, &lw, &info);
      expect(NAME(syev_), n, n, 0, 0, info);
      F(pr)("syev a", a2, (size_t)LDA * N);
      out(NAME(), "syev w", w, sizeof w);
      out_info(NAME(syev_), info);
      free(work);
    }
    for (int r = 0; r < 2; ++r) {
      const char* range = r ? "I" : "A";
      T* z = (T*)calloc((size_t)ldz * N, sizeof(T));
      memcpy(a2, h, sizeof(T) * LDA * N);
      memset(isuppz, 0, sizeof isuppz);
      F(syevr_)("V", range, "L", &n, a2, &lda, &vl, &vu, &il, &iu, &abstol, &mfound, w, z, &ldz, isuppz, wq, &m1,
                iq, &m1, &info);
      expect(NAME(syevr_), n, n, 0, 1, info);
      F(pr)("syevr query", wq, 1);
      int lw = F(lw)(wq[0]), liw = iq[0];
      T* work = F(mk)((size_t)lw);
      int* iwork = (int*)calloc((size_t)liw, sizeof(int));
      F(syevr_)("V", range, "L", &n, a2, &lda, &vl, &vu, &il, &iu, &abstol, &mfound, w, z, &ldz, isuppz, work, &lw,
                iwork, &liw, &info);
      expect(NAME(syevr_), n, n, 0, 0, info);
      out(NAME(), r ? "syevr I m" : "syevr A m", &mfound, sizeof mfound);
      out(NAME(), "syevr w", w, sizeof w);
      F(pr)("syevr z", z, (size_t)ldz * N);
      out(NAME(), "syevr isuppz", isuppz, sizeof isuppz);
      out_info(NAME(syevr_), info);
      free(work); free(iwork); free(z);
    }
#endif
    free(a2); free(h);
  }

  /* ---- SVD ---- (mr x nr, tall) */
  {
    T* g = F(mk)((size_t)LDR * NR);
    R s[NR];
    int ldu = mr + 1, ldvt = nr + 2;
    T* u = (T*)calloc((size_t)ldu * MR, sizeof(T));
    T* vt = (T*)calloc((size_t)ldvt * NR, sizeof(T));
    T* a2 = F(dup)(g, (size_t)LDR * NR);
#if CPLX
    R rwork[5 * NR + 8];
    R rworkdd[4000];
    F(gesvd_)("S", "S", &mr, &nr, a2, &ldr, s, u, &ldu, vt, &ldvt, wq, &m1, rwork, &info);
#else
    F(gesvd_)("S", "S", &mr, &nr, a2, &ldr, s, u, &ldu, vt, &ldvt, wq, &m1, &info);
#endif
    expect(NAME(gesvd_), mr, nr, 0, 1, info);
    F(pr)("gesvd query", wq, 1);
    {
      int lw = F(lw)(wq[0]);
      T* work = F(mk)((size_t)lw);
#if CPLX
      WITH_LEN(gesvd_)("S", "S", &mr, &nr, a2, &ldr, s, u, &ldu, vt, &ldvt, work, &lw, rwork, &info, 1, 1);
#else
      WITH_LEN(gesvd_)("S", "S", &mr, &nr, a2, &ldr, s, u, &ldu, vt, &ldvt, work, &lw, &info, 1, 1);
#endif
      expect(NAME(gesvd_), mr, nr, 0, 0, info);
      out(NAME(), "gesvd s", s, sizeof s);
      F(pr)("gesvd u", u, (size_t)ldu * MR);
      F(pr)("gesvd vt", vt, (size_t)ldvt * NR);
      out_info(NAME(gesvd_), info);
      memcpy(a2, g, sizeof(T) * LDR * NR);
#if CPLX
      F(gesvd_)("N", "N", &mr, &nr, a2, &ldr, s, u, &ldu, vt, &ldvt, work, &lw, rwork, &info);
#else
      F(gesvd_)("N", "N", &mr, &nr, a2, &ldr, s, u, &ldu, vt, &ldvt, work, &lw, &info);
#endif
      expect(NAME(gesvd_), mr, nr, 0, 0, info);
      out(NAME(), "gesvd N s", s, sizeof s);
      free(work);
    }
    {
      int iwork[8 * NR];
      const char* jobs[] = {"S", "A"};
      for (int j = 0; j < 2; ++j) {
        memcpy(a2, g, sizeof(T) * LDR * NR);
        memset(u, 0, sizeof(T) * ldu * MR);
        memset(vt, 0, sizeof(T) * ldvt * NR);
#if CPLX
        F(gesdd_)(jobs[j], &mr, &nr, a2, &ldr, s, u, &ldu, vt, &ldvt, wq, &m1, rworkdd, iwork, &info);
#else
        F(gesdd_)(jobs[j], &mr, &nr, a2, &ldr, s, u, &ldu, vt, &ldvt, wq, &m1, iwork, &info);
#endif
        expect(NAME(gesdd_), mr, nr, 0, 1, info);
        F(pr)("gesdd query", wq, 1);
        int lw = F(lw)(wq[0]);
        T* work = F(mk)((size_t)lw);
#if CPLX
        F(gesdd_)(jobs[j], &mr, &nr, a2, &ldr, s, u, &ldu, vt, &ldvt, work, &lw, rworkdd, iwork, &info);
#else
        F(gesdd_)(jobs[j], &mr, &nr, a2, &ldr, s, u, &ldu, vt, &ldvt, work, &lw, iwork, &info);
#endif
        expect(NAME(gesdd_), mr, nr, 0, 0, info);
        out(NAME(), "gesdd s", s, sizeof s);
        F(pr)("gesdd u", u, (size_t)ldu * MR);
        F(pr)("gesdd vt", vt, (size_t)ldvt * NR);
        out_info(NAME(gesdd_), info);
        free(work);
      }
    }
    free(a2); free(u); free(vt); free(g);
  }

  /* ---- QR, Q, least squares ---- */
  {
    T* g = F(mk)((size_t)LDR * NR);
    T tau[NR];
    F(geqrf_)(&mr, &nr, g, &ldr, tau, wq, &m1, &info);
    expect(NAME(geqrf_), mr, nr, 0, 1, info);
    F(pr)("geqrf query", wq, 1);
    int lw = F(lw)(wq[0]);
    T* work = F(mk)((size_t)lw);
    F(geqrf_)(&mr, &nr, g, &ldr, tau, work, &lw, &info);
    expect(NAME(geqrf_), mr, nr, 0, 0, info);
    F(pr)("geqrf a", g, (size_t)LDR * NR);
    F(pr)("geqrf tau", tau, NR);
    out_info(NAME(geqrf_), info);
    free(work);
    int kq = nr;
#if CPLX
#define ORGQR ungqr_
#else
#define ORGQR orgqr_
#endif
    F(ORGQR)(&mr, &nr, &kq, g, &ldr, tau, wq, &m1, &info);
    expect(NAME(ORGQR), mr, nr, kq, 1, info);
    F(pr)("orgqr query", wq, 1);
    lw = F(lw)(wq[0]);
    work = F(mk)((size_t)lw);
    F(ORGQR)(&mr, &nr, &kq, g, &ldr, tau, work, &lw, &info);
    expect(NAME(ORGQR), mr, nr, kq, 0, info);
    F(pr)("orgqr q", g, (size_t)LDR * NR);
    out_info(NAME(ORGQR), info);
#undef ORGQR
    free(work); free(g);
  }
  {
    int ldbl = mr + 3;
    T* g = F(mk)((size_t)LDR * NR);
    T* rhs = F(mk)((size_t)ldbl * NRHS);
    T* a2 = F(dup)(g, (size_t)LDR * NR);
    T* x = F(dup)(rhs, (size_t)ldbl * NRHS);
    F(gels_)("N", &mr, &nr, &nrhs, a2, &ldr, x, &ldbl, wq, &m1, &info);
    expect(NAME(gels_), mr, nr, nrhs, 1, info);
    F(pr)("gels query", wq, 1);
    int lw = F(lw)(wq[0]);
    T* work = F(mk)((size_t)lw);
    F(gels_)("N", &mr, &nr, &nrhs, a2, &ldr, x, &ldbl, work, &lw, &info);
    expect(NAME(gels_), mr, nr, nrhs, 0, info);
    F(pr)("gels a", a2, (size_t)LDR * NR);
    F(pr)("gels b", x, (size_t)ldbl * NRHS);
    out_info(NAME(gels_), info);
    free(work);

    /* gelsd */
    R s[NR];
    R rcond = (R)-1;
    int rank = -7;
    int iwork[4000];
    memcpy(a2, g, sizeof(T) * LDR * NR);
    memcpy(x, rhs, sizeof(T) * ldbl * NRHS);
#if CPLX
    R* rwork = (R*)calloc(20000, sizeof(R));
    F(gelsd_)(&mr, &nr, &nrhs, a2, &ldr, x, &ldbl, s, &rcond, &rank, wq, &m1, rwork, iwork, &info);
#else
    F(gelsd_)(&mr, &nr, &nrhs, a2, &ldr, x, &ldbl, s, &rcond, &rank, wq, &m1, iwork, &info);
#endif
    expect(NAME(gelsd_), mr, nr, nrhs, 1, info);
    F(pr)("gelsd query", wq, 1);
    lw = F(lw)(wq[0]);
    work = F(mk)((size_t)lw);
#if CPLX
    F(gelsd_)(&mr, &nr, &nrhs, a2, &ldr, x, &ldbl, s, &rcond, &rank, work, &lw, rwork, iwork, &info);
    free(rwork);
#else
    F(gelsd_)(&mr, &nr, &nrhs, a2, &ldr, x, &ldbl, s, &rcond, &rank, work, &lw, iwork, &info);
#endif
    expect(NAME(gelsd_), mr, nr, nrhs, 0, info);
    F(pr)("gelsd b", x, (size_t)ldbl * NRHS);
    out(NAME(), "gelsd s", s, sizeof s);
    out(NAME(), "gelsd rank", &rank, sizeof rank);
    out_info(NAME(gelsd_), info);
    free(work); free(x); free(a2); free(rhs); free(g);
  }

  /* ---- general eigenproblem ---- */
  {
    int ldv = n + 1;
    T* g = F(mk)((size_t)LDA * N);
    T* vl = (T*)calloc((size_t)ldv * N, sizeof(T));
    T* vr = (T*)calloc((size_t)ldv * N, sizeof(T));
#if CPLX
    T w[N];
    R rwork[2 * N];
    F(geev_)("V", "V", &n, g, &lda, w, vl, &ldv, vr, &ldv, wq, &m1, rwork, &info);
#else
    R wr[N], wi[N];
    F(geev_)("V", "V", &n, g, &lda, wr, wi, vl, &ldv, vr, &ldv, wq, &m1, &info);
#endif
    expect(NAME(geev_), n, n, 0, 1, info);
    F(pr)("geev query", wq, 1);
    int lw = F(lw)(wq[0]);
    T* work = F(mk)((size_t)lw);
#if CPLX
    F(geev_)("V", "V", &n, g, &lda, w, vl, &ldv, vr, &ldv, work, &lw, rwork, &info);
    out(NAME(), "geev w", w, sizeof w);
#else
    F(geev_)("V", "V", &n, g, &lda, wr, wi, vl, &ldv, vr, &ldv, work, &lw, &info);
    out(NAME(), "geev wr", wr, sizeof wr);
    out(NAME(), "geev wi", wi, sizeof wi);
#endif
    expect(NAME(geev_), n, n, 0, 0, info);
    F(pr)("geev vl", vl, (size_t)ldv * N);
    F(pr)("geev vr", vr, (size_t)ldv * N);
    out_info(NAME(geev_), info);
    free(work); free(vl); free(vr); free(g);
  }
  free(b);
}

#undef SCAL
#undef TRANS_C
#undef CBLAS_TRANS_C
#undef WITH_LEN
