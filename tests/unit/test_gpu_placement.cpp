// Which GPU a process runs on (common/gpu_placement.h): the launchers' local ranks, the GPU
// setting, the least loaded GPU, and what each choice says about itself.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "common/gpu_placement.h"

namespace {

std::map<std::string, std::string> g_env;
const char* fake_get(const char* name) {
  auto it = g_env.find(name);
  return it == g_env.end() ? nullptr : it->second.c_str();
}

gofl::LocalRank rank_from(std::map<std::string, std::string> env) {
  g_env = std::move(env);
  return gofl::find_local_rank(fake_get);
}

gofl::GpuList list_of(const std::string& text) {
  gofl::GpuList l;
  std::string why;
  EXPECT_TRUE(gofl::parse_gpu_list(text, &l, &why)) << text << ": " << why;
  return l;
}

const gofl::LocalRank kNoRank{};

}  // namespace

TEST(GpuPlacement, EachLauncherNamesTheLocalRank) {
  for (int i = 0; i < gofl::kNumLocalRankVariables; ++i) {
    const char* var = gofl::kLocalRankVariables[i];
    const gofl::LocalRank r = rank_from({{var, "3"}});
    ASSERT_NE(r.variable, nullptr) << var;
    EXPECT_STREQ(r.variable, var);
    EXPECT_EQ(r.rank, 3);
  }
  EXPECT_EQ(rank_from({}).variable, nullptr);
  // Open MPI's own variable wins over Slurm's (mpirun inside an allocation has both).
  const gofl::LocalRank both = rank_from({{"SLURM_LOCALID", "0"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "5"}});
  EXPECT_STREQ(both.variable, "OMPI_COMM_WORLD_LOCAL_RANK");
  EXPECT_EQ(both.rank, 5);
  // Garbage is skipped, not read as rank 0.
  const gofl::LocalRank bad = rank_from({{"OMPI_COMM_WORLD_LOCAL_RANK", "x1"}, {"SLURM_LOCALID", "-2"}, {"PMI_LOCAL_RANK", "2"}});
  EXPECT_STREQ(bad.variable, "PMI_LOCAL_RANK");
  EXPECT_EQ(rank_from({{"SLURM_LOCALID", ""}}).variable, nullptr);
}

TEST(GpuPlacement, TheGpuSetting) {
  EXPECT_TRUE(list_of("all").all);
  EXPECT_TRUE(list_of("").all);
  EXPECT_EQ(list_of("1").devices, std::vector<int>({1}));
  EXPECT_EQ(list_of("2,0").devices, std::vector<int>({2, 0}));
  EXPECT_EQ(list_of("0-3,2,6").devices, std::vector<int>({0, 1, 2, 3, 6}));
  EXPECT_EQ(gofl::gpu_list_text(list_of("0-2")), "0,1,2");
  EXPECT_EQ(gofl::gpu_list_text(list_of("all")), "all");
  for (const char* bad : {"gpu0", "1,", ",1", "3-1", "-1", "1;2", "0x1", "99999", "all,1", " 1"}) {
    gofl::GpuList l;
    std::string why;
    EXPECT_FALSE(gofl::parse_gpu_list(bad, &l, &why)) << bad;
    EXPECT_NE(why.find("use all, or GPU numbers"), std::string::npos) << why;
  }
}

