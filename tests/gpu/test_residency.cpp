// Residency on the GPU: a device copy kept from an earlier call serves a later one only while the
// host bytes are unchanged. For every way host memory can change, the call after the change must
// give the CPU library's result on the changed data (and say that it copied the operand), while the
// control without the change reuses the kept copy. Run under LD_PRELOAD=libgpuoffload.so with
// GPU_OFFLOAD_DEVICE=gpu (residency is on by default). A range is kept from its second upload on
// and reused from its third call (cuda/resident.h), so each test passes an operand twice first.
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "gpu_harness.h"
#include "trace/record.h"

namespace {

using dgemm_fn = void (*)(const char*, const char*, const int*, const int*, const int*, const double*, const double*,
                          const int*, const double*, const int*, const double*, double*, const int*);

constexpr int kN = 1024;  // 8 MB matrices: above the size worth keeping (4 MB)
constexpr size_t kElems = size_t(kN) * kN;
constexpr size_t kBytes = kElems * sizeof(double);

unsigned res_of(unsigned bits, int operand) { return GOFL_RESIDENCY_OF(bits, operand); }

// C = A(m x k, lda) * B (k x n): on the GPU through the wrapper, checked against the CPU library on
// the bytes as they are now. Returns the residency bits of the GPU call.
unsigned gemm_checked(const double* a, const double* b, int m = kN, int lda = kN) {
  const int n = kN, k = kN, ldb = kN;
  std::vector<double> c(size_t(m) * n, 7.0), ref(size_t(m) * n, 7.0);
  const double one = 1, zero = 0;
  gpu_test::intercepted<dgemm_fn>("dgemm_")("N", "N", &m, &n, &k, &one, a, &lda, b, &ldb, &zero, c.data(), &m);
  EXPECT_RAN_ON_GPU();
  const unsigned bits = gpu_test::last_call_resident();
  gpu_test::cpu<dgemm_fn>("dgemm_")("N", "N", &m, &n, &k, &one, a, &lda, b, &ldb, &zero, ref.data(), &m);
  EXPECT_LE(gpu_test::rel_diff(c.data(), ref.data(), m, n, m), 1e-10) << "stale device copy";
  return bits;
}

void fill(double* p, size_t n, uint64_t seed) {
  auto v = gpu_test::random_matrix<double>(int64_t(n), 1, int64_t(n), seed);
  std::memcpy(p, v.data(), n * sizeof(double));
}

// Page-aligned private anonymous memory (what malloc gives large arrays).
struct Anon {
  double* p = nullptr;
  size_t bytes = 0;
  explicit Anon(size_t b, int flags = MAP_PRIVATE | MAP_ANONYMOUS) : bytes(b) {
    void* m = mmap(nullptr, b, PROT_READ | PROT_WRITE, flags, -1, 0);
    p = m == MAP_FAILED ? nullptr : static_cast<double*>(m);
  }
  ~Anon() {
    if (p) munmap(p, bytes);
  }
};

// Sets up A (kept after a first call) and B, checks that an unchanged A is reused, applies
// `change` to A's host memory, and checks that the next call copies A again and is right.
template <class Change> void expect_change_seen(double* a, Change change, const char* what) {
  static uint64_t seed = 100;
  std::vector<double> b(kElems);
  fill(b.data(), kElems, ++seed);
  gemm_checked(a, b.data());  // A's first upload: not kept
  gemm_checked(a, b.data());  // its second: kept
  EXPECT_EQ(res_of(gemm_checked(a, b.data()), 0), GOFL_RES_KEPT) << what << ": the control must reuse A";
  change();
  EXPECT_EQ(res_of(gemm_checked(a, b.data()), 0), GOFL_RES_COPIED) << what << ": the change was not seen";
}

TEST(Residency, StoreByThisThread) {
  Anon a(kBytes);
  fill(a.p, kElems, 1);
  expect_change_seen(a.p, [&] { a.p[kElems / 2 + 3] += 1000.0; }, "a store in the middle");
  expect_change_seen(a.p, [&] { a.p[kElems - 1] -= 500.0; }, "a store to the last element");
}

TEST(Residency, StoreByAnotherThread) {
  Anon a(kBytes);
  fill(a.p, kElems, 2);
  expect_change_seen(a.p, [&] { std::thread([&] { a.p[12345] = 4242.0; }).join(); }, "another thread's store");
}

TEST(Residency, KernelWritesWithRead) {
  Anon a(kBytes);
  fill(a.p, kElems, 3);
  expect_change_seen(
      a.p,
      [&] {
        int fd[2];
        ASSERT_EQ(pipe(fd), 0);
        const double v[4] = {1e3, -2e3, 3e3, -4e3};
        ASSERT_EQ(write(fd[1], v, sizeof v), ssize_t(sizeof v));
        ASSERT_EQ(read(fd[0], a.p + 777, sizeof v), ssize_t(sizeof v));  // the kernel stores into A
        close(fd[0]);
        close(fd[1]);
      },
      "read() into A");
}

TEST(Residency, KernelWritesWithRecv) {
  Anon a(kBytes);
  fill(a.p, kElems, 4);
  expect_change_seen(
      a.p,
      [&] {
        int sv[2];
        ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        const double v[2] = {9e3, -9e3};
        ASSERT_EQ(send(sv[0], v, sizeof v, 0), ssize_t(sizeof v));
        ASSERT_EQ(recv(sv[1], a.p + kElems - 2, sizeof v, MSG_WAITALL), ssize_t(sizeof v));
        close(sv[0]);
        close(sv[1]);
      },
      "recv() into A");
}

TEST(Residency, MadviseDontneed) {
  Anon a(kBytes);
  fill(a.p, kElems, 5);
  // The pages read back as zeros afterwards: the kept copy is stale.
  expect_change_seen(a.p, [&] { ASSERT_EQ(madvise(a.p + 4096, 8 * 4096, MADV_DONTNEED), 0); }, "MADV_DONTNEED");
}

TEST(Residency, UnmapAndNewMappingAtTheSameAddress) {
  Anon a(kBytes);
  fill(a.p, kElems, 6);
  expect_change_seen(
      a.p,
      [&] {
        std::vector<double> other(kElems);
        fill(other.data(), kElems, 66);
        ASSERT_EQ(munmap(a.p, kBytes), 0);
        void* m = mmap(a.p, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        ASSERT_EQ(m, static_cast<void*>(a.p));
        std::memcpy(a.p, other.data(), kBytes);
      },
      "munmap + mmap at the same address");
}

TEST(Residency, FreeThenMallocAtTheSameAddress) {
  // Rows of A that no other test reads: the kept-copy history of earlier tests, whose buffers may
  // have had these very addresses, does not apply to this extent.
  const int kRows = kN - 8;
  // First a buffer glibc serves by mmap, then one from the heap. glibc's threshold between the two
  // moves with earlier frees (up to 32 MB), so each is set here. A heap buffer shares its first and
  // last pages with malloc's bookkeeping, which later allocations write: it may never be reused, and
  // only the mmap-served control must be.
  for (const bool from_heap : {false, true}) {
    ASSERT_EQ(mallopt(M_MMAP_THRESHOLD, from_heap ? 32 << 20 : 1 << 20), 1);
    double* a = static_cast<double*>(malloc(kBytes));
    ASSERT_NE(a, nullptr);
    fill(a, kElems, 7);
    std::vector<double> b(kElems);
    fill(b.data(), kElems, 8);
    gemm_checked(a, b.data(), kRows);
    gemm_checked(a, b.data(), kRows);
    const unsigned control = res_of(gemm_checked(a, b.data(), kRows), 0);
    if (!from_heap) {
      EXPECT_EQ(control, GOFL_RES_KEPT) << "the control must reuse the mmap-served buffer";
    }
    free(a);
    double* again = static_cast<double*>(malloc(kBytes));
    ASSERT_NE(again, nullptr);
    fill(again, kElems, 77);  // new contents, possibly at the same address
    const unsigned after = res_of(gemm_checked(again, b.data(), kRows), 0);  // the result is right either way
    if (again == a) {
      EXPECT_EQ(after, GOFL_RES_COPIED) << (from_heap ? "heap" : "mmap") << ": free + malloc not seen";
    }
    free(again);
  }
  mallopt(M_MMAP_THRESHOLD, 128 << 10);  // glibc's initial threshold, for the tests after this one
}

TEST(Residency, FileMappingWhoseFileChanges) {
  char path[] = "/tmp/gofl_residency_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  unlink(path);
  std::vector<double> v(kElems);
  fill(v.data(), kElems, 9);
  ASSERT_EQ(pwrite(fd, v.data(), kBytes, 0), ssize_t(kBytes));
  auto* a = static_cast<double*>(mmap(nullptr, kBytes, PROT_READ, MAP_PRIVATE, fd, 0));
  ASSERT_NE(a, MAP_FAILED);
  std::vector<double> b(kElems);
  fill(b.data(), kElems, 10);
  gemm_checked(a, b.data());
  gemm_checked(a, b.data());
  // The file changes behind the mapping, through another descriptor: no write by this mapping.
  const double big = 5e3;
  ASSERT_EQ(pwrite(fd, &big, sizeof big, 8 * 1000), ssize_t(sizeof big));
  EXPECT_EQ(res_of(gemm_checked(a, b.data()), 0), GOFL_RES_COPIED) << "a file mapping must never be reused";
  munmap(a, kBytes);
  close(fd);
}

TEST(Residency, CpuBlasCallWritesIt) {
  Anon a(kBytes);
  fill(a.p, kElems, 11);
  expect_change_seen(
      a.p,
      [&] {
        // The CPU library itself writes A (as the C of a product it computes).
        std::vector<double> x(kElems), y(kElems);
        fill(x.data(), kElems, 12);
        fill(y.data(), kElems, 13);
        const int n = kN;
        const double one = 1, zero = 0;
        gpu_test::cpu<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, x.data(), &n, y.data(), &n, &zero, a.p, &n);
      },
      "a CPU dgemm writing A");
}

TEST(Residency, ForkChildWritesItsCopyAndSharedMemoryIsNeverKept) {
  Anon a(kBytes);
  fill(a.p, kElems, 14);
  std::vector<double> b(kElems);
  fill(b.data(), kElems, 15);
  gemm_checked(a.p, b.data());
  gemm_checked(a.p, b.data());
  const pid_t pid = fork();
  if (pid == 0) {
    a.p[5] = 1e6;  // the child's own copy (copy on write): the parent's A is unchanged
    _exit(0);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  EXPECT_EQ(res_of(gemm_checked(a.p, b.data()), 0), GOFL_RES_KEPT) << "the parent's A did not change";
  a.p[6] = -1e6;  // the parent's own store after the fork
  EXPECT_EQ(res_of(gemm_checked(a.p, b.data()), 0), GOFL_RES_COPIED);

  // Shared memory can change without a store by this process: never kept.
  Anon s(kBytes, MAP_SHARED | MAP_ANONYMOUS);
  fill(s.p, kElems, 16);
  gemm_checked(s.p, b.data());
  gemm_checked(s.p, b.data());
  const pid_t pid2 = fork();
  if (pid2 == 0) {
    s.p[100] = 3e5;
    _exit(0);
  }
  waitpid(pid2, &st, 0);
  EXPECT_EQ(res_of(gemm_checked(s.p, b.data()), 0), GOFL_RES_COPIED);
}

TEST(Residency, GpuResultServesTheNextCall) {
  // Results are kept from 64 MB on (a smaller one costs more to check than to copy again).
  const int n = 4096;
  const size_t elems = size_t(n) * n;
  Anon a(elems * 8), b(elems * 8), c(elems * 8);
  fill(a.p, elems, 17);
  fill(b.p, elems, 18);
  const double one = 1, zero = 0;
  gpu_test::intercepted<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, a.p, &n, b.p, &n, &zero, c.p, &n);
  EXPECT_RAN_ON_GPU();
  // C = A B is still on the device: C A uses it without a copy, and is right.
  std::vector<double> d(elems), ref(elems);
  gpu_test::intercepted<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, c.p, &n, a.p, &n, &zero, d.data(), &n);
  EXPECT_RAN_ON_GPU();
  EXPECT_EQ(res_of(gpu_test::last_call_resident(), 0), GOFL_RES_OUTPUT) << "A of the second product is the first's result";
  gpu_test::cpu<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, c.p, &n, a.p, &n, &zero, ref.data(), &n);
  EXPECT_LE(gpu_test::rel_diff(d.data(), ref.data(), n, n, n), 1e-10);
  c.p[17] += 1.0;  // the program changes the result: the next product copies it
  gpu_test::intercepted<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, c.p, &n, a.p, &n, &zero, d.data(), &n);
  EXPECT_EQ(res_of(gpu_test::last_call_resident(), 0), GOFL_RES_COPIED);
  gpu_test::cpu<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, c.p, &n, a.p, &n, &zero, ref.data(), &n);
  EXPECT_LE(gpu_test::rel_diff(d.data(), ref.data(), n, n, n), 1e-10);
}

