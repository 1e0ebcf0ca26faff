// Warm-ups of the LAPACK families (warm.h): each runs, on the warming lane's small well-conditioned
// matrices, the cuSOLVER routines its family's run function calls (lapack_lu.cpp, lapack_qr.cpp,
// lapack_syev.cpp, lapack_svd.cpp, geev_core.h), at a size that loads most of what a larger call
// uses (bench/probes/first_use_probe.cpp: syevd needs n = 256, the rest little more than 64). Which
// routines run which warm-up is the table's warm column (ops/operations.py, WARMUPS).
#include <complex>
#include <cstdint>

#include "cuda/engine.h"
#include "cuda/lapack_common.h"
#include "cuda/warm.h"
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {
namespace {

constexpr int64_t kLuN = 128, kEigN = 256, kSvdN = 128, kGeevN = 64;

}  // namespace

// The warm-ups the table names (generated/gpu_routines.h; WARMUPS in ops/operations.py).

template <class T> void lu_warm(WarmLane& l) {  // Xgetrf, then Xgetrs
  const int64_t n = kLuN;
  const cudaDataType t = data_type<T>();
  l.fresh<T>(n);
  size_t d = 0, h = 0;
  check(cusolverDnXgetrf_bufferSize(l.solver(), l.params(), n, n, t, l.matrix<T>(0), n, t, &d, &h),
        "cusolverDnXgetrf_bufferSize (warming)");
  void* dw = l.device_work(d);
  void* hw = l.host_work(h);
  check(cusolverDnXgetrf(l.solver(), l.params(), n, n, t, l.matrix<T>(0), n, l.pivots(), t, dw, d, hw, h, l.info()),
        "cusolverDnXgetrf (warming)");
  check(cusolverDnXgetrs(l.solver(), l.params(), CUBLAS_OP_N, n, n, t, l.matrix<T>(0), n, l.pivots(), t,
                         l.matrix<T>(1), n, l.info()),
        "cusolverDnXgetrs (warming)");
}

template <class T> void chol_warm(WarmLane& l) {  // Xpotrf, then Xpotrs
  const int64_t n = kLuN;
  const cudaDataType t = data_type<T>();
  l.fresh<T>(n);
  size_t d = 0, h = 0;
  check(cusolverDnXpotrf_bufferSize(l.solver(), l.params(), CUBLAS_FILL_MODE_LOWER, n, t, l.matrix<T>(0), n, t, &d, &h),
        "cusolverDnXpotrf_bufferSize (warming)");
  void* dw = l.device_work(d);
  void* hw = l.host_work(h);
  check(cusolverDnXpotrf(l.solver(), l.params(), CUBLAS_FILL_MODE_LOWER, n, t, l.matrix<T>(0), n, t, dw, d, hw, h,
                         l.info()),
        "cusolverDnXpotrf (warming)");
  check(cusolverDnXpotrs(l.solver(), l.params(), CUBLAS_FILL_MODE_LOWER, n, n, t, l.matrix<T>(0), n, t, l.matrix<T>(1),
                         n, l.info()),
        "cusolverDnXpotrs (warming)");
}

template <class T, int64_t n> void syevd_warm_at(WarmLane& l) {  // Xsyevd (for syevr too: not its Xsyevdx)
  using R = real_t<T>;
  l.fresh<T>(n);
  size_t d = 0, h = 0;
  check(cusolverDnXsyevd_bufferSize(l.solver(), l.params(), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n,
                                    data_type<T>(), l.matrix<T>(0), n, data_type<R>(), l.vec(), data_type<T>(), &d, &h),
        "cusolverDnXsyevd_bufferSize (warming)");
  void* dw = l.device_work(d);
  void* hw = l.host_work(h);
  check(cusolverDnXsyevd(l.solver(), l.params(), CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, data_type<T>(),
                         l.matrix<T>(0), n, data_type<R>(), l.vec(), data_type<T>(), dw, d, hw, h, l.info()),
        "cusolverDnXsyevd (warming)");
}

template <class T, int64_t n> void svd_warm_at(WarmLane& l) {  // Xgesvd with U and V^T
  using R = real_t<T>;
  const cudaDataType t = data_type<T>();
  l.fresh<T>(n);
  size_t d = 0, h = 0;
  check(cusolverDnXgesvd_bufferSize(l.solver(), l.params(), 'S', 'S', n, n, t, l.matrix<T>(0), n, data_type<R>(),
                                    l.vec(), t, l.matrix<T>(1), n, t, l.matrix<T>(2), n, t, &d, &h),
        "cusolverDnXgesvd_bufferSize (warming)");
  void* dw = l.device_work(d);
  void* hw = l.host_work(h);
  check(cusolverDnXgesvd(l.solver(), l.params(), 'S', 'S', n, n, t, l.matrix<T>(0), n, data_type<R>(), l.vec(), t,
                         l.matrix<T>(1), n, t, l.matrix<T>(2), n, t, dw, d, hw, h, l.info()),
        "cusolverDnXgesvd (warming)");
}

template <class T> void qr_warm(WarmLane& l) {  // Xgeqrf, its routines' first step or the
  // routine nearest it (not ?orgqr, ?ormqr, nor gelsd's SVD)
  const int64_t n = kLuN;
  const cudaDataType t = data_type<T>();
  l.fresh<T>(n);
  size_t d = 0, h = 0;
  check(cusolverDnXgeqrf_bufferSize(l.solver(), l.params(), n, n, t, l.matrix<T>(0), n, t, l.vec(), t, &d, &h),
        "cusolverDnXgeqrf_bufferSize (warming)");
  void* dw = l.device_work(d);
  void* hw = l.host_work(h);
  check(cusolverDnXgeqrf(l.solver(), l.params(), n, n, t, l.matrix<T>(0), n, t, l.vec(), t, dw, d, hw, h, l.info()),
        "cusolverDnXgeqrf (warming)");
}

template <class T> void geev_warm(WarmLane& l) {  // Xgeev with right eigenvectors
  using R = real_t<T>;
  const int64_t n = kGeevN;
  const cudaDataType t = data_type<T>(), tw = data_type<std::complex<R>>();
  l.fresh<T>(n);
  size_t d = 0, h = 0;
  check(cusolverDnXgeev_bufferSize(l.solver(), l.params(), CUSOLVER_EIG_MODE_NOVECTOR, CUSOLVER_EIG_MODE_VECTOR, n, t,
                                   l.matrix<T>(0), n, tw, l.vec(), t, nullptr, 1, t, l.matrix<T>(1), n, t, &d, &h),
        "cusolverDnXgeev_bufferSize (warming)");
  void* dw = l.device_work(d);
  void* hw = l.host_work(h);
  check(cusolverDnXgeev(l.solver(), l.params(), CUSOLVER_EIG_MODE_NOVECTOR, CUSOLVER_EIG_MODE_VECTOR, n, t,
                        l.matrix<T>(0), n, tw, l.vec(), t, nullptr, 1, t, l.matrix<T>(1), n, t, dw, d, hw, h, l.info()),
        "cusolverDnXgeev (warming)");
}

template <class T> void syevd_warm(WarmLane& l) { syevd_warm_at<T, kEigN>(l); }
template <class T> void syevd_warm_large(WarmLane& l) { syevd_warm_at<T, WarmLane::kLargeN>(l); }
template <class T> void svd_warm(WarmLane& l) { svd_warm_at<T, kSvdN>(l); }
template <class T> void svd_warm_large(WarmLane& l) { svd_warm_at<T, WarmLane::kLargeN>(l); }

GOFL_INSTANTIATE_LAPACK_WARM

}  // namespace cuda
}  // namespace gofl
