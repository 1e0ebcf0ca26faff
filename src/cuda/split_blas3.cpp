// gemm over several GPUs on cuBLASXt (split.h), s/d/c/z, Fortran and CBLAS: the same descriptor and
// checks as the one-GPU gemm (blas3_args.h). cuBLASXt reads and writes the program's buffers itself,
// C tile by tile as it goes, so C is saved first when the CPU library would need it again (beta != 0)
// and put back if the call fails; with beta = 0 C is write-only and the CPU can simply run the call.
#include <complex>
#include <optional>

#include "cuda/blas3_args.h"
#include "cuda/cublas_typed.h"
#include "cuda/split.h"
#include "generated/gpu_routines.h"

namespace gofl {
namespace cuda {
namespace {

using namespace blas3;
using cf = std::complex<float>;
using cd = std::complex<double>;

template <class T> void split_gemm_run(Engine& e, const desc::gemm<T>& g) {
  const char ta = real_trans<T>(g.transa), tb = real_trans<T>(g.transb);
  if (e.fault("split")) fail(GOFL_GPU_INJECTED, "split (injected)");
  cublasXtHandle_t h = xt_handle(e.split_devices());
  std::optional<SavedMatrix> saved;
  if (!is_zero(g.beta)) saved.emplace(g.c, g.m, g.n, g.ldc, sizeof(T));
  else e.set_rerunnable();  // C is not read: the CPU overwrites whatever part was written
  const cublasStatus_t s = xt_gemm<T>(h, op_of(ta), op_of(tb), size_t(g.m), size_t(g.n), size_t(g.k), cu(&g.alpha),
                                cu(g.a), size_t(g.lda), cu(g.b), size_t(g.ldb), cu(&g.beta), cu(g.c),
                                size_t(g.ldc));
  const bool injected = s == CUBLAS_STATUS_SUCCESS && e.fault("compute");  // test switch: fail after C was written
  if (s != CUBLAS_STATUS_SUCCESS || injected) {
    if (saved) saved->restore();
    if (injected) fail(GOFL_GPU_INJECTED, "compute (injected)");
    check(s, "cublasXtGemm");
  }
}

}  // namespace

// ---- the table's split routines (generated/gpu_routines.h) -----------------------------------------

template <class T> SplitRoutine gemm_split() {
  return SplitRoutine(routine<desc::gemm<T>, gemm_supports<T>, nullptr, split_gemm_run<T>>());
}

GOFL_INSTANTIATE_SPLIT_BLAS3

}  // namespace cuda
}  // namespace gofl
