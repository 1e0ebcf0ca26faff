// FFTW executes on cuFFT: every kind (c2c, r2c, c2r) in both precisions, odd and prime sizes, ranks 1
// to 3, batched, strided, in place and out of place, through the intercepted fftw_/fftwf_ functions
// (run on the GPU under GPU_OFFLOAD_DEVICE=gpu) against the same plan made and executed straight in
// libfftw3 (which does not see the preload library). Outputs within the verify tolerance of the
// largest magnitude; array elements that are not outputs bit-identical; the input of an out-of-place
// transform untouched. Also: new-array executes, c2r's destroyed input, the legacy Fortran API, plans
// destroyed and made again, concurrent executes, and faults falling back to FFTW.
#include <fftw3.h>

#include <mutex>
#include <thread>

#include "gpu_harness.h"

namespace {

using gpu_test::last_call;

// The real FFTW functions, from libfftw3's own scope.
void* fftw_symbol(bool single, const std::string& name) {
  // Loaded by the test's own link; global, so that the preload library's wrappers find them too.
  static void* lib_d = dlopen("libfftw3.so.3", RTLD_NOW | RTLD_GLOBAL);
  static void* lib_s = dlopen("libfftw3f.so.3", RTLD_NOW | RTLD_GLOBAL);
  void* lib = single ? lib_s : lib_d;
  void* p = lib ? dlsym(lib, name.c_str()) : nullptr;
  if (!p) ADD_FAILURE() << "no FFTW symbol " << name;
  return p;
}

enum class Kind { C2C, R2C, C2R };
const char* kind_name(Kind k) { return k == Kind::C2C ? "c2c" : k == Kind::R2C ? "r2c" : "c2r"; }

// One plan_many transform: lengths, batch, layouts (embed 0: FFTW's default), strides and distances.
struct Case {
  Kind kind;
  std::vector<int> n;
  int howmany = 1;
  int istride = 1, ostride = 1;
  int idist = 0, odist = 0;   // 0: the packed distance
  bool inplace = false;
  int sign = FFTW_FORWARD;
  std::string name() const {
    std::string s = kind_name(kind);
    for (int v : n) s += " " + std::to_string(v);
    s += " x" + std::to_string(howmany) + " stride " + std::to_string(istride) + "/" + std::to_string(ostride);
    return s + (inplace ? " in place" : " out of place") + (sign < 0 ? " forward" : " backward");
  }
};

// The layout of one side of a case, as FFTW's plan_many reads it with NULL embeds: n, with n/2+1 on
// the complex side of a real transform and 2(n/2+1) on the real side of an in-place one.
struct Side {
  std::vector<int64_t> len, phys;  // stored lengths and physical (embed) lengths per dimension
  int64_t stride, dist, elems;     // elems: the array's size in its own elements
  bool complex;
};

Side side_of(const Case& c, bool input) {
  Side s;
  const int r = int(c.n.size());
  s.complex = input ? c.kind != Kind::R2C : c.kind != Kind::C2R;
  s.len.assign(c.n.begin(), c.n.end());
  s.phys = s.len;
  if (c.kind != Kind::C2C) {
    const int64_t half = c.n[r - 1] / 2 + 1;
    if (s.complex) s.len[r - 1] = half, s.phys[r - 1] = half;
    else if (c.inplace) s.phys[r - 1] = 2 * half;
  }
  int64_t one = 1;
  for (int64_t p : s.phys) one *= p;
  s.stride = input ? c.istride : c.ostride;
  const int dist = input ? c.idist : c.odist;
  s.dist = dist ? dist : one * s.stride;
  s.elems = (c.howmany - 1) * s.dist + one * s.stride;
  return s;
}

// Offsets (in elements) of every stored element of one side.
std::vector<int64_t> offsets(const Case& c, const Side& s) {
  std::vector<int64_t> out;
  const int r = int(c.n.size());
  std::vector<int64_t> idx(size_t(r), 0);
  for (int b = 0; b < c.howmany; ++b) {
    std::fill(idx.begin(), idx.end(), 0);
    for (;;) {
      int64_t lin = 0;
      for (int k = 0; k < r; ++k) lin = lin * s.phys[size_t(k)] + idx[size_t(k)];
      out.push_back(b * s.dist + lin * s.stride);
      int k = r - 1;
      while (k >= 0 && ++idx[size_t(k)] == s.len[size_t(k)]) idx[size_t(k--)] = 0;
      if (k < 0) break;
    }
  }
  return out;
}

template <class R>
struct Fftw {
  static constexpr bool single = std::is_same_v<R, float>;
  using plan = void*;
  static std::string name(const char* f) { return std::string(single ? "fftwf_" : "fftw_") + f; }
  template <class F> static F real(const char* f) { return reinterpret_cast<F>(fftw_symbol(single, name(f))); }
  template <class F> static F ours(const char* f) { return gpu_test::intercepted<F>(name(f).c_str()); }
  using many_dft = plan (*)(int, const int*, int, void*, const int*, int, int, void*, const int*, int, int, int, unsigned);
  using many_real = plan (*)(int, const int*, int, void*, const int*, int, int, void*, const int*, int, int, unsigned);
  using exec = void (*)(plan);
  using destroy = void (*)(plan);

