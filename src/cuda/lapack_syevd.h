// syevd/heevd's argument checks, workspace answers and unscaled range, shared by the one-GPU routine
// (lapack_syev.cpp) and the split one (split_lapack.cpp): both must decline, answer and screen alike.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "cuda/lapack_common.h"

namespace gofl {
namespace cuda {
namespace lapack {

// The descriptor of syevd (real T) or heevd (complex T).
template <class T> using SyevdDesc = std::conditional_t<cplx_v<T>, desc::heevd<T>, desc::syevd<T>>;

// Reference LAPACK's argument checks: 0 or the (negative) info xerbla would report.
inline int check_syevd(bool cplx, char jobz, char uplo, int64_t n, int64_t lda, int64_t lwork, int64_t lrwork,
                int64_t liwork) {
  const bool wantz = jobz == 'V';
  if (!wantz && jobz != 'N') return -1;
  if (uplo != 'U' && uplo != 'L') return -2;
  if (n < 0) return -3;
  if (lda < std::max<int64_t>(1, n)) return -5;
  int64_t lwmin = 1, lrwmin = 1, liwmin = 1;
  if (n > 1) {
    if (cplx) {
      lwmin = wantz ? 2 * n + n * n : n + 1;
      lrwmin = wantz ? 1 + 5 * n + 2 * n * n : n;
      liwmin = wantz ? 3 + 5 * n : 1;
    } else {
      lwmin = wantz ? 1 + 6 * n + 2 * n * n : 2 * n + 1;
      liwmin = wantz ? 3 + 5 * n : 1;
    }
  }
  const bool query = lwork == -1 || liwork == -1 || (cplx && lrwork == -1);
  if (query) return 0;
  if (lwork < lwmin) return -8;
  if (cplx) {
    if (lrwork < lrwmin) return -10;
    if (liwork < liwmin) return -12;
  } else if (liwork < liwmin) {
    return -10;
  }
  return 0;
}

template <class T> int supports_syevd(const SyevdDesc<T>& d) {
  int64_t lrwork = 0;
  if constexpr (cplx_v<T>) lrwork = d.lrwork;
  if (check_syevd(cplx_v<T>, d.jobz, d.uplo, d.n, d.lda, d.lwork, lrwork, d.liwork)) return GOFL_GPU_INVALID_ARGS;
  if (d.lwork == -1 || d.liwork == -1 || lrwork == -1) return GOFL_GPU_UNSUPPORTED;  // the CPU answers queries
  if (d.n <= 1) return GOFL_GPU_UNSUPPORTED;  // LAPACK's quick returns (W(1) = A(1,1))
  return GOFL_GPU_OK;
}

// The CPU library's workspace answers (work[0], rwork[0], iwork[0]), in the caller's integer width.
template <class T, class I> WorkOut<T> query_syevd_as(const gofl_call& c, const SyevdDesc<T>& d) {
  using R = real_t<T>;
  const I n = I(d.n), lda = I(d.lda);
  I m1 = -1, info = 0, iw = 0;
  T w0{};
  R rw0{};
  if constexpr (!cplx_v<T>) {
    call_cpu(c, &d.jobz, &d.uplo, &n, d.a, &lda, d.w, &w0, &m1, &iw, &m1, &info, kLen, kLen);
  } else {
    call_cpu(c, &d.jobz, &d.uplo, &n, d.a, &lda, d.w, &w0, &m1, &rw0, &m1, &iw, &m1, &info, kLen, kLen);
  }
  return query_answer(d, int64_t(info), w0, int64_t(iw), rw0);
}
template <class T> WorkOut<T> query_syevd(const gofl_call& c, const SyevdDesc<T>& d) {
  return d.ilp64 ? query_syevd_as<T, int64_t>(c, d) : query_syevd_as<T, int32_t>(c, d);
}

// LAPACK scales when the largest entry of the triangle lies outside [sqrt(smlnum), sqrt(bignum)].
template <class R> Bounds syev_bounds() {
  const double smlnum = double(std::numeric_limits<R>::min()) / double(std::numeric_limits<R>::epsilon());
  return Bounds{std::sqrt(smlnum), std::sqrt(1.0 / smlnum)};
}
}  // namespace lapack
}  // namespace cuda
}  // namespace gofl