// C = W B (k = kN) written by the GPU into `c` (m x kN, ldc = kN): a result landing on a buffer.
void gpu_result_into(double* c, const double* w, const double* b, int m) {
  const int n = kN, k = kN, ld = kN;
  const double one = 1, zero = 0;
  gpu_test::intercepted<dgemm_fn>("dgemm_")("N", "N", &m, &n, &k, &one, w, &ld, b, &k, &zero, c, &ld);
  EXPECT_RAN_ON_GPU();
}

TEST(Residency, AnUploadOverwrittenByAGpuResultBeforeItServedIsNotKeptAgain) {
  // NumPy's results land where an earlier input was: a buffer alternating between inputs and
  // outputs would otherwise be kept, at the cost of a digest of every byte, at each of its uploads.
  // As with a change the check finds, its range is not kept again after such an overwrite.
  const int m = kN - 24;  // an extent of its own: no other test's history of the range applies
  Anon a(kBytes), w(kBytes);
  fill(a.p, kElems, 31);
  fill(w.p, kElems, 32);
  std::vector<double> b(kElems);
  fill(b.data(), kElems, 33);
  {  // The control: the same steps without the overwrite reuse the kept copy.
    Anon ctl(kBytes);
    fill(ctl.p, kElems, 34);
    gemm_checked(ctl.p, b.data(), m, kN);
    gemm_checked(ctl.p, b.data(), m, kN);
    ASSERT_EQ(res_of(gemm_checked(ctl.p, b.data(), m, kN), 0), GOFL_RES_KEPT) << "the control must reuse A";
  }
  gemm_checked(a.p, b.data(), m, kN);  // A's first upload: not kept
  gemm_checked(a.p, b.data(), m, kN);  // its second: kept under the content check
  gpu_result_into(a.p, w.p, b.data(), m);  // before the kept copy served a call
  gemm_checked(a.p, b.data(), m, kN);
  gemm_checked(a.p, b.data(), m, kN);
  EXPECT_EQ(res_of(gemm_checked(a.p, b.data(), m, kN), 0), GOFL_RES_COPIED)
      << "a range overwritten before it served was kept again";
}

