// The byte copies of host<->device transfers (host_view.h): plain, or with streaming stores.
#include "cuda/host_view.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace gofl {
namespace cuda {

// Copies into the program's buffers at copy-out use streaming stores: they skip reading each destination
// line first, which a plain memcpy of a few megabytes does, and leave the caches alone. Copies into the
// pinned staging buffers (copy-in) use a plain memcpy: the DMA engine reads those lines next, and on the
// GPU test machine (H200, 16-core host) the plain copy-in was faster (bench/probes/copy_tune.py: the
// in-call time of float64 a @ b fell 10-25%). GPU_OFFLOAD_COPY_NT: "0" plain both ways, "1" streaming both
// ways, "out" (the default) streaming at copy-out only.
bool g_nt_out = true, g_nt_in = false;
constexpr size_t kNtMin = 64u << 10;

void copy_bytes(char* dst, const char* src, size_t n, bool nt) {
#if defined(__SSE2__)
  if (nt && n >= kNtMin) {
    const size_t head = (16 - (reinterpret_cast<uintptr_t>(dst) & 15)) & 15;
    std::memcpy(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    const size_t body = n & ~size_t(63);
    auto* d = reinterpret_cast<__m128i*>(dst);
    const auto* q = reinterpret_cast<const __m128i*>(src);
    for (size_t i = 0; i < body / 16; i += 4) {
      const __m128i a = _mm_loadu_si128(q + i), b = _mm_loadu_si128(q + i + 1);
      const __m128i c = _mm_loadu_si128(q + i + 2), e = _mm_loadu_si128(q + i + 3);
      _mm_stream_si128(d + i, a);
      _mm_stream_si128(d + i + 1, b);
      _mm_stream_si128(d + i + 2, c);
      _mm_stream_si128(d + i + 3, e);
    }
    _mm_sfence();  // streaming stores are weakly ordered: visible before the caller goes on
    std::memcpy(dst + body, src + body, n - body);
    return;
  }
#endif
  std::memcpy(dst, src, n);
}

}  // namespace cuda
}  // namespace gofl
