// Shared by the GPU test suite (run on the device under LD_PRELOAD=libgpuoffload.so and
// GPU_OFFLOAD_DEVICE=gpu): call a routine through its exported name (intercepted, so it runs on
// the GPU) and the same routine straight in the CPU library (bypassing the preload), then compare.
#pragma once

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace gpu_test {

// The CPU library's own definition of `name`: looked up in libopenblas's scope, which does not
// contain the preload library.
inline void* cpu_symbol(const char* name) {
  static void* lib = [] {
    void* h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
    return h;
  }();
  void* p = lib ? dlsym(lib, name) : nullptr;
  if (!p) ADD_FAILURE() << "no CPU symbol " << name;
  return p;
}
template <class F> F cpu(const char* name) { return reinterpret_cast<F>(cpu_symbol(name)); }
template <class F> F intercepted(const char* name) {
  void* p = dlsym(RTLD_DEFAULT, name);  // the preload library's wrapper
  if (!p) ADD_FAILURE() << "no symbol " << name;
  return reinterpret_cast<F>(p);
}

// Where the last intercepted call on this thread ran (libgpuoffload.so's public test API).
struct LastCall {
  int device = -1, reason = -1, gpu_status = -1;
  std::string failure;  // how and where its GPU attempt failed, if it did
};
inline LastCall last_call() {
  using fn = void (*)(int*, int*, int*);
  using text_fn = const char* (*)();
  static fn f = reinterpret_cast<fn>(dlsym(RTLD_DEFAULT, "gpu_offload_last_call"));
  static text_fn failure = reinterpret_cast<text_fn>(dlsym(RTLD_DEFAULT, "gpu_offload_last_call_failure"));
  LastCall r;
  if (f) f(&r.device, &r.reason, &r.gpu_status);
  if (failure) r.failure = failure();
  return r;
}
// More of the test API on this thread's last intercepted call: whether its GPU run copied through its
// thread's pinned stage (thread_stage.h), whether the thread holding the GPU ran it (gpu_line.h), -1
// for either when libgpuoffload.so is not preloaded; and its operands' residency bits (0 then).
inline int last_call_staged() {
  static auto f = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "gpu_offload_last_call_staged"));
  return f ? f() : -1;
}
inline int last_call_served() {
  static auto f = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "gpu_offload_last_call_served"));
  return f ? f() : -1;
}
inline unsigned last_call_resident() {
  static auto f = reinterpret_cast<unsigned (*)()>(dlsym(RTLD_DEFAULT, "gpu_offload_last_call_resident"));
  return f ? f() : 0u;
}
inline void set_fault(const char* spec) {
  using fn = void (*)(const char*);
  static fn f = reinterpret_cast<fn>(dlsym(RTLD_DEFAULT, "gpu_offload_test_fault"));
  ASSERT_NE(f, nullptr) << "libgpuoffload.so is not preloaded";
  f(spec);
}
// While it lives, QR's Q is applied by the 64-bit route (src/cuda/householder64.h) that sizes beyond
// int take, at any size: the backend's test switch "qr64".
struct Qr64Route {
  Qr64Route() { set_fault("qr64"); }
  ~Qr64Route() { set_fault(nullptr); }
  Qr64Route(const Qr64Route&) = delete;
  Qr64Route& operator=(const Qr64Route&) = delete;
};
#define EXPECT_RAN_ON_GPU()                                                                     \
  do {                                                                                          \
    auto lc_ = gpu_test::last_call();                                                           \
    EXPECT_EQ(lc_.device, 1) << "reason " << lc_.reason << " gpu status " << lc_.gpu_status    \
                             << " " << lc_.failure;                                           \
  } while (0)

template <class T> struct real_of { using type = T; };
template <class R> struct real_of<std::complex<R>> { using type = R; };
template <class T> using real_t = typename real_of<T>::type;
template <class T> constexpr bool is_complex_v = !std::is_same_v<T, real_t<T>>;

// Tolerance relative to the largest value: --verify's tolerances (README: Devices).
template <class T> double tolerance() { return std::is_same_v<real_t<T>, float> ? 2e-3 : 1e-8; }