  // A plan of case c on (in, out), made by FFTW itself (ours = false) or through the preload library.
  static plan make(const Case& c, void* in, void* out, bool ours_, unsigned flags = FFTW_ESTIMATE) {
    const int r = int(c.n.size());
    const Side i = side_of(c, true), o = side_of(c, false);
    std::vector<int> iembed(i.phys.begin(), i.phys.end()), oembed(o.phys.begin(), o.phys.end());
    if (c.kind == Kind::C2C) {
      auto f = ours_ ? ours<many_dft>("plan_many_dft") : real<many_dft>("plan_many_dft");
      return f(r, c.n.data(), c.howmany, in, iembed.data(), int(i.stride), int(i.dist), out, oembed.data(),
               int(o.stride), int(o.dist), c.sign, flags);
    }
    const char* fn = c.kind == Kind::R2C ? "plan_many_dft_r2c" : "plan_many_dft_c2r";
    auto f = ours_ ? ours<many_real>(fn) : real<many_real>(fn);
    return f(r, c.n.data(), c.howmany, in, iembed.data(), int(i.stride), int(i.dist), out, oembed.data(),
             int(o.stride), int(o.dist), flags);
  }
};

template <class R>
std::vector<R> random_reals(int64_t count, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<R> d(-1, 1);
  std::vector<R> v(static_cast<size_t>(count));
  for (auto& x : v) x = d(g);
  return v;
}

// c2r reads a Hermitian-symmetric input; FFTW and cuFFT may treat the imaginary parts that symmetry
// fixes (the 0 and n/2 frequencies) differently, so the input is made the r2c of real data.
template <class R>
void make_hermitian(const Case& c, const Side& in, std::vector<R>& buf, uint64_t seed) {
  Case r2c = c;
  r2c.kind = Kind::R2C;
  r2c.inplace = false;
  r2c.istride = r2c.ostride = 1;
  r2c.idist = r2c.odist = 0;
  r2c.sign = FFTW_FORWARD;
  const Side ri = side_of(r2c, true), ro = side_of(r2c, false);
  auto real_in = random_reals<R>(ri.elems, seed);
  std::vector<R> spec(size_t(2 * ro.elems));
  void* p = Fftw<R>::make(r2c, real_in.data(), spec.data(), false);
  Fftw<R>::template real<typename Fftw<R>::exec>("execute")(p);
  Fftw<R>::template real<typename Fftw<R>::destroy>("destroy_plan")(p);
  const auto from = offsets(r2c, ro), to = offsets(c, in);
  for (size_t k = 0; k < to.size(); ++k) {
    buf[size_t(2 * to[k])] = spec[size_t(2 * from[k])];
    buf[size_t(2 * to[k] + 1)] = spec[size_t(2 * from[k] + 1)];
  }
}

// Runs case c through the preload library and straight in FFTW, and compares.
template <class R>
void check_case(const Case& c, uint64_t seed, bool expect_gpu = true) {
  SCOPED_TRACE(c.name() + (std::is_same_v<R, float> ? " single" : " double"));
  const Side si = side_of(c, true), so = side_of(c, false);
  const int ki = si.complex ? 2 : 1, ko = so.complex ? 2 : 1;
  // Arrays in reals; in place: one array large enough for both views.
  const int64_t in_reals = si.elems * ki, out_reals = so.elems * ko;
  const int64_t one_reals = std::max(in_reals, out_reals);
  std::vector<R> in0 = random_reals<R>(c.inplace ? one_reals : in_reals, seed);
  if (c.kind == Kind::C2R) make_hermitian(c, si, in0, seed + 7);
  const std::vector<R> out0 = random_reals<R>(c.inplace ? 0 : out_reals, seed + 1);  // gaps keep these

  std::vector<R> ref_in = in0, ref_out = out0, gpu_in = in0, gpu_out = out0;
  bool on_gpu = false;
  auto run = [&](std::vector<R>& in, std::vector<R>& out, bool ours) {
    void* po = c.inplace ? in.data() : out.data();
    void* p = Fftw<R>::make(c, in.data(), po, ours);
    if (!p) return false;
    if (ours) Fftw<R>::template ours<typename Fftw<R>::exec>("execute")(p);
    else Fftw<R>::template real<typename Fftw<R>::exec>("execute")(p);
    const auto lc = last_call();
    if (ours) on_gpu = lc.device == 1;
    if (ours && expect_gpu) {
      EXPECT_EQ(lc.device, 1) << "reason " << lc.reason << " gpu status " << lc.gpu_status;
    }
    if (ours) Fftw<R>::template ours<typename Fftw<R>::destroy>("destroy_plan")(p);
    else Fftw<R>::template real<typename Fftw<R>::destroy>("destroy_plan")(p);
    return true;
  };
  ASSERT_TRUE(run(ref_in, ref_out, false)) << "FFTW made no plan";
  ASSERT_TRUE(run(gpu_in, gpu_out, true));

  const std::vector<R>& ref = c.inplace ? ref_in : ref_out;
  const std::vector<R>& got = c.inplace ? gpu_in : gpu_out;
  const auto outs = offsets(c, so);
  double num = 0, den = 0;
  std::vector<char> is_output(size_t(c.inplace ? one_reals : out_reals), 0);
  for (int64_t off : outs)
    for (int p = 0; p < ko; ++p) {
      const size_t i = size_t(off * ko + p);
      is_output[i] = 1;
      num = std::max(num, double(std::abs(got[i] - ref[i])));
      den = std::max(den, double(std::abs(ref[i])));
    }
  EXPECT_LE(num / den, gpu_test::tolerance<R>()) << "max |GPU - FFTW| / max |FFTW|";
  if (!c.inplace) {
    size_t gaps_changed = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (!is_output[i] && std::memcmp(&got[i], &out0[i], sizeof(R)) != 0) ++gaps_changed;
    EXPECT_EQ(gaps_changed, 0u) << "elements between strided outputs were written";
    // The GPU never writes the program's input (FFTW may for c2r; not overwriting it is allowed).
    if (on_gpu || c.kind != Kind::C2R) {
      EXPECT_EQ(std::memcmp(gpu_in.data(), in0.data(), in0.size() * sizeof(R)), 0) << "the input was changed";
    }
  }
}

std::vector<Case> cases() {
  std::vector<Case> v;
  for (Kind k : {Kind::C2C, Kind::R2C, Kind::C2R}) {
    for (bool inplace : {false, true}) {
      v.push_back({k, {1009}, 1, 1, 1, 0, 0, inplace});                    // prime
      v.push_back({k, {4096}, 1, 1, 1, 0, 0, inplace, FFTW_BACKWARD});
      v.push_back({k, {30, 17}, 1, 1, 1, 0, 0, inplace});                  // odd last dimension
      v.push_back({k, {256, 256}, 1, 1, 1, 0, 0, inplace});
      v.push_back({k, {12, 9, 7}, 1, 1, 1, 0, 0, inplace, FFTW_BACKWARD});  // odd 3D
      v.push_back({k, {64, 64, 64}, 1, 1, 1, 0, 0, inplace});
      v.push_back({k, {1000}, 16, 1, 1, 0, 0, inplace});                   // batched
      v.push_back({k, {97, 10}, 5, 1, 1, 0, 0, inplace});                  // batched 2D, prime
    }
    // Strided and interleaved (out of place): every second or third element, batches interleaved.
    v.push_back({k, {500}, 3, 3, 3, 1, 1, false});
    v.push_back({k, {24, 11}, 2, 2, 3, 0, 0, false});
    v.push_back({k, {8, 6, 5}, 4, 1, 1, 0, 0, false, FFTW_BACKWARD});
  }
  return v;
}

TEST(Fft, EveryKindSizeAndLayoutDouble) {
  uint64_t seed = 100;
  for (const Case& c : cases()) check_case<double>(c, seed++);
}

TEST(Fft, EveryKindSizeAndLayoutSingle) {
  uint64_t seed = 200;
  for (const Case& c : cases()) check_case<float>(c, seed++);
}

using cd = std::complex<double>;
fftw_complex* fc(std::vector<cd>& v) { return reinterpret_cast<fftw_complex*>(v.data()); }

// max |got - ref| / max |ref| over the elements at `step` intervals.
double rel(const std::vector<cd>& got, const std::vector<cd>& ref, size_t step = 1) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); i += step) {
    num = std::max({num, std::abs(got[i].real() - ref[i].real()), std::abs(got[i].imag() - ref[i].imag())});
    den = std::max({den, std::abs(ref[i].real()), std::abs(ref[i].imag())});
  }
  return den > 0 ? num / den : num;
}

