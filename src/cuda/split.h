// One call over several GPUs through the toolkit's own multi-GPU engines, never a
// tiling of ours: cuBLASXt for gemm (host memory in, host memory out: it tiles, copies and overlaps
// by itself), cusolverMg for getrf/getrs, potrf/potrs and syevd/heevd (the matrix spread over the
// GPUs in its 1-D column block-cyclic layout). The devices are Engine::split_devices(): any number,
// one included (so one GPU exercises every split routine). Neither engine is made at the backend's
// start: cuBLASXt's handle at the first split gemm, cusolverMg (dlopened: it is a library of its
// own) at the first split LAPACK call. LAPACK's outputs are written only after the engine
// succeeded with info = 0; anything else (a failure, a singular matrix, a variant the engine does
// not take) leaves the program's memory as it was, and the one-GPU path runs the call.
#pragma once

#define DISABLE_CUSOLVERMG_DEPRECATED  // deprecated in CUDA 13 in favour of cuSOLVERMp (multi-process)
#include <cusolverMg.h>

#include <vector>

#include "cuda/engine.h"  // cuBLAS(Xt) through cuda/cuda_libraries.h

namespace gofl {
namespace cuda {

// A split routine (the same signatures as the one-GPU table, made the same way: routine<D, ...>(),
// whose device bytes a split call does not use): split_blas3.cpp and split_lapack.cpp define one per
// routine of the table's split column, <name>_split<T>() (generated/gpu_routines.h).
struct SplitRoutine {
  PlanFn plan = nullptr;
  RunFn run = nullptr;
  SplitRoutine() = default;
  explicit SplitRoutine(const Routine& r) : plan(r.plan), run(r.run) {}
};
SplitRoutine* split_routines();  // indexed by op id

// cuBLASXt's handle over `devices`, made at the first call (throws Failure).
cublasXtHandle_t xt_handle(const std::vector<int>& devices);

// cusolverMg, loaded at the first call (throws Failure when the library or a function is missing):
// the functions used, a handle and a 1 x N device grid over `devices`.
struct MgApi {
#define GOFL_MG_FN(name) decltype(&::name) name = nullptr;
  GOFL_MG_FN(cusolverMgCreate)
  GOFL_MG_FN(cusolverMgDeviceSelect)
  GOFL_MG_FN(cusolverMgCreateDeviceGrid)
  GOFL_MG_FN(cusolverMgCreateMatrixDesc)
  GOFL_MG_FN(cusolverMgDestroyMatrixDesc)
  GOFL_MG_FN(cusolverMgGetrf_bufferSize)
  GOFL_MG_FN(cusolverMgGetrf)
  GOFL_MG_FN(cusolverMgGetrs_bufferSize)
  GOFL_MG_FN(cusolverMgGetrs)
  GOFL_MG_FN(cusolverMgPotrf_bufferSize)
  GOFL_MG_FN(cusolverMgPotrf)
  GOFL_MG_FN(cusolverMgPotrs_bufferSize)
  GOFL_MG_FN(cusolverMgPotrs)
  GOFL_MG_FN(cusolverMgSyevd_bufferSize)
  GOFL_MG_FN(cusolverMgSyevd)
#undef GOFL_MG_FN
  cusolverMgHandle_t handle = nullptr;
  cudaLibMgGrid_t grid = nullptr;
  std::vector<int> devices;
};
const MgApi& mg_api(const std::vector<int>& devices);

// After a failed split call: wait for every split device, clear their error state, and make the
// engine's device current again.
void split_recover(const Engine& e);

// A host matrix's bytes, saved before an engine writes the program's buffer in place and put back
// when the call fails (cuBLASXt writes C tile by tile as it goes).
class SavedMatrix {
 public:
  SavedMatrix(void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem);
  void restore() const;

 private:
  char* host_;
  int64_t rows_, cols_, ld_;
  size_t elem_;
  std::vector<char> bytes_;
};

}  // namespace cuda
}  // namespace gofl
