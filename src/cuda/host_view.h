// The host side of a host<->device transfer and the byte copies it is made of (no CUDA here, so
// that the CPU unit tests check it: tests/unit/test_core.cpp). Private to the engine files.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace gofl {
namespace cuda {

// Host copies (host_view.cpp): streaming stores at copy-out and/or copy-in
// (GPU_OFFLOAD_COPY_NT, read by Engine::start()).
extern bool g_nt_out, g_nt_in;
void copy_bytes(char* dst, const char* src, size_t n, bool nt);

// The host side of one transfer. The device side is always packed: `rows` elements per column,
// columns back to back. A triangle limits each column j to rows [0, j] ('U') or [j, rows) ('L').
// `rows_from` (copy-in only, no triangle): packed row i of every column is host row rows_from[i]
// (a row permutation applied on the way, Engine::upload_rows).
struct HostView {
  char* base;
  int64_t rows, cols, ld;
  size_t elem;
  char tri;  // 0, 'U' or 'L'
  const int64_t* rows_from = nullptr;

  // A whole rows x cols matrix; contiguous data (one column, or ld == rows) is one byte range.
  static HostView matrix(char* base, int64_t rows, int64_t cols, int64_t ld, size_t elem) {
    if (cols == 1 || ld == rows) return HostView{base, rows * cols, 1, rows * cols, elem, 0};
    return HostView{base, rows, cols, std::max(ld, rows), elem, 0};
  }

  size_t col_bytes() const { return size_t(rows) * elem; }
  size_t total() const { return col_bytes() * size_t(cols); }
  // The host bytes the view lies in: from its first element to the end of its last column.
  size_t span() const { return rows <= 0 || cols <= 0 ? 0 : (size_t(cols - 1) * size_t(ld) + size_t(rows)) * elem; }

  // Copies the packed byte range [b, e) between host and `stage` (stage holds packed bytes from
  // packed offset `origin`). to_host: stage -> host, else host -> stage.
  void copy(char* stage, size_t origin, size_t b, size_t e, bool to_host) const {
    if (rows_from && !to_host) return gather(stage, origin, b, e);
    const size_t cb = col_bytes();
    while (b < e) {
      const size_t j = b / cb;
      const size_t col_end = std::min(e, (j + 1) * cb);
      size_t lo = b - j * cb, hi = col_end - j * cb;  // byte range inside column j
      if (tri == 'U') hi = std::min(hi, (j + 1) * elem);
      else if (tri == 'L') lo = std::max(lo, j * elem);
      if (lo < hi) {
        char* h = base + (j * size_t(ld)) * elem + lo;
        char* s = stage + (j * cb + lo - origin);
        if (to_host) copy_bytes(h, s, hi - lo, g_nt_out);
        else copy_bytes(s, h, hi - lo, g_nt_in);
      }
      b = col_end;
    }
  }

 private:
  // copy() host -> stage through rows_from, element by element (a range may start or end inside an
  // element: those bytes are copied alone).
  void gather(char* stage, size_t origin, size_t b, size_t e) const {
    const size_t cb = col_bytes();
    while (b < e) {
      const size_t j = b / cb, col_end = std::min(e, (j + 1) * cb);
      const char* col = base + j * size_t(ld) * elem;
      char* s = stage + (b - origin);
      size_t i = (b - j * cb) / elem, r = (b - j * cb) % elem;
      if (r) {  // the end of a split element
        const size_t take = std::min(elem - r, col_end - b);
        std::memcpy(s, col + size_t(rows_from[i]) * elem + r, take);
        s += take;
        b += take;
        ++i;
      }
      const size_t whole = (col_end - b) / elem;
      switch (elem) {  // fixed sizes: each element one load and one store
        case 4: gather_rows<4>(s, col, i, whole); break;
        case 8: gather_rows<8>(s, col, i, whole); break;
        case 16: gather_rows<16>(s, col, i, whole); break;
        default:
          for (size_t k = 0; k < whole; ++k) std::memcpy(s + k * elem, col + size_t(rows_from[i + k]) * elem, elem);
      }
      s += whole * elem;
      b += whole * elem;
      i += whole;
      if (b < col_end) {  // the start of a split element
        std::memcpy(s, col + size_t(rows_from[i]) * elem, col_end - b);
        b = col_end;
      }
    }
  }
  template <size_t E> void gather_rows(char* s, const char* col, size_t i, size_t count) const {
    for (size_t k = 0; k < count; ++k) std::memcpy(s + k * E, col + size_t(rows_from[i + k]) * E, E);
  }
};

// LAPACK's row interchanges (laswp forward: row i swapped with row piv[i] - 1, i = 0, 1, ...):
// whether they move any row (a diagonally dominant or positive definite matrix's getrf moves none),
// and as one permutation: row i of the interchanged matrix is row rows_from[i] of the original.
// Pivots in range.
inline bool pivots_interchange(const std::vector<int64_t>& piv) {
  for (size_t i = 0; i < piv.size(); ++i)
    if (piv[i] != int64_t(i) + 1) return true;
  return false;
}
inline std::vector<int64_t> rows_from_pivots(const std::vector<int64_t>& piv) {
  std::vector<int64_t> from(piv.size());
  for (size_t i = 0; i < from.size(); ++i) from[i] = int64_t(i);
  for (size_t i = 0; i < from.size(); ++i) std::swap(from[i], from[size_t(piv[i] - 1)]);
  return from;
}

}  // namespace cuda
}  // namespace gofl