TEST(Residency, ARangeFoundChangedIsNotLeftWriteProtected) {
  // A kept copy found changed at its first reuse: the sampled check sees it before page tracking
  // would protect the range, so the program's next writes to it take no fault. The kernel reports a
  // page's write protection in bit 57 of its /proc/self/pagemap entry. (Where the kernel offers no
  // page tracking nothing is ever protected, and only the result and its residency bit are tested.)
  // An extent of its own (m rows of lda = kN): the range is barred from being kept after this test,
  // and a later test's matrix at the same address must not inherit that (on an H200, with the whole
  // 1024 x 1024 extent, SubMatrixOfAKeptMatrix and FactorsKeptForRepeatedSolves did).
  const int m = kN - 56;
  Anon a(kBytes);
  fill(a.p, kElems, 38);
  std::vector<double> b(kElems);
  fill(b.data(), kElems, 39);
  gemm_checked(a.p, b.data(), m, kN);
  gemm_checked(a.p, b.data(), m, kN);                 // kept under the content check
  for (size_t i = 0; i < kElems; ++i) a.p[i] *= 1.5;  // the program rewrites all of A
  EXPECT_EQ(res_of(gemm_checked(a.p, b.data(), m, kN), 0), GOFL_RES_COPIED);
  const int fd = open("/proc/self/pagemap", O_RDONLY);
  ASSERT_GE(fd, 0);
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  int protected_pages = 0, pages = 0;
  for (size_t off = 0; off < kBytes; off += 64 * page, ++pages) {
    uint64_t entry = 0;
    ASSERT_EQ(pread(fd, &entry, sizeof entry, off_t((reinterpret_cast<uintptr_t>(a.p) + off) / page * sizeof entry)),
              ssize_t(sizeof entry));
    protected_pages += int((entry >> 57) & 1);
  }
  close(fd);
  EXPECT_EQ(protected_pages, 0) << "of " << pages << " pages sampled";
}