// Random values everywhere, the gaps between columns (ld > rows) included.
template <class T> std::vector<T> random_matrix([[maybe_unused]] int64_t rows, int64_t cols, int64_t ld, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> d(-1.0, 1.0);
  std::vector<T> m(size_t(std::max<int64_t>(ld * cols, 1)));
  for (auto& x : m) {
    if constexpr (is_complex_v<T>) x = T(real_t<T>(d(g)), real_t<T>(d(g)));
    else x = T(d(g));
  }
  return m;
}

// max |a - b| / max |b| over the rows x cols part of two column-major matrices.
template <class T>
double rel_diff(const T* a, const T* b, int64_t rows, int64_t cols, int64_t ld) {
  double num = 0, den = 0;
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = 0; i < rows; ++i) {
      num = std::max(num, double(std::abs(a[i + j * ld] - b[i + j * ld])));
      den = std::max(den, double(std::abs(b[i + j * ld])));
    }
  return den > 0 ? num / den : num;
}

// True if the gaps between columns (rows..ld-1) are bit-identical: a GPU copy-out must not touch them.
template <class T>
bool gaps_untouched(const std::vector<T>& a, const std::vector<T>& b, int64_t rows, int64_t cols, int64_t ld) {
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t i = rows; i < ld; ++i)
      if (std::memcmp(&a[i + j * ld], &b[i + j * ld], sizeof(T)) != 0) return false;
  return true;
}

// True if any element of the rows x cols block differs from `b`'s.
template <class T>
bool block_changed(const std::vector<T>& a, const std::vector<T>& b, int64_t rows, int64_t cols, int64_t ld) {
  for (int64_t j = 0; j < cols; ++j)
    if (std::memcmp(&a[size_t(j * ld)], &b[size_t(j * ld)], sizeof(T) * size_t(rows)) != 0) return true;
  return false;
}
// An input LAPACK destroys (gesvd's A, syevd's A without vectors, ...) changes on the GPU path where
// it changes in the CPU library: programs can tell a destroyed array from an untouched one (SciPy's
// overwrite_a tests do).
#define EXPECT_DESTROYED_AS_CPU(gpu_a, cpu_a, a0, rows, cols, ld)                                       \
  EXPECT_EQ(gpu_test::block_changed(gpu_a, a0, rows, cols, ld), gpu_test::block_changed(cpu_a, a0, rows, cols, ld)) \
      << "the GPU path must overwrite A where LAPACK does"

// A CPU library with ILP64 LAPACK names: an OpenBLAS built with SYMBOLSUFFIX=64_ (dgetrf_64_), or
// NumPy's scipy-openblas64 (scipy_dgetrf_64_) named by GOFL_TEST_OPENBLAS64. Empty when none has
// every routine in `routines`.
struct Ilp64Lib {
  void* handle = nullptr;
  std::string prefix;
  std::string name(const char* routine) const { return prefix + routine + "_64_"; }
  template <class Fn> Fn cpu(const char* routine) const { return reinterpret_cast<Fn>(dlsym(handle, name(routine).c_str())); }
  template <class Fn> Fn gpu(const char* routine) const { return intercepted<Fn>(name(routine).c_str()); }
};
inline Ilp64Lib ilp64_lib(std::initializer_list<const char*> routines) {
  auto has_all = [&](void* h, const std::string& prefix) {
    for (const char* r : routines)
      if (!h || !dlsym(h, (prefix + r + "_64_").c_str())) return false;
    return true;
  };
  for (const char* lib : {"libopenblas.so.0", "libopenblas64_.so.0"}) {
    void* h = dlopen(lib, RTLD_NOW | RTLD_NOLOAD);
    if (!h) h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (has_all(h, "")) return {h, ""};
  }
  if (const char* path = std::getenv("GOFL_TEST_OPENBLAS64")) {
    void* h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (has_all(h, "scipy_")) return {h, "scipy_"};
  }
  return {};
}

}  // namespace gpu_test
