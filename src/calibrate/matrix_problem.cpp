// The calibration's matrix problems (calibrate/matrix_problem.h): each routine family's n x n
// problem, its inputs kept for restoring, called through the exported Fortran name.
#include "calibrate/matrix_problem.h"

#include <dlfcn.h>

#include <algorithm>
#include <complex>
#include <memory>
#include <type_traits>
#include <vector>

namespace gofl::cli {
namespace {

// ---- data ---------------------------------------------------------------------------------------

template <class T> struct Real { using type = T; };
template <class T> struct Real<std::complex<T>> { using type = T; };
template <class T> using R = typename Real<T>::type;
template <class T> constexpr bool is_complex = !std::is_same_v<T, R<T>>;
template <class T> constexpr char prec() {
  if constexpr (std::is_same_v<T, float>) return 's';
  else if constexpr (std::is_same_v<T, double>) return 'd';
  else if constexpr (std::is_same_v<T, std::complex<float>>) return 'c';
  else return 'z';
}

template <class T> T rnd(Rng& r) {
  if constexpr (is_complex<T>) return T(R<T>(r.next()), R<T>(r.next()));
  else return T(r.next());
}

template <class T> using Buf = std::shared_ptr<std::vector<T>>;
template <class T> Buf<T> buf(size_t n) { return std::make_shared<std::vector<T>>(std::max<size_t>(n, 1)); }

template <class T> Buf<T> random_matrix(int rows, int cols, Rng& r) {
  auto b = buf<T>(size_t(rows) * size_t(cols));
  for (auto& x : *b) x = rnd<T>(r);
  return b;
}

// Symmetric (Hermitian for complex) and, with `dominant`, positive definite by a heavy diagonal.
template <class T> Buf<T> symmetric_matrix(int n, Rng& r, bool dominant) {
  auto b = buf<T>(size_t(n) * size_t(n));
  std::vector<T>& a = *b;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i <= j; ++i) {
      T v = rnd<T>(r);
      if (i == j) {
        v = T(R<T>(std::real(v)) + (dominant ? R<T>(n + 1) : R<T>(0)));
        a[size_t(i) + size_t(j) * n] = v;
      } else {
        a[size_t(i) + size_t(j) * n] = v;
        if constexpr (is_complex<T>) a[size_t(j) + size_t(i) * n] = std::conj(v);
        else a[size_t(j) + size_t(i) * n] = v;
      }
    }
  return b;
}

// General with a heavy diagonal: well-conditioned triangles and LU factors without pivoting.
template <class T> Buf<T> dominant_matrix(int n, Rng& r) {
  auto b = random_matrix<T>(n, n, r);
  for (int i = 0; i < n; ++i) (*b)[size_t(i) * (n + 1)] += T(R<T>(n + 1));
  return b;
}

// ---- calling the exported Fortran names ----------------------------------------------------------

// Calls `fn` with exactly the argument types given (pointers and hidden string lengths).
template <class... A> void callf(void* fn, A... a) { reinterpret_cast<void (*)(A...)>(fn)(a...); }
constexpr size_t L1 = 1;  // hidden Fortran length of a one-character argument


template <class T> void copy_into(const Buf<T>& from, const Buf<T>& to) { *to = *from; }

// Workspace size from a query's work[0].
template <class T> int lwork_of(const T& w) { return std::max(1, int(std::real(w)) + 1); }

// The workspaces a divide-and-conquer or MRRR eigensolver's query asked for (work[0], rwork[0] for
// complex, iwork[0]); the call passes their sizes in copies, as LAPACK may not write them.
template <class T> struct EigenWork {
  int lw, lrw, liw;
  Buf<T> work;
  std::shared_ptr<std::vector<R<T>>> rwork;
  std::shared_ptr<std::vector<int>> iwork;
  EigenWork(const T& q, R<T> rq, int iq)
      : lw(lwork_of(q)), lrw(std::max(1, int(rq) + 1)), liw(std::max(1, iq)), work(buf<T>(lw)),
        rwork(std::make_shared<std::vector<R<T>>>(lrw)), iwork(std::make_shared<std::vector<int>>(liw)) {}
};

template <class T> MatrixProblem prep(const std::string& family, void* fn, int n, Rng& rng) {
  using RT = R<T>;
  const int ld = n;
  auto keep_n = std::make_shared<int>(n);  // kept alive by the closures below
  int* pn = keep_n.get();
  auto info = std::make_shared<int>(0);
  static const T one = T(1);
  static const RT rone = 1;
  MatrixProblem p;
  auto noop = [] {};
  if (family == "gemm" || family == "symm" || family == "hemm") {
    auto a = family == "gemm" ? random_matrix<T>(n, n, rng) : symmetric_matrix<T>(n, rng, false);
    auto b = random_matrix<T>(n, n, rng), c0 = random_matrix<T>(n, n, rng), c = buf<T>(0);
    p.restore = [=] { copy_into(c0, c); };
    if (family == "gemm")  // beta = 1: C is read, so the copies are the operands' extents exactly
      p.call = [=] { callf(fn, "N", "N", pn, pn, pn, &one, a->data(), &ld, b->data(), &ld, &one, c->data(), &ld, L1, L1); return 0; };
    else
      p.call = [=] { callf(fn, "L", "U", pn, pn, &one, a->data(), &ld, b->data(), &ld, &one, c->data(), &ld, L1, L1); return 0; };
  } else if (family == "syrk" || family == "herk") {
    auto a = random_matrix<T>(n, n, rng), c0 = symmetric_matrix<T>(n, rng, false), c = buf<T>(0);
    p.restore = [=] { copy_into(c0, c); };
    if (family == "herk")
      p.call = [=] { callf(fn, "U", "N", pn, pn, &rone, a->data(), &ld, &rone, c->data(), &ld, L1, L1); return 0; };
    else
      p.call = [=] { callf(fn, "U", "N", pn, pn, &one, a->data(), &ld, &one, c->data(), &ld, L1, L1); return 0; };
  } else if (family == "syr2k" || family == "her2k") {
    auto a = random_matrix<T>(n, n, rng), b = random_matrix<T>(n, n, rng), c0 = symmetric_matrix<T>(n, rng, false),
         c = buf<T>(0);
    p.restore = [=] { copy_into(c0, c); };
    if (family == "her2k")
      p.call = [=] { callf(fn, "U", "N", pn, pn, &one, a->data(), &ld, b->data(), &ld, &rone, c->data(), &ld, L1, L1); return 0; };
    else
      p.call = [=] { callf(fn, "U", "N", pn, pn, &one, a->data(), &ld, b->data(), &ld, &one, c->data(), &ld, L1, L1); return 0; };
  } else if (family == "trmm" || family == "trsm") {
    auto a = dominant_matrix<T>(n, rng), b0 = random_matrix<T>(n, n, rng), b = buf<T>(0);
    p.restore = [=] { copy_into(b0, b); };
    p.call = [=] { callf(fn, "L", "U", "N", "N", pn, pn, &one, a->data(), &ld, b->data(), &ld, L1, L1, L1, L1); return 0; };
  } else if (family == "gemv" || family == "symv" || family == "hemv") {
    // beta = 1: y is read, so the copies are the operands' extents exactly.
    auto a = family == "gemv" ? random_matrix<T>(n, n, rng) : symmetric_matrix<T>(n, rng, false);
    auto x = random_matrix<T>(n, 1, rng), y0 = random_matrix<T>(n, 1, rng), y = buf<T>(0);
    static const int inc = 1;
    p.restore = [=] { copy_into(y0, y); };
    if (family == "gemv")
      p.call = [=] { callf(fn, "N", pn, pn, &one, a->data(), &ld, x->data(), &inc, &one, y->data(), &inc, L1); return 0; };
    else
      p.call = [=] { callf(fn, "U", pn, &one, a->data(), &ld, x->data(), &inc, &one, y->data(), &inc, L1); return 0; };
  } else if (family == "trsv") {
    auto a = dominant_matrix<T>(n, rng), x0 = random_matrix<T>(n, 1, rng), x = buf<T>(0);
    static const int inc = 1;
    p.restore = [=] { copy_into(x0, x); };
    p.call = [=] { callf(fn, "U", "N", "N", pn, a->data(), &ld, x->data(), &inc, L1, L1, L1); return 0; };
  } else if (family == "getrf" || family == "potrf") {
    auto a0 = family == "potrf" ? symmetric_matrix<T>(n, rng, true) : random_matrix<T>(n, n, rng), a = buf<T>(0);
    auto ipiv = std::make_shared<std::vector<int>>(n);
    p.restore = [=] { copy_into(a0, a); };
    if (family == "getrf") p.call = [=] { callf(fn, pn, pn, a->data(), &ld, ipiv->data(), info.get()); return *info; };
    else p.call = [=] { callf(fn, "U", pn, a->data(), &ld, info.get(), L1); return *info; };
  } else if (family == "getrs" || family == "potrs" || family == "getri") {
    // Factors as the factorisation would leave them: a heavy diagonal, no row exchanges.
    auto f = dominant_matrix<T>(n, rng), b0 = random_matrix<T>(n, n, rng), b = buf<T>(0);
    auto ipiv = std::make_shared<std::vector<int>>(n);
    for (int i = 0; i < n; ++i) (*ipiv)[i] = i + 1;
    if (family == "getri") {
      p.restore = [=] { copy_into(f, b); };
      T q{};
      int m1 = -1;
      b->assign(f->begin(), f->end());
      callf(fn, pn, b->data(), &ld, ipiv->data(), &q, &m1, info.get());
      const int lw = lwork_of(q);
      auto work = buf<T>(size_t(lw));
      p.call = [=] { int lwv = lw; callf(fn, pn, b->data(), &ld, ipiv->data(), work->data(), &lwv, info.get()); return *info; };
    } else {
      p.restore = [=] { copy_into(b0, b); };
      if (family == "getrs")
        p.call = [=] { callf(fn, "N", pn, pn, f->data(), &ld, ipiv->data(), b->data(), &ld, info.get(), L1); return *info; };
      else
        p.call = [=] { callf(fn, "U", pn, pn, f->data(), &ld, b->data(), &ld, info.get(), L1); return *info; };
    }
  } else if (family == "gesv" || family == "posv") {
    auto a0 = family == "posv" ? symmetric_matrix<T>(n, rng, true) : random_matrix<T>(n, n, rng), a = buf<T>(0);
    auto b0 = random_matrix<T>(n, n, rng), b = buf<T>(0);
    auto ipiv = std::make_shared<std::vector<int>>(n);
    p.restore = [=] { copy_into(a0, a); copy_into(b0, b); };
    if (family == "gesv")
      p.call = [=] { callf(fn, pn, pn, a->data(), &ld, ipiv->data(), b->data(), &ld, info.get()); return *info; };
    else
      p.call = [=] { callf(fn, "U", pn, pn, a->data(), &ld, b->data(), &ld, info.get(), L1); return *info; };
  } else if (family == "syevd" || family == "syev" || family == "syevr") {
    auto a0 = symmetric_matrix<T>(n, rng, false), a = buf<T>(0);
    auto w = std::make_shared<std::vector<RT>>(n);
    p.restore = [=] { copy_into(a0, a); };
    a->assign(a0->begin(), a0->end());
    T q{};
    RT rq = 0;
    int iq = 0, m1 = -1;
    if (family == "syevd") {
      if constexpr (is_complex<T>) {
        callf(fn, "V", "U", pn, a->data(), &ld, w->data(), &q, &m1, &rq, &m1, &iq, &m1, info.get(), L1, L1);
        const EigenWork<T> ws(q, rq, iq);
        p.call = [=] {
          int a1 = ws.lw, a2 = ws.lrw, a3 = ws.liw;
          callf(fn, "V", "U", pn, a->data(), &ld, w->data(), ws.work->data(), &a1, ws.rwork->data(), &a2,
                ws.iwork->data(), &a3, info.get(), L1, L1);
          return *info;
        };
      } else {
        callf(fn, "V", "U", pn, a->data(), &ld, w->data(), &q, &m1, &iq, &m1, info.get(), L1, L1);
        const EigenWork<T> ws(q, 0, iq);
        p.call = [=] {
          int a1 = ws.lw, a3 = ws.liw;
          callf(fn, "V", "U", pn, a->data(), &ld, w->data(), ws.work->data(), &a1, ws.iwork->data(), &a3, info.get(), L1,
                L1);
          return *info;
        };
      }
    } else if (family == "syev") {
      if constexpr (is_complex<T>) {
        auto rwork = std::make_shared<std::vector<RT>>(std::max(1, 3 * n - 2));
        callf(fn, "V", "U", pn, a->data(), &ld, w->data(), &q, &m1, rwork->data(), info.get(), L1, L1);
        const int lw = lwork_of(q);
        auto work = buf<T>(lw);
        p.call = [=] {
          int a1 = lw;
          callf(fn, "V", "U", pn, a->data(), &ld, w->data(), work->data(), &a1, rwork->data(), info.get(), L1, L1);
          return *info;
        };
      } else {
        callf(fn, "V", "U", pn, a->data(), &ld, w->data(), &q, &m1, info.get(), L1, L1);
        const int lw = lwork_of(q);
        auto work = buf<T>(lw);
        p.call = [=] {
          int a1 = lw;
          callf(fn, "V", "U", pn, a->data(), &ld, w->data(), work->data(), &a1, info.get(), L1, L1);
          return *info;
        };
      }
    } else {  // syevr / heevr, every eigenpair
      auto z = buf<T>(size_t(n) * n);
      auto isuppz = std::make_shared<std::vector<int>>(2 * n);
      auto m = std::make_shared<int>(0);
      static const RT vl = 0, vu = 0, abstol = 0;
      static const int il = 1;
      if constexpr (is_complex<T>) {
        callf(fn, "V", "A", "U", pn, a->data(), &ld, &vl, &vu, &il, pn, &abstol, m.get(), w->data(), z->data(), &ld,
              isuppz->data(), &q, &m1, &rq, &m1, &iq, &m1, info.get(), L1, L1, L1);
        const EigenWork<T> ws(q, rq, iq);
        p.call = [=] {
          int a1 = ws.lw, a2 = ws.lrw, a3 = ws.liw;
          callf(fn, "V", "A", "U", pn, a->data(), &ld, &vl, &vu, &il, pn, &abstol, m.get(), w->data(), z->data(), &ld,
                isuppz->data(), ws.work->data(), &a1, ws.rwork->data(), &a2, ws.iwork->data(), &a3, info.get(), L1, L1,
                L1);
          return *info;
        };
      } else {
        callf(fn, "V", "A", "U", pn, a->data(), &ld, &vl, &vu, &il, pn, &abstol, m.get(), w->data(), z->data(), &ld,
              isuppz->data(), &q, &m1, &iq, &m1, info.get(), L1, L1, L1);
        const EigenWork<T> ws(q, 0, iq);
        p.call = [=] {
          int a1 = ws.lw, a3 = ws.liw;
          callf(fn, "V", "A", "U", pn, a->data(), &ld, &vl, &vu, &il, pn, &abstol, m.get(), w->data(), z->data(), &ld,
                isuppz->data(), ws.work->data(), &a1, ws.iwork->data(), &a3, info.get(), L1, L1, L1);
          return *info;
        };
      }
    }
  } else if (family == "gesvd" || family == "gesdd") {
    auto a0 = random_matrix<T>(n, n, rng), a = buf<T>(0);
    auto s = std::make_shared<std::vector<RT>>(n);
    auto u = buf<T>(size_t(n) * n), vt = buf<T>(size_t(n) * n);
    p.restore = [=] { copy_into(a0, a); };
    a->assign(a0->begin(), a0->end());
    T q{};
    int m1 = -1;
    auto iwork = std::make_shared<std::vector<int>>(8 * n);
    // Complex: rwork as LAPACK 3.7+ sizes it for jobz/jobu = 'S'.
    auto rwork = std::make_shared<std::vector<RT>>(std::max<size_t>(1, 5 * size_t(n) * n + 7 * size_t(n)));
    if (family == "gesvd") {
      if constexpr (is_complex<T>) callf(fn, "S", "S", pn, pn, a->data(), &ld, s->data(), u->data(), &ld, vt->data(), &ld, &q, &m1, rwork->data(), info.get(), L1, L1);
      else callf(fn, "S", "S", pn, pn, a->data(), &ld, s->data(), u->data(), &ld, vt->data(), &ld, &q, &m1, info.get(), L1, L1);
      const int lw = lwork_of(q);
      auto work = buf<T>(lw);
      p.call = [=] {
        int a1 = lw;
        if constexpr (is_complex<T>)
          callf(fn, "S", "S", pn, pn, a->data(), &ld, s->data(), u->data(), &ld, vt->data(), &ld, work->data(), &a1, rwork->data(), info.get(), L1, L1);
        else
          callf(fn, "S", "S", pn, pn, a->data(), &ld, s->data(), u->data(), &ld, vt->data(), &ld, work->data(), &a1, info.get(), L1, L1);
        return *info;
      };
    } else {
      if constexpr (is_complex<T>) callf(fn, "S", pn, pn, a->data(), &ld, s->data(), u->data(), &ld, vt->data(), &ld, &q, &m1, rwork->data(), iwork->data(), info.get(), L1);
      else callf(fn, "S", pn, pn, a->data(), &ld, s->data(), u->data(), &ld, vt->data(), &ld, &q, &m1, iwork->data(), info.get(), L1);
      const int lw = lwork_of(q);
      auto work = buf<T>(lw);
      p.call = [=] {
        int a1 = lw;
        if constexpr (is_complex<T>)
          callf(fn, "S", pn, pn, a->data(), &ld, s->data(), u->data(), &ld, vt->data(), &ld, work->data(), &a1, rwork->data(), iwork->data(), info.get(), L1);
        else
          callf(fn, "S", pn, pn, a->data(), &ld, s->data(), u->data(), &ld, vt->data(), &ld, work->data(), &a1, iwork->data(), info.get(), L1);
        return *info;
      };
    }
  } else if (family == "geqrf" || family == "orgqr") {
    auto a0 = random_matrix<T>(n, n, rng), a = buf<T>(0);
    auto tau = buf<T>(n);
    for (auto& t : *tau) t = T(RT(1) + RT(0.5) * RT(rng.next()));  // reflector scales as geqrf leaves them
    p.restore = [=] { copy_into(a0, a); };
    a->assign(a0->begin(), a0->end());
    T q{};
    int m1 = -1;
    if (family == "geqrf") callf(fn, pn, pn, a->data(), &ld, tau->data(), &q, &m1, info.get());
    else callf(fn, pn, pn, pn, a->data(), &ld, tau->data(), &q, &m1, info.get());
    const int lw = lwork_of(q);
    auto work = buf<T>(lw);
    if (family == "geqrf")
      p.call = [=] { int a1 = lw; callf(fn, pn, pn, a->data(), &ld, tau->data(), work->data(), &a1, info.get()); return *info; };
    else
      p.call = [=] { int a1 = lw; callf(fn, pn, pn, pn, a->data(), &ld, tau->data(), work->data(), &a1, info.get()); return *info; };
  } else if (family == "gels" || family == "gelsd") {
    auto a0 = random_matrix<T>(n, n, rng), a = buf<T>(0), b0 = random_matrix<T>(n, n, rng), b = buf<T>(0);
    p.restore = [=] { copy_into(a0, a); copy_into(b0, b); };
    a->assign(a0->begin(), a0->end());
    b->assign(b0->begin(), b0->end());
    T q{};
    int m1 = -1;
    if (family == "gels") {
      callf(fn, "N", pn, pn, pn, a->data(), &ld, b->data(), &ld, &q, &m1, info.get(), L1);
      const int lw = lwork_of(q);
      auto work = buf<T>(lw);
      p.call = [=] { int a1 = lw; callf(fn, "N", pn, pn, pn, a->data(), &ld, b->data(), &ld, work->data(), &a1, info.get(), L1); return *info; };
    } else {
      auto s = std::make_shared<std::vector<RT>>(n);
      auto rank = std::make_shared<int>(0);
      static const RT rcond = -1;
      int iq = 0;
      RT rq = 0;
      if constexpr (is_complex<T>)
        callf(fn, pn, pn, pn, a->data(), &ld, b->data(), &ld, s->data(), &rcond, rank.get(), &q, &m1, &rq, &iq, info.get());
      else
        callf(fn, pn, pn, pn, a->data(), &ld, b->data(), &ld, s->data(), &rcond, rank.get(), &q, &m1, &iq, info.get());
      const int lw = lwork_of(q);
      auto work = buf<T>(lw);
      auto rwork = std::make_shared<std::vector<RT>>(std::max(1, int(rq) + 1));
      auto iwork = std::make_shared<std::vector<int>>(std::max(1, iq));
      p.call = [=] {
        int a1 = lw;
        if constexpr (is_complex<T>)
          callf(fn, pn, pn, pn, a->data(), &ld, b->data(), &ld, s->data(), &rcond, rank.get(), work->data(), &a1,
                rwork->data(), iwork->data(), info.get());
        else
          callf(fn, pn, pn, pn, a->data(), &ld, b->data(), &ld, s->data(), &rcond, rank.get(), work->data(), &a1,
                iwork->data(), info.get());
        return *info;
      };
    }
  } else if (family == "geev") {
    auto a0 = random_matrix<T>(n, n, rng), a = buf<T>(0);
    auto vr = buf<T>(size_t(n) * n), vl = buf<T>(1);
    auto wr = buf<T>(n), wi = buf<T>(n);
    p.restore = [=] { copy_into(a0, a); };
    a->assign(a0->begin(), a0->end());
    T q{};
    int m1 = -1;
    static const int one_i = 1;
    auto rwork = std::make_shared<std::vector<RT>>(2 * size_t(n));
    if constexpr (is_complex<T>)
      callf(fn, "N", "V", pn, a->data(), &ld, wr->data(), vl->data(), &one_i, vr->data(), &ld, &q, &m1, rwork->data(), info.get(), L1, L1);
    else
      callf(fn, "N", "V", pn, a->data(), &ld, wr->data(), wi->data(), vl->data(), &one_i, vr->data(), &ld, &q, &m1, info.get(), L1, L1);
    const int lw = lwork_of(q);
    auto work = buf<T>(lw);
    p.call = [=] {
      int a1 = lw;
      if constexpr (is_complex<T>)
        callf(fn, "N", "V", pn, a->data(), &ld, wr->data(), vl->data(), &one_i, vr->data(), &ld, work->data(), &a1,
              rwork->data(), info.get(), L1, L1);
      else
        callf(fn, "N", "V", pn, a->data(), &ld, wr->data(), wi->data(), vl->data(), &one_i, vr->data(), &ld, work->data(),
              &a1, info.get(), L1, L1);
      return *info;
    };
  } else {
    p.restore = noop;
    p.call = [] { return -1000; };
  }
  // Keep the size alive as long as the closures.
  auto inner = p.call;
  p.call = [inner, keep_n] { return inner(); };
  return p;
}

}  // namespace

void* exported_fn(char p, const char* routine) {
  const std::string name = std::string(1, p) + routine + "_";
  return dlsym(RTLD_DEFAULT, name.c_str());
}

MatrixProblem matrix_problem(char p, const std::string& problem, void* fn, int n, Rng& rng) {
  switch (p) {
    case 's': return prep<float>(problem, fn, n, rng);
    case 'd': return prep<double>(problem, fn, n, rng);
    case 'c': return prep<std::complex<float>>(problem, fn, n, rng);
    default: return prep<std::complex<double>>(problem, fn, n, rng);
  }
}

}  // namespace gofl::cli
