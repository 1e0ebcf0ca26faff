// The exported FFTW functions, fftw_ and fftwf_ from one list (GOFL_FFTW_API): plan creators remember
// each plan's shape, executes are measured through the dispatcher, destroy_plan forgets. Measurement
// only: the real FFTW always runs. libfftw3 is never linked; its functions are found at run time.
#include <atomic>
#include <type_traits>
#include <vector>

#include "fftw/plan_info.h"
#include "fftw/plan_table.h"
#include "preload/gpu.h"
#include "preload/wrapper_support.h"

namespace gofl::fftw {

// fftw3.h's types, as far as the wrappers need them: plans are opaque, fftw_complex is R[2].
struct PlanS;
using Plan = PlanS*;
template <class R>
using Cplx = R[2];
struct IoDim {
  int n, is, os;
};

namespace {

// FFTW functions are not in the generated symbol table; their records carry this sym instead.

template <class R>
constexpr bool kSingle = std::is_same<R, float>::value;

// The real functions are found per caller, as for BLAS (real_fn_in, src/preload/resolve.cpp): two
// modules with private FFTW libraries each reach their own, so a plan is always executed and
// destroyed by the library that made it.
using Slot = std::atomic<const RealEntry*>;

// Calls the real creator (whose signature is the exported one's) and remembers a plan it made.
template <class Shape, class... A>
Plan create(Slot& slot, const char* name, const void* caller, Shape shape, A... args) {
  Plan p = reinterpret_cast<Plan (*)(A...)>(real_fn_in(slot, name, caller))(args...);
  if (p) plan_remember(p, shape());
  return p;
}

template <class R>
PlanInfo simple(Kind kind, int rank, const int* n, const void* in, const void* out, int sign, unsigned flags) {
  return describe_many(kind, kSingle<R>, rank, n, 1, in, nullptr, 1, 1, out, nullptr, 1, 1, sign, flags);
}

template <class R>
PlanInfo guru(Kind kind, int rank, const IoDim* dims, int howmany_rank, const IoDim* howmany_dims, const void* in,
              const void* out, int sign, unsigned flags) {
  auto convert = [](int count, const IoDim* d) {
    std::vector<Dim> v;
    for (int i = 0; i < count; ++i) v.push_back(Dim{d[i].n, d[i].is, d[i].os});
    return v;
  };
  return describe_guru(kind, kSingle<R>, convert(rank, dims), convert(howmany_rank, howmany_dims), in, out, sign,
                       flags);
}

void add_operand(gofl_call& c, const void* base, Span s, uint32_t elem_size, int role) {
  gofl_call_operand& o = c.operands[c.n_operands++];
  o.ptr = static_cast<const char*>(base) + s.lo * int64_t(elem_size);
  o.elems = s.elems;
  o.elem_size = elem_size;
  o.role = decltype(o.role)(role);
  o.field = -1;  // FFTW calls have no descriptor: verify gives the GPU a private transform instead
}

// The slow path's description of one execute, on the arrays it was given.
[[gnu::noinline]] void describe(gofl_call& c, const PlanInfo& p, const void* in, const void* out, const void* caller, void* real) {
  c.sym = GOFL_SYM_FFTW;
  c.real = real;
  c.op = p.op;
  c.flops = p.flops;
  c.site = caller;
  c.dims[0] = p.n;
  c.dims[1] = p.howmany;
  c.dims[2] = p.rank;
  if (in == out) {
    // In place: one buffer, read and written; the larger of its two views covers both.
    const bool in_larger = p.in_span.elems * p.in_elem >= p.out_span.elems * p.out_elem;
    add_operand(c, in, in_larger ? p.in_span : p.out_span, in_larger ? p.in_elem : p.out_elem, GOFL_INOUT);
  } else {
    add_operand(c, in, p.in_span, p.in_elem, p.in_role);
    add_operand(c, out, p.out_span, p.out_elem, GOFL_OUT);
  }
}

// An execute that is described and dispatched, or counted and timed: out of line, so that the
// calls execute() passes straight to FFTW pay no frame for the gofl_call.
template <class... A>
[[gnu::noinline]] void execute_recorded(void (*real)(A...), const PlanInfo* p, const void* caller, Plan plan,
                                        const void* in, const void* out, A... args) {
  if (p->flops < g_count_limit) {
    const uint64_t key = count_key(p->op, GOFL_SYM_FFTW, gofl_size_class(p->flops, p->n), false, false);
    if (CountEntry* const e = count_entry(caller, key, p->n, p->howmany, p->rank)) {
      const uint64_t t0 = count_begin(*e, p->flops);
      real(args...);
      count_end(*e, t0);
      return;
    }
  }
  gofl_call c = gofl_call();
  gofl_fft transform = p->fft;
  transform.plan = plan;
  transform.in = in ? in : p->in;
  transform.out = const_cast<void*>(out ? out : p->out);
  describe(c, *p, transform.in, transform.out, caller, reinterpret_cast<void*>(real));
  c.fft = &transform;
  if (enter_cpu_must_run(c)) real(args...);
  leave(c);
}

// One execute: unknown plans and small transforms go straight to FFTW (counted while calls are
// recorded: preload/counted.h), the rest through the dispatcher like a generated BLAS wrapper, which
// may run it on the GPU (c.fft) instead of calling FFTW. `in`/`out` nullptr: the plan's own arrays
// (fftw_execute).
template <class... A>
void execute(Slot& slot, const char* name, const void* caller, Plan plan, const void* in,
             const void* out, A... args) {
  auto real = reinterpret_cast<void (*)(A...)>(real_fn_in(slot, name, caller));
  const PlanInfo* p = plan_lookup(plan);
  if (__builtin_expect(p == nullptr || p->flops < g_fast_limit, 1)) return real(args...);
  if (p->flops < g_count_limit) {
    // FFTW calls no intercepted routine: a call counted but not timed needs nothing after it.
    uint64_t key = count_key(p->op, GOFL_SYM_FFTW, gofl_size_class(p->flops, p->n), false, false);
    CountEntry* const found = count_entry_found(caller, key);
    if (__builtin_expect(found != nullptr, 1) && count_untimed_leaf(*found, p->flops)) return real(args...);
  }
  return execute_recorded(real, p, caller, plan, in, out, args...);
}

void destroy(Slot& slot, const char* name, const void* caller, Plan plan) {
  auto real = reinterpret_cast<void (*)(Plan)>(real_fn_in(slot, name, caller));
  if (plan) {  // first: FFTW may hand the address to the next plan at once
    plan_forget(plan);
    gpu_fft_forget(plan);  // its cuFFT plan, if the GPU ran it
  }
  real(plan);
}

}  // namespace
}  // namespace gofl::fftw

