// How an FFTW plan creator's arguments become the transform the GPU runs (src/fftw/plan_info.cpp):
// FFTW's default layouts for plan_many (embeds, in-place padding of real transforms), the sign of
// each kind, what stays on FFTW, and whether FFTW may overwrite the input.
#include <gtest/gtest.h>

#include "fftw/plan_info.h"
#include "trace/record.h"

namespace {

using gofl::fftw::Dim;
using gofl::fftw::Kind;
using gofl::fftw::PlanInfo;

void expect_dim(const gofl_fft_dim& d, int64_t n, int64_t is, int64_t os) {
  EXPECT_EQ(d.n, n);
  EXPECT_EQ(d.is, is);
  EXPECT_EQ(d.os, os);
}

constexpr unsigned kEstimate = 1u << 6, kPreserveInput = 1u << 4, kDestroyInput = 1u;

TEST(FftPlan, ManyComplexDefaultLayout) {
  const int n[2] = {4, 6};
  double in[2 * 72] = {}, out[2 * 72] = {};
  PlanInfo p = gofl::fftw::describe_many(Kind::C2C, false, 2, n, 3, in, nullptr, 1, 24, out, nullptr, 1, 24, +1, kEstimate);
  const gofl_fft& f = p.fft;
  EXPECT_EQ(f.kind, GOFL_FFT_C2C);
  EXPECT_EQ(f.single, 0);
  EXPECT_EQ(f.sign, 1);
  EXPECT_EQ(f.representable, 1);
  ASSERT_EQ(f.rank, 2);
  ASSERT_EQ(f.loop_rank, 1);
  expect_dim(f.dims[0], 4, 6, 6);
  expect_dim(f.dims[1], 6, 1, 1);
  expect_dim(f.loop[0], 3, 24, 24);
  EXPECT_EQ(f.in, in);
  EXPECT_EQ(f.out, out);
  EXPECT_EQ(f.in_elems, 72);
  EXPECT_EQ(f.out_elems, 72);
  EXPECT_EQ(f.in_elem, 16u);
  EXPECT_EQ(p.in_role, uint32_t(GOFL_IN));
}

TEST(FftPlan, InPlaceRealTransformsArePadded) {
  const int n[2] = {5, 8};
  float buf[5 * 10] = {};
  // r2c in place: the real side holds 2 (n/2 + 1) = 10 per row, the complex side 5; always forward.
  PlanInfo p = gofl::fftw::describe_many(Kind::R2C, true, 2, n, 1, buf, nullptr, 1, 0, buf, nullptr, 1, 0, 0, kEstimate);
  EXPECT_EQ(p.fft.sign, -1);
  EXPECT_EQ(p.fft.single, 1);
  expect_dim(p.fft.dims[0], 5, 10, 5);
  expect_dim(p.fft.dims[1], 8, 1, 1);
  EXPECT_EQ(p.fft.in_elem, 4u);
  EXPECT_EQ(p.fft.out_elem, 8u);
  EXPECT_EQ(p.fft.out_elems, 4 * 5 + 5);
  // c2r out of place: the complex input has 5 per row, the real output 8; always backward.
  float out[40] = {};
  PlanInfo q = gofl::fftw::describe_many(Kind::C2R, true, 2, n, 1, buf, nullptr, 1, 0, out, nullptr, 1, 0, 0, kEstimate);
  EXPECT_EQ(q.fft.sign, 1);
  expect_dim(q.fft.dims[0], 5, 5, 8);
  expect_dim(q.fft.dims[1], 8, 1, 1);
}

TEST(FftPlan, StridesAndEmbedsOfMany) {
  const int n[2] = {3, 4}, inembed[2] = {3, 7}, onembed[2] = {9, 5};
  double in[1000] = {}, out[1000] = {};
  PlanInfo p = gofl::fftw::describe_many(Kind::C2C, false, 2, n, 2, in, inembed, 2, 50, out, onembed, 3, 1, -1, kEstimate);
  expect_dim(p.fft.dims[0], 3, 14, 15);
  expect_dim(p.fft.dims[1], 4, 2, 3);
  expect_dim(p.fft.loop[0], 2, 50, 1);
  EXPECT_EQ(p.fft.sign, -1);
}

TEST(FftPlan, GuruRanksBeyondWhatTheGpuTakesStayOnFftw) {
  double a[4096] = {};
  std::vector<Dim> four = {{4, 64, 64}, {4, 16, 16}, {4, 4, 4}, {4, 1, 1}};
  PlanInfo p = gofl::fftw::describe_guru(Kind::C2C, false, four, {}, a, a, -1, kEstimate);
  EXPECT_EQ(p.fft.representable, 0);
  EXPECT_EQ(p.n, 256);  // still measured as what it is
  std::vector<Dim> one = {{16, 1, 1}};
  std::vector<Dim> loops = {{2, 16, 16}, {2, 32, 32}, {2, 64, 64}, {2, 128, 128}};
  EXPECT_EQ(gofl::fftw::describe_guru(Kind::C2C, false, one, loops, a, a, -1, kEstimate).fft.representable, 0);
  EXPECT_EQ(gofl::fftw::describe_guru(Kind::C2C, false, one, {loops[0]}, a, a, -1, kEstimate).fft.representable, 1);
}

TEST(FftPlan, WhichInputsFftwMayOverwrite) {
  const int n = 64;
  double in[130] = {}, out[130] = {};
  auto role = [&](Kind k, unsigned flags) {
    return gofl::fftw::describe_many(k, false, 1, &n, 1, in, nullptr, 1, 0, out, nullptr, 1, 0, -1, flags).in_role;
  };
  EXPECT_EQ(role(Kind::C2R, kEstimate), uint32_t(GOFL_INOUT));                   // c2r destroys by default
  EXPECT_EQ(role(Kind::C2R, kEstimate | kPreserveInput), uint32_t(GOFL_IN));
  EXPECT_EQ(role(Kind::C2C, kEstimate), uint32_t(GOFL_IN));
  EXPECT_EQ(role(Kind::C2C, kEstimate | kDestroyInput), uint32_t(GOFL_INOUT));
  EXPECT_EQ(role(Kind::R2C, kEstimate), uint32_t(GOFL_IN));
}

}  // namespace