TEST(Residency, SubMatrixOfAKeptMatrix) {
  Anon a(kBytes);
  fill(a.p, kElems, 19);
  std::vector<double> b(kElems);
  fill(b.data(), kElems, 20);
  gemm_checked(a.p, b.data());
  gemm_checked(a.p, b.data());
  // Rows 100..899 of A (lda = kN): a sub-matrix of the kept copy.
  EXPECT_EQ(res_of(gemm_checked(a.p + 100, b.data(), 800, kN), 0), GOFL_RES_KEPT);
  a.p[100 + 5 * kN] += 100.0;  // inside the sub-matrix
  EXPECT_EQ(res_of(gemm_checked(a.p + 100, b.data(), 800, kN), 0), GOFL_RES_COPIED);
}

TEST(Residency, FactorsKeptForRepeatedSolves) {
  using dgetrf_fn = void (*)(const int*, const int*, double*, const int*, int*, int*);
  using dgetrs_fn = void (*)(const char*, const int*, const int*, const double*, const int*, const int*, double*,
                             const int*, int*);
  const int n = kN, nrhs = 64;
  Anon lu(kBytes);
  fill(lu.p, kElems, 21);
  for (int i = 0; i < n; ++i) lu.p[i + size_t(i) * n] += n;  // well conditioned
  std::vector<int> piv(n);
  int info = -1;
  gpu_test::intercepted<dgetrf_fn>("dgetrf_")(&n, &n, lu.p, &n, piv.data(), &info);
  EXPECT_RAN_ON_GPU();
  ASSERT_EQ(info, 0);
  for (int rep = 0; rep < 4; ++rep) {
    std::vector<double> x(size_t(n) * nrhs), ref;
    fill(x.data(), x.size(), 30 + rep);
    ref = x;
    gpu_test::intercepted<dgetrs_fn>("dgetrs_")("N", &n, &nrhs, lu.p, &n, piv.data(), x.data(), &n, &info);
    EXPECT_RAN_ON_GPU();
    // 8 MB factors: copied at the first two solves (kept from the second), reused from the third.
    if (rep >= 2) {
      EXPECT_EQ(res_of(gpu_test::last_call_resident(), 0), GOFL_RES_KEPT) << "the factors stay on the GPU";
    }
    gpu_test::cpu<dgetrs_fn>("dgetrs_")("N", &n, &nrhs, lu.p, &n, piv.data(), ref.data(), &n, &info);
    EXPECT_LE(gpu_test::rel_diff(x.data(), ref.data(), n, nrhs, n), 1e-10);
  }
  lu.p[3] *= 2;  // the program changes the factors: the next solve must use the new ones
  std::vector<double> x(size_t(n) * nrhs), ref;
  fill(x.data(), x.size(), 40);
  ref = x;
  gpu_test::intercepted<dgetrs_fn>("dgetrs_")("N", &n, &nrhs, lu.p, &n, piv.data(), x.data(), &n, &info);
  EXPECT_EQ(res_of(gpu_test::last_call_resident(), 0), GOFL_RES_COPIED);
  gpu_test::cpu<dgetrs_fn>("dgetrs_")("N", &n, &nrhs, lu.p, &n, piv.data(), ref.data(), &n, &info);
  EXPECT_LE(gpu_test::rel_diff(x.data(), ref.data(), n, nrhs, n), 1e-10);
}