std::vector<cd> random_complex(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<cd> v(n);
  for (auto& x : v) x = cd(d(g), d(g));
  return v;
}

template <class F> F real_fn(const char* name) { return reinterpret_cast<F>(fftw_symbol(false, name)); }
void real_execute(fftw_plan p) {
  real_fn<void (*)(fftw_plan)>("fftw_execute")(p);
  real_fn<void (*)(fftw_plan)>("fftw_destroy_plan")(p);
}

// Strided in place: the elements between the transform's are the program's (another channel).
TEST(Fft, StridedInPlaceKeepsTheOtherChannel) {
  const int n = 3000;
  std::vector<cd> a = random_complex(2 * n, 5), ref = a;
  using many = fftw_plan (*)(int, const int*, int, fftw_complex*, const int*, int, int, fftw_complex*, const int*, int,
                             int, int, unsigned);
  real_execute(real_fn<many>("fftw_plan_many_dft")(1, &n, 1, fc(ref), nullptr, 2, 0, fc(ref), nullptr, 2, 0,
                                                    FFTW_FORWARD, FFTW_ESTIMATE));
  fftw_plan p = fftw_plan_many_dft(1, &n, 1, fc(a), nullptr, 2, 0, fc(a), nullptr, 2, 0, FFTW_FORWARD, FFTW_ESTIMATE);
  fftw_execute(p);
  EXPECT_RAN_ON_GPU();
  fftw_destroy_plan(p);
  EXPECT_LE(rel(a, ref, 2), 1e-8);
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(std::memcmp(&a[2 * i + 1], &ref[2 * i + 1], sizeof(cd)), 0) << "other channel at " << i;
}

