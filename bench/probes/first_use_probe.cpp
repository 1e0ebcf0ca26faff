// What does a CUDA library routine's first call cost inside one process, and can another
// thread pay it while the calling thread keeps the GPU busy? A bare program (no gpu-offload), built
// by CMake beside the backend (not installed), run by scripts/device_run.sh firstuse.
//
//   first_use_probe seq N          each routine's first and second call at n = N, one after another
//   first_use_probe small S N      each routine first at n = S, then its first and second call at N
//   first_use_probe helper N       the calling thread runs sgemm of n = N back to back; meanwhile a
//                                  second thread (own stream and handles) makes the first calls of
//                                  the other routines at N; then the calling thread calls them
//   first_use_probe cpu NICE N     the calling thread runs the CPU library's dgetrf of n = N (LIBBLAS,
//                                  default libopenblas.so.0, OPENBLAS_NUM_THREADS as set) back to back;
//                                  meanwhile a second thread at nice NICE (idle: SCHED_IDLE; none: no
//                                  second thread) makes the first calls of every routine at n = 256:
//                                  is a CPU call slowed beside the warming thread's work (the sweep's
//                                  were, 10-100x)? SET_THREADS=K: after the first calls, the loop
//                                  runs with openblas_set_num_threads(K), as gpu-offload's spared
//                                  core does (preload/spare_core.h), the pool keeping its threads.
//
// Routines: gemm (s, d, z), getrf (s, d), potrf (s, d), syevd (s, d), through cuBLAS and cuSOLVER's
// 64-bit API as the backend calls them. Each timed call is workspace query + call + synchronise;
// device memory is allocated before, so a time is the libraries' own work (kernel loading included).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

void ok(int status, const char* what) {
  if (status != 0) {
    std::fprintf(stderr, "%s failed: %d\n", what, status);
    std::exit(2);
  }
}

// One thread's GPU resources: a stream, cuBLAS and cuSOLVER handles on it, device buffers for n.
struct Lane {
  cudaStream_t stream{};
  cublasHandle_t blas{};
  cusolverDnHandle_t solver{};
  cusolverDnParams_t params{};
  void *a{}, *b{}, *c{}, *w{}, *work{};
  int64_t* piv{};
  int* info{};
  size_t work_bytes = size_t(512) << 20;
  std::vector<char> host_work = std::vector<char>(size_t(64) << 20);
  double handles_ms = 0;

  explicit Lane(int64_t n) {
    const auto t = Clock::now();
    ok(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    ok(cublasCreate(&blas), "cublasCreate");
    ok(cublasSetStream(blas, stream), "cublasSetStream");
    ok(cusolverDnCreate(&solver), "cusolverDnCreate");
    ok(cusolverDnSetStream(solver, stream), "cusolverDnSetStream");
    ok(cusolverDnCreateParams(&params), "cusolverDnCreateParams");
    handles_ms = ms_since(t);
    const size_t bytes = size_t(n) * n * 16;
    for (void** p : {&a, &b, &c, &w}) ok(cudaMalloc(p, bytes), "cudaMalloc");
    ok(cudaMalloc(&work, work_bytes), "cudaMalloc");
    ok(cudaMalloc(reinterpret_cast<void**>(&piv), n * sizeof(int64_t)), "cudaMalloc");
    ok(cudaMalloc(reinterpret_cast<void**>(&info), sizeof(int)), "cudaMalloc");
  }
};

// A well-conditioned symmetric positive definite n x n matrix (diagonal n, off-diagonal in [-0.5, 0.5)),
// as doubles; converted per type on upload.
std::vector<double> spd(int64_t n) {
  std::vector<double> m(size_t(n) * n);
  uint64_t s = 12345;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i <= j; ++i) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      const double v = i == j ? double(n) : double(s >> 11) / double(1ull << 53) - 0.5;
      m[size_t(j) * n + i] = m[size_t(i) * n + j] = v;
    }
  return m;
}