TEST(GpuPlacement, RanksSpreadOverTheUsableGpusModuloTheirNumber) {
  const gofl::GpuList all = list_of("all");
  for (long r = 0; r < 8; ++r) {
    const gofl::Placement p = gofl::choose_gpu(4, all, gofl::LocalRank{"SLURM_LOCALID", r}, {});
    EXPECT_EQ(p.device, int(r % 4));
    EXPECT_EQ(p.why, "local rank " + std::to_string(r) + " (SLURM_LOCALID) of 4 usable GPUs");
  }
  // On the GPUs the setting names, in its order: rank 1 of "2,3" is GPU 3.
  EXPECT_EQ(gofl::choose_gpu(4, list_of("2,3"), gofl::LocalRank{"PMI_LOCAL_RANK", 1}, {}).device, 3);
  // One GPU: every rank shares it (two ranks on a one-GPU machine both land on 0).
  for (long r = 0; r < 3; ++r) {
    const gofl::Placement p = gofl::choose_gpu(1, all, gofl::LocalRank{"OMPI_COMM_WORLD_LOCAL_RANK", r}, {});
    EXPECT_EQ(p.device, 0);
    EXPECT_EQ(p.why, "the only GPU");
  }
  // The rank wins over the load: ranks that each picked the idlest GPU would pile onto one.
  const std::vector<gofl::GpuLoad> loads = {{0.9, 90}, {0.0, 0}};
  EXPECT_EQ(gofl::choose_gpu(2, all, gofl::LocalRank{"SLURM_LOCALID", 0}, loads).device, 0);
}

TEST(GpuPlacement, WithoutARankTheLeastLoadedGpu) {
  const gofl::GpuList all = list_of("all");
  // Another program holds GPU 0's memory (idle) and keeps GPU 1 a little busy: GPU 2 is free.
  gofl::Placement p = gofl::choose_gpu(3, all, kNoRank, {{0.60, 0}, {0.02, 10}, {0.01, 0}});
  EXPECT_EQ(p.device, 2);
  EXPECT_EQ(p.why, "the least loaded of 3 usable GPUs (GPU 0 60% memory, 0% busy, GPU 1 2% memory, 10% busy, "
                   "GPU 2 1% memory, 0% busy)");
  // A busy GPU is avoided even with its memory free.
  EXPECT_EQ(gofl::choose_gpu(2, all, kNoRank, {{0.01, 100}, {0.30, 5}}).device, 1);
  // Ties go to the lower number; unknown parts count as idle.
  EXPECT_EQ(gofl::choose_gpu(2, all, kNoRank, {{0.0, 0}, {0.0, 0}}).device, 0);
  EXPECT_EQ(gofl::choose_gpu(2, all, kNoRank, {{-1, 50}, {0.2, -1}}).device, 1);
  // Nothing known (no NVML): the first usable GPU, and it says so.
  p = gofl::choose_gpu(2, list_of("1,0"), kNoRank, {});
  EXPECT_EQ(p.device, 1);
  EXPECT_EQ(p.why, "the first of 2 usable GPUs (their load is unknown)");
  // Only the usable GPUs are compared: the idle GPU 0 is not in the setting.
  EXPECT_EQ(gofl::choose_gpu(3, list_of("1,2"), kNoRank, {{0, 0}, {0.5, 50}, {0.4, 50}}).device, 2);
}

TEST(GpuPlacement, TheSettingAgainstTheVisibleGpus) {
  // One GPU named: that one, whatever the rank.
  gofl::Placement p = gofl::choose_gpu(4, list_of("2"), gofl::LocalRank{"SLURM_LOCALID", 1}, {});
  EXPECT_EQ(p.device, 2);
  EXPECT_EQ(p.why, "the GPU setting '2'");
  // GPUs CUDA does not show (CUDA_VISIBLE_DEVICES left 2) are left out, and the choice says so.
  p = gofl::choose_gpu(2, list_of("1,3"), kNoRank, {});
  EXPECT_EQ(p.device, 1);
  EXPECT_EQ(p.usable, std::vector<int>({1}));
  EXPECT_EQ(p.why, "the GPU setting '1,3'; GPU 3 of the GPU setting not visible (2 GPUs are visible)");
  // None of them visible: no GPU, with the reason the start reports.
  p = gofl::choose_gpu(1, list_of("4-5"), kNoRank, {});
  EXPECT_EQ(p.device, -1);
  EXPECT_EQ(p.why, "the GPU setting '4,5' names no visible GPU (1 GPU is visible)");
  p = gofl::choose_gpu(0, list_of("all"), kNoRank, {});
  EXPECT_EQ(p.device, -1);
  EXPECT_EQ(p.why, "no GPU is visible");
}
