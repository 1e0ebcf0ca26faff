// Inverses on cuSOLVER with LAPACK's exact outputs: trtri (a triangular matrix) and potri (a
// symmetric positive definite matrix from its Cholesky factor). Only the uplo triangle is read and
// written; a zero on the diagonal (LAPACK's info > 0, found by the same exact-zero test on the
// caller's own array) and non-finite entries leave the call to the CPU library.
#include <algorithm>
#include <climits>
#include <complex>
#include <limits>
#include <vector>

#include "cuda/engine.h"
#include "cuda/lapack_common.h"
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {
namespace {

using namespace lapack;

constexpr Bounds kFinite{0.0, std::numeric_limits<double>::max()};

template <class T> cusolverStatus_t potri_size(cusolverDnHandle_t h, cublasFillMode_t u, int n, T* a, int* lwork) {
  if constexpr (std::is_same_v<T, float>) return cusolverDnSpotri_bufferSize(h, u, n, a, n, lwork);
  else if constexpr (std::is_same_v<T, double>) return cusolverDnDpotri_bufferSize(h, u, n, a, n, lwork);
  else if constexpr (std::is_same_v<T, std::complex<float>>) return cusolverDnCpotri_bufferSize(h, u, n, cu(a), n, lwork);
  else return cusolverDnZpotri_bufferSize(h, u, n, cu(a), n, lwork);
}
template <class T> cusolverStatus_t potri(cusolverDnHandle_t h, cublasFillMode_t u, int n, T* a, T* work, int lwork,
                                          int* info) {
  if constexpr (std::is_same_v<T, float>) return cusolverDnSpotri(h, u, n, a, n, work, lwork, info);
  else if constexpr (std::is_same_v<T, double>) return cusolverDnDpotri(h, u, n, a, n, work, lwork, info);
  else if constexpr (std::is_same_v<T, std::complex<float>>) return cusolverDnCpotri(h, u, n, cu(a), n, cu(work), lwork, info);
  else return cusolverDnZpotri(h, u, n, cu(a), n, cu(work), lwork, info);
}

template <class T> uint64_t square_bytes(int64_t n) {
  const uint64_t nn = uint64_t(std::max<int64_t>(n, 1));
  return sizeof(T) * (nn * nn + nn * (nn + 1) / 2 + 64 * nn) + (4u << 20);
}

// ---- trtri ------------------------------------------------------------------------------------------
template <class T> int trtri_supports(const desc::trtri<T>& d) {
  if ((d.uplo != 'U' && d.uplo != 'L') || (d.diag != 'U' && d.diag != 'N') || d.n < 0 || d.lda < std::max<int64_t>(1, d.n))
    return GOFL_GPU_INVALID_ARGS;
  if (d.n == 0 || d.n > INT_MAX) return GOFL_GPU_UNSUPPORTED;  // quick return; the screening's 32-bit packing
  return GOFL_GPU_OK;
}
template <class T> uint64_t trtri_bytes(const desc::trtri<T>& d) { return square_bytes<T>(d.n); }

template <class T> void trtri_run(Engine& e, const desc::trtri<T>& d) {
  const char u = d.uplo;
  const int64_t n = d.n, lda = d.lda;
  T* host = d.a;
  if (d.diag == 'N' && first_zero_diagonal(host, n, lda) != 0) fail(GOFL_GPU_UNSUPPORTED, "singular (info > 0)");
  // A unit diagonal is not referenced, and LAPACK leaves it as it was.
  std::vector<T> diag;
  if (d.diag == 'U') {
    diag.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) diag[size_t(i)] = host[i + i * lda];
  }

  DevMem dA = alloc_elems<T>(e, n * n);
  e.upload_triangle(dA.get(), host, n, lda, sizeof(T), u);  // only the uplo triangle is read
  e.begin_compute();
  host_pointer_mode(e);
  screen_triangle(e, dA.get<T>(), n, u, kFinite);
  Infos infos(e, 1);
  size_t dbytes = 0, hbytes = 0;
  check(cusolverDnXtrtri_bufferSize(e.solver(), fill_of(u), diag_of(d.diag), n, data_type<T>(), dA.get(), n, &dbytes,
                                    &hbytes),
        "cusolverDnXtrtri_bufferSize");
  Workspace ws(e, dbytes, hbytes);
  check(cusolverDnXtrtri(e.solver(), fill_of(u), diag_of(d.diag), n, data_type<T>(), dA.get(), n, ws.d(), dbytes,
                         ws.h(), hbytes, infos.at(0)),
        "cusolverDnXtrtri");
  e.finish_compute();
  infos.require_zero("cusolverDnXtrtri info");

  e.download_triangle(host, dA.get(), n, lda, sizeof(T), u);  // the other triangle stays as it was
  for (int64_t i = 0; i < int64_t(diag.size()); ++i) host[i + i * lda] = diag[size_t(i)];
  d.info.set(0);
}

// ---- potri ------------------------------------------------------------------------------------------
template <class T> int potri_supports(const desc::potri<T>& d) {
  if ((d.uplo != 'U' && d.uplo != 'L') || d.n < 0 || d.lda < std::max<int64_t>(1, d.n)) return GOFL_GPU_INVALID_ARGS;
  if (d.n == 0) return GOFL_GPU_UNSUPPORTED;                                  // quick return
  if (!fits_int(d.n) || !fits_int(d.n * d.n)) return GOFL_GPU_UNSUPPORTED;  // cuSOLVER's 32-bit potri
  return GOFL_GPU_OK;
}
template <class T> uint64_t potri_bytes(const desc::potri<T>& d) { return square_bytes<T>(d.n); }

template <class T> void potri_run(Engine& e, const desc::potri<T>& d) {
  const char u = d.uplo;
  const int64_t n = d.n, lda = d.lda;
  T* host = d.a;
  // LAPACK's potri inverts the factor with trtri first: its exact-zero test on the diagonal.
  if (first_zero_diagonal(host, n, lda) != 0) fail(GOFL_GPU_UNSUPPORTED, "singular factor (info > 0)");

  DevMem dA = alloc_elems<T>(e, n * n);
  e.upload_triangle(dA.get(), host, n, lda, sizeof(T), u);  // only the uplo triangle is read
  e.begin_compute();
  host_pointer_mode(e);
  screen_triangle(e, dA.get<T>(), n, u, kFinite);
  Infos infos(e, 1);
  int lwork = 0;
  check(potri_size<T>(e.solver(), fill_of(u), int(n), dA.get<T>(), &lwork), "cusolverDnXpotri_bufferSize");
  DevMem work = alloc_elems<T>(e, lwork);
  check(potri<T>(e.solver(), fill_of(u), int(n), dA.get<T>(), work.get<T>(), lwork, infos.at(0)), "cusolverDnXpotri");
  e.finish_compute();
  infos.require_zero("cusolverDnXpotri info");

  e.download_triangle(host, dA.get(), n, lda, sizeof(T), u);  // the other triangle stays as it was
  d.info.set(0);
}

}  // namespace

// ---- the table's bodies (generated/gpu_routines.h) -----------------------------------------------------

template <class T> Routine trtri_body() {
  return routine<desc::trtri<T>, trtri_supports<T>, trtri_bytes<T>, trtri_run<T>>();
}
template <class T> Routine potri_body() {
  return routine<desc::potri<T>, potri_supports<T>, potri_bytes<T>, potri_run<T>>();
}

GOFL_INSTANTIATE_LAPACK_INVERSE

}  // namespace cuda
}  // namespace gofl