using gofl::fftw::Cplx;
using gofl::fftw::IoDim;
using gofl::fftw::Kind;
using gofl::fftw::Plan;

// Every exported function of one precision: P is the name prefix, R the real type. Each function keeps
// its own real-function slot; __func__ is its exported name.
#define GOFL_FFTW_CALLER __builtin_return_address(0)
#define GOFL_FFTW_API(P, R)                                                                                       \
  extern "C" GOFL_EXPORT Plan P##plan_dft_1d(int n, Cplx<R>* in, Cplx<R>* out, int sign, unsigned flags) {        \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER,                                                   \
        [&] { return gofl::fftw::simple<R>(Kind::C2C, 1, &n, in, out, sign, flags); }, n, in, out, sign, flags);  \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_dft_2d(int n0, int n1, Cplx<R>* in, Cplx<R>* out, int sign,                 \
                                             unsigned flags) {                                                    \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER, [&] {                                             \
      const int n[] = {n0, n1};                                                                                   \
      return gofl::fftw::simple<R>(Kind::C2C, 2, n, in, out, sign, flags);                                        \
    }, n0, n1, in, out, sign, flags);                                                                             \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_dft_3d(int n0, int n1, int n2, Cplx<R>* in, Cplx<R>* out, int sign,         \
                                             unsigned flags) {                                                    \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER, [&] {                                             \
      const int n[] = {n0, n1, n2};                                                                               \
      return gofl::fftw::simple<R>(Kind::C2C, 3, n, in, out, sign, flags);                                        \
    }, n0, n1, n2, in, out, sign, flags);                                                                         \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_dft(int rank, const int* n, Cplx<R>* in, Cplx<R>* out, int sign,            \
                                          unsigned flags) {                                                       \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER,                                                   \
        [&] { return gofl::fftw::simple<R>(Kind::C2C, rank, n, in, out, sign, flags); }, rank, n, in, out, sign, flags); \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_dft_r2c_1d(int n, R* in, Cplx<R>* out, unsigned flags) {                    \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER,                                                   \
        [&] { return gofl::fftw::simple<R>(Kind::R2C, 1, &n, in, out, 0, flags); }, n, in, out, flags);           \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_dft_r2c_2d(int n0, int n1, R* in, Cplx<R>* out, unsigned flags) {           \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER, [&] {                                             \
      const int n[] = {n0, n1};                                                                                   \
      return gofl::fftw::simple<R>(Kind::R2C, 2, n, in, out, 0, flags);                                           \
    }, n0, n1, in, out, flags);                                                                                   \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_dft_r2c_3d(int n0, int n1, int n2, R* in, Cplx<R>* out, unsigned flags) {   \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER, [&] {                                             \
      const int n[] = {n0, n1, n2};                                                                               \
      return gofl::fftw::simple<R>(Kind::R2C, 3, n, in, out, 0, flags);                                           \
    }, n0, n1, n2, in, out, flags);                                                                               \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_dft_r2c(int rank, const int* n, R* in, Cplx<R>* out, unsigned flags) {      \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER,                                                   \
        [&] { return gofl::fftw::simple<R>(Kind::R2C, rank, n, in, out, 0, flags); }, rank, n, in, out, flags);   \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_dft_c2r_1d(int n, Cplx<R>* in, R* out, unsigned flags) {                    \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER,                                                   \
        [&] { return gofl::fftw::simple<R>(Kind::C2R, 1, &n, in, out, 0, flags); }, n, in, out, flags);           \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_dft_c2r_2d(int n0, int n1, Cplx<R>* in, R* out, unsigned flags) {           \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER, [&] {                                             \
      const int n[] = {n0, n1};                                                                                   \
      return gofl::fftw::simple<R>(Kind::C2R, 2, n, in, out, 0, flags);                                           \
    }, n0, n1, in, out, flags);                                                                                   \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_dft_c2r_3d(int n0, int n1, int n2, Cplx<R>* in, R* out, unsigned flags) {   \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER, [&] {                                             \
      const int n[] = {n0, n1, n2};                                                                               \
      return gofl::fftw::simple<R>(Kind::C2R, 3, n, in, out, 0, flags);                                           \
    }, n0, n1, n2, in, out, flags);                                                                               \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_dft_c2r(int rank, const int* n, Cplx<R>* in, R* out, unsigned flags) {      \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER,                                                   \
        [&] { return gofl::fftw::simple<R>(Kind::C2R, rank, n, in, out, 0, flags); }, rank, n, in, out, flags);   \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_many_dft(int rank, const int* n, int howmany, Cplx<R>* in,                  \
                                               const int* inembed, int istride, int idist, Cplx<R>* out,          \
                                               const int* onembed, int ostride, int odist, int sign,              \
                                               unsigned flags) {                                                  \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER, [&] {                                             \
      return gofl::fftw::describe_many(Kind::C2C, gofl::fftw::kSingle<R>, rank, n, howmany, in, inembed, istride, \
                                       idist, out, onembed, ostride, odist, sign, flags);                         \
    }, rank, n, howmany, in, inembed, istride, idist, out, onembed, ostride, odist, sign, flags);                 \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_many_dft_r2c(int rank, const int* n, int howmany, R* in,                    \
                                                   const int* inembed, int istride, int idist, Cplx<R>* out,      \
                                                   const int* onembed, int ostride, int odist, unsigned flags) {  \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER, [&] {                                             \
      return gofl::fftw::describe_many(Kind::R2C, gofl::fftw::kSingle<R>, rank, n, howmany, in, inembed, istride, \
                                       idist, out, onembed, ostride, odist, 0, flags);                            \
    }, rank, n, howmany, in, inembed, istride, idist, out, onembed, ostride, odist, flags);                       \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_many_dft_c2r(int rank, const int* n, int howmany, Cplx<R>* in,              \
                                                   const int* inembed, int istride, int idist, R* out,            \
                                                   const int* onembed, int ostride, int odist, unsigned flags) {  \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER, [&] {                                             \
      return gofl::fftw::describe_many(Kind::C2R, gofl::fftw::kSingle<R>, rank, n, howmany, in, inembed, istride, \
                                       idist, out, onembed, ostride, odist, 0, flags);                            \
    }, rank, n, howmany, in, inembed, istride, idist, out, onembed, ostride, odist, flags);                       \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_guru_dft(int rank, const IoDim* dims, int howmany_rank,                     \
                                               const IoDim* howmany_dims, Cplx<R>* in, Cplx<R>* out, int sign,    \
                                               unsigned flags) {                                                  \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER, [&] {                                             \
      return gofl::fftw::guru<R>(Kind::C2C, rank, dims, howmany_rank, howmany_dims, in, out, sign, flags);        \
    }, rank, dims, howmany_rank, howmany_dims, in, out, sign, flags);                                             \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_guru_dft_r2c(int rank, const IoDim* dims, int howmany_rank,                 \
                                                   const IoDim* howmany_dims, R* in, Cplx<R>* out,                \
                                                   unsigned flags) {                                              \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER, [&] {                                             \
      return gofl::fftw::guru<R>(Kind::R2C, rank, dims, howmany_rank, howmany_dims, in, out, 0, flags);           \
    }, rank, dims, howmany_rank, howmany_dims, in, out, flags);                                                   \
  }                                                                                                               \
  extern "C" GOFL_EXPORT Plan P##plan_guru_dft_c2r(int rank, const IoDim* dims, int howmany_rank,                 \
                                                   const IoDim* howmany_dims, Cplx<R>* in, R* out,                \
                                                   unsigned flags) {                                              \
    static gofl::fftw::Slot real;                                                                                 \
    return gofl::fftw::create(real, __func__, GOFL_FFTW_CALLER, [&] {                                             \
      return gofl::fftw::guru<R>(Kind::C2R, rank, dims, howmany_rank, howmany_dims, in, out, 0, flags);           \
    }, rank, dims, howmany_rank, howmany_dims, in, out, flags);                                                   \
  }                                                                                                               \
  extern "C" GOFL_EXPORT void P##destroy_plan(Plan p) {                                                           \
    static gofl::fftw::Slot real;                                                                                 \
    gofl::fftw::destroy(real, __func__, GOFL_FFTW_CALLER, p);                                                     \
  }                                                                                                               \
  extern "C" GOFL_EXPORT void P##execute(const Plan p) {                                                          \
    static gofl::fftw::Slot real;                                                                                 \
    gofl::fftw::execute(real, __func__, GOFL_FFTW_CALLER, p, nullptr, nullptr, p);                                \
  }                                                                                                               \
  extern "C" GOFL_EXPORT void P##execute_dft(const Plan p, Cplx<R>* in, Cplx<R>* out) {                           \
    static gofl::fftw::Slot real;                                                                                 \
    gofl::fftw::execute(real, __func__, GOFL_FFTW_CALLER, p, in, out, p, in, out);                                \
  }                                                                                                               \
  extern "C" GOFL_EXPORT void P##execute_dft_r2c(const Plan p, R* in, Cplx<R>* out) {                             \
    static gofl::fftw::Slot real;                                                                                 \
    gofl::fftw::execute(real, __func__, GOFL_FFTW_CALLER, p, in, out, p, in, out);                                \
  }                                                                                                               \
  extern "C" GOFL_EXPORT void P##execute_dft_c2r(const Plan p, Cplx<R>* in, R* out) {                             \
    static gofl::fftw::Slot real;                                                                                 \
    gofl::fftw::execute(real, __func__, GOFL_FFTW_CALLER, p, in, out, p, in, out);                                \
  }