template <class T> cudaDataType type_of();
template <> cudaDataType type_of<float>() { return CUDA_R_32F; }
template <> cudaDataType type_of<double>() { return CUDA_R_64F; }
template <> cudaDataType type_of<std::complex<double>>() { return CUDA_C_64F; }

template <class T> void upload(Lane& l, const std::vector<double>& m, int64_t n) {
  std::vector<T> h(m.begin(), m.begin() + size_t(n) * n);
  for (void* p : {l.a, l.b, l.c}) ok(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "upload");
}

enum class Op { gemm, getrf, potrf, syevd };
struct Routine {
  const char* name;
  Op op;
  cudaDataType type;
};
const Routine kRoutines[] = {
    {"sgemm", Op::gemm, CUDA_R_32F},   {"dgemm", Op::gemm, CUDA_R_64F},   {"zgemm", Op::gemm, CUDA_C_64F},
    {"sgetrf", Op::getrf, CUDA_R_32F}, {"dgetrf", Op::getrf, CUDA_R_64F}, {"spotrf", Op::potrf, CUDA_R_32F},
    {"dpotrf", Op::potrf, CUDA_R_64F}, {"ssyevd", Op::syevd, CUDA_R_32F}, {"dsyevd", Op::syevd, CUDA_R_64F},
};

// One call of r at n on lane l, synchronised; milliseconds. The inputs are re-uploaded (untimed) first,
// since the factorizations overwrite them.
double call(Lane& l, const Routine& r, int64_t n, const std::vector<double>& m) {
  if (r.type == CUDA_R_32F) upload<float>(l, m, n);
  else if (r.type == CUDA_R_64F) upload<double>(l, m, n);
  else upload<std::complex<double>>(l, m, n);
  const cudaDataType t = r.type;
  const int ni = int(n);
  const auto t0 = Clock::now();
  size_t dbytes = 0, hbytes = 0;
  switch (r.op) {
    case Op::gemm: {
      const double one[2] = {1, 0}, zero[2] = {0, 0};
      const float onef = 1, zerof = 0;
      if (t == CUDA_R_32F)
        ok(cublasSgemm(l.blas, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &onef, static_cast<float*>(l.a), ni,
                       static_cast<float*>(l.b), ni, &zerof, static_cast<float*>(l.c), ni), "sgemm");
      else if (t == CUDA_R_64F)
        ok(cublasDgemm(l.blas, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, one, static_cast<double*>(l.a), ni,
                       static_cast<double*>(l.b), ni, zero, static_cast<double*>(l.c), ni), "dgemm");
      else
        ok(cublasZgemm(l.blas, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, reinterpret_cast<const cuDoubleComplex*>(one),
                       static_cast<cuDoubleComplex*>(l.a), ni, static_cast<cuDoubleComplex*>(l.b), ni,
                       reinterpret_cast<const cuDoubleComplex*>(zero), static_cast<cuDoubleComplex*>(l.c), ni), "zgemm");
      break;
    }
    case Op::getrf:
      ok(cusolverDnXgetrf_bufferSize(l.solver, l.params, n, n, t, l.a, n, t, &dbytes, &hbytes), "getrf_bufferSize");
      ok(cusolverDnXgetrf(l.solver, l.params, n, n, t, l.a, n, l.piv, t, l.work, l.work_bytes, l.host_work.data(),
                          l.host_work.size(), l.info), "getrf");
      break;
    case Op::potrf:
      ok(cusolverDnXpotrf_bufferSize(l.solver, l.params, CUBLAS_FILL_MODE_LOWER, n, t, l.a, n, t, &dbytes, &hbytes),
         "potrf_bufferSize");
      ok(cusolverDnXpotrf(l.solver, l.params, CUBLAS_FILL_MODE_LOWER, n, t, l.a, n, t, l.work, l.work_bytes,
                          l.host_work.data(), l.host_work.size(), l.info), "potrf");
      break;
    case Op::syevd:
      ok(cusolverDnXsyevd_bufferSize(l.solver, l.params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, t, l.a, n,
                                     t, l.w, t, &dbytes, &hbytes), "syevd_bufferSize");
      ok(cusolverDnXsyevd(l.solver, l.params, CUSOLVER_EIG_MODE_VECTOR, CUBLAS_FILL_MODE_LOWER, n, t, l.a, n, t, l.w, t,
                          l.work, l.work_bytes, l.host_work.data(), l.host_work.size(), l.info), "syevd");
      break;
  }
  ok(cudaStreamSynchronize(l.stream), "synchronize");
  return ms_since(t0);
}

