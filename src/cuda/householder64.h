// Q of a QR factorization applied on the GPU with 64-bit sizes. cuSOLVER's ?orgqr/?ormqr (and
// ?ungqr/?unmqr) take int sizes and have no 64-bit form; cusolverDnXgeqrf does. Beyond int, Q is
// applied the way LAPACK's blocked code does it: blocks of nb reflectors in compact WY form,
// H(j) ... H(j+nb-1) = I - Y T Y^H (?larft, T from the Gram matrix Y^H Y), each block three cuBLAS
// _64 gemm calls (?larfb). Within int the tuned cuSOLVER routines keep the work.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda/engine.h"
#include "cuda/lapack_common.h"

namespace gofl {
namespace cuda {
namespace lapack {

// Whether a rows x cols matrix (leading dimension rows) is within reach of the 32-bit cuSOLVER
// routines: every size and every element offset an int.
inline bool fits_legacy(int64_t rows, int64_t cols) {
  return fits_int(rows) && fits_int(cols) && fits_int(rows * cols);
}
// The 64-bit route for a rows x cols operand: beyond fits_legacy, or at any size under the test
// switch "qr64" (so the GPU tests check this route against the CPU library at ordinary sizes).
inline bool use_qr64(const Engine& e, int64_t rows, int64_t cols) { return !fits_legacy(rows, cols) || e.fault("qr64"); }

// C := Q C (adjoint false) or Q^H C, from the left, for Q = H(1) H(2) ... H(k) as ?geqrf leaves it:
// the reflectors' vectors below the diagonal of the device rows x k matrix V (leading dimension
// ldv; its diagonal and upper part are not read) and tau on the host. C is a device rows x cols
// matrix, leading dimension ldc. identity_start: C holds the identity's first columns (?orgqr), so
// the block starting at reflector j leaves C's columns before j alone (they are unit vectors that
// no later reflector reaches). Queued on the engine's stream; reads back a small Gram matrix per
// block (a synchronisation each).
template <class T>
void apply_q64(Engine& e, const T* dV, int64_t ldv, const std::vector<T>& tau, int64_t rows, int64_t k, T* dC,
               int64_t ldc, int64_t cols, bool adjoint, bool identity_start);

}  // namespace lapack
}  // namespace cuda
}  // namespace gofl