// The basic and guru creators, and the new-array executes, on one size each.
TEST(Fft, BasicAndGuruCreatorsAndNewArrayExecutes) {
  const int n0 = 48, n1 = 35, total = n0 * n1;
  std::vector<cd> a = random_complex(total, 9), b = random_complex(total, 10), out(total), out2(total);
  auto reference = [&](std::vector<cd> in, int sign) {
    std::vector<cd> ref(total);
    real_execute(real_fn<fftw_plan (*)(int, int, fftw_complex*, fftw_complex*, int, unsigned)>("fftw_plan_dft_2d")(
        n0, n1, fc(in), fc(ref), sign, FFTW_ESTIMATE));
    return ref;
  };
  fftw_plan p = fftw_plan_dft_2d(n0, n1, fc(a), fc(out), FFTW_BACKWARD, FFTW_ESTIMATE);
  fftw_execute(p);
  EXPECT_RAN_ON_GPU();
  EXPECT_LE(rel(out, reference(a, FFTW_BACKWARD)), 1e-8);
  const std::vector<cd> out_before = out;
  fftw_execute_dft(p, fc(b), fc(out2));  // new arrays: the plan's arrays are not touched
  EXPECT_RAN_ON_GPU();
  EXPECT_LE(rel(out2, reference(b, FFTW_BACKWARD)), 1e-8);
  EXPECT_EQ(std::memcmp(out.data(), out_before.data(), out.size() * sizeof(cd)), 0);
  fftw_destroy_plan(p);

  fftw_iodim dims[2] = {{n0, n1, n1}, {n1, 1, 1}};
  fftw_plan q = fftw_plan_guru_dft(2, dims, 0, nullptr, fc(a), fc(out), FFTW_FORWARD, FFTW_ESTIMATE);
  fftw_execute(q);
  EXPECT_RAN_ON_GPU();
  EXPECT_LE(rel(out, reference(a, FFTW_FORWARD)), 1e-8);
  fftw_destroy_plan(q);

  // Column-major (Fortran-style guru strides): the same DFT with the dimensions reversed.
  fftw_iodim cm[2] = {{n1, 1, 1}, {n0, n1, n1}};
  fftw_plan qc = fftw_plan_guru_dft(2, cm, 0, nullptr, fc(a), fc(out), FFTW_FORWARD, FFTW_ESTIMATE);
  fftw_execute(qc);
  EXPECT_RAN_ON_GPU();
  EXPECT_LE(rel(out, reference(a, FFTW_FORWARD)), 1e-8);
  fftw_destroy_plan(qc);

  // r2c / c2r new-array executes; c2r may destroy its input (FFTW's default), and is unnormalised.
  std::mt19937_64 g(3);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<double> r(total), r2(total), back(total);
  for (auto& x : r) x = d(g);
  for (auto& x : r2) x = d(g);
  const int half = n0 * (n1 / 2 + 1);
  std::vector<cd> spec(half), spec_ref(half);
  fftw_plan f = fftw_plan_dft_r2c_2d(n0, n1, r.data(), fc(spec), FFTW_ESTIMATE);
  fftw_execute_dft_r2c(f, r2.data(), fc(spec));
  EXPECT_RAN_ON_GPU();
  std::vector<double> r2copy = r2;
  real_execute(real_fn<fftw_plan (*)(int, int, double*, fftw_complex*, unsigned)>("fftw_plan_dft_r2c_2d")(
      n0, n1, r2copy.data(), fc(spec_ref), FFTW_ESTIMATE));
  EXPECT_LE(rel(spec, spec_ref), 1e-8);
  fftw_plan bck = fftw_plan_dft_c2r_2d(n0, n1, fc(spec), back.data(), FFTW_ESTIMATE);
  fftw_execute_dft_c2r(bck, fc(spec), back.data());
  EXPECT_RAN_ON_GPU();
  double e = 0;
  for (int i = 0; i < total; ++i) e = std::max(e, std::abs(back[i] / total - r2[i]));
  EXPECT_LE(e, 1e-10);
  fftw_destroy_plan(f);
  fftw_destroy_plan(bck);
}