// A thin product whose B is kept and whose A is new at every call (NumPy's A @ X_i): column panels
// of C multiply with the kept B and come back while later panels compute (blas3.cpp). A as stored
// ('N', lda at and above m) and transposed ('T'), C with ldc above m: every element of C equals the
// CPU library's within the tolerance, and the rows of C's storage beyond m are untouched. A failure
// after the first panel was written gives the CPU's result, bit for bit, and the kept B stays valid.
TEST(Residency, ThinProductsWithAKeptMatrix) {
  const int m = 200, n = 2048, k = 2048, ldc = 256;  // A: 3.3 MB, below the size worth keeping
  Anon b(size_t(k) * n * 8);
  fill(b.p, size_t(k) * n, 51);
  const double one = 1, zero = 0;
  auto gemm = gpu_test::intercepted<dgemm_fn>("dgemm_");
  auto ref_gemm = gpu_test::cpu<dgemm_fn>("dgemm_");
  int call = 0;
  for (const char* ta : {"N", "N", "N", "N", "T"}) {
    const int lda = ta[0] == 'N' ? (call < 3 ? m : 256) : k + 8;
    const size_t a_elems = size_t(lda) * (ta[0] == 'N' ? k : m);
    std::vector<double> a(a_elems), c(size_t(ldc) * n, 7.0), ref(c);
    fill(a.data(), a_elems, 60 + call);
    gemm(ta, "N", &m, &n, &k, &one, a.data(), &lda, b.p, &k, &zero, c.data(), &ldc);
    EXPECT_RAN_ON_GPU();
    const unsigned bits = gpu_test::last_call_resident();
    ref_gemm(ta, "N", &m, &n, &k, &one, a.data(), &lda, b.p, &k, &zero, ref.data(), &ldc);
    EXPECT_LE(gpu_test::rel_diff(c.data(), ref.data(), m, n, ldc), 1e-10) << "call " << call << ", op(A) " << ta;
    for (int j = 0; j < n; ++j)
      for (int i = m; i < ldc; ++i) ASSERT_EQ(c[size_t(j) * ldc + i], 7.0) << "C(" << i << ", " << j << ") written";
    // B is kept at its second upload and serves from the third call on.
    if (call >= 2) {
      EXPECT_EQ(res_of(bits, 1), GOFL_RES_KEPT) << "call " << call;
    }
    ++call;
  }
  for (const char* fault : {"panel", "compute", "d2h-before"}) {
    std::vector<double> a(size_t(m) * k), c(size_t(ldc) * n, 7.0), ref(c);
    fill(a.data(), a.size(), 70);
    gpu_test::set_fault(fault);
    gemm("N", "N", &m, &n, &k, &one, a.data(), &m, b.p, &k, &zero, c.data(), &ldc);
    gpu_test::set_fault(nullptr);
    const auto lc = gpu_test::last_call();
    EXPECT_EQ(lc.device, 0) << fault;
    EXPECT_EQ(lc.gpu_status, GOFL_GPU_INJECTED) << fault;
    ref_gemm("N", "N", &m, &n, &k, &one, a.data(), &m, b.p, &k, &zero, ref.data(), &ldc);
    EXPECT_EQ(std::memcmp(c.data(), ref.data(), c.size() * sizeof(double)), 0) << fault << ": not the CPU's result";
  }
  std::vector<double> a(size_t(m) * k), c(size_t(ldc) * n, 7.0), ref(c);
  fill(a.data(), a.size(), 71);
  gemm("N", "N", &m, &n, &k, &one, a.data(), &m, b.p, &k, &zero, c.data(), &ldc);
  EXPECT_RAN_ON_GPU();
  EXPECT_EQ(res_of(gpu_test::last_call_resident(), 1), GOFL_RES_KEPT) << "the failed calls dropped the kept B";
  ref_gemm("N", "N", &m, &n, &k, &one, a.data(), &m, b.p, &k, &zero, ref.data(), &ldc);
  EXPECT_LE(gpu_test::rel_diff(c.data(), ref.data(), m, n, ldc), 1e-10);
}

