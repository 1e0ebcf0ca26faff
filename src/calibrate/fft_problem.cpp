#include "calibrate/fft_problem.h"

#include <dlfcn.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include "common/table.h"

namespace gofl::cli {
namespace {

constexpr unsigned kMeasure = 0, kEstimate = 1u << 6;  // fftw3.h's FFTW_MEASURE, FFTW_ESTIMATE
constexpr int kForward = -1;

bool single(int op_id) { return gofl_ops[op_id].precision == 's'; }
bool real_kind(int op_id) { return gofl_ops[op_id].routine[3] == '_'; }  // fft_r2c, fft_c2r
bool is_c2r(int op_id) { return strcmp(gofl_ops[op_id].routine, "fft_c2r") == 0; }

// The exported name of an FFTW function in the op's precision ("fftwf_execute"), through the global
// scope: the library's wrapper first.
void* fn(int op_id, const char* f) {
  return dlsym(RTLD_DEFAULT, ((single(op_id) ? "fftwf_" : "fftw_") + std::string(f)).c_str());
}

template <class... A> void* callp(void* f, A... a) { return reinterpret_cast<void* (*)(A...)>(f)(a...); }
template <class... A> void callv(void* f, A... a) { reinterpret_cast<void (*)(A...)>(f)(a...); }

}  // namespace

void fft_load(FILE* out) {
  const char* libs[] = {"libfftw3.so.3", "libfftw3f.so.3"};
  const char* threads[] = {"libfftw3_threads.so.3", "libfftw3f_threads.so.3"};
  const char* prefix[] = {"fftw_", "fftwf_"};
  const int hw = int(sysconf(_SC_NPROCESSORS_ONLN));
  for (int i = 0; i < 2; ++i) {
    if (!dlopen(libs[i], RTLD_NOW | RTLD_GLOBAL)) continue;
    int used = 1;
    if (void* t = dlopen(threads[i], RTLD_NOW | RTLD_GLOBAL)) {
      auto init = reinterpret_cast<int (*)()>(dlsym(t, (std::string(prefix[i]) + "init_threads").c_str()));
      auto with = reinterpret_cast<void (*)(int)>(dlsym(t, (std::string(prefix[i]) + "plan_with_nthreads").c_str()));
      if (init && with && init()) {
        with(hw);
        used = hw;
      }
    }
    // FFTW_MEASURE tries plans for as long as it likes: a second per problem at most.
    if (void* limit = dlsym(RTLD_DEFAULT, (std::string(prefix[i]) + "set_timelimit").c_str()))
      callv(limit, 1.0);
    fprintf(out, "fftw %s threads %d\n", libs[i], used);
  }
}

double fft_flops(int op_id, int n) {
  const double points = double(n) * n;
  return 5.0 * points * log2(points) * (real_kind(op_id) ? 0.5 : 1.0);
}

double fft_bytes(int op_id, int n) {
  const double real = single(op_id) ? 4 : 8;
  const double points = double(n) * n, half = double(n) * (n / 2 + 1);
  if (!real_kind(op_id)) return points * 2 * real;
  return points * real + half * 2 * real;  // one side real, the other n/2+1 complex per row
}

FftProblem fft_problem(int op_id, int n, bool gpu_pass) {
  FftProblem p;
  const char* creator = is_c2r(op_id) ? "plan_dft_c2r_2d" : real_kind(op_id) ? "plan_dft_r2c_2d" : "plan_dft_2d";
  void* make = fn(op_id, creator);
  void* exec = fn(op_id, "execute");
  void* destroy = fn(op_id, "destroy_plan");
  if (!make || !exec || !destroy) return p;
  const size_t rsize = single(op_id) ? 4 : 8;
  const size_t points = size_t(n) * size_t(n), half = size_t(n) * size_t(n / 2 + 1);
  const bool c2c = !real_kind(op_id);
  // Arrays in bytes: c2c complex -> complex; r2c real -> half complex; c2r half complex -> real.
  const size_t in_bytes = c2c ? 2 * rsize * points : is_c2r(op_id) ? 2 * rsize * half : rsize * points;
  const size_t out_bytes = c2c ? 2 * rsize * points : is_c2r(op_id) ? rsize * points : 2 * rsize * half;
  auto in = std::make_shared<std::vector<char>>(in_bytes);
  auto out = std::make_shared<std::vector<char>>(out_bytes);
  const unsigned flags = gpu_pass ? kEstimate : kMeasure;
  void* plan = c2c ? callp(make, n, n, in->data(), out->data(), kForward, flags)
                   : callp(make, n, n, in->data(), out->data(), flags);
  if (!plan) return p;
  // The plan lives as long as the problem's closures; destroyed through the wrapper, like a program's.
  std::shared_ptr<void> owner(plan, [destroy](void* q) { callv(destroy, q); });
  // Filled after planning: FFTW_MEASURE overwrites the arrays. A c2r input that is the spectrum of
  // real data would not time differently; any values do.
  auto original = std::make_shared<std::vector<char>>(in_bytes);
  for (size_t i = 0; i < in_bytes / rsize; ++i) {
    const double v = sin(0.37 * double(i + 1)) + 0.1 * double(i % 5);
    if (rsize == 4) {
      const float f = float(v);
      memcpy(original->data() + i * 4, &f, 4);
    } else {
      memcpy(original->data() + i * 8, &v, 8);
    }
  }
  *in = *original;
  const bool overwrites = is_c2r(op_id);
  p.restore = [in, original, overwrites] {
    if (overwrites) memcpy(in->data(), original->data(), original->size());
  };
  p.call = [exec, owner, in, out] {
    callv(exec, owner.get());
    return 0;
  };
  return p;
}

}  // namespace gofl::cli