// FFTW_PRESERVE_INPUT c2r keeps its input.
TEST(Fft, C2rPreserveInput) {
  const int n = 4000;
  std::vector<cd> spec(n / 2 + 1);
  for (int i = 0; i <= n / 2; ++i) spec[i] = cd(1.0 / (1 + i), (i == 0 || i == n / 2) ? 0 : 0.5 / (1 + i));
  const std::vector<cd> copy = spec;
  std::vector<double> out(n);
  fftw_plan p = fftw_plan_dft_c2r_1d(n, fc(spec), out.data(), FFTW_ESTIMATE | FFTW_PRESERVE_INPUT);
  fftw_execute(p);
  EXPECT_RAN_ON_GPU();
  EXPECT_EQ(std::memcmp(spec.data(), copy.data(), spec.size() * sizeof(cd)), 0);
  fftw_destroy_plan(p);
}

// The single-precision basic interface, called directly (fftwf_ names reach the preload library).
TEST(Fft, SinglePrecisionBasicInterface) {
  const int n0 = 40, n1 = 30, n2 = 21;
  std::vector<float> r(n0 * n1 * n2), back(r.size());
  std::mt19937_64 g(21);
  std::uniform_real_distribution<float> d(-1, 1);
  for (auto& x : r) x = d(g);
  std::vector<std::complex<float>> spec(n0 * n1 * (n2 / 2 + 1));
  auto* s = reinterpret_cast<fftwf_complex*>(spec.data());
  fftwf_plan f = fftwf_plan_dft_r2c_3d(n0, n1, n2, r.data(), s, FFTW_ESTIMATE);
  fftwf_plan b = fftwf_plan_dft_c2r_3d(n0, n1, n2, s, back.data(), FFTW_ESTIMATE);
  fftwf_execute(f);
  EXPECT_RAN_ON_GPU();
  fftwf_execute(b);
  EXPECT_RAN_ON_GPU();
  float e = 0;
  for (size_t i = 0; i < r.size(); ++i) e = std::max(e, std::abs(back[i] / float(r.size()) - r[i]));
  EXPECT_LE(e, 1e-4f);
  fftwf_destroy_plan(f);
  fftwf_destroy_plan(b);
}