GOFL_FFTW_API(fftw_, double)
GOFL_FFTW_API(fftwf_, float)

// Fortran's legacy interface (dfftw_execute etc., the plan passed by reference): its executes call
// FFTW's internals directly, not through fftw_execute, so they are caught here. Its plan creators
// reach the fftw_plan_* wrappers above through FFTW's own PLT, so the plans are already known.
#define GOFL_FFTW_FORTRAN_API(F, R)                                                                               \
  extern "C" GOFL_EXPORT void F##execute_(const Plan* p) {                                                        \
    static gofl::fftw::Slot real;                                                                                 \
    gofl::fftw::execute(real, __func__, GOFL_FFTW_CALLER, *p, nullptr, nullptr, p);                               \
  }                                                                                                               \
  extern "C" GOFL_EXPORT void F##execute_dft_(const Plan* p, Cplx<R>* in, Cplx<R>* out) {                         \
    static gofl::fftw::Slot real;                                                                                 \
    gofl::fftw::execute(real, __func__, GOFL_FFTW_CALLER, *p, in, out, p, in, out);                               \
  }                                                                                                               \
  extern "C" GOFL_EXPORT void F##execute_dft_r2c_(const Plan* p, R* in, Cplx<R>* out) {                           \
    static gofl::fftw::Slot real;                                                                                 \
    gofl::fftw::execute(real, __func__, GOFL_FFTW_CALLER, *p, in, out, p, in, out);                               \
  }                                                                                                               \
  extern "C" GOFL_EXPORT void F##execute_dft_c2r_(const Plan* p, Cplx<R>* in, R* out) {                           \
    static gofl::fftw::Slot real;                                                                                 \
    gofl::fftw::execute(real, __func__, GOFL_FFTW_CALLER, *p, in, out, p, in, out);                               \
  }

GOFL_FFTW_FORTRAN_API(dfftw_, double)
GOFL_FFTW_FORTRAN_API(sfftw_, float)
