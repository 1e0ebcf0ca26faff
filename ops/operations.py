"""The table of operations: every routine gpu-offload intercepts, in one place.

tools/gen_wrappers.py expands this table into the exported wrappers, the op ids written in traces,
the names shown by the report and the GPU dispatch ids. Adding a routine is one row here and
`cmake --build build --target regen`.

Argument kinds (how the argument is passed; Fortran passes everything by reference, CBLAS by value):
  int?F=C an integer LAPACK reads only when flag F is C (syevr's il/iu with range 'I'): callers may pass
          NULL otherwise, so the wrapper reads it only then (0 otherwise).
  ch      a character flag ('N', 'U', ...). Fortran: const char* plus a hidden length at the end.
          CBLAS: the enum (CBLAS_TRANSPOSE, CBLAS_UPLO, ...). Normalised to a char named like the arg.
  int     an integer input. Normalised to int64_t.
  iout    an integer output scalar (info, rank, the number of eigenvalues found).
  sc      a scalar of the routine's precision (alpha, beta). CBLAS: by value for real, const void* for complex.
  rsc     a real scalar (herk's alpha/beta, syevr's vl/vu/abstol, gelsd's rcond).
  in      const array of the routine's precision.        inout / out: modified / written array.
  rout    real array written (eigenvalues, singular values).  rwork: real workspace.
  iin     integer array read (pivots).  iinout: integer array written (pivots).  iwork: integer workspace.
  work    workspace of the routine's precision.

Expressions (dims, flops, operand extents, validity) are C++ over the normalised argument values:
int arguments are int64_t, flags are chars; helpers: isN(c) c is 'N', isL(c) c is 'L', isU(c) c is 'U',
isV(c) c is 'V', up(c) upper case; mat(rows, cols, ld) and vec(len, inc) give element extents, zero for
empty operands. flops are real floating-point operations (LAWN 41 style estimates); complex routines
count 4 real flops per complex multiply-add, applied by the generator.
"""

from collections import namedtuple

# A routine: its name without precision letter, the precisions it exists in (with the complex
# name when it differs: 'syevd' is s/d, 'heevd' c/z), interfaces, argument list for real and complex,
# dimensions (m, n, k) recorded in traces, the flop estimate, the operands, the workspace-query args.
# gpu: the family of its GPU body, a key of GPU_FAMILIES: src/cuda/<family>.cpp defines
# `template <class T> Routine <name>_body()` (T the precision's element type); False: no GPU routine.
# BLAS-3 and BLAS-2 rows default to their kind's family; LAPACK rows name theirs.
# warm: its warm-up, a key of WARMUPS (cuda/warm.h); BLAS-3 rows default to their own (warm-up named
# like the routine), the others to none.
# split: the engine that runs one call over several GPUs (a key of SPLIT_ENGINES, cuda/split.h),
# or (engine, precisions) when only some precisions split; None: never split.
# verify: how --verify compares the GPU's results with the CPU library's (a key of VERIFY_MODES).
# The CUDA backend registers exactly these bodies, warm-ups and split routines (backend_tests checks it).
# family: the routine whose curves and efficiency it borrows when its own are missing (the cost
# model's fallback, policy/model.h): the Hermitian names as the symmetric ones; itself by default.
# calib: flops of the calibration's n x n problem over n^3 (BLAS-2: over n^2), real precisions (complex: x4),
# by which `gpu-offload calibrate` plans its sizes; 0: not calibrated.
# split_copy: a large strided call runs in pieces on the library's threads (src/preload/copy_split.h);
# only for ?copy's argument list (n x incx y incy).
# one_triangle: the operands of which the routine reads and writes only one triangle, so that their host
# copies move only that triangle (Engine::upload_triangle, download_triangle): the cost model counts half
# their bytes. (A symmetric A that an eigensolver overwrites with its vectors is read by one triangle but
# written whole: it is not one of them.)
# row_major: for CBLAS routines, C++ statements over the descriptor `d` (generated/descs.h) that turn a
# row-major call into the column-major call on the same memory: the transposed problem (the other
# triangle, side or operand order; d.conj when it is the conjugated problem). An invalid flag stays
# invalid ('?'), so that the CPU library's own error handling still reports it. BLAS-3 and BLAS-2
# rows with a CBLAS form must have one.
Op = namedtuple(
    "Op",
    "name precs kind ifaces args cargs dims flops operands query gpu warm split split_precs verify family calib"
    " split_copy row_major one_triangle",
)

# GPU body families: the file in src/cuda/ that defines the bodies, and the CUDA libraries they use
# (loaded, and their handles made, ahead of a routine's first call).
GPU_FAMILIES = {
    "blas3": ("cublas",),
    "blas2": ("cublas",),
    "lapack_lu": ("cublas", "cusolver"),
    "lapack_inverse": ("cublas", "cusolver"),
    "lapack_qr": ("cublas", "cusolver"),
    "lapack_syev": ("cublas", "cusolver"),
    "lapack_sygv": ("cublas", "cusolver"),
    "lapack_svd": ("cublas", "cusolver"),
    "lapack_gelsd": ("cublas", "cusolver"),
    "lapack_geev": ("cublas", "cusolver"),
    "lapack_geevx": ("cublas", "cusolver"),
    "fft": ("cufft",),
}

# Warm-ups (cuda/warm.h): the file in src/cuda/ that defines `template <class T> void <name>_warm(WarmLane&)`,
# and whether it also defines <name>_warm_large, the same at WarmLane::kLargeN for routines whose
# larger calls use other kernels. The BLAS-3 ones run the routine itself; the LAPACK ones the cuSOLVER
# routines of a family of routines (lapack_warm.cpp: "lu" is Xgetrf and Xgetrs).
WARMUPS = {
    "gemm": ("blas3", False), "symm": ("blas3", False), "hemm": ("blas3", False),
    "syrk": ("blas3", False), "herk": ("blas3", False), "syr2k": ("blas3", False), "her2k": ("blas3", False),
    "trmm": ("blas3", False), "trsm": ("blas3", False),
    "lu": ("lapack_warm", False), "chol": ("lapack_warm", False), "qr": ("lapack_warm", False),
    "syevd": ("lapack_warm", True), "svd": ("lapack_warm", True), "geev": ("lapack_warm", False),
}