// The legacy Fortran interface: plans by reference, created and executed through dfftw_*_.
extern "C" void dfftw_plan_dft_1d_(fftw_plan*, const int*, fftw_complex*, fftw_complex*, const int*, const int*);
extern "C" void dfftw_execute_(const fftw_plan*);
extern "C" void dfftw_destroy_plan_(fftw_plan*);

TEST(Fft, LegacyFortranInterface) {
  const int n = 2310, sign = FFTW_FORWARD, flags = FFTW_ESTIMATE;
  std::vector<cd> in = random_complex(n, 4), out(n), ref(n);
  fftw_plan p = nullptr;
  dfftw_plan_dft_1d_(&p, &n, fc(in), fc(out), &sign, &flags);
  dfftw_execute_(&p);
  EXPECT_RAN_ON_GPU();
  dfftw_destroy_plan_(&p);
  real_execute(real_fn<fftw_plan (*)(int, fftw_complex*, fftw_complex*, int, unsigned)>("fftw_plan_dft_1d")(
      n, fc(in), fc(ref), FFTW_FORWARD, FFTW_ESTIMATE));
  EXPECT_LE(rel(out, ref), 1e-8);
}

// Plans destroyed and made again (FFTW reuses addresses): each new plan gets its own cuFFT plan.
TEST(Fft, PlansMadeAgainAfterDestroy) {
  uint64_t seed = 300;
  for (int round = 0; round < 3; ++round)
    for (int n : {640, 1001, 256}) check_case<double>(Case{Kind::C2C, {n}, 3}, seed++);
}

// Executes of different plans from several threads at once: each thread gets its own right result
// (one runs on the GPU at a time; the others run on FFTW meanwhile).
TEST(Fft, ConcurrentExecutesOfDifferentPlans) {
  std::vector<std::thread> threads;
  std::vector<double> errors(4, 1.0);
  std::mutex planner;  // FFTW's planner is not thread-safe, its executes are
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([t, &errors, &planner] {
      const int n = 1 << (14 + t % 2);
      std::vector<cd> in = random_complex(size_t(n), 40 + t), out(n), back(n);
      fftw_plan f, b;
      {
        std::lock_guard<std::mutex> lk(planner);
        f = fftw_plan_dft_1d(n, fc(in), fc(out), FFTW_FORWARD, FFTW_ESTIMATE);
        b = fftw_plan_dft_1d(n, fc(out), fc(back), FFTW_BACKWARD, FFTW_ESTIMATE);
      }
      double e = 0;
      for (int rep = 0; rep < 20; ++rep) {
        fftw_execute(f);
        fftw_execute(b);
        for (int i = 0; i < n; ++i) e = std::max(e, std::abs(back[i] / double(n) - in[i]));
      }
      {
        std::lock_guard<std::mutex> lk(planner);
        fftw_destroy_plan(f);
        fftw_destroy_plan(b);
      }
      errors[size_t(t)] = e;
    });
  for (auto& th : threads) th.join();
  for (double e : errors) EXPECT_LE(e, 1e-10);
}

// Any failure on the GPU side runs the transform on FFTW, with FFTW's result.
TEST(Fft, FaultsFallBackToFftw) {
  for (const char* fault : {"alloc", "h2d", "compute", "d2h-before"}) {
    SCOPED_TRACE(fault);
    const Case c{Kind::C2C, {128, 96}, 2};
    const Side si = side_of(c, true), so = side_of(c, false);
    std::vector<double> in = random_reals<double>(2 * si.elems, 11), out(size_t(2 * so.elems)), ref(out.size());
    std::vector<double> in_ref = in;
    void* pr = Fftw<double>::make(c, in_ref.data(), ref.data(), false);
    Fftw<double>::real<Fftw<double>::exec>("execute")(pr);
    void* p = Fftw<double>::make(c, in.data(), out.data(), true);
    gpu_test::set_fault(fault);
    fftw_execute(static_cast<fftw_plan>(p));
    const auto lc = last_call();
    gpu_test::set_fault(nullptr);
    EXPECT_EQ(lc.device, 0) << "ran on the GPU despite the fault";
    EXPECT_NE(lc.gpu_status, 0);
    EXPECT_EQ(std::memcmp(out.data(), ref.data(), out.size() * sizeof(double)), 0) << "not FFTW's result";
    fftw_destroy_plan(static_cast<fftw_plan>(p));
    fftw_destroy_plan(static_cast<fftw_plan>(pr));
  }
  // The next transform runs on the GPU again.
  check_case<double>(Case{Kind::R2C, {77, 20}, 1}, 12);
}

