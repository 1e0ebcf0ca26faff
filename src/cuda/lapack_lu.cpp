// LU and Cholesky on cuSOLVER with LAPACK's exact outputs: getrf getrs gesv getri potrf potrs posv.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cuda/engine.h"
#include "cuda/host_view.h"
#include "cuda/lapack_common.h"
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {
namespace {

using namespace lapack;

// ---- shared steps -----------------------------------------------------------------------------------
// Xgetrf on a packed m x n device matrix; pivots into dpiv, info into *dinfo. The caller keeps the
// returned workspace until finish_compute(): the work is still queued when this returns.
template <class T> [[nodiscard]] Workspace gpu_getrf(Engine& e, int64_t m, int64_t n, T* dA, int64_t* dpiv, int* dinfo) {
  size_t dbytes = 0, hbytes = 0;
  check(cusolverDnXgetrf_bufferSize(e.solver(), e.params(), m, n, data_type<T>(), dA, max1(m), data_type<T>(),
                                    &dbytes, &hbytes), "cusolverDnXgetrf_bufferSize");
  Workspace w(e, dbytes, hbytes);
  check(cusolverDnXgetrf(e.solver(), e.params(), m, n, data_type<T>(), dA, max1(m), dpiv, data_type<T>(), w.d(),
                         w.dev_bytes, w.h(), w.host.size(), dinfo), "cusolverDnXgetrf");
  return w;
}

template <class T> [[nodiscard]] Workspace gpu_potrf(Engine& e, char uplo, int64_t n, T* dA, int* dinfo) {
  size_t dbytes = 0, hbytes = 0;
  check(cusolverDnXpotrf_bufferSize(e.solver(), e.params(), fill_of(uplo), n, data_type<T>(), dA, max1(n),
                                    data_type<T>(), &dbytes, &hbytes), "cusolverDnXpotrf_bufferSize");
  Workspace w(e, dbytes, hbytes);
  check(cusolverDnXpotrf(e.solver(), e.params(), fill_of(uplo), n, data_type<T>(), dA, max1(n), data_type<T>(),
                         w.d(), w.dev_bytes, w.h(), w.host.size(), dinfo), "cusolverDnXpotrf");
  return w;
}

// ---- getrf ------------------------------------------------------------------------------------------
template <class T> int getrf_supports(const desc::getrf<T>& d) {
  const int64_t m = d.m, n = d.n, lda = d.lda;
  if (m < 0 || n < 0 || lda < max1(m)) return GOFL_GPU_INVALID_ARGS;
  if (m == 0 || n == 0) return GOFL_GPU_UNSUPPORTED;  // quick return: nothing to factor
  return GOFL_GPU_OK;
}
template <class T> uint64_t getrf_bytes(const desc::getrf<T>& d) {
  const int64_t m = d.m, n = d.n;
  return mat_bytes<T>(m, n) + 8u * uint64_t(std::min(m, n)) + panel_bytes<T>(std::max(m, n));
}
template <class T> void getrf_run(Engine& e, const desc::getrf<T>& d) {
  const int64_t m = d.m, n = d.n, lda = d.lda, k = std::min(m, n);
  T* A_ = d.a;

  DevMem dA = alloc_elems<T>(e, m * n);
  DevMem dpiv = alloc_elems<int64_t>(e, k);
  Infos info(e, 1);
  e.upload(dA.get(), A_, m, n, lda, sizeof(T));
  e.begin_compute();
  const Workspace ws = gpu_getrf<T>(e, m, n, dA.get<T>(), dpiv.get<int64_t>(), info.at(0));
  e.finish_compute();
  // info > 0 (U(i,i) exactly zero): LAPACK still completes the factorization, and so does cuSOLVER:
  // factors and pivots are written either way.
  const int inf = info.read(0, "cusolverDnXgetrf info");

  std::vector<int64_t> piv(static_cast<size_t>(k));
  e.download(A_, dA.get(), m, n, lda, sizeof(T));
  e.download_vec(piv.data(), dpiv.get(), sizeof(int64_t) * size_t(k));
  write_pivots(d.ipiv, piv);
  d.info.set(inf);
  e.keep_output(std::move(dA), A_, m, n, lda, sizeof(T));  // the factors serve later getrs calls
}

// ---- getrs ------------------------------------------------------------------------------------------
template <class T> int getrs_supports(const desc::getrs<T>& d) {
  const char t = d.trans;
  const int64_t n = d.n, nrhs = d.nrhs, lda = d.lda, ldb = d.ldb;
  // 'R' (conjugate, no transpose) is accepted by OpenBLAS but rejected by reference LAPACK: the CPU
  // library decides what it means.
  if (t == 'R') return GOFL_GPU_UNSUPPORTED;
  if (t != 'N' && t != 'T' && t != 'C') return GOFL_GPU_INVALID_ARGS;
  if (n < 0 || nrhs < 0 || lda < max1(n) || ldb < max1(n)) return GOFL_GPU_INVALID_ARGS;
  if (n == 0 || nrhs == 0) return GOFL_GPU_UNSUPPORTED;  // quick return
  return GOFL_GPU_OK;
}
template <class T> uint64_t getrs_bytes(const desc::getrs<T>& d) {
  const int64_t n = d.n, nrhs = d.nrhs;
  return mat_bytes<T>(n, n) + mat_bytes<T>(n, nrhs) + 8u * uint64_t(n) + (4u << 20);
}
template <class T> void getrs_run(Engine& e, const desc::getrs<T>& d) {
  const char t = d.trans;
  const int64_t n = d.n, nrhs = d.nrhs, lda = d.lda, ldb = d.ldb;
  T* B = d.b;
  const std::vector<int64_t> piv = read_pivots(d.ipiv, n);
  if (!pivots_in_range(piv, n)) fail(GOFL_GPU_UNSUPPORTED, "getrs: pivot out of range");

  const Engine::Input inA = e.input(d.a, n, n, lda, sizeof(T));  // the factors: often kept
  DevMem dB = alloc_elems<T>(e, n * nrhs);
  // GPU_OFFLOAD_GETRS_SWAPS=gpu leaves the interchanges to cuSOLVER too (to measure the difference).
  static const bool swaps_on_host = setting_choice(SettingId::GETRS_SWAPS, 0) == 0;  // host|gpu
  if (t == 'N' && swaps_on_host && pivots_interchange(piv)) {
    // LAPACK's order (laswp, then L, then U), the row interchanges applied while the host copies B in: on
    // the GPU, cuSOLVER's laswp swaps the rows one after another. On the GPU test machine (H200, 16-core
    // host), n = 8192 with 256 right-hand sides and the factors kept, getrs with a general matrix's pivots
    // took 6.9 ms a call this way against 11.7 with cuSOLVER's getrs. Without interchanges (a positive
    // definite or dominant matrix's factors) cuSOLVER's getrs is as fast.
    const std::vector<int64_t> from = rows_from_pivots(piv);
    e.upload_rows(dB.get(), B, n, nrhs, ldb, sizeof(T), from.data());
    e.begin_compute();
    const cu_t<T> one = cu_one<T>();
    check(x_trsm<T>(e.blas(), CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_UNIT, n, nrhs, &one,
                        cu(inA.get<T>()), inA.ld, cu(dB.get<T>()), n),
          "cublasXtrsm (L)");
    check(x_trsm<T>(e.blas(), CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, n, nrhs,
                        &one, cu(inA.get<T>()), inA.ld, cu(dB.get<T>()), n),
          "cublasXtrsm (U)");
    e.finish_compute();
  } else {  // no interchange, or they come last (on X, for 'T' and 'C'): cuSOLVER does the whole solve
    DevMem dpiv = alloc_elems<int64_t>(e, n);
    Infos info(e, 1);
    e.upload(dB.get(), B, n, nrhs, ldb, sizeof(T));
    e.upload_vec(dpiv.get(), piv.data(), sizeof(int64_t) * size_t(n));
    e.begin_compute();
    check(cusolverDnXgetrs(e.solver(), e.params(), op_of(t), n, nrhs, data_type<T>(), inA.dev, inA.ld,
                           dpiv.get<int64_t>(), data_type<T>(), dB.get(), n, info.at(0)), "cusolverDnXgetrs");
    e.finish_compute();
    info.read(0, "cusolverDnXgetrs info");  // getrs has no info > 0
  }

  e.download(B, dB.get(), n, nrhs, ldb, sizeof(T));
  d.info.set(0);
  e.keep_output(std::move(dB), B, n, nrhs, ldb, sizeof(T));
}

// ---- gesv -------------------------------------------------------------------------------------------
template <class T> int gesv_supports(const desc::gesv<T>& d) {
  const int64_t n = d.n, nrhs = d.nrhs, lda = d.lda, ldb = d.ldb;
  if (n < 0 || nrhs < 0 || lda < max1(n) || ldb < max1(n)) return GOFL_GPU_INVALID_ARGS;
  if (n == 0) return GOFL_GPU_UNSUPPORTED;  // quick return
  // nrhs == 0: reference LAPACK still factors A, some OpenBLAS versions return at once; the CPU
  // library keeps its own behaviour.
  if (nrhs == 0) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}
template <class T> uint64_t gesv_bytes(const desc::gesv<T>& d) {
  const int64_t n = d.n, nrhs = d.nrhs;
  return mat_bytes<T>(n, n) + mat_bytes<T>(n, nrhs) + 8u * uint64_t(n) + panel_bytes<T>(n);
}
template <class T> void gesv_run(Engine& e, const desc::gesv<T>& d) {
  const int64_t n = d.n, nrhs = d.nrhs, lda = d.lda, ldb = d.ldb;
  T* A_ = d.a;
  T* B = d.b;

  DevMem dA = alloc_elems<T>(e, n * n);
  DevMem dB = alloc_elems<T>(e, n * nrhs);
  DevMem dpiv = alloc_elems<int64_t>(e, n);
  Infos info(e, 2);
  e.upload(dA.get(), A_, n, n, lda, sizeof(T));
  e.upload(dB.get(), B, n, nrhs, ldb, sizeof(T));
  e.begin_compute();
  const Workspace ws = gpu_getrf<T>(e, n, n, dA.get<T>(), dpiv.get<int64_t>(), info.at(0));
  // Solved unconditionally (no mid-call sync); with a singular U the solution is discarded below.
  check(cusolverDnXgetrs(e.solver(), e.params(), CUBLAS_OP_N, n, nrhs, data_type<T>(), dA.get(), n,
                         dpiv.get<int64_t>(), data_type<T>(), dB.get(), n, info.at(1)), "cusolverDnXgetrs");
  e.finish_compute();
  const int inf = info.read(0, "cusolverDnXgetrf info");
  info.read(1, "cusolverDnXgetrs info");

  // LAPACK: A and ipiv always hold the factorization; B is solved only when info == 0.
  std::vector<int64_t> piv(static_cast<size_t>(n));
  e.download(A_, dA.get(), n, n, lda, sizeof(T));
  e.download_vec(piv.data(), dpiv.get(), sizeof(int64_t) * size_t(n));
  write_pivots(d.ipiv, piv);
  if (inf == 0) e.download(B, dB.get(), n, nrhs, ldb, sizeof(T));
  d.info.set(inf);
}

// ---- getri ------------------------------------------------------------------------------------------
// cuSOLVER has no getri: inv(A) = getrs(LU, ipiv, I). LAPACK's WORK(1) comes from the CPU library's
// own query (LWKOPT) and its IWS rule (see lapack_common.h).
template <class I, class T> T getri_query(const gofl_call& c, const desc::getri<T>& d) {
  using Fn = void (*)(const I*, T*, const I*, const I*, T*, const I*, I*);
  const I n = I(d.n), lda = I(d.lda), lwork = -1;
  I info = 0;
  T w = T(0);
  reinterpret_cast<Fn>(c.real)(&n, d.a, &lda, d.ipiv.template as<const I>(), &w, &lwork, &info);
  if (info != 0) fail(GOFL_GPU_UNSUPPORTED, "getri workspace query", int(info));
  return w;
}
// getri's check also asks the call (is there a CPU library: c.real), so its routine is over the call
// (D = gofl_call) and its functions read the descriptor from it.
template <class T> int getri_supports(const gofl_call& c) {
  const desc::getri<T>& d = args_of<desc::getri<T>>(c);
  const int64_t n = d.n, lda = d.lda, lwork = d.lwork;
  if (lwork == -1) return GOFL_GPU_UNSUPPORTED;  // workspace queries stay with the CPU library
  if (n < 0 || lda < max1(n) || lwork < max1(n)) return GOFL_GPU_INVALID_ARGS;
  if (n == 0) return GOFL_GPU_UNSUPPORTED;   // quick return
  if (!c.real) return GOFL_GPU_UNSUPPORTED;  // no CPU library to ask for work[0]
  return GOFL_GPU_OK;
}
template <class T> uint64_t getri_bytes(const gofl_call& c) {
  const int64_t n = args_of<desc::getri<T>>(c).n;
  return 2 * mat_bytes<T>(n, n) + (8u + sizeof(T)) * uint64_t(n) + (4u << 20);
}
template <class T> void getri_run(Engine& e, const gofl_call& c) {
  const desc::getri<T>& d = args_of<desc::getri<T>>(c);
  const int64_t n = d.n, lda = d.lda;
  T* A_ = d.a;
  T* work = d.work;
  const T lwkopt = d.ilp64 ? getri_query<int64_t, T>(c, d) : getri_query<int32_t, T>(c, d);

  // LAPACK (?trtri inside ?getri) returns info = first exactly-zero U(i,i) before touching A; WORK(1)
  // then still holds LWKOPT. Nothing for the GPU to do.
  if (const int64_t z = first_zero_diagonal(A_, n, lda)) {
    work[0] = lwkopt;
    d.info.set(z);
    return;
  }
  const std::vector<int64_t> piv = read_pivots(d.ipiv, n);
  if (!pivots_in_range(piv, n)) fail(GOFL_GPU_UNSUPPORTED, "getri: pivot out of range");
  const T work0 = work_value<T>(blocked_iws(work_size(lwkopt), n, n, false, 0));

  DevMem dA = alloc_elems<T>(e, n * n);
  DevMem dX = alloc_elems<T>(e, n * n);
  DevMem dpiv = alloc_elems<int64_t>(e, n);
  DevMem dones = alloc_elems<T>(e, n);
  Infos info(e, 1);
  const std::vector<T> ones(size_t(n), T(1));
  e.upload(dA.get(), A_, n, n, lda, sizeof(T));
  e.upload_vec(dpiv.get(), piv.data(), sizeof(int64_t) * size_t(n));
  e.upload_vec(dones.get(), ones.data(), sizeof(T) * size_t(n));
  e.begin_compute();
  // X = I: zero, then ones on the diagonal (stride n + 1).
  check(cudaMemsetAsync(dX.get(), 0, sizeof(T) * size_t(n * n), e.stream()), "cudaMemsetAsync(identity)");
  check(x_copy<T>(e.blas(), n, cu(dones.get<T>()), 1, cu(dX.get<T>()), n + 1), "cublasXcopy(identity)");
  check(cusolverDnXgetrs(e.solver(), e.params(), CUBLAS_OP_N, n, n, data_type<T>(), dA.get(), n,
                         dpiv.get<int64_t>(), data_type<T>(), dX.get(), n, info.at(0)), "cusolverDnXgetrs");
  e.finish_compute();
  info.read(0, "cusolverDnXgetrs info");

  e.download(A_, dX.get(), n, n, lda, sizeof(T));
  work[0] = work0;
  d.info.set(0);
}

// ---- potrf ------------------------------------------------------------------------------------------
template <class T> int potrf_supports(const desc::potrf<T>& d) {
  const char u = d.uplo;
  const int64_t n = d.n, lda = d.lda;
  if ((u != 'U' && u != 'L') || n < 0 || lda < max1(n)) return GOFL_GPU_INVALID_ARGS;
  if (n == 0) return GOFL_GPU_UNSUPPORTED;  // quick return
  return GOFL_GPU_OK;
}
template <class T> uint64_t potrf_bytes(const desc::potrf<T>& d) {
  const int64_t n = d.n;
  return mat_bytes<T>(n, n) + panel_bytes<T>(n);
}
template <class T> void potrf_run(Engine& e, const desc::potrf<T>& d) {
  const char u = d.uplo;
  const int64_t n = d.n, lda = d.lda;
  T* A_ = d.a;

  DevMem dA = alloc_elems<T>(e, n * n);
  Infos info(e, 1);
  e.upload_triangle(dA.get(), A_, n, lda, sizeof(T), u);  // cuSOLVER reads only the uplo triangle
  e.begin_compute();
  const Workspace ws = gpu_potrf<T>(e, u, n, dA.get<T>(), info.at(0));
  e.finish_compute();
  const int inf = info.read(0, "cusolverDnXpotrf info");

  // info > 0: the leading (info-1) x (info-1) block holds the factor, as in LAPACK; the rest of the
  // triangle holds whatever the (differently blocked) algorithm left there, in LAPACK and here alike.
  e.download_triangle(A_, dA.get(), n, lda, sizeof(T), u);  // the other triangle stays as it was
  d.info.set(inf);
}

// ---- potrs ------------------------------------------------------------------------------------------
template <class T> int potrs_supports(const desc::potrs<T>& d) {
  const char u = d.uplo;
  const int64_t n = d.n, nrhs = d.nrhs, lda = d.lda, ldb = d.ldb;
  if ((u != 'U' && u != 'L') || n < 0 || nrhs < 0 || lda < max1(n) || ldb < max1(n)) return GOFL_GPU_INVALID_ARGS;
  if (n == 0 || nrhs == 0) return GOFL_GPU_UNSUPPORTED;  // quick return
  return GOFL_GPU_OK;
}
template <class T> uint64_t potrs_bytes(const desc::potrs<T>& d) {
  const int64_t n = d.n, nrhs = d.nrhs;
  return mat_bytes<T>(n, n) + mat_bytes<T>(n, nrhs) + (4u << 20);
}
template <class T> void potrs_run(Engine& e, const desc::potrs<T>& d) {
  const char u = d.uplo;
  const int64_t n = d.n, nrhs = d.nrhs, lda = d.lda, ldb = d.ldb;
  T* B = d.b;

  const Engine::Input inA = e.input_triangle(d.a, n, lda, sizeof(T), u);  // the factor: often kept
  DevMem dB = alloc_elems<T>(e, n * nrhs);
  Infos info(e, 1);
  e.upload(dB.get(), B, n, nrhs, ldb, sizeof(T));
  e.begin_compute();
  check(cusolverDnXpotrs(e.solver(), e.params(), fill_of(u), n, nrhs, data_type<T>(), inA.dev, inA.ld, data_type<T>(),
                         dB.get(), n, info.at(0)), "cusolverDnXpotrs");
  e.finish_compute();
  info.read(0, "cusolverDnXpotrs info");  // potrs has no info > 0

  e.download(B, dB.get(), n, nrhs, ldb, sizeof(T));
  d.info.set(0);
  e.keep_output(std::move(dB), B, n, nrhs, ldb, sizeof(T));
}

// ---- posv -------------------------------------------------------------------------------------------
template <class T> int posv_supports(const desc::posv<T>& d) {
  const char u = d.uplo;
  const int64_t n = d.n, nrhs = d.nrhs, lda = d.lda, ldb = d.ldb;
  if ((u != 'U' && u != 'L') || n < 0 || nrhs < 0 || lda < max1(n) || ldb < max1(n)) return GOFL_GPU_INVALID_ARGS;
  if (n == 0) return GOFL_GPU_UNSUPPORTED;     // quick return
  if (nrhs == 0) return GOFL_GPU_UNSUPPORTED;  // factor-only call: rare, and cheap to leave to the CPU
  return GOFL_GPU_OK;
}
template <class T> uint64_t posv_bytes(const desc::posv<T>& d) {
  const int64_t n = d.n, nrhs = d.nrhs;
  return mat_bytes<T>(n, n) + mat_bytes<T>(n, nrhs) + panel_bytes<T>(n);
}
template <class T> void posv_run(Engine& e, const desc::posv<T>& d) {
  const char u = d.uplo;
  const int64_t n = d.n, nrhs = d.nrhs, lda = d.lda, ldb = d.ldb;
  T* A_ = d.a;
  T* B = d.b;

  DevMem dA = alloc_elems<T>(e, n * n);
  DevMem dB = alloc_elems<T>(e, n * nrhs);
  Infos info(e, 2);
  e.upload_triangle(dA.get(), A_, n, lda, sizeof(T), u);  // cuSOLVER reads only the uplo triangle
  e.upload(dB.get(), B, n, nrhs, ldb, sizeof(T));
  e.begin_compute();
  const Workspace ws = gpu_potrf<T>(e, u, n, dA.get<T>(), info.at(0));
  // Solved unconditionally (no mid-call sync); discarded below when A is not positive definite.
  check(cusolverDnXpotrs(e.solver(), e.params(), fill_of(u), n, nrhs, data_type<T>(), dA.get(), n, data_type<T>(),
                         dB.get(), n, info.at(1)), "cusolverDnXpotrs");
  e.finish_compute();
  const int inf = info.read(0, "cusolverDnXpotrf info");
  info.read(1, "cusolverDnXpotrs info");

  // LAPACK: A holds the (partial) factor in its uplo triangle; B is solved only when info == 0.
  e.download_triangle(A_, dA.get(), n, lda, sizeof(T), u);  // the other triangle stays as it was
  if (inf == 0) e.download(B, dB.get(), n, nrhs, ldb, sizeof(T));
  d.info.set(inf);
}

}  // namespace

// ---- the table's bodies (generated/gpu_routines.h) -----------------------------------------------------

template <class T> Routine getrf_body() {
  return routine<desc::getrf<T>, getrf_supports<T>, getrf_bytes<T>, getrf_run<T>>();
}
template <class T> Routine getrs_body() {
  return routine<desc::getrs<T>, getrs_supports<T>, getrs_bytes<T>, getrs_run<T>>();
}
template <class T> Routine gesv_body() {
  return routine<desc::gesv<T>, gesv_supports<T>, gesv_bytes<T>, gesv_run<T>>();
}
template <class T> Routine getri_body() {
  return routine<gofl_call, getri_supports<T>, getri_bytes<T>, getri_run<T>>();
}
template <class T> Routine potrf_body() {
  return routine<desc::potrf<T>, potrf_supports<T>, potrf_bytes<T>, potrf_run<T>>();
}
template <class T> Routine potrs_body() {
  return routine<desc::potrs<T>, potrs_supports<T>, potrs_bytes<T>, potrs_run<T>>();
}
template <class T> Routine posv_body() {
  return routine<desc::posv<T>, posv_supports<T>, posv_bytes<T>, posv_run<T>>();
}

GOFL_INSTANTIATE_LAPACK_LU

}  // namespace cuda
}  // namespace gofl
