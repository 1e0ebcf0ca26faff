#include "fftw/plan_info.h"

#include <math.h>

#include <algorithm>

#include "common/table.h"
#include "trace/record.h"

namespace gofl::fftw {
namespace {

// fftw3.h flag bits that say whether the input array survives the transform.
constexpr unsigned kDestroyInput = 1u << 0;
constexpr unsigned kPreserveInput = 1u << 4;

uint16_t op_of(Kind kind, bool single) {
  switch (kind) {
    case Kind::C2C: return single ? OP_sfft : OP_dfft;
    case Kind::R2C: return single ? OP_sfft_r2c : OP_dfft_r2c;
    case Kind::C2R: return single ? OP_sfft_c2r : OP_dfft_c2r;
  }
  return OP_dfft;
}

// The elements one array spans, given per dimension how many it holds and its stride there.
struct Extent {
  int64_t lo = 0, hi = 0;
  bool empty = false;
  void add(int64_t count, int64_t stride) {
    if (count <= 0) { empty = true; return; }
    const int64_t reach = (count - 1) * stride;
    lo += std::min<int64_t>(0, reach);
    hi += std::max<int64_t>(0, reach);
  }
  Span span() const { return empty ? Span{} : Span{lo, hi - lo + 1}; }
};

// The plan as the GPU reads it: the guru dimensions as given (the backend decides what cuFFT can express).
gofl_fft describe_for_gpu(Kind kind, bool single, const std::vector<Dim>& dims, const std::vector<Dim>& loop, int sign,
                          const PlanInfo& p) {
  gofl_fft f{};
  f.in = p.in;
  f.out = const_cast<void*>(p.out);
  f.kind = kind == Kind::C2C ? GOFL_FFT_C2C : kind == Kind::R2C ? GOFL_FFT_R2C : GOFL_FFT_C2R;
  f.single = single ? 1 : 0;
  f.sign = kind == Kind::C2C ? (sign < 0 ? -1 : 1) : kind == Kind::R2C ? -1 : 1;
  f.representable = dims.size() <= GOFL_FFT_MAX_RANK && loop.size() <= GOFL_FFT_MAX_LOOP;
  if (f.representable) {
    f.rank = int32_t(dims.size());
    f.loop_rank = int32_t(loop.size());
    for (size_t i = 0; i < dims.size(); ++i) f.dims[i] = gofl_fft_dim{dims[i].n, dims[i].is, dims[i].os};
    for (size_t i = 0; i < loop.size(); ++i) f.loop[i] = gofl_fft_dim{loop[i].n, loop[i].is, loop[i].os};
  }
  f.in_lo = p.in_span.lo;
  f.in_elems = p.in_span.elems;
  f.out_lo = p.out_span.lo;
  f.out_elems = p.out_span.elems;
  f.in_elem = p.in_elem;
  f.out_elem = p.out_elem;
  return f;
}

}  // namespace

PlanInfo describe_guru(Kind kind, bool single, const std::vector<Dim>& dims, const std::vector<Dim>& howmany_dims,
                       const void* in, const void* out, int sign, unsigned flags) {
  PlanInfo p;
  p.op = op_of(kind, single);
  p.rank = int32_t(dims.size());
  p.in = in;
  p.out = out;
  const uint32_t real_size = single ? 4 : 8;
  const bool in_complex = kind != Kind::R2C, out_complex = kind != Kind::C2R;
  p.in_elem = in_complex ? 2 * real_size : real_size;
  p.out_elem = out_complex ? 2 * real_size : real_size;

  int64_t n = 1;
  Extent ie, oe;
  for (size_t i = 0; i < dims.size(); ++i) {
    const Dim& d = dims[i];
    n *= d.n;
    // The complex side of a real transform stores only the non-redundant half of the last dimension.
    const bool halved = kind != Kind::C2C && i + 1 == dims.size();
    const int64_t half = d.n / 2 + 1;
    ie.add(halved && in_complex ? half : d.n, d.is);
    oe.add(halved && out_complex ? half : d.n, d.os);
  }
  int64_t howmany = 1;
  for (const Dim& d : howmany_dims) {
    howmany *= d.n;
    ie.add(d.n, d.is);
    oe.add(d.n, d.os);
  }
  p.n = n;
  p.howmany = howmany;
  p.in_span = ie.span();
  p.out_span = oe.span();
  p.flops = n > 1 ? 5.0 * double(n) * log2(double(n)) * double(howmany) : 0.0;
  if (kind != Kind::C2C) p.flops *= 0.5;
  // FFTW keeps the input by default except for c2r, which overwrites it unless told not to.
  const bool may_overwrite = kind == Kind::C2R ? !(flags & kPreserveInput) : (flags & kDestroyInput) != 0;
  p.in_role = may_overwrite ? GOFL_INOUT : GOFL_IN;
  p.fft = describe_for_gpu(kind, single, dims, howmany_dims, sign, p);
  return p;
}

PlanInfo describe_many(Kind kind, bool single, int rank, const int* n, int howmany, const void* in, const int* inembed,
                       int istride, int idist, const void* out, const int* onembed, int ostride, int odist,
                       int sign, unsigned flags) {
  const bool inplace = in == out;
  // The physical layout of one array, as FFTW's rdft2_pad defaults it: a NULL embed means n, with
  // n/2+1 along the last dimension on the complex side of a real transform, and the real side of an
  // in-place real transform padded to 2*(n/2+1).
  auto layout = [&](const int* embed, bool complex_side) {
    std::vector<int64_t> phys(n, n + rank);
    if (embed) {
      phys.assign(embed, embed + rank);
    } else if (kind != Kind::C2C && rank > 0 && (inplace || complex_side)) {
      phys.back() = (int64_t(n[rank - 1]) / 2 + 1) * (complex_side ? 1 : 2);
    }
    return phys;
  };
  const std::vector<int64_t> iphys = layout(inembed, kind != Kind::R2C);
  const std::vector<int64_t> ophys = layout(onembed, kind != Kind::C2R);

  // Row-major strides from the physical layouts, as FFTW's mktensor_rowmajor builds them.
  std::vector<Dim> dims(size_t(rank > 0 ? rank : 0));
  int64_t is = istride, os = ostride;
  for (int i = rank - 1; i >= 0; --i) {
    dims[size_t(i)] = Dim{n[i], is, os};
    is *= iphys[size_t(i)];
    os *= ophys[size_t(i)];
  }
  return describe_guru(kind, single, dims, {Dim{howmany, idist, odist}}, in, out, sign, flags);
}

}  // namespace gofl::fftw
