// Unit tests of the pieces every wrapper relies on: settings parsing, operand extents, CBLAS flag
// mapping, fingerprints, the generated table, the trace format's fixed layout and how the GPU
// backend cuts a transfer into pieces.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "common/table.h"
#include "cuda/pieces.h"
#include "policy/settings.h"
#include "preload/fingerprint.h"
#include "preload/wrapper_support.h"
#include "trace/call_record.h"
#include "trace/record.h"

namespace {

std::map<std::string, std::string> g_env;
const char* fake_getenv(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

gofl::Settings parse(std::map<std::string, std::string> env, std::string* msgs) {
  g_env = std::move(env);
  return gofl::parse_settings(fake_getenv, msgs);
}

}  // namespace

TEST(Settings, Defaults) {
  std::string msgs;
  gofl::Settings s = parse({}, &msgs);
  EXPECT_EQ(s.device, gofl::DeviceMode::Auto);
  EXPECT_EQ(s.level, 5);
  EXPECT_DOUBLE_EQ(s.threshold, 1e6);
  EXPECT_TRUE(s.trace_dir.empty());
  EXPECT_FALSE(s.summary);
  EXPECT_TRUE(msgs.empty());
}

TEST(Settings, ValidValues) {
  std::string msgs;
  gofl::Settings s = parse({{"GPU_OFFLOAD_DEVICE", "gpu"}, {"GPU_OFFLOAD_LEVEL", "9"}, {"GPU_OFFLOAD_SUMMARY", "yes"},
                            {"GPU_OFFLOAD_TRACE", "/tmp/t"}, {"GPU_OFFLOAD_THRESHOLD", "2.5e7"}},
                           &msgs);
  EXPECT_EQ(s.device, gofl::DeviceMode::Gpu);
  EXPECT_EQ(s.level, 9);
  EXPECT_TRUE(s.summary);
  EXPECT_EQ(s.trace_dir, "/tmp/t");
  EXPECT_DOUBLE_EQ(s.threshold, 2.5e7);
  EXPECT_TRUE(msgs.empty()) << msgs;
}

TEST(Settings, InvalidValuesNameTheValidOnesAndKeepDefaults) {
  std::string msgs;
  gofl::Settings s = parse({{"GPU_OFFLOAD_DEVICE", "tpu"}, {"GPU_OFFLOAD_LEVEL", "11"}, {"GPU_OFFLOAD_SUMMARY", "maybe"},
                            {"GPU_OFFLOAD_THRESHOLD", "-3"}},
                           &msgs);
  EXPECT_EQ(s.device, gofl::DeviceMode::Auto);
  EXPECT_EQ(s.level, 5);
  EXPECT_FALSE(s.summary);
  EXPECT_DOUBLE_EQ(s.threshold, 1e6);
  EXPECT_NE(msgs.find("GPU_OFFLOAD_DEVICE='tpu' is not valid (use cpu, gpu or auto)"), std::string::npos) << msgs;
  EXPECT_NE(msgs.find("GPU_OFFLOAD_LEVEL='11'"), std::string::npos) << msgs;
  EXPECT_NE(msgs.find("1 to 10"), std::string::npos) << msgs;
  EXPECT_NE(msgs.find("GPU_OFFLOAD_SUMMARY='maybe'"), std::string::npos) << msgs;
  EXPECT_NE(msgs.find("GPU_OFFLOAD_THRESHOLD='-3'"), std::string::npos) << msgs;
}

TEST(Settings, LevelRejectsTrailingGarbage) {
  std::string msgs;
  EXPECT_EQ(parse({{"GPU_OFFLOAD_LEVEL", "7x"}}, &msgs).level, 5);
  EXPECT_EQ(parse({{"GPU_OFFLOAD_LEVEL", "0"}}, &msgs).level, 5);
  EXPECT_EQ(parse({{"GPU_OFFLOAD_LEVEL", "10"}}, &msgs).level, 10);
}

TEST(Extents, ColumnAndRowMajor) {
  // 3 x 4 column-major with ld 5: the last column starts at 15, ends at 18.
  EXPECT_EQ(gofl::mat_extent(false, 3, 4, 5), 18);
  // Row-major: 3 rows of 4 with ld 5 -> 2 * 5 + 4.
  EXPECT_EQ(gofl::mat_extent(true, 3, 4, 5), 14);
  EXPECT_EQ(gofl::mat_extent(false, 0, 4, 5), 0);
  EXPECT_EQ(gofl::mat_extent(false, 3, 0, 5), 0);
  EXPECT_EQ(gofl::mat_extent(false, -1, 4, 5), 0);
  EXPECT_EQ(gofl::vec_extent(4, 1), 4);
  EXPECT_EQ(gofl::vec_extent(4, -3), 10);
  EXPECT_EQ(gofl::vec_extent(0, 2), 0);
}

TEST(Cblas, FlagsMapToFortranCharacters) {
  EXPECT_EQ(gofl::cblas_flag(111), 'N');
  EXPECT_EQ(gofl::cblas_flag(112), 'T');
  EXPECT_EQ(gofl::cblas_flag(113), 'C');
  EXPECT_EQ(gofl::cblas_flag(121), 'U');
  EXPECT_EQ(gofl::cblas_flag(122), 'L');
  EXPECT_EQ(gofl::cblas_flag(131), 'N');
  EXPECT_EQ(gofl::cblas_flag(132), 'U');
  EXPECT_EQ(gofl::cblas_flag(141), 'L');
  EXPECT_EQ(gofl::cblas_flag(142), 'R');
  EXPECT_EQ(gofl::cblas_flag(7), '?');
  EXPECT_EQ(gofl::cblas_flag(GOFL_CBLAS_ROW_MAJOR), '?');  // the layout is no flag
}

TEST(Fingerprint, SeesChangesAtSampledWordsAndLength) {
  std::vector<double> a(1000, 1.0);
  const uint32_t f0 = gofl::fingerprint(a.data(), a.size() * 8);
  EXPECT_NE(f0, 0u);
  EXPECT_EQ(f0, gofl::fingerprint(a.data(), a.size() * 8));
  a.back() = 2.0;  // the last word is always sampled
  EXPECT_NE(f0, gofl::fingerprint(a.data(), a.size() * 8));
  a.back() = 1.0;
  EXPECT_NE(f0, gofl::fingerprint(a.data(), (a.size() - 1) * 8));
  EXPECT_EQ(gofl::fingerprint(nullptr, 8), 0u);
  EXPECT_EQ(gofl::fingerprint(a.data(), 0), 0u);
  const char small[3] = {1, 2, 3};
  EXPECT_NE(gofl::fingerprint(small, 3), 0u);  // shorter than a word: no read past the end
}

TEST(Table, EveryRoutinePrecisionAndSchemeIsExported) {
  // 4 schemes; Fortran for every op, CBLAS for the BLAS ones.
  int fortran = 0, cblas = 0;
  for (const auto& s : gofl_syms) (s.iface == GOFL_IFACE_FORTRAN ? fortran : cblas)++;
  EXPECT_EQ(fortran % 4, 0);
  EXPECT_EQ(cblas % 4, 0);
  // gemm symm hemm syrk herk syr2k her2k trmm trsm gemv symv hemv trsv copy in their precisions
  EXPECT_EQ(cblas / 4, 46);
  const char* names[] = {"dgemm_", "cblas_dgemm", "scipy_dgemm_", "scipy_cblas_dgemm", "scipy_dgemm_64_",
                         "scipy_cblas_dgemm64_", "dgemm_64_", "cblas_dgemm64_", "zheevd_", "scipy_dsyevr_",
                         "scipy_zgesdd_64_", "sgeev_64_", "cungqr_", "dorgqr_", "scipy_dcopy_64_", "cblas_zcopy"};
  for (const char* n : names) {
    bool found = false;
    for (const auto& s : gofl_syms) found |= strcmp(s.name, n) == 0;
    EXPECT_TRUE(found) << n;
  }
  EXPECT_EQ(gofl_op_by_name("dsyevd"), OP_dsyevd);
  EXPECT_EQ(gofl_op_by_name("csyevd"), -1);  // complex symmetric eigensolvers are heevd
  EXPECT_STREQ(gofl_ops[OP_zgemm].routine, "gemm");
  EXPECT_TRUE(gofl_ops[OP_zgemm].complex);
  EXPECT_TRUE(gofl_ops[OP_dgemv].gpu_capable);
  EXPECT_TRUE(gofl_ops[OP_dgeevx].gpu_capable);
  EXPECT_FALSE(gofl_ops[OP_dcopy].gpu_capable);  // measured only
  EXPECT_TRUE(gofl_syms[S_scipy_dgemm_64_].ilp64);
  EXPECT_FALSE(gofl_syms[S_scipy_dgemm_].ilp64);
}

TEST(TraceFormat, LayoutIsFixed) {
  EXPECT_EQ(sizeof(gofl_record), 232u);
  EXPECT_EQ(sizeof(gofl_file_header), 512u);
  EXPECT_EQ(offsetof(gofl_record, u), 8u);
  EXPECT_EQ(std::strlen(GOFL_TRACE_MAGIC), 8u);
}

// Old traces hold these numbers: the words the report prints for them must not move.
TEST(TraceFormat, CodesKeepTheirNumbersAndEachHasItsOwnName) {
  EXPECT_STREQ(gofl_reason_name(GOFL_R_BELOW_THRESHOLD), "below threshold");
  EXPECT_EQ(int(GOFL_R_VERIFY), 17);
  EXPECT_STREQ(gofl_reason_name(17), "verified");
  EXPECT_STREQ(gofl_gpu_status_name(9), "copy-out failed");
  EXPECT_STREQ(gofl_device_mode_name(2), "auto");
  EXPECT_EQ(gofl_device_mode_by_name("gpu"), 1);
  EXPECT_EQ(gofl_device_mode_by_name("GPU"), -1);
  EXPECT_STREQ(gofl_reason_name(GOFL_R_COUNT), "?");
  EXPECT_STREQ(gofl_gpu_status_name(-1), "unknown status");
  std::map<std::string, int> reasons, statuses;
  for (int r = 0; r < GOFL_R_COUNT; ++r) EXPECT_TRUE(reasons.emplace(gofl_reason_name(r), r).second) << r;
  for (int s = 0; s < GOFL_GPU_STATUS_COUNT; ++s) EXPECT_TRUE(statuses.emplace(gofl_gpu_status_name(s), s).second) << s;
  EXPECT_EQ(reasons.count("?"), 0u);
  EXPECT_EQ(statuses.count("unknown status"), 0u);
}

// What the dispatcher records is what a replay reads back: operation, sizes, work and operand roles.
TEST(TraceFormat, ACallSurvivesTheRecordAndBack) {
  static double a[4], b[4];
  gofl_call c{};
  c.op = OP_dgemm;
  c.sym = S_dgemm_;
  c.dims[0] = c.dims[1] = c.dims[2] = 2;
  c.flops = 16;
  c.device = GOFL_DEV_GPU;
  c.reason = GOFL_R_OFFLOADED;
  c.n_operands = 2;
  c.operands[0] = gofl_call_operand{a, 4, 8, GOFL_IN, 6};
  c.operands[1] = gofl_call_operand{b, 4, 8, GOFL_INOUT, 11};
  c.fp_in[0] = 7;
  c.fp_in[1] = 8;
  gofl::CallEnd end;
  end.duration_ns = 1234;
  end.info = 3;
  end.fp_out[1] = 9;
  const gofl_call_record r = gofl::record_from_call(c, end);
  EXPECT_EQ(r.op, OP_dgemm);
  EXPECT_EQ(r.duration_ns, 1234u);
  EXPECT_EQ(r.info, 3);
  EXPECT_EQ(r.reason, GOFL_R_OFFLOADED);
  EXPECT_EQ(r.n_operands, 2);
  EXPECT_EQ(r.operands[1].addr, reinterpret_cast<uint64_t>(b));
  EXPECT_EQ(r.operands[1].bytes, 32u);
  EXPECT_EQ(r.operands[0].fp_out, 0u);
  const gofl_call back = gofl::call_from_record(r);
  EXPECT_EQ(back.op, OP_dgemm);
  EXPECT_EQ(back.flops, 16);
  EXPECT_EQ(back.dims[2], 2);
  ASSERT_EQ(back.n_operands, 2);
  EXPECT_EQ(back.operands[0].role, GOFL_IN);
  EXPECT_EQ(back.operands[1].role, GOFL_INOUT);
  EXPECT_EQ(back.operands[1].elems * back.operands[1].elem_size, 32);
  c.flags = GOFL_F_QUERY;  // a workspace query records no work
  EXPECT_EQ(gofl::record_from_call(c, end).flops, 0);
}

// ---- the pieces of a staged transfer (src/cuda/pieces.h) ---------------------------------------

TEST(TransferPieces, CoverEveryByteOnceInOrderWithinABuffer) {
  const size_t MB = size_t(1) << 20;
  for (size_t chunk : {8 * MB, 3 * MB, 768 * size_t(1024)})
    for (size_t ramp : {size_t(0), 64 * size_t(1024), MB, 4 * MB, chunk, 2 * chunk})
      for (size_t total : {size_t(0), size_t(8), MB - 16, MB, 5 * MB + 24, 16 * MB, 16 * MB + 8, 40 * MB + 16}) {
        const auto ps = gofl::transfer_pieces(total, chunk, ramp);
        size_t at = 0;
        for (const auto& [off, n] : ps) {
          EXPECT_EQ(off, at) << chunk << " " << ramp << " " << total;
          EXPECT_GT(n, 0u);
          EXPECT_LE(n, chunk);
          at += n;
        }
        EXPECT_EQ(at, total) << chunk << " " << ramp << " " << total;
      }
}

TEST(TransferPieces, RampUpAndDownAtTheEnds) {
  const size_t MB = size_t(1) << 20;
  using P = std::vector<std::pair<size_t, size_t>>;
  // A 16 MB panel with 8 MB buffers and 4 MB ends: 4, 8, 4 (three steps, two of them half-size).
  EXPECT_EQ(gofl::transfer_pieces(16 * MB, 8 * MB, 4 * MB), (P{{0, 4 * MB}, {4 * MB, 8 * MB}, {12 * MB, 4 * MB}}));
  // 1 MB ends double towards the buffer size and shrink again.
  EXPECT_EQ(gofl::transfer_pieces(32 * MB, 8 * MB, MB),
            (P{{0, MB}, {MB, 2 * MB}, {3 * MB, 4 * MB}, {7 * MB, 8 * MB}, {15 * MB, 2 * MB},
               {17 * MB, 8 * MB}, {25 * MB, 4 * MB}, {29 * MB, 2 * MB}, {31 * MB, MB}}));
  // No ramp: whole buffers from both ends, the rest between them.
  EXPECT_EQ(gofl::transfer_pieces(20 * MB, 8 * MB, 0), (P{{0, 8 * MB}, {8 * MB, 4 * MB}, {12 * MB, 8 * MB}}));
  // Smaller than the first piece: one piece.
  EXPECT_EQ(gofl::transfer_pieces(100, 8 * MB, 4 * MB), (P{{0, 100}}));
  EXPECT_TRUE(gofl::transfer_pieces(0, 8 * MB, 4 * MB).empty());
}