// The same shape large enough for A to go up in pieces over k that multiply as they arrive
// (blas3.cpp, gemm_k_pieces): A 16 MB (m = 256, k = 8192:
// three pieces, the last one shorter), B kept as stored ('N') and transposed ('T'), A as stored
// with lda at and above m, C with ldc above m. Every element of C equals the CPU library's within
// the tolerance and the rows of C's storage beyond m are untouched. A failure while earlier pieces'
// kernels are queued ("piece"), after the last one ("compute") or between panels of the copy-out
// ("panel") gives the CPU's result bit for bit, and the kept B serves the next call.
TEST(Residency, ProductsInPiecesOverKWithAKeptMatrix) {
  const int m = 256, n = 4096, k = 8192, ldc = 264;
  const double one = 1, zero = 0;
  auto gemm = gpu_test::intercepted<dgemm_fn>("dgemm_");
  auto ref_gemm = gpu_test::cpu<dgemm_fn>("dgemm_");
  for (const char* tb : {"N", "T"}) {
    const int ldb = tb[0] == 'N' ? k : n;
    Anon b(size_t(k) * n * 8);
    fill(b.p, size_t(k) * n, tb[0] == 'N' ? 81 : 82);
    for (int call = 0; call < 5; ++call) {
      const int lda = call < 3 ? m : m + 40;
      std::vector<double> a(size_t(lda) * k), c(size_t(ldc) * n, 7.0), ref(c);
      fill(a.data(), a.size(), 90 + call);
      gemm("N", tb, &m, &n, &k, &one, a.data(), &lda, b.p, &ldb, &zero, c.data(), &ldc);
      EXPECT_RAN_ON_GPU();
      const unsigned bits = gpu_test::last_call_resident();
      ref_gemm("N", tb, &m, &n, &k, &one, a.data(), &lda, b.p, &ldb, &zero, ref.data(), &ldc);
      EXPECT_LE(gpu_test::rel_diff(c.data(), ref.data(), m, n, ldc), 1e-10) << "call " << call << ", op(B) " << tb;
      for (int j = 0; j < n; ++j)
        for (int i = m; i < ldc; ++i) ASSERT_EQ(c[size_t(j) * ldc + i], 7.0) << "C(" << i << ", " << j << ") written";
      if (call >= 2) {
        EXPECT_EQ(res_of(bits, 1), GOFL_RES_KEPT) << "call " << call << ", op(B) " << tb;
      }
    }
    for (const char* fault : {"piece", "compute", "panel"}) {
      std::vector<double> a(size_t(m) * k), c(size_t(ldc) * n, 7.0), ref(c);
      fill(a.data(), a.size(), 99);
      gpu_test::set_fault(fault);
      gemm("N", tb, &m, &n, &k, &one, a.data(), &m, b.p, &ldb, &zero, c.data(), &ldc);
      gpu_test::set_fault(nullptr);
      const auto lc = gpu_test::last_call();
      EXPECT_EQ(lc.device, 0) << fault;
      EXPECT_EQ(lc.gpu_status, GOFL_GPU_INJECTED) << fault;
      ref_gemm("N", tb, &m, &n, &k, &one, a.data(), &m, b.p, &ldb, &zero, ref.data(), &ldc);
      EXPECT_EQ(std::memcmp(c.data(), ref.data(), c.size() * sizeof(double)), 0) << fault << ": not the CPU's result";
    }
    std::vector<double> a(size_t(m) * k), c(size_t(ldc) * n, 7.0), ref(c);
    fill(a.data(), a.size(), 100);
    gemm("N", tb, &m, &n, &k, &one, a.data(), &m, b.p, &ldb, &zero, c.data(), &ldc);
    EXPECT_RAN_ON_GPU();
    EXPECT_EQ(res_of(gpu_test::last_call_resident(), 1), GOFL_RES_KEPT) << "the failed calls dropped the kept B";
    ref_gemm("N", tb, &m, &n, &k, &one, a.data(), &m, b.p, &ldb, &zero, ref.data(), &ldc);
    EXPECT_LE(gpu_test::rel_diff(c.data(), ref.data(), m, n, ldc), 1e-10);
  }
}