double pct(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(p * double(v.size())))];
}

// Mode cpu (see the top).
int cpu_beside(const std::string& nice, int64_t n) {
  const char* lib = std::getenv("LIBBLAS") ? std::getenv("LIBBLAS") : "libopenblas.so.0";
  void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
  using getrf_fn = void (*)(const int*, const int*, double*, const int*, int*, int*);
  auto getrf = h ? reinterpret_cast<getrf_fn>(dlsym(h, "dgetrf_")) : nullptr;
  if (!getrf) {
    std::fprintf(stderr, "no dgetrf_ in %s\n", lib);
    return 2;
  }
  auto t = Clock::now();
  ok(cudaFree(nullptr), "context");  // before: the window holds the libraries' first uses only
  std::printf("context %.1f ms; CPU library %s, OPENBLAS_NUM_THREADS=%s; helper nice %s\n", ms_since(t), lib,
              std::getenv("OPENBLAS_NUM_THREADS") ? std::getenv("OPENBLAS_NUM_THREADS") : "-", nice.c_str());
  std::vector<double> a0(size_t(n) * n), a(a0.size());
  uint64_t s = 7;
  for (double& x : a0) s = s * 6364136223846793005ull + 1442695040888963407ull, x = double(s >> 11) / double(1ull << 53) - 0.5;
  std::vector<int> piv(static_cast<size_t>(n));
  const int ni = int(n);
  auto cpu_call = [&] {
    a = a0;  // (the copy is outside the timing)
    int info = 0;
    const auto t0 = Clock::now();
    getrf(&ni, &ni, a.data(), &ni, piv.data(), &info);
    return ms_since(t0);
  };
  for (int i = 0; i < 5; ++i) cpu_call();  // OpenBLAS's threads and buffers
  if (const char* k = std::getenv("SET_THREADS"); k && *k) {
    auto set = reinterpret_cast<void (*)(int)>(dlsym(h, "openblas_set_num_threads"));
    auto get = reinterpret_cast<int (*)()>(dlsym(h, "openblas_get_num_threads"));
    if (!set || !get) {
      std::fprintf(stderr, "no openblas_set_num_threads in %s\n", lib);
      return 2;
    }
    set(std::atoi(k));
    std::printf("  openblas_set_num_threads(%s): the loop runs with %d threads\n", k, get());
  }
  std::atomic<int> state{0};  // 0 not begun, 1 running, 2 done
  std::vector<std::pair<const char*, double>> helper_times;
  std::thread helper([&] {
    if (nice == "none") return;
    if (nice == "idle") {  // SCHED_IDLE: runs only where no other thread wants the core
      sched_param none{};
      if (pthread_setschedparam(pthread_self(), SCHED_IDLE, &none) != 0) std::printf("  (SCHED_IDLE refused)\n");
    } else {
      (void)setpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid)), std::atoi(nice.c_str()));
    }
    while (state.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const std::vector<double> m = spd(256);
    Lane l(256);
    helper_times.emplace_back("handles", l.handles_ms);
    for (const Routine& r : kRoutines) helper_times.emplace_back(r.name, call(l, r, 256, m));
    state.store(2);
  });
  std::vector<double> before, beside, after;
  const auto begin = Clock::now();
  while (ms_since(begin) < 500) before.push_back(cpu_call());
  state.store(1);
  const auto during = Clock::now();
  if (nice == "none")
    while (ms_since(during) < 500) beside.push_back(cpu_call());
  else
    while (state.load() != 2) beside.push_back(cpu_call());
  const double window = ms_since(during);
  const auto end = Clock::now();
  while (ms_since(end) < 500) after.push_back(cpu_call());
  helper.join();
  auto line = [](const char* what, const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    std::printf("  dgetrf %-16s %4zu calls  median %7.2f  p90 %7.2f  max %7.2f ms  (sum %.0f ms)\n", what, v.size(),
                pct(v, 0.5), pct(v, 0.9), pct(v, 1.0), sum);
  };
  line("before", before);
  line("beside the helper", beside);
  line("after", after);
  std::printf("  the helper's window %.1f ms:", window);
  for (const auto& [name, ms] : helper_times) std::printf(" %s %.1f", name, ms);
  std::printf("\n");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: first_use_probe seq N | small S N | helper N | cpu NICE|idle|none N\n");
    return 2;
  }
  const std::string mode = argv[1];
  if (mode == "cpu") return cpu_beside(argc > 3 ? argv[2] : "19", std::atoll(argv[argc - 1]));
  const int64_t n = std::atoll(argv[argc - 1]);
  const int64_t s = mode == "small" && argc > 3 ? std::atoll(argv[2]) : 0;
  auto t = Clock::now();
  ok(cudaFree(nullptr), "context");
  std::printf("context (driver + context) %.1f ms\n", ms_since(t));
  const std::vector<double> m = spd(n);
  Lane main_lane(n);
  std::printf("handles %.1f ms\n", main_lane.handles_ms);

  if (mode == "seq" || mode == "small") {
    std::printf("%-8s %9s %9s %9s %9s\n", "routine", s ? "small" : "", "first", "second", "excess");
    for (const Routine& r : kRoutines) {
      const double small = s ? call(main_lane, r, s, m) : 0;
      const double first = call(main_lane, r, n, m), second = call(main_lane, r, n, m);
      std::printf("%-8s %9.2f %9.2f %9.2f %9.2f\n", r.name, small, first, second, first - second);
    }
    return 0;
  }
  if (mode != "helper") {
    std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
    return 2;
  }
  // The calling thread: sgemm at n, warmed, then back to back for 0.3 s alone, then while the helper runs.
  const Routine& sgemm = kRoutines[0];
  std::printf("sgemm first %.2f ms (the calling thread, before the helper)\n", call(main_lane, sgemm, n, m));
  std::vector<double> alone, beside;
  std::atomic<int> helper_state{0};  // 0 not begun, 1 running, 2 done
  std::vector<std::pair<const char*, double>> helper_times;
  double helper_handles = 0;
  std::thread helper([&] {
    while (helper_state.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    Lane l(n);
    helper_handles = l.handles_ms;
    for (const Routine& r : kRoutines)
      if (&r != &sgemm) helper_times.emplace_back(r.name, call(l, r, n, m));
    helper_state.store(2);
  });
  const auto begin = Clock::now();
  while (ms_since(begin) < 300) alone.push_back(call(main_lane, sgemm, n, m));
  helper_state.store(1);
  const auto during = Clock::now();
  while (helper_state.load() != 2) beside.push_back(call(main_lane, sgemm, n, m));
  const double helper_ms = ms_since(during);
  helper.join();
  std::printf("sgemm on the calling thread, ms: alone %zu calls median %.2f p90 %.2f max %.2f; beside the helper %zu calls "
              "median %.2f p90 %.2f max %.2f (the helper took %.1f ms, handles %.1f)\n",
              alone.size(), pct(alone, 0.5), pct(alone, 0.9), pct(alone, 1.0), beside.size(), pct(beside, 0.5),
              pct(beside, 0.9), pct(beside, 1.0), helper_ms, helper_handles);
  std::printf("%-8s %12s %14s %14s\n", "routine", "helper first", "caller after", "caller second");
  for (size_t i = 0; i < helper_times.size(); ++i) {
    const Routine& r = kRoutines[i + 1];
    const double after = call(main_lane, r, n, m), second = call(main_lane, r, n, m);
    std::printf("%-8s %12.2f %14.2f %14.2f\n", helper_times[i].first, helper_times[i].second, after, second);
  }
  return 0;
}
