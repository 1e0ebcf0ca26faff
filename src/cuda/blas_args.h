// The argument helpers every BLAS routine family on the GPU shares (blas2.cpp, blas3_args.h): the
// checks the CPU library would make, and what its arguments mean.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cuda/engine.h"

namespace gofl {
namespace cuda {
namespace blas_args {

using desc::one_of;  // generated/descs.h: the descriptors' row-major mapping uses it too
inline int64_t max1(int64_t v) { return std::max<int64_t>(1, v); }

template <class T> bool is_zero(const T& v) { return v == T(0); }

}  // namespace blas_args
}  // namespace cuda
}  // namespace gofl