// Kept copies give way when device memory runs short: a call that needs the memory still runs on
// the GPU, and never fails for lack of it.
TEST(Residency, KeptCopiesGiveWayWhenMemoryRunsShort) {
  void* rt = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);
  if (!rt) rt = dlopen("libcudart.so", RTLD_NOW | RTLD_NOLOAD);
  if (!rt) GTEST_SKIP() << "the CUDA runtime is not loaded in this process";
  using info_fn = int (*)(size_t*, size_t*);
  using malloc_fn = int (*)(void**, size_t);
  using free_fn = int (*)(void*);
  auto mem_info = reinterpret_cast<info_fn>(dlsym(rt, "cudaMemGetInfo"));
  auto dev_malloc = reinterpret_cast<malloc_fn>(dlsym(rt, "cudaMalloc"));
  auto dev_free = reinterpret_cast<free_fn>(dlsym(rt, "cudaFree"));
  ASSERT_TRUE(mem_info && dev_malloc && dev_free);
  // Keep several large matrices on the device.
  const int n = 8192;
  const size_t elems = size_t(n) * n;
  std::vector<Anon> kept;
  std::vector<double> b(elems);
  fill(b.data(), elems, 50);
  kept.reserve(4);
  for (int i = 0; i < 4; ++i) {
    kept.emplace_back(elems * sizeof(double));
    fill(kept.back().p, elems, 51 + i);
    std::vector<double> c(elems);
    const double one = 1, zero = 0;
    for (int twice = 0; twice < 2; ++twice) {  // kept from the second upload
      gpu_test::intercepted<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, kept.back().p, &n, b.data(), &n, &zero,
                                                c.data(), &n);
      EXPECT_RAN_ON_GPU();
    }
  }
  // Another user takes what is free but the level's reserve (level 5: 30% of the card) and 0.5 GB;
  // the next call needs 1.5 GB, which only evicting kept copies (2 GB) provides.
  size_t free_b = 0, total = 0;
  ASSERT_EQ(mem_info(&free_b, &total), 0);
  void* hog = nullptr;
  const size_t leave = size_t(0.3 * double(total)) + (size_t(1) << 29);
  const size_t take = free_b > leave ? free_b - leave : 0;
  if (take) {
    ASSERT_EQ(dev_malloc(&hog, take), 0);
  }
  Anon a(elems * sizeof(double));
  fill(a.p, elems, 60);
  std::vector<double> c(elems), ref(elems);
  const double one = 1, zero = 0;
  gpu_test::intercepted<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, a.p, &n, b.data(), &n, &zero, c.data(), &n);
  const gpu_test::LastCall lc = gpu_test::last_call();
  if (hog) dev_free(hog);
  EXPECT_EQ(lc.device, 1) << "reason " << lc.reason << " status " << lc.gpu_status;
  gpu_test::cpu<dgemm_fn>("dgemm_")("N", "N", &n, &n, &n, &one, a.p, &n, b.data(), &n, &zero, ref.data(), &n);
  EXPECT_LE(gpu_test::rel_diff(c.data(), ref.data(), n, n, n), 1e-10);
}

}  // namespace
