// Warming: a routine's first GPU call pays the CUDA libraries' one-time work for it, and most of that work
// does not depend on the call's data or size. Inside one process on the GPU test machine (H200, 16-core
// host; bench/probes/first_use_probe.cpp, n = 1024): cuBLAS's first gemm of each precision 114 / 49 / 71 ms
// (s / d / z; with CUDA_MODULE_LOADING=EAGER still 129 / 58 / 109: set-up inside cuBLAS, not kernel
// loading), cuSOLVER's first sgetrf 24 ms and ssyevd 36 ms after that. A call of n = 64 (256 for syevd)
// beforehand leaves 0.1-0.6 ms of it, sgetrf's 13 ms (kernels of its size) aside. Made on a second thread
// with a stream and handles of its own, it held up the calling thread's sgemm calls by 0.03 ms (median; 2.7
// ms at most) and left them warm.
//
// So the backend warms an operation when asked (backend_abi.h, warm): the warming thread runs the
// operation's CUDA library routines once on a small well-conditioned problem of its own (the table's
// warm column names each operation's warm-up, Routine::warm, which calls what its run calls), while the
// program's calls go on. The eigenvalue and SVD families' larger calls use other kernels (after a
// warm-up at 256 / 128, syevd still paid 52 ms at n = 1024 and gesdd 31-38 ms; ssyevd 100 ms at 2048):
// for calls of kLargeFrom or more (or of a size not known) they are warmed at kLargeN as well
// (Routine::warm_large), after every small warm-up queued. Nothing the program can see is read or
// written; a warm-up that fails is only reported. The warming keeps out of the program's way (measured
// in bench/auto_sweep.py's sweep): its thread runs under SCHED_IDLE (nice 19 where refused) and sleeps
// while it waits for the GPU (beside OpenBLAS's 16 threads a warm-up at normal priority made a CPU
// dgesdd of n = 512 take 170-383 ms instead of 65; warm-ups are mostly CPU work, their kernels'
// loading), and no warm-up begins while one of the program's GPU calls runs (CallInFlight: a first
// call waited 111-127 ms behind warm-ups begun beside it). Where the program's CPU library keeps
// every core busy, a CPU call beside a warm-up is slowed whatever the priority (that machine's
// kernel does not preempt a thread inside the driver: bench/probes/first_use_probe.cpp cpu).
// At exit a warm-up in progress is waited for (the CUDA libraries' exit handlers must not run
// under it); queued ones are dropped. The wait comes first of all at an exit from the main thread
// (its thread_local destructors run before any exit handler), else as an exit handler.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda/engine.h"

namespace gofl {
namespace cuda {

// What a warm-up runs on: the warming thread's stream and handles (made at their first use), and
// device buffers for problems of up to kMaxN x kMaxN (made for kSmallN, grown at the first larger
// warm-up; never freed: see device_work).
class WarmLane {
 public:
  static constexpr int64_t kSmallN = 256, kMaxN = 1024;
  static constexpr int64_t kLargeN = 1024, kLargeFrom = 512;
  cudaStream_t stream() const { return stream_; }
  cublasHandle_t blas();
  cusolverDnHandle_t solver();
  cusolverDnParams_t params();
  // Matrix i (0, 1, 2) as n x n with leading dimension n (n <= kMaxN), holding the leading n x n
  // block of a Hermitian positive definite matrix (diagonal kSmallN or kMaxN, the rest in
  // [-0.5, 0.5)): fit for every routine (nonsingular, definite, symmetric). Refreshed by fresh<T>(n)
  // before each use.
  template <class T> T* matrix(int i) const { return static_cast<T*>(m_[i]); }
  template <class T> void fresh(int64_t n);
  void* vec() const { return vec_; }          // kMaxN elements (eigen- or singular values, tau)
  int64_t* pivots() const { return piv_; }    // kMaxN
  int* info() const { return info_; }
  // Device and host workspace of at least the bytes asked (cuSOLVER's bufferSize); throws when more
  // than a warm-up should use.
  void* device_work(size_t bytes);
  void* host_work(size_t bytes);
  void sync();  // waits for the lane's stream; throws on any error
  // cuBLAS's gemm of precision p ('s', 'd', 'c', 'z') at n = 64, once per lane: cuBLAS's set-up of
  // the precision (49-114 ms there), which the larger calls of most routines pay through the
  // gemm calls inside them (sgetrf, syrk and trsm at n = 1024 did even after their own warm-up).
  // Run before each operation's own warm-up.
  void precision_gemm(char p);

  WarmLane();  // on the engine's GPU, on the warming thread
  // Library loads and handles this lane made for the warm-up in progress (its trace record's phases).
  std::vector<gofl_setup_phase> take_phases();

 private:
  void note(int phase, double seconds);
  cudaStream_t stream_ = nullptr;
  cudaEvent_t done_ = nullptr;  // recorded and waited for by sync()
  cublasHandle_t blas_ = nullptr;
  cusolverDnHandle_t solver_ = nullptr;
  cusolverDnParams_t params_ = nullptr;
  void* m_[3] = {};
  int64_t m_n_ = 0;          // m_ hold n x n complex<double> up to this n
  void* pristine_[4] = {};   // float, double, complex<float>, complex<double>: made at first use,
  int64_t pristine_n_[4] = {};  // pristine_n_ x pristine_n_
  void grow(int64_t n);      // m_ to at least n (kSmallN or kMaxN)
  void* vec_ = nullptr;
  int64_t* piv_ = nullptr;
  int* info_ = nullptr;
  void* work_ = nullptr;
  size_t work_bytes_ = 0;
  std::vector<char> host_work_;
  std::vector<gofl_setup_phase> phases_;
  bool gemm_done_[4] = {};
  template <class T> void gemm_of();
};

// The backend's interface (backend.cpp): queue op's warm-ups for calls of about size n (0: not known);
// the finished ones.
int warm_queue(uint32_t op, int64_t n);
int take_warmed(gofl_warmed* out, int max);
// A warm-up runs or is queued (read without a lock, for the calls' side: preload/spare_core.h).
bool warming();

// One of the program's GPU calls runs while this lives (backend.cpp's run functions): no warm-up
// begins meanwhile (one in progress goes on). Costs an atomic add when nothing was ever warmed.
class CallInFlight {
 public:
  CallInFlight();
  ~CallInFlight();
  CallInFlight(const CallInFlight&) = delete;
  CallInFlight& operator=(const CallInFlight&) = delete;
};

}  // namespace cuda
}  // namespace gofl
