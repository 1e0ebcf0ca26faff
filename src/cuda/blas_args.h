// The argument helpers every BLAS routine family on the GPU shares (blas2.cpp, blas3_args.h): the
// checks the CPU library would make, and what its arguments mean.
#pragma once

#include <algorithm>
#include <cstdint>

#include "cuda/engine.h"

namespace gofl {
namespace cuda {
namespace blas_args {

inline bool one_of(char c, const char* set) {
  for (; *set; ++set)
    if (c == *set) return true;
  return false;
}
inline int64_t max1(int64_t v) { return std::max<int64_t>(1, v); }

// A CBLAS layout other than row or column major: the CPU library reports it.
inline bool bad_layout(const CallArgs& a) {
  if (!a.cblas()) return false;
  const int layout = *static_cast<const int*>(a.call().argv[0]);
  return layout != 101 && layout != 102;
}

template <class T> bool is_zero(const T& v) { return v == T(0); }

// Row-major calls are the column-major call on the other triangle, or from the other side. A
// character that is neither stays as it is, so that the argument check after the mapping still
// sends the call to the CPU library's own error handling.
inline char flip_ul(char u) { return u == 'U' ? 'L' : (u == 'L' ? 'U' : u); }
inline char flip_side(char s) { return s == 'L' ? 'R' : (s == 'R' ? 'L' : s); }

}  // namespace blas_args
}  // namespace cuda
}  // namespace gofl