# Split engines (cuda/split.h): the file in src/cuda/ that defines `template <class T> SplitRoutine
# <name>_split()` for each routine the engine runs.
SPLIT_ENGINES = {
    "cublasxt": "split_blas3",
    "cusolvermg": "split_lapack",
}

# --verify's comparisons (src/preload/verify.cpp): vectors defined only up to sign or scaling are
# skipped where their values are compared.
VERIFY_MODES = {
    "outputs": "every output",
    "eigenvalues": "every output but a (the eigenvectors, or destroyed)",
    "eigenvalue_range": "the m eigenvalues found (m must agree); z's size bounded by n columns for range V",
    "generalized": "b (the Cholesky factor) and w",
    "generalized_range": "b, and the m eigenvalues found (m must agree)",
    "singular_values": "s",
    "eigenvalue_set": "the eigenvalues, sorted (they come in no fixed order)",
    "least_squares": "the solution's rows of b, unless info != 0 (gels)",
    "least_squares_svd": "the solution's rows of b and s, unless info != 0 (gelsd)",
    "lu_factors": "the factors when the pivots agree (getrf)",
    "lu_solve": "the factors when the pivots agree, and b (gesv)",
    "transform": "the transform's output elements (FFTW executes)",
}

DEFAULT_GPU = {"blas3": "blas3", "blas2": "blas2"}


def op(name, precs, kind, args, dims, flops, operands, cargs=None, query=(), ifaces=("fortran",), gpu=None,
       warm=None, split=None, verify="outputs", family=None, calib=0.0, split_copy=False, row_major=None,
       one_triangle=()):
    if gpu is None:
        if kind not in DEFAULT_GPU:
            raise ValueError(f"{name}: name its GPU family (gpu=...) or gpu=False")
        gpu = DEFAULT_GPU[kind]
    gpu = gpu or None
    if warm is None and kind == "blas3" and gpu:
        warm = name
    split, split_precs = split if isinstance(split, tuple) else (split, precs if split else "")
    for what, key, known in (("gpu", gpu, GPU_FAMILIES), ("warm", warm, WARMUPS), ("split", split, SPLIT_ENGINES),
                             ("verify", verify, VERIFY_MODES)):
        if key is not None and key not in known:
            raise ValueError(f"{name}: unknown {what} {key!r}")
    if (warm or split) and not gpu:
        raise ValueError(f"{name}: a warm-up or split routine needs a GPU routine")
    if any(t not in dict(operands) for t in one_triangle):
        raise ValueError(f"{name}: one_triangle names an operand it does not have")
    if gpu and "cblas" in ifaces and kind != "blas1" and not row_major:
        raise ValueError(f"{name}: a CBLAS routine with a GPU body needs its row_major mapping")
    return Op(name, precs, kind, ifaces, args.split(), (cargs or args).split(), dims, flops, operands, tuple(query), gpu,
              warm, split, split_precs, verify, family or name, float(calib), split_copy, row_major,
              tuple(one_triangle))


BLAS_IF = ("fortran", "cblas")