// A large transform runs in pieces, its copies overlapped with cuFFT (src/cuda/fft.cpp): a single 3D
// complex transform as slabs and blocks, a batch in groups, in and out of place. Each is FFTW's result
// within the tolerance; a failure while pieces are queued ("piece"), after the last ("compute") or
// between parts of the copy-out ("panel", out of place) gives FFTW's result bit for bit, with the input
// untouched. "piece" exists only on the piecewise path: a call that ran whole would end on the GPU, so
// the first fault also shows that the pieces ran. The sizes (96-128 MB) make 3-4 pieces at the default
// piece of 32 MiB; the ctest entry gpu_fft_pieces runs every Fft test with 16 KiB pieces.
TEST(Fft, LargeTransformsRunInPiecesAndFallBackWhole) {
  uint64_t seed = 500;
  for (const Case& c : {Case{Kind::C2C, {96, 256, 256}, 1}, Case{Kind::C2C, {96, 256, 256}, 1, 1, 1, 0, 0, true},
                        Case{Kind::C2C, {4096}, 2048}, Case{Kind::C2C, {4096}, 2048, 1, 1, 0, 0, true, FFTW_BACKWARD},
                        Case{Kind::R2C, {8192}, 1024, 1, 1, 0, 0, true}}) {
    check_case<double>(c, seed++);
    for (const char* fault : {"piece", "compute", "panel"}) {
      if (c.inplace && std::string(fault) == "panel") continue;  // in place, nothing is written before the end
      SCOPED_TRACE(c.name() + ", fault " + fault);
      const Side si = side_of(c, true), so = side_of(c, false);
      const int64_t in_reals = si.elems * (si.complex ? 2 : 1), out_reals = so.elems * (so.complex ? 2 : 1);
      const std::vector<double> in0 = random_reals<double>(c.inplace ? std::max(in_reals, out_reals) : in_reals, seed);
      std::vector<double> ref_in = in0, ref_out(size_t(c.inplace ? 0 : out_reals)), in = in0, out = ref_out;
      void* pr = Fftw<double>::make(c, ref_in.data(), c.inplace ? ref_in.data() : ref_out.data(), false);
      ASSERT_NE(pr, nullptr);
      Fftw<double>::real<Fftw<double>::exec>("execute")(pr);
      Fftw<double>::real<Fftw<double>::destroy>("destroy_plan")(pr);
      void* p = Fftw<double>::make(c, in.data(), c.inplace ? in.data() : out.data(), true);
      ASSERT_NE(p, nullptr);
      gpu_test::set_fault(fault);
      fftw_execute(static_cast<fftw_plan>(p));
      const auto lc = last_call();
      gpu_test::set_fault(nullptr);
      fftw_destroy_plan(static_cast<fftw_plan>(p));
      EXPECT_EQ(lc.device, 0) << "the fault did not stop the GPU: the transform did not run in pieces";
      EXPECT_NE(lc.gpu_status, 0);
      if (c.inplace) {
        EXPECT_EQ(std::memcmp(in.data(), ref_in.data(), in.size() * sizeof(double)), 0) << "not FFTW's result";
      } else {
        EXPECT_EQ(std::memcmp(out.data(), ref_out.data(), out.size() * sizeof(double)), 0) << "not FFTW's result";
        EXPECT_EQ(std::memcmp(in.data(), in0.data(), in.size() * sizeof(double)), 0) << "the input was changed";
      }
    }
  }
}

// A layout cuFFT cannot express (a rank-4 transform) stays on FFTW, with FFTW's result.
TEST(Fft, RankFourStaysOnFftw) {
  const int n[4] = {6, 5, 4, 3};
  std::vector<cd> in = random_complex(360, 8), out(360), ref(360);
  fftw_plan p = fftw_plan_dft(4, n, fc(in), fc(out), FFTW_FORWARD, FFTW_ESTIMATE);
  fftw_execute(p);
  EXPECT_EQ(last_call().device, 0);
  fftw_destroy_plan(p);
  real_execute(real_fn<fftw_plan (*)(int, const int*, fftw_complex*, fftw_complex*, int, unsigned)>("fftw_plan_dft")(
      4, n, fc(in), fc(ref), FFTW_FORWARD, FFTW_ESTIMATE));
  EXPECT_EQ(std::memcmp(out.data(), ref.data(), out.size() * sizeof(cd)), 0);
}

}  // namespace
