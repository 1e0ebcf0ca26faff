// Device matrices in place: copies between leading dimensions, zeroing, and the imaginary parts of
// a Hermitian matrix's diagonal. Pitches are in bytes; all work is queued on the stream given.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "cuda/engine.h"

namespace gofl {
namespace cuda {

// Device-to-device copy of a rows x cols matrix between leading dimensions (in bytes: dpitch, spitch).
// cudaMemcpy2D takes pitches below 2^31 bytes only: beyond (a matrix of 1e9 rows), column by column.
inline void copy_matrix_d2d(void* dst, size_t dpitch, const void* src, size_t spitch, size_t row_bytes, size_t cols,
                            cudaStream_t s) {
  if (std::max(dpitch, spitch) < (size_t(1) << 31)) {
    check(cudaMemcpy2DAsync(dst, dpitch, src, spitch, row_bytes, cols, cudaMemcpyDeviceToDevice, s), "cudaMemcpy2DAsync");
    return;
  }
  for (size_t c = 0; c < cols; ++c)
    check(cudaMemcpyAsync(static_cast<char*>(dst) + c * dpitch, static_cast<const char*>(src) + c * spitch, row_bytes,
                          cudaMemcpyDeviceToDevice, s),
          "cudaMemcpyAsync (column)");
}
// Zeroes row_bytes at the start of each of cols columns `pitch` bytes apart (cudaMemset2D's limit, as above).
inline void zero_matrix(void* dst, size_t pitch, size_t row_bytes, size_t cols, cudaStream_t s) {
  if (pitch < (size_t(1) << 31)) {
    check(cudaMemset2DAsync(dst, pitch, 0, row_bytes, cols, s), "cudaMemset2DAsync");
    return;
  }
  for (size_t c = 0; c < cols; ++c)
    check(cudaMemsetAsync(static_cast<char*>(dst) + c * pitch, 0, row_bytes, s), "cudaMemsetAsync (column)");
}

// Writes zeros into the imaginary parts of the diagonal of the device n x n matrix `dev` (leading
// dimension n); nothing for real T. The imaginary parts are zeros afterwards whatever they held,
// NaN and Inf included, which is what every caller needs to match reference BLAS and LAPACK:
// - zhemm's and zhemv's A: reference BLAS reads only DBLE(A(j,j)), so what the imaginary parts
//   hold never reaches the result; cuBLAS is not documented to ignore them, so its copy of A (a
//   private one: a kept copy must not change) has zeros there.
// - zherk's and zher2k's C: reference BLAS sets the imaginary parts of C's diagonal to zero on
//   exit; done on the result, after cuBLAS, before it is copied out.
// - zheev, zheevd, zheevr (A) and zhegv, zhegvd, zhegvx (A and B): zhetrd, zhegst and zpotrf read
//   only the real part of a diagonal entry, and zpotrf leaves B's factor a real diagonal (+0.0
//   imaginary parts); the input was screened first, so a non-finite imaginary part has already
//   sent the call to the CPU.
template <class T> void zero_diag_imag(Engine& e, T* dev, int64_t n) {
  if constexpr (is_complex<T>::value) {
    using R = real_t<T>;
    // A(j, j)'s imaginary part: sizeof(R) bytes at byte j (n + 1) sizeof(T) + sizeof(R).
    zero_matrix(reinterpret_cast<char*>(dev) + sizeof(R), size_t(n + 1) * sizeof(T), sizeof(R), size_t(n), e.stream());
  } else {
    (void)e; (void)dev; (void)n;
  }
}

}  // namespace cuda
}  // namespace gofl