# Operand extents in elements. `A_of(t, r, c, ld)` picks the stored shape of op(A).
OPS = [
    # ---- BLAS-3 -------------------------------------------------------------------------------------------
    op("gemm", "sdcz", "blas3",
       "transa:ch transb:ch m:int n:int k:int alpha:sc a:in lda:int b:in ldb:int beta:sc c:inout ldc:int",
       # Not zgemm over several GPUs: cuBLASXt's zgemm crashed the process (SIGSEGV) on an H200 with
       # CUDA 13.0, on the test's first 700x650x600 product (s/d/c passed); zgemm stays on one GPU.
       split=("cublasxt", "sdc"),
       dims=("m", "n", "k"), flops="2.0*m*n*k",
       operands=[("a", "mat(isN(transa)?m:k, isN(transa)?k:m, lda)"),
                 ("b", "mat(isN(transb)?k:n, isN(transb)?n:k, ldb)"),
                 ("c", "mat(m, n, ldc)")],
       row_major="std::swap(d.transa, d.transb); std::swap(d.m, d.n); std::swap(d.a, d.b); std::swap(d.lda, d.ldb);",
       ifaces=BLAS_IF, calib=2),
    op("symm", "sdcz", "blas3",
       "side:ch uplo:ch m:int n:int alpha:sc a:in lda:int b:in ldb:int beta:sc c:inout ldc:int",
       dims=("m", "n", "0"), flops="isL(side) ? 2.0*m*m*n : 2.0*m*n*n",
       operands=[("a", "mat(isL(side)?m:n, isL(side)?m:n, lda)"), ("b", "mat(m, n, ldb)"), ("c", "mat(m, n, ldc)")],
       row_major="d.side = flip_side(d.side); d.uplo = flip_ul(d.uplo); std::swap(d.m, d.n);",
       one_triangle=("a",), ifaces=BLAS_IF, calib=2),
    op("hemm", "cz", "blas3",
       "side:ch uplo:ch m:int n:int alpha:sc a:in lda:int b:in ldb:int beta:sc c:inout ldc:int",
       dims=("m", "n", "0"), flops="isL(side) ? 2.0*m*m*n : 2.0*m*n*n",
       operands=[("a", "mat(isL(side)?m:n, isL(side)?m:n, lda)"), ("b", "mat(m, n, ldb)"), ("c", "mat(m, n, ldc)")],
       row_major="d.side = flip_side(d.side); d.uplo = flip_ul(d.uplo); std::swap(d.m, d.n);",
       one_triangle=("a",), ifaces=BLAS_IF, family="symm", calib=2),
    op("syrk", "sdcz", "blas3",
       "uplo:ch trans:ch n:int k:int alpha:sc a:in lda:int beta:sc c:inout ldc:int",
       dims=("n", "n", "k"), flops="1.0*n*(n+1)*k",
       operands=[("a", "mat(isN(trans)?n:k, isN(trans)?k:n, lda)"), ("c", "mat(n, n, ldc)")],
       row_major="d.uplo = flip_ul(d.uplo); d.trans = d.trans == 'N' ? 'T' : one_of(d.trans, (is_complex<T>::value ? \"T\" : \"TC\")) ? 'N' : '?';",
       one_triangle=("c",), ifaces=BLAS_IF, calib=1),
    op("herk", "cz", "blas3",
       "uplo:ch trans:ch n:int k:int alpha:rsc a:in lda:int beta:rsc c:inout ldc:int",
       dims=("n", "n", "k"), flops="1.0*n*(n+1)*k",
       operands=[("a", "mat(isN(trans)?n:k, isN(trans)?k:n, lda)"), ("c", "mat(n, n, ldc)")],
       row_major="d.uplo = flip_ul(d.uplo); d.trans = d.trans == 'N' ? 'C' : one_of(d.trans, \"C\") ? 'N' : '?';",
       one_triangle=("c",), ifaces=BLAS_IF, family="syrk", calib=1),
    op("syr2k", "sdcz", "blas3",
       "uplo:ch trans:ch n:int k:int alpha:sc a:in lda:int b:in ldb:int beta:sc c:inout ldc:int",
       dims=("n", "n", "k"), flops="2.0*n*n*k",
       operands=[("a", "mat(isN(trans)?n:k, isN(trans)?k:n, lda)"),
                 ("b", "mat(isN(trans)?n:k, isN(trans)?k:n, ldb)"), ("c", "mat(n, n, ldc)")],
       row_major="d.uplo = flip_ul(d.uplo); d.trans = d.trans == 'N' ? 'T' : one_of(d.trans, (is_complex<T>::value ? \"T\" : \"TC\")) ? 'N' : '?';",
       one_triangle=("c",), ifaces=BLAS_IF, calib=2),
    op("her2k", "cz", "blas3",
       "uplo:ch trans:ch n:int k:int alpha:sc a:in lda:int b:in ldb:int beta:rsc c:inout ldc:int",
       dims=("n", "n", "k"), flops="2.0*n*n*k",
       operands=[("a", "mat(isN(trans)?n:k, isN(trans)?k:n, lda)"),
                 ("b", "mat(isN(trans)?n:k, isN(trans)?k:n, ldb)"), ("c", "mat(n, n, ldc)")],
       row_major="d.uplo = flip_ul(d.uplo); d.trans = d.trans == 'N' ? 'C' : one_of(d.trans, \"C\") ? 'N' : '?'; d.alpha = std::conj(d.alpha);",
       one_triangle=("c",), ifaces=BLAS_IF, family="syr2k", calib=2),
    op("trmm", "sdcz", "blas3",
       "side:ch uplo:ch transa:ch diag:ch m:int n:int alpha:sc a:in lda:int b:inout ldb:int",
       dims=("m", "n", "0"), flops="isL(side) ? 1.0*m*m*n : 1.0*m*n*n",
       operands=[("a", "mat(isL(side)?m:n, isL(side)?m:n, lda)"), ("b", "mat(m, n, ldb)")],
       row_major="d.side = flip_side(d.side); d.uplo = flip_ul(d.uplo); std::swap(d.m, d.n);",
       one_triangle=("a",), ifaces=BLAS_IF, calib=1),
    op("trsm", "sdcz", "blas3",
       "side:ch uplo:ch transa:ch diag:ch m:int n:int alpha:sc a:in lda:int b:inout ldb:int",
       dims=("m", "n", "0"), flops="isL(side) ? 1.0*m*m*n : 1.0*m*n*n",
       operands=[("a", "mat(isL(side)?m:n, isL(side)?m:n, lda)"), ("b", "mat(m, n, ldb)")],
       row_major="d.side = flip_side(d.side); d.uplo = flip_ul(d.uplo); std::swap(d.m, d.n);",
       one_triangle=("a",), ifaces=BLAS_IF, calib=1),
    # ---- BLAS-2 ---------------------------------------------------------------------------------------------
    # Memory-bound: worth the GPU when the matrix is already there. A negative increment walks the
    # vector backwards from its last element; its extent is the same as with the positive one.
    op("gemv", "sdcz", "blas2",
       "trans:ch m:int n:int alpha:sc a:in lda:int x:in incx:int beta:sc y:inout incy:int",
       dims=("m", "n", "0"), flops="2.0*m*n",
       operands=[("a", "mat(m, n, lda)"), ("x", "vec(isN(trans)?n:m, incx)"), ("y", "vec(isN(trans)?m:n, incy)")],
       row_major="std::swap(d.m, d.n); d.conj = is_complex<T>::value && d.trans == 'C'; d.trans = d.trans == 'N' ? 'T' : one_of(d.trans, \"TC\") ? 'N' : '?';",
       ifaces=BLAS_IF, calib=2),
    op("symv", "sd", "blas2",
       "uplo:ch n:int alpha:sc a:in lda:int x:in incx:int beta:sc y:inout incy:int",
       dims=("n", "n", "0"), flops="2.0*n*n",
       operands=[("a", "mat(n, n, lda)"), ("x", "vec(n, incx)"), ("y", "vec(n, incy)")],
       row_major="d.uplo = flip_ul(d.uplo);",
       one_triangle=("a",), ifaces=BLAS_IF, calib=2),
    op("hemv", "cz", "blas2",
       "uplo:ch n:int alpha:sc a:in lda:int x:in incx:int beta:sc y:inout incy:int",
       dims=("n", "n", "0"), flops="2.0*n*n",
       operands=[("a", "mat(n, n, lda)"), ("x", "vec(n, incx)"), ("y", "vec(n, incy)")],
       row_major="d.uplo = flip_ul(d.uplo); d.conj = true;",
       one_triangle=("a",), ifaces=BLAS_IF, family="symv", calib=2),
    op("trsv", "sdcz", "blas2",
       "uplo:ch trans:ch diag:ch n:int a:in lda:int x:inout incx:int",
       dims=("n", "n", "0"), flops="1.0*n*n",
       operands=[("a", "mat(n, n, lda)"), ("x", "vec(n, incx)")],
       row_major="d.uplo = flip_ul(d.uplo); d.conj = is_complex<T>::value && d.trans == 'C'; d.trans = d.trans == 'N' ? 'T' : one_of(d.trans, \"TC\") ? 'N' : '?';",
       one_triangle=("a",), ifaces=BLAS_IF, calib=1),
    # ---- BLAS-1 ---------------------------------------------------------------------------------------------
    # Measured only, never offloaded: NumPy converts each LAPACK operand to Fortran order and back with
    # one ?copy per row (strided reads), so the report can say how much time went to converting data
    # around the LAPACK calls. No work estimate: a copy stays on the fast path unless calls are recorded.
    # CBLAS ?copy has no layout argument (blas1 rows take none). Large strided ones are split over the
    # library's threads (the same bytes, several times sooner).
    op("copy", "sdcz", "blas1",
       "n:int x:in incx:int y:out incy:int",
       dims=("n", "0", "0"), flops="0.0",
       operands=[("x", "vec(n, incx)"), ("y", "vec(n, incy)")],
       ifaces=BLAS_IF, gpu=False, split_copy=True),
    # ---- LAPACK: LU ------------------------------------------------------------------------------------------
    op("getrf", "sdcz", "lapack",
       "m:int n:int a:inout lda:int ipiv:iinout info:iout",
       gpu="lapack_lu", warm="lu", split="cusolvermg", verify="lu_factors",
       dims=("m", "n", "0"),
       flops="(double)std::max(m,n)*std::min(m,n)*std::min(m,n) - (double)std::min(m,n)*std::min(m,n)*std::min(m,n)/3.0",
       operands=[("a", "mat(m, n, lda)"), ("ipiv", "std::min(m, n)")], calib=2.0 / 3),
    op("getrs", "sdcz", "lapack",
       "trans:ch n:int nrhs:int a:in lda:int ipiv:iin b:inout ldb:int info:iout",
       gpu="lapack_lu", warm="lu", split="cusolvermg",
       dims=("n", "n", "nrhs"), flops="2.0*n*n*nrhs",
       operands=[("a", "mat(n, n, lda)"), ("ipiv", "n"), ("b", "mat(n, nrhs, ldb)")], calib=2),
    op("gesv", "sdcz", "lapack",
       "n:int nrhs:int a:inout lda:int ipiv:iinout b:inout ldb:int info:iout",
       gpu="lapack_lu", warm="lu", verify="lu_solve",
       dims=("n", "n", "nrhs"), flops="2.0*n*n*n/3.0 + 2.0*n*n*nrhs",
       operands=[("a", "mat(n, n, lda)"), ("ipiv", "n"), ("b", "mat(n, nrhs, ldb)")], calib=8.0 / 3),
    op("getri", "sdcz", "lapack",
       "n:int a:inout lda:int ipiv:iin work:work lwork:int info:iout",
       gpu="lapack_lu", warm="lu",
       dims=("n", "n", "0"), flops="4.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)"), ("ipiv", "n")], query=["lwork"], calib=4.0 / 3),
    # ---- LAPACK: Cholesky ------------------------------------------------------------------------------------
    op("potrf", "sdcz", "lapack",
       "uplo:ch n:int a:inout lda:int info:iout",
       gpu="lapack_lu", warm="chol", split="cusolvermg",
       dims=("n", "n", "0"), flops="1.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)")], one_triangle=("a",), calib=1.0 / 3),
    op("potrs", "sdcz", "lapack",
       "uplo:ch n:int nrhs:int a:in lda:int b:inout ldb:int info:iout",
       gpu="lapack_lu", warm="chol", split="cusolvermg",
       dims=("n", "n", "nrhs"), flops="2.0*n*n*nrhs",
       operands=[("a", "mat(n, n, lda)"), ("b", "mat(n, nrhs, ldb)")], one_triangle=("a",), calib=2),
    op("posv", "sdcz", "lapack",
       "uplo:ch n:int nrhs:int a:inout lda:int b:inout ldb:int info:iout",
       gpu="lapack_lu", warm="chol",
       dims=("n", "n", "nrhs"), flops="1.0*n*n*n/3.0 + 2.0*n*n*nrhs",
       operands=[("a", "mat(n, n, lda)"), ("b", "mat(n, nrhs, ldb)")], one_triangle=("a",), calib=7.0 / 3),
    # ---- LAPACK: inverses of triangular and Cholesky factors ------------------------------------------------
    op("trtri", "sdcz", "lapack",
       "uplo:ch diag:ch n:int a:inout lda:int info:iout",
       gpu="lapack_inverse", warm="chol",
       dims=("n", "n", "0"), flops="1.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)")], one_triangle=("a",), family="potrf"),
    op("potri", "sdcz", "lapack",
       "uplo:ch n:int a:inout lda:int info:iout",
       gpu="lapack_inverse", warm="chol",
       dims=("n", "n", "0"), flops="2.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)")], one_triangle=("a",), family="potrf"),
    # ---- LAPACK: symmetric / Hermitian eigenproblems ---------------------------------------------------------
    op("syevd", "sd", "lapack",
       "jobz:ch uplo:ch n:int a:inout lda:int w:rout work:work lwork:int iwork:iwork liwork:int info:iout",
       gpu="lapack_syev", warm="syevd", split="cusolvermg", verify="eigenvalues",
       dims=("n", "n", "0"), flops="isV(jobz) ? 9.0*n*n*n : 4.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)"), ("w", "n")], query=["lwork", "liwork"], calib=9),
    op("heevd", "cz", "lapack",
       "jobz:ch uplo:ch n:int a:inout lda:int w:rout work:work lwork:int rwork:rwork lrwork:int iwork:iwork liwork:int info:iout",
       gpu="lapack_syev", warm="syevd", split="cusolvermg", verify="eigenvalues",
       dims=("n", "n", "0"), flops="isV(jobz) ? 9.0*n*n*n : 4.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)"), ("w", "n")], query=["lwork", "lrwork", "liwork"], family="syevd", calib=9),
    op("syev", "sd", "lapack",
       "jobz:ch uplo:ch n:int a:inout lda:int w:rout work:work lwork:int info:iout",
       gpu="lapack_syev", warm="syevd", verify="eigenvalues",
       dims=("n", "n", "0"), flops="isV(jobz) ? 9.0*n*n*n : 4.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)"), ("w", "n")], query=["lwork"], calib=9),
    op("heev", "cz", "lapack",
       "jobz:ch uplo:ch n:int a:inout lda:int w:rout work:work lwork:int rwork:rwork info:iout",
       gpu="lapack_syev", warm="syevd", verify="eigenvalues",
       dims=("n", "n", "0"), flops="isV(jobz) ? 9.0*n*n*n : 4.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)"), ("w", "n")], query=["lwork"], family="syev", calib=9),
    op("syevr", "sd", "lapack",
       "jobz:ch range:ch uplo:ch n:int a:inout lda:int vl:rsc vu:rsc il:int?range=I iu:int?range=I abstol:rsc m:iout w:rout"
       " z:out ldz:int isuppz:iwork work:work lwork:int iwork:iwork liwork:int info:iout",
       gpu="lapack_syev", warm="syevd", verify="eigenvalue_range",
       dims=("n", "n", "0"), flops="isV(jobz) ? 9.0*n*n*n : 4.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)"), ("w", "n"),
                 ("z", "isV(jobz) ? mat(n, up(range)=='A' ? n : up(range)=='I' ? iu-il+1 : 0, ldz) : 0")],
       one_triangle=("a",), query=["lwork", "liwork"], calib=9),
    op("heevr", "cz", "lapack",
       "jobz:ch range:ch uplo:ch n:int a:inout lda:int vl:rsc vu:rsc il:int?range=I iu:int?range=I abstol:rsc m:iout w:rout"
       " z:out ldz:int isuppz:iwork work:work lwork:int rwork:rwork lrwork:int iwork:iwork liwork:int info:iout",
       gpu="lapack_syev", warm="syevd", verify="eigenvalue_range",
       dims=("n", "n", "0"), flops="isV(jobz) ? 9.0*n*n*n : 4.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)"), ("w", "n"),
                 ("z", "isV(jobz) ? mat(n, up(range)=='A' ? n : up(range)=='I' ? iu-il+1 : 0, ldz) : 0")],
       one_triangle=("a",), query=["lwork", "lrwork", "liwork"], family="syevr", calib=9),
    # ---- LAPACK: generalized symmetric-definite eigenproblems ------------------------------------------------
    # A x = lambda B x (itype 1), A B x = lambda x (2), B A x = lambda x (3): the Cholesky factor of B,
    # the reduction to a standard problem, its eigensolver and the back-transformation; flops are the
    # sum of those four steps. Curves and efficiency borrowed from syevd / heevd until calibrated.
    op("sygv", "sd", "lapack",
       "itype:int jobz:ch uplo:ch n:int a:inout lda:int b:inout ldb:int w:rout work:work lwork:int info:iout",
       gpu="lapack_sygv", warm="syevd", verify="generalized",
       dims=("n", "n", "itype"), flops="isV(jobz) ? (1.0/3 + 1.0 + 9.0 + 1.0)*n*n*n : (1.0/3 + 1.0 + 4.0/3.0)*n*n*n",
       operands=[("a", "mat(n, n, lda)"), ("b", "mat(n, n, ldb)"), ("w", "n")], query=["lwork"], one_triangle=("b",), family="syevd"),
    op("hegv", "cz", "lapack",
       "itype:int jobz:ch uplo:ch n:int a:inout lda:int b:inout ldb:int w:rout work:work lwork:int rwork:rwork info:iout",
       gpu="lapack_sygv", warm="syevd", verify="generalized",
       dims=("n", "n", "itype"), flops="isV(jobz) ? (1.0/3 + 1.0 + 9.0 + 1.0)*n*n*n : (1.0/3 + 1.0 + 4.0/3.0)*n*n*n",
       operands=[("a", "mat(n, n, lda)"), ("b", "mat(n, n, ldb)"), ("w", "n")], query=["lwork"], one_triangle=("b",), family="heevd"),
    op("sygvd", "sd", "lapack",
       "itype:int jobz:ch uplo:ch n:int a:inout lda:int b:inout ldb:int w:rout work:work lwork:int iwork:iwork"
       " liwork:int info:iout",
       gpu="lapack_sygv", warm="syevd", verify="generalized",
       dims=("n", "n", "itype"), flops="isV(jobz) ? (1.0/3 + 1.0 + 9.0 + 1.0)*n*n*n : (1.0/3 + 1.0 + 4.0/3.0)*n*n*n",
       operands=[("a", "mat(n, n, lda)"), ("b", "mat(n, n, ldb)"), ("w", "n")], query=["lwork", "liwork"],
       one_triangle=("b",), family="syevd"),
    op("hegvd", "cz", "lapack",
       "itype:int jobz:ch uplo:ch n:int a:inout lda:int b:inout ldb:int w:rout work:work lwork:int rwork:rwork"
       " lrwork:int iwork:iwork liwork:int info:iout",
       gpu="lapack_sygv", warm="syevd", verify="generalized",
       dims=("n", "n", "itype"), flops="isV(jobz) ? (1.0/3 + 1.0 + 9.0 + 1.0)*n*n*n : (1.0/3 + 1.0 + 4.0/3.0)*n*n*n",
       operands=[("a", "mat(n, n, lda)"), ("b", "mat(n, n, ldb)"), ("w", "n")], query=["lwork", "lrwork", "liwork"],
       one_triangle=("b",), family="heevd"),
    op("sygvx", "sd", "lapack",
       "itype:int jobz:ch range:ch uplo:ch n:int a:inout lda:int b:inout ldb:int vl:rsc vu:rsc il:int?range=I"
       " iu:int?range=I abstol:rsc m:iout w:rout z:out ldz:int work:work lwork:int iwork:iwork ifail:iwork info:iout",
       gpu="lapack_sygv", warm="syevd", verify="generalized_range",
       dims=("n", "n", "itype"), flops="isV(jobz) ? (1.0/3 + 1.0 + 9.0 + 1.0)*n*n*n : (1.0/3 + 1.0 + 4.0/3.0)*n*n*n",
       operands=[("a", "mat(n, n, lda)"), ("b", "mat(n, n, ldb)"), ("w", "n"),
                 ("z", "isV(jobz) ? mat(n, up(range)=='A' ? n : up(range)=='I' ? iu-il+1 : 0, ldz) : 0")],
       query=["lwork"], one_triangle=("a", "b"), family="syevd"),
    op("hegvx", "cz", "lapack",
       "itype:int jobz:ch range:ch uplo:ch n:int a:inout lda:int b:inout ldb:int vl:rsc vu:rsc il:int?range=I"
       " iu:int?range=I abstol:rsc m:iout w:rout z:out ldz:int work:work lwork:int rwork:rwork iwork:iwork"
       " ifail:iwork info:iout",
       gpu="lapack_sygv", warm="syevd", verify="generalized_range",
       dims=("n", "n", "itype"), flops="isV(jobz) ? (1.0/3 + 1.0 + 9.0 + 1.0)*n*n*n : (1.0/3 + 1.0 + 4.0/3.0)*n*n*n",
       operands=[("a", "mat(n, n, lda)"), ("b", "mat(n, n, ldb)"), ("w", "n"),
                 ("z", "isV(jobz) ? mat(n, up(range)=='A' ? n : up(range)=='I' ? iu-il+1 : 0, ldz) : 0")],
       query=["lwork"], one_triangle=("a", "b"), family="heevd"),
    # ---- LAPACK: singular values -----------------------------------------------------------------------------
    op("gesvd", "sdcz", "lapack",
       "jobu:ch jobvt:ch m:int n:int a:inout lda:int s:rout u:out ldu:int vt:out ldvt:int work:work lwork:int info:iout",
       cargs="jobu:ch jobvt:ch m:int n:int a:inout lda:int s:rout u:out ldu:int vt:out ldvt:int work:work lwork:int"
             " rwork:rwork info:iout",
       gpu="lapack_svd", warm="svd", verify="singular_values",
       dims=("m", "n", "0"),
       flops="(isN(jobu) && isN(jobvt)) ? 4.0*std::max(m,n)*std::min(m,n)*std::min(m,n) - 4.0*std::min(m,n)*std::min(m,n)*std::min(m,n)/3.0"
             " : 8.0*std::max(m,n)*std::min(m,n)*std::min(m,n) + 20.0*std::min(m,n)*std::min(m,n)*std::min(m,n)/3.0",
       operands=[("a", "mat(m, n, lda)"), ("s", "std::min(m, n)"),
                 ("u", "mat(m, up(jobu)=='A' ? m : up(jobu)=='S' ? std::min(m, n) : 0, ldu)"),
                 ("vt", "mat(up(jobvt)=='A' ? n : up(jobvt)=='S' ? std::min(m, n) : 0, n, ldvt)")],
       query=["lwork"], calib=14.7),
    op("gesdd", "sdcz", "lapack",
       "jobz:ch m:int n:int a:inout lda:int s:rout u:out ldu:int vt:out ldvt:int work:work lwork:int iwork:iwork info:iout",
       cargs="jobz:ch m:int n:int a:inout lda:int s:rout u:out ldu:int vt:out ldvt:int work:work lwork:int"
             " rwork:rwork iwork:iwork info:iout",
       gpu="lapack_svd", warm="svd", verify="singular_values",
       dims=("m", "n", "0"),
       flops="isN(jobz) ? 4.0*std::max(m,n)*std::min(m,n)*std::min(m,n) - 4.0*std::min(m,n)*std::min(m,n)*std::min(m,n)/3.0"
             " : 8.0*std::max(m,n)*std::min(m,n)*std::min(m,n) + 20.0*std::min(m,n)*std::min(m,n)*std::min(m,n)/3.0",
       operands=[("a", "mat(m, n, lda)"), ("s", "std::min(m, n)"),
                 ("u", "mat(m, up(jobz)=='A' ? m : up(jobz)=='S' ? std::min(m, n) : (up(jobz)=='O' && m < n) ? m : 0, ldu)"),
                 ("vt", "mat(up(jobz)=='A' ? n : up(jobz)=='S' ? std::min(m, n) : (up(jobz)=='O' && m >= n) ? n : 0, n, ldvt)")],
       query=["lwork"], calib=14.7),
    # ---- LAPACK: QR and least squares ------------------------------------------------------------------------
    op("geqrf", "sdcz", "lapack",
       "m:int n:int a:inout lda:int tau:out work:work lwork:int info:iout",
       gpu="lapack_qr", warm="qr",
       dims=("m", "n", "0"),
       flops="2.0*std::max(m,n)*std::min(m,n)*std::min(m,n) - 2.0*std::min(m,n)*std::min(m,n)*std::min(m,n)/3.0",
       operands=[("a", "mat(m, n, lda)"), ("tau", "std::min(m, n)")], query=["lwork"], calib=4.0 / 3),
    op("orgqr", "sd", "lapack",
       "m:int n:int k:int a:inout lda:int tau:in work:work lwork:int info:iout",
       gpu="lapack_qr", warm="qr",
       dims=("m", "n", "k"), flops="4.0*m*n*k - 2.0*(m+n)*k*k + 4.0*k*k*k/3.0",
       operands=[("a", "mat(m, n, lda)"), ("tau", "k")], query=["lwork"], calib=4.0 / 3),
    op("ungqr", "cz", "lapack",
       "m:int n:int k:int a:inout lda:int tau:in work:work lwork:int info:iout",
       gpu="lapack_qr", warm="qr",
       dims=("m", "n", "k"), flops="4.0*m*n*k - 2.0*(m+n)*k*k + 4.0*k*k*k/3.0",
       operands=[("a", "mat(m, n, lda)"), ("tau", "k")], query=["lwork"], family="orgqr", calib=4.0 / 3),
    op("gels", "sdcz", "lapack",
       "trans:ch m:int n:int nrhs:int a:inout lda:int b:inout ldb:int work:work lwork:int info:iout",
       gpu="lapack_qr", warm="qr", verify="least_squares",
       dims=("m", "n", "nrhs"),
       flops="2.0*std::max(m,n)*std::min(m,n)*std::min(m,n) - 2.0*std::min(m,n)*std::min(m,n)*std::min(m,n)/3.0"
             " + 4.0*std::max(m,n)*std::min(m,n)*nrhs",
       operands=[("a", "mat(m, n, lda)"), ("b", "mat(std::max(m, n), nrhs, ldb)")], query=["lwork"], calib=5.3),
    op("gelsd", "sdcz", "lapack",
       "m:int n:int nrhs:int a:inout lda:int b:inout ldb:int s:rout rcond:rsc rank:iout work:work lwork:int"
       " iwork:iwork info:iout",
       cargs="m:int n:int nrhs:int a:inout lda:int b:inout ldb:int s:rout rcond:rsc rank:iout work:work lwork:int"
             " rwork:rwork iwork:iwork info:iout",
       gpu="lapack_gelsd", warm="qr", verify="least_squares_svd",
       dims=("m", "n", "nrhs"),
       flops="4.0*std::max(m,n)*std::min(m,n)*std::min(m,n) + 8.0*std::min(m,n)*std::min(m,n)*std::min(m,n)/3.0"
             " + 4.0*std::max(m,n)*std::min(m,n)*nrhs",
       operands=[("a", "mat(m, n, lda)"), ("b", "mat(std::max(m, n), nrhs, ldb)"), ("s", "std::min(m, n)")],
       query=["lwork"], calib=10.7),
    # ---- LAPACK: general eigenproblem ------------------------------------------------------------------------
    op("geev", "sdcz", "lapack",
       "jobvl:ch jobvr:ch n:int a:inout lda:int wr:rout wi:rout vl:out ldvl:int vr:out ldvr:int work:work lwork:int"
       " info:iout",
       cargs="jobvl:ch jobvr:ch n:int a:inout lda:int w:out vl:out ldvl:int vr:out ldvr:int work:work lwork:int"
             " rwork:rwork info:iout",
       gpu="lapack_geev", warm="geev", verify="eigenvalue_set",
       dims=("n", "n", "0"), flops="(isV(jobvl) || isV(jobvr)) ? 26.33*n*n*n : 10.0*n*n*n",
       operands=[("a", "mat(n, n, lda)"), ("wr", "n"), ("wi", "n"), ("w", "n"),
                 ("vl", "isV(jobvl) ? mat(n, n, ldvl) : 0"), ("vr", "isV(jobvr) ? mat(n, n, ldvr) : 0")],
       query=["lwork"], calib=26.3),
    # Octave's eig of a general matrix (balanc 'B', or 'N' for eig(A, "nobalance"); sense 'N'). The GPU
    # runs geev's eigen-part on the matrix the CPU library's own ?gebal balanced; sense != 'N' stays on
    # the CPU (lapack_geevx.cpp says why). Costs borrowed from geev.
    op("geevx", "sdcz", "lapack",
       "balanc:ch jobvl:ch jobvr:ch sense:ch n:int a:inout lda:int wr:rout wi:rout vl:out ldvl:int vr:out ldvr:int"
       " ilo:iout ihi:iout scale:rout abnrm:rout rconde:rout rcondv:rout work:work lwork:int iwork:iwork info:iout",
       cargs="balanc:ch jobvl:ch jobvr:ch sense:ch n:int a:inout lda:int w:out vl:out ldvl:int vr:out ldvr:int"
             " ilo:iout ihi:iout scale:rout abnrm:rout rconde:rout rcondv:rout work:work lwork:int rwork:rwork info:iout",
       gpu="lapack_geevx", warm="geev", verify="eigenvalue_set",
       dims=("n", "n", "0"), flops="(isV(jobvl) || isV(jobvr)) ? 26.33*n*n*n : 10.0*n*n*n",
       operands=[("a", "mat(n, n, lda)"), ("wr", "n"), ("wi", "n"), ("w", "n"),
                 ("vl", "isV(jobvl) ? mat(n, n, ldvl) : 0"), ("vr", "isV(jobvr) ? mat(n, n, ldvr) : 0")],
       query=["lwork"], family="geev"),
    # ---- LAPACK: measured only -------------------------------------------------------------------------------
    # Heavy routines of electronic-structure codes (Quantum ESPRESSO, CP2K, NWChem) that stay with the
    # CPU library: intercepted so that the report shows their time and the BLAS calls inside them
    # count as nested, not as the program's own. sytrf/hetrf stay here because LAPACK's Bunch-Kaufman
    # pivot choices are part of their result (ipiv) and cuSOLVER's need not match them.
    op("sytrd", "sd", "lapack",
       "uplo:ch n:int a:inout lda:int d:rout e:rout tau:out work:work lwork:int info:iout",
       dims=("n", "n", "0"), flops="4.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)")], query=["lwork"], gpu=False),
    op("hetrd", "cz", "lapack",
       "uplo:ch n:int a:inout lda:int d:rout e:rout tau:out work:work lwork:int info:iout",
       dims=("n", "n", "0"), flops="4.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)")], query=["lwork"], family="sytrd", gpu=False),
    op("stedc", "sdcz", "lapack",
       "compz:ch n:int d:rout e:rout z:inout ldz:int work:work lwork:int iwork:iwork liwork:int info:iout",
       cargs="compz:ch n:int d:rout e:rout z:inout ldz:int work:work lwork:int rwork:rwork lrwork:int iwork:iwork"
             " liwork:int info:iout",
       dims=("n", "n", "0"), flops="isN(compz) ? 1.0*n*n : 4.0*n*n*n/3.0",
       operands=[("z", "isN(compz) ? 0 : mat(n, n, ldz)")], query=["lwork", "liwork"], gpu=False),
    op("hseqr", "sdcz", "lapack",
       "job:ch compz:ch n:int ilo:int ihi:int h:inout ldh:int wr:rout wi:rout z:inout ldz:int work:work lwork:int"
       " info:iout",
       cargs="job:ch compz:ch n:int ilo:int ihi:int h:inout ldh:int w:out z:inout ldz:int work:work lwork:int info:iout",
       dims=("n", "n", "0"), flops="isN(compz) ? 10.0*n*n*n : 20.0*n*n*n",
       operands=[("h", "mat(n, n, ldh)")], query=["lwork"], gpu=False),
    op("gehrd", "sdcz", "lapack",
       "n:int ilo:int ihi:int a:inout lda:int tau:out work:work lwork:int info:iout",
       dims=("n", "n", "0"), flops="10.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)")], query=["lwork"], gpu=False),
    op("geqp3", "sdcz", "lapack",
       "m:int n:int a:inout lda:int jpvt:iinout tau:out work:work lwork:int info:iout",
       cargs="m:int n:int a:inout lda:int jpvt:iinout tau:out work:work lwork:int rwork:rwork info:iout",
       dims=("m", "n", "0"),
       flops="2.0*std::max(m,n)*std::min(m,n)*std::min(m,n) - 2.0*std::min(m,n)*std::min(m,n)*std::min(m,n)/3.0",
       operands=[("a", "mat(m, n, lda)")], query=["lwork"], family="geqrf", gpu=False),
    op("sytrf", "sdcz", "lapack",
       "uplo:ch n:int a:inout lda:int ipiv:iinout work:work lwork:int info:iout",
       dims=("n", "n", "0"), flops="1.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)"), ("ipiv", "n")], query=["lwork"], gpu=False),
    op("hetrf", "cz", "lapack",
       "uplo:ch n:int a:inout lda:int ipiv:iinout work:work lwork:int info:iout",
       dims=("n", "n", "0"), flops="1.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)"), ("ipiv", "n")], query=["lwork"], family="sytrf", gpu=False),
    op("sytri", "sdcz", "lapack",
       "uplo:ch n:int a:inout lda:int ipiv:iin work:work info:iout",
       dims=("n", "n", "0"), flops="2.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)"), ("ipiv", "n")], gpu=False),
    op("gelss", "sdcz", "lapack",
       "m:int n:int nrhs:int a:inout lda:int b:inout ldb:int s:rout rcond:rsc rank:iout work:work lwork:int info:iout",
       cargs="m:int n:int nrhs:int a:inout lda:int b:inout ldb:int s:rout rcond:rsc rank:iout work:work lwork:int"
             " rwork:rwork info:iout",
       dims=("m", "n", "nrhs"),
       flops="4.0*std::max(m,n)*std::min(m,n)*std::min(m,n) + 8.0*std::min(m,n)*std::min(m,n)*std::min(m,n)/3.0",
       operands=[("a", "mat(m, n, lda)"), ("b", "mat(std::max(m, n), nrhs, ldb)")], query=["lwork"],
       family="gelsd", gpu=False),
    # SciPy's solve estimates the condition number after every factorization (gecon after getrf, pocon
    # after potrf): O(n^2) a step, but several triangular solves with the whole factor, on the CPU.
    op("gecon", "sdcz", "lapack",
       "norm:ch n:int a:in lda:int anorm:rsc rcond:rout work:work iwork:iwork info:iout",
       cargs="norm:ch n:int a:in lda:int anorm:rsc rcond:rout work:work rwork:rwork info:iout",
       dims=("n", "n", "0"), flops="10.0*n*n",
       operands=[("a", "mat(n, n, lda)")], gpu=False),
    op("pocon", "sdcz", "lapack",
       "uplo:ch n:int a:in lda:int anorm:rsc rcond:rout work:work iwork:iwork info:iout",
       cargs="uplo:ch n:int a:in lda:int anorm:rsc rcond:rout work:work rwork:rwork info:iout",
       dims=("n", "n", "0"), flops="10.0*n*n",
       operands=[("a", "mat(n, n, lda)")], family="gecon", gpu=False),
    op("syevx", "sd", "lapack",
       "jobz:ch range:ch uplo:ch n:int a:inout lda:int vl:rsc vu:rsc il:int?range=I iu:int?range=I abstol:rsc m:iout"
       " w:rout z:out ldz:int work:work lwork:int iwork:iwork ifail:iwork info:iout",
       dims=("n", "n", "0"), flops="isV(jobz) ? 9.0*n*n*n : 4.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)")], query=["lwork"], family="syevr", gpu=False),
    op("heevx", "cz", "lapack",
       "jobz:ch range:ch uplo:ch n:int a:inout lda:int vl:rsc vu:rsc il:int?range=I iu:int?range=I abstol:rsc m:iout"
       " w:rout z:out ldz:int work:work lwork:int rwork:rwork iwork:iwork ifail:iwork info:iout",
       dims=("n", "n", "0"), flops="isV(jobz) ? 9.0*n*n*n : 4.0*n*n*n/3.0",
       operands=[("a", "mat(n, n, lda)")], query=["lwork"], family="syevr", gpu=False),
    op("spev", "sd", "lapack",
       "jobz:ch uplo:ch n:int ap:inout w:rout z:out ldz:int work:work info:iout",
       dims=("n", "n", "0"), flops="isV(jobz) ? 9.0*n*n*n : 4.0*n*n*n/3.0",
       operands=[("ap", "n*(n+1)/2")], family="syev", gpu=False),
    op("hpev", "cz", "lapack",
       "jobz:ch uplo:ch n:int ap:inout w:rout z:out ldz:int work:work rwork:rwork info:iout",
       dims=("n", "n", "0"), flops="isV(jobz) ? 9.0*n*n*n : 4.0*n*n*n/3.0",
       operands=[("ap", "n*(n+1)/2")], family="syev", gpu=False),
]

# FFTW transforms (src/fftw/ intercepts them, src/cuda/fft.cpp runs them on cuFFT): ids in the same space,
# named by the report. Their calls carry the transform (gofl_call.fft), not Fortran arguments; their
# calibration is calibrate's FFT pass, not the `calib` work of the table's routines.
# Every transform runs on one GPU body, fft_body (fft.cpp: the call's transform says which).
FFT_OPS = [("fft", "c2c"), ("fft_r2c", "r2c"), ("fft_c2r", "c2r")]
FFT_GPU = "fft"
FFT_VERIFY = "transform"
FFT_PRECS = {"d": "fftw_", "s": "fftwf_"}

# Name schemes: (id, Fortran name pattern, CBLAS name pattern, integer type).
SCHEMES = [
    ("std", "{p}{r}_", "cblas_{p}{r}", "int32_t"),
    ("scipy", "scipy_{p}{r}_", "scipy_cblas_{p}{r}", "int32_t"),
    ("numpy64", "scipy_{p}{r}_64_", "scipy_cblas_{p}{r}64_", "int64_t"),
    ("ilp64", "{p}{r}_64_", "cblas_{p}{r}64_", "int64_t"),
]
