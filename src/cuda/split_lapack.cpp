// LU, Cholesky and symmetric eigenvalues over several GPUs on cusolverMg (split.h): getrf getrs potrf
// potrs, s/d/c/z, and syevd/heevd (s/d, c/z). The
// matrices are spread in cusolverMg's 1-D column block-cyclic layout (column block b on device
// b % G, as its local block b / G; each device's columns contiguous, leading dimension = the rows;
// getrf's pivots spread like a 1 x n row of the same blocks). What cusolverMg does not take stays
// on the one-GPU path: non-square getrf, getrs with op T or C, the upper triangle of potrf/potrs
// (cusolverMg refuses it) and of syevd/heevd, sizes beyond int. Results are gathered into host scratch and written
// to the program's buffers only once the engine succeeded with info = 0; a singular matrix
// (getrf's info > 0) or one that is not positive definite (potrf's) goes to the one-GPU path,
// which reproduces LAPACK's partial results exactly.
#include <algorithm>
#include <chrono>
#include <climits>
#include <complex>
#include <vector>

#include "cuda/lapack_common.h"
#include "cuda/lapack_syevd.h"
#include "cuda/split.h"
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {
namespace {

using namespace lapack;  // pivots (lapack_common.h)
using cf = std::complex<float>;
using cd = std::complex<double>;

constexpr int64_t kBlock = 256;  // columns per block (NVIDIA's samples use 256)

// Device memory on one of the split devices.
struct DevBuf {
  int device = -1;
  void* p = nullptr;
  DevBuf() = default;
  DevBuf(int d, size_t bytes) : device(d) {
    check(cudaSetDevice(d), "cudaSetDevice (split)");
    check(cudaMalloc(&p, std::max<size_t>(bytes, 16)), "cudaMalloc (split)");
  }
  DevBuf(DevBuf&& o) noexcept : device(o.device), p(o.p) { o.p = nullptr; }
  DevBuf(const DevBuf&) = delete;
  ~DevBuf() {
    if (p && cudaSetDevice(device) == cudaSuccess) cudaFree(p);
  }
};

// A rows x cols matrix of T spread over the devices (and its cusolverMg descriptor).
template <class T> class Spread {
 public:
  Spread(const MgApi& mg, int64_t rows, int64_t cols, size_t elem = sizeof(T)) : rows_(rows), cols_(cols), elem_(elem) {
    const size_t g = mg.devices.size();
    std::vector<int64_t> local(g, 0);
    for (int64_t b = 0; b * kBlock < cols; ++b) local[size_t(b) % g] += std::min(kBlock, cols - b * kBlock);
    for (size_t d = 0; d < g; ++d) parts_.emplace_back(mg.devices[d], size_t(rows) * size_t(local[d]) * elem);
    for (auto& b : parts_) ptrs_.push_back(b.p);
    if (elem == sizeof(T)) {
      check(mg.cusolverMgCreateMatrixDesc(&desc_, rows, cols, rows, kBlock, data_type<T>(), mg.grid),
            "cusolverMgCreateMatrixDesc");
      destroy_ = mg.cusolverMgDestroyMatrixDesc;
    }
  }
  ~Spread() {
    if (desc_ && destroy_) destroy_(desc_);
  }
  // Where column j lives: (device index, first element of its local column).
  std::pair<size_t, size_t> where(int64_t j) const {
    const int64_t b = j / kBlock, g = int64_t(parts_.size());
    return {size_t(b % g), size_t(((b / g) * kBlock + j % kBlock) * rows_)};
  }
  // Host (column-major, leading dimension ld, element size elem_) to the devices, a block at a time.
  void put(const void* host, int64_t ld) {
    for (int64_t j0 = 0; j0 < cols_; j0 += kBlock) {
      const auto [d, off] = where(j0);
      check(cudaMemcpy2D(static_cast<char*>(parts_[d].p) + off * elem_, size_t(rows_) * elem_,
                         static_cast<const char*>(host) + size_t(j0) * size_t(ld) * elem_, size_t(ld) * elem_,
                         size_t(rows_) * elem_, size_t(std::min(kBlock, cols_ - j0)), cudaMemcpyHostToDevice),
            "cudaMemcpy2D (split copy-in)");
    }
  }
  // The devices to packed host memory (leading dimension rows).
  void get(void* host) const {
    for (int64_t j0 = 0; j0 < cols_; j0 += kBlock) {
      const auto [d, off] = where(j0);
      check(cudaMemcpy(static_cast<char*>(host) + size_t(j0) * size_t(rows_) * elem_,
                       static_cast<const char*>(parts_[d].p) + off * elem_,
                       size_t(rows_) * size_t(std::min(kBlock, cols_ - j0)) * elem_, cudaMemcpyDeviceToHost),
            "cudaMemcpy (split copy-out)");
    }
  }
  void** parts() { return ptrs_.data(); }
  int** int_parts() { return reinterpret_cast<int**>(ptrs_.data()); }
  cudaLibMgMatrixDesc_t desc() const { return desc_; }

 private:
  int64_t rows_, cols_;
  size_t elem_;
  std::vector<DevBuf> parts_;
  std::vector<void*> ptrs_;
  cudaLibMgMatrixDesc_t desc_ = nullptr;
  decltype(MgApi::cusolverMgDestroyMatrixDesc) destroy_ = nullptr;
};

// Workspace of lwork elements on every device.
template <class T> struct SpreadWork {
  std::vector<DevBuf> parts;
  std::vector<void*> ptrs;
  SpreadWork(const MgApi& mg, int64_t lwork) {
    for (int d : mg.devices) parts.emplace_back(d, size_t(std::max<int64_t>(lwork, 1)) * sizeof(T));
    for (auto& b : parts) ptrs.push_back(b.p);
  }
};

bool fits(int64_t v) { return v >= 0 && v <= int64_t(INT_MAX / 2); }

// The engine, its devices, and a clean state for the copies that follow it (cusolverMg may leave
// another device current).
const MgApi& begin(Engine& e) {
  if (e.fault("split")) fail(GOFL_GPU_INJECTED, "split (injected)");
  return mg_api(e.split_devices());
}
void sync_all(const Engine& e) {
  for (int d : e.split_devices()) {
    check(cudaSetDevice(d), "cudaSetDevice (split)");
    check(cudaDeviceSynchronize(), "cusolverMg (device synchronize)");
  }
  check(cudaSetDevice(e.device()), "cudaSetDevice (split)");
}
void require_ok(const Engine& e, int info, const char* where) {
  if (e.fault("compute")) fail(GOFL_GPU_INJECTED, "compute (injected)");
  // info > 0: a singular or indefinite matrix, whose partial results the one-GPU path reproduces.
  if (info != 0) fail(GOFL_GPU_UNSUPPORTED, where, info);
}

// Packed n-column scratch into the program's matrix (only the uplo triangle when uplo is 'U'/'L').
template <class T> void write_back(T* host, int64_t ld, const std::vector<T>& packed, int64_t rows, int64_t cols,
                                   char uplo = 0) {
  for (int64_t j = 0; j < cols; ++j) {
    int64_t lo = 0, hi = rows;
    if (uplo == 'L') lo = std::min(j, rows);
    else if (uplo == 'U') hi = std::min(j + 1, rows);
    std::copy(packed.begin() + j * rows + lo, packed.begin() + j * rows + hi, host + j * ld + lo);
  }
}

// The getrf, getrs, potrf and potrs checks below are only what cusolverMg adds: the backend asks the
// split engines only about a call the one-GPU routine's plan accepted (backend.cpp, b_plan), so the
// CPU library's argument checks and its quick returns have one home, the one-GPU routine.

// ---- getrf ------------------------------------------------------------------------------------------
template <class T> int getrf_supports(const desc::getrf<T>& d) {
  const int64_t m = d.m, n = d.n, lda = d.lda;
  if (m != n || !fits(n) || !fits(lda)) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}
template <class T> void getrf_run(Engine& e, const desc::getrf<T>& d) {
  const int64_t n = d.n, lda = d.lda;
  T* A_ = d.a;
  const MgApi& mg = begin(e);
  Spread<T> dA(mg, n, n);
  Spread<T> dpiv(mg, 1, n, sizeof(int));  // the pivots: a 1 x n row of A's column blocks
  dA.put(A_, lda);
  int64_t lwork = 0;
  check(mg.cusolverMgGetrf_bufferSize(mg.handle, int(n), int(n), dA.parts(), 1, 1, dA.desc(), dpiv.int_parts(),
                                      data_type<T>(), &lwork),
        "cusolverMgGetrf_bufferSize");
  SpreadWork<T> w(mg, lwork);
  int info = 0;
  check(mg.cusolverMgGetrf(mg.handle, int(n), int(n), dA.parts(), 1, 1, dA.desc(), dpiv.int_parts(), data_type<T>(),
                           w.ptrs.data(), lwork, &info),
        "cusolverMgGetrf");
  sync_all(e);
  require_ok(e, info, "cusolverMgGetrf info");
  std::vector<T> f(size_t(n * n));
  std::vector<int> piv32(static_cast<size_t>(n));
  dA.get(f.data());
  dpiv.get(piv32.data());
  std::vector<int64_t> piv(piv32.begin(), piv32.end());
  if (!pivots_in_range(piv, n)) fail(GOFL_GPU_CUSOLVER_ERROR, "cusolverMgGetrf pivots");
  // Everything is in host memory and checked: only now is the program's memory written.
  write_back(A_, lda, f, n, n);
  write_pivots(d.ipiv, piv);
  d.info.set(0);
}

// ---- getrs ------------------------------------------------------------------------------------------
template <class T> int getrs_supports(const desc::getrs<T>& d) {
  const int64_t n = d.n, nrhs = d.nrhs;
  if (d.trans != 'N' || !fits(n) || !fits(nrhs)) return GOFL_GPU_UNSUPPORTED;  // cusolverMg: op N only
  if (!pivots_in_range(read_pivots(d.ipiv, n), n)) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}
template <class T> void getrs_run(Engine& e, const desc::getrs<T>& d) {
  const int64_t n = d.n, nrhs = d.nrhs, lda = d.lda, ldb = d.ldb;
  const MgApi& mg = begin(e);
  Spread<T> dA(mg, n, n), dB(mg, n, nrhs);
  Spread<T> dpiv(mg, 1, n, sizeof(int));
  const std::vector<int64_t> piv = read_pivots(d.ipiv, n);
  const std::vector<int> piv32(piv.begin(), piv.end());
  dA.put(d.a, lda);
  dB.put(d.b, ldb);
  dpiv.put(piv32.data(), 1);
  int64_t lwork = 0;
  check(mg.cusolverMgGetrs_bufferSize(mg.handle, CUBLAS_OP_N, int(n), int(nrhs), dA.parts(), 1, 1, dA.desc(),
                                      dpiv.int_parts(), dB.parts(), 1, 1, dB.desc(), data_type<T>(), &lwork),
        "cusolverMgGetrs_bufferSize");
  SpreadWork<T> w(mg, lwork);
  int info = 0;
  check(mg.cusolverMgGetrs(mg.handle, CUBLAS_OP_N, int(n), int(nrhs), dA.parts(), 1, 1, dA.desc(), dpiv.int_parts(),
                           dB.parts(), 1, 1, dB.desc(), data_type<T>(), w.ptrs.data(), lwork, &info),
        "cusolverMgGetrs");
  sync_all(e);
  require_ok(e, info, "cusolverMgGetrs info");
  std::vector<T> x(size_t(n * nrhs));
  dB.get(x.data());
  write_back(d.b, ldb, x, n, nrhs);
  d.info.set(0);
}

// ---- potrf ------------------------------------------------------------------------------------------
template <class T> int potrf_supports(const desc::potrf<T>& d) {
  if (d.uplo != 'L' || !fits(d.n)) return GOFL_GPU_UNSUPPORTED;  // cusolverMg: the lower triangle only
  return GOFL_GPU_OK;
}
template <class T> void potrf_run(Engine& e, const desc::potrf<T>& d) {
  const int64_t n = d.n, lda = d.lda;
  T* A_ = d.a;
  const MgApi& mg = begin(e);
  Spread<T> dA(mg, n, n);
  dA.put(A_, lda);
  int64_t lwork = 0;
  check(mg.cusolverMgPotrf_bufferSize(mg.handle, CUBLAS_FILL_MODE_LOWER, int(n), dA.parts(), 1, 1, dA.desc(),
                                      data_type<T>(), &lwork),
        "cusolverMgPotrf_bufferSize");
  SpreadWork<T> w(mg, lwork);
  int info = 0;
  check(mg.cusolverMgPotrf(mg.handle, CUBLAS_FILL_MODE_LOWER, int(n), dA.parts(), 1, 1, dA.desc(), data_type<T>(),
                           w.ptrs.data(), lwork, &info),
        "cusolverMgPotrf");
  sync_all(e);
  require_ok(e, info, "cusolverMgPotrf info");
  std::vector<T> f(size_t(n * n));
  dA.get(f.data());
  write_back(A_, lda, f, n, n, 'L');  // the upper triangle stays as it was
  d.info.set(0);
}

// ---- potrs ------------------------------------------------------------------------------------------
template <class T> int potrs_supports(const desc::potrs<T>& d) {
  if (d.uplo != 'L' || !fits(d.n) || !fits(d.nrhs)) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}
template <class T> void potrs_run(Engine& e, const desc::potrs<T>& d) {
  const int64_t n = d.n, nrhs = d.nrhs, lda = d.lda, ldb = d.ldb;
  const MgApi& mg = begin(e);
  Spread<T> dA(mg, n, n), dB(mg, n, nrhs);
  dA.put(d.a, lda);  // cusolverMg reads only the lower triangle
  dB.put(d.b, ldb);
  int64_t lwork = 0;
  check(mg.cusolverMgPotrs_bufferSize(mg.handle, CUBLAS_FILL_MODE_LOWER, int(n), int(nrhs), dA.parts(), 1, 1,
                                      dA.desc(), dB.parts(), 1, 1, dB.desc(), data_type<T>(), &lwork),
        "cusolverMgPotrs_bufferSize");
  SpreadWork<T> w(mg, lwork);
  int info = 0;
  check(mg.cusolverMgPotrs(mg.handle, CUBLAS_FILL_MODE_LOWER, int(n), int(nrhs), dA.parts(), 1, 1, dA.desc(),
                           dB.parts(), 1, 1, dB.desc(), data_type<T>(), w.ptrs.data(), lwork, &info),
        "cusolverMgPotrs");
  sync_all(e);
  require_ok(e, info, "cusolverMgPotrs info");
  std::vector<T> x(size_t(n * nrhs));
  dB.get(x.data());
  write_back(d.b, ldb, x, n, nrhs);
  d.info.set(0);
}

// ---- syevd / heevd ------------------------------------------------------------------------------------
// As the one-GPU routine (lapack_syev.cpp, the checks and answers in lapack_syevd.h): the same
// arguments declined, the triangle screened for LAPACK's unscaled range (outside it LAPACK scales, and
// the call goes to one GPU, which sends it on to the CPU), a Hermitian diagonal's imaginary parts
// ignored, work[0]/rwork[0]/iwork[0] the CPU library's answers, and with jobz = 'N' the lower
// triangle, which LAPACK destroys, receiving what cusolverMg left there.
template <class T> int syevd_supports(const SyevdDesc<T>& d) {
  const int s = supports_syevd<T>(d);
  if (s != GOFL_GPU_OK) return s;
  if (d.uplo != 'L' || !fits(d.n) || !fits(d.lda)) return GOFL_GPU_UNSUPPORTED;
  return GOFL_GPU_OK;
}
template <class T> void syevd_run(Engine& e, const gofl_call& c, const SyevdDesc<T>& d) {
  using R = real_t<T>;
  const MgApi& mg = begin(e);
  const WorkOut<T> q = query_syevd<T>(c, d);
  const bool wantz = d.jobz == 'V';
  const int64_t n = d.n, lda = d.lda;
  T* A_ = d.a;
  // The lower triangle as LAPACK reads it, screened as the one-GPU path screens it (screen()).
  std::vector<T> h(size_t(n * n), T(0));
  double amax = 0, sum = 0;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = j; i < n; ++i) {
      const T v = A_[i + j * lda];
      h[size_t(i + j * n)] = v;
      amax = std::max(amax, abs1(v));
      sum += abs1(v);
    }
  if (!std::isfinite(sum)) fail(GOFL_GPU_UNSUPPORTED, "non-finite input");
  const Bounds b = syev_bounds<R>();
  if (amax > b.hi || (amax != 0 && amax < 2 * b.lo)) fail(GOFL_GPU_UNSUPPORTED, "input outside LAPACK's unscaled range");
  if constexpr (cplx_v<T>)
    for (int64_t j = 0; j < n; ++j) h[size_t(j + j * n)] = T(std::real(h[size_t(j + j * n)]), R(0));

  Spread<T> dA(mg, n, n);
  dA.put(h.data(), n);
  std::vector<R> w(static_cast<size_t>(n));
  const cusolverEigMode_t mode = wantz ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  int64_t lwork = 0;
  check(mg.cusolverMgSyevd_bufferSize(mg.handle, mode, CUBLAS_FILL_MODE_LOWER, int(n), dA.parts(), 1, 1, dA.desc(),
                                      w.data(), data_type<R>(), data_type<T>(), &lwork),
        "cusolverMgSyevd_bufferSize");
  SpreadWork<T> work(mg, lwork);
  int info = 0;
  check(mg.cusolverMgSyevd(mg.handle, mode, CUBLAS_FILL_MODE_LOWER, int(n), dA.parts(), 1, 1, dA.desc(), w.data(),
                           data_type<R>(), data_type<T>(), work.ptrs.data(), lwork, &info),
        "cusolverMgSyevd");
  sync_all(e);
  require_ok(e, info, "cusolverMgSyevd info");
  require_finite(w.data(), n, "non-finite eigenvalues");
  dA.get(h.data());
  // Everything is in host memory and checked: only now is the program's memory written.
  write_back(A_, lda, h, n, n, wantz ? 0 : 'L');
  std::copy(w.begin(), w.end(), d.w);
  q.write();
  d.info.set(0);
}

}  // namespace

// ---- the table's split routines (generated/gpu_routines.h) -----------------------------------------

template <class T> SplitRoutine getrf_split() {
  return SplitRoutine(routine<desc::getrf<T>, getrf_supports<T>, nullptr, getrf_run<T>>());
}
template <class T> SplitRoutine getrs_split() {
  return SplitRoutine(routine<desc::getrs<T>, getrs_supports<T>, nullptr, getrs_run<T>>());
}
template <class T> SplitRoutine potrf_split() {
  return SplitRoutine(routine<desc::potrf<T>, potrf_supports<T>, nullptr, potrf_run<T>>());
}
template <class T> SplitRoutine potrs_split() {
  return SplitRoutine(routine<desc::potrs<T>, potrs_supports<T>, nullptr, potrs_run<T>>());
}
template <class T> SplitRoutine syevd_split() {
  return SplitRoutine(routine<SyevdDesc<T>, syevd_supports<T>, nullptr, syevd_run<T>>());
}
template <class T> SplitRoutine heevd_split() {
  return SplitRoutine(routine<SyevdDesc<T>, syevd_supports<T>, nullptr, syevd_run<T>>());
}

GOFL_INSTANTIATE_SPLIT_LAPACK

}  // namespace cuda
}  // namespace gofl
