// The config file (policy/config.h) and its place in parse_settings: the environment first, then the
// file; malformed lines named by file:line and ignored; where the file is looked for.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "common/table.h"
#include "policy/config.h"
#include "policy/settings.h"

namespace {

std::map<std::string, std::string> g_vars;
const char* fake_get(const char* name) {
  auto it = g_vars.find(name);
  return it == g_vars.end() ? nullptr : it->second.c_str();
}

// A scratch folder with a config file in it, removed at the end of the test.
struct TempConfig {
  std::string dir;
  std::string path;
  explicit TempConfig(const std::string& text, const std::string& rel = "config") {
    char tmpl[] = "/tmp/gofl-config-XXXXXX";
    dir = mkdtemp(tmpl);
    path = dir + "/" + rel;
    const size_t slash = path.rfind('/');
    system(("mkdir -p '" + path.substr(0, slash) + "'").c_str());
    std::ofstream(path) << text;
  }
  ~TempConfig() { system(("rm -rf '" + dir + "'").c_str()); }
};

gofl::Settings parse(std::map<std::string, std::string> vars, std::string* msgs) {
  g_vars = std::move(vars);
  return gofl::parse_settings(fake_get, msgs);
}

}  // namespace

TEST(Config, KeyValueLinesCommentsAndQuotes) {
  std::string msgs;
  const gofl::Config c = gofl::parse_config(
      "# a comment\n\n  device = gpu  \nlevel=7   # more offloading\ntrace = \"/tmp/with space\"\n"
      "summary = yes\n",
      "/etc/x/config", &msgs);
  EXPECT_TRUE(msgs.empty()) << msgs;
  ASSERT_EQ(c.entries.size(), 4u);
  EXPECT_EQ(c.find("GPU_OFFLOAD_DEVICE")->value, "gpu");
  EXPECT_EQ(c.find("GPU_OFFLOAD_LEVEL")->value, "7");
  EXPECT_EQ(c.find("GPU_OFFLOAD_LEVEL")->where, "/etc/x/config:4");
  EXPECT_EQ(c.find("GPU_OFFLOAD_TRACE")->value, "/tmp/with space");
  EXPECT_EQ(c.find("GPU_OFFLOAD_SUMMARY")->value, "yes");
  EXPECT_EQ(c.find("GPU_OFFLOAD_VERIFY"), nullptr);
}

TEST(Config, MalformedLinesAreNamedAndIgnored) {
  std::string msgs;
  const gofl::Config c = gofl::parse_config("level 7\ncolour = red\nlevel = 3\ntrace =\n= 4\n", "/c", &msgs);
  ASSERT_EQ(c.entries.size(), 1u);
  EXPECT_EQ(c.entries[0].key, "level");
  EXPECT_NE(msgs.find("/c:1: 'level 7' is not a 'key = value' line; line ignored"), std::string::npos) << msgs;
  EXPECT_NE(msgs.find("/c:2: unknown key 'colour' (valid keys: device, level, trace, summary, verify, profile, "
                      "memory_reserve, threshold, residency, gpus, history, split_copies, split, warm, spare_core); line ignored"),
            std::string::npos)
      << msgs;
  EXPECT_NE(msgs.find("/c:4: 'trace' has no value"), std::string::npos) << msgs;
  EXPECT_NE(msgs.find("/c:5: unknown key ''"), std::string::npos) << msgs;
}

TEST(Config, LastLineOfAKeyWinsAndRelativePathsFollowTheFile) {
  std::string msgs;
  const gofl::Config c =
      gofl::parse_config("level = 2\nlevel = 9\ntrace = traces\nprofile = ../p.txt\n", "/home/u/.config/g/config", &msgs);
  EXPECT_EQ(c.find("GPU_OFFLOAD_LEVEL")->value, "9");
  EXPECT_EQ(c.find("GPU_OFFLOAD_TRACE")->value, "/home/u/.config/g/traces");
  EXPECT_EQ(c.find("GPU_OFFLOAD_PROFILE")->value, "/home/u/.config/g/../p.txt");
}

TEST(Config, WhereTheFileIsLookedFor) {
  bool expl = true;
  g_vars = {};
  EXPECT_EQ(gofl::config_path(fake_get, &expl), "");
  EXPECT_FALSE(expl);
  g_vars = {{"HOME", "/home/u"}};
  EXPECT_EQ(gofl::config_path(fake_get, &expl), "/home/u/.config/gpu-offload/config");
  g_vars = {{"HOME", "/home/u"}, {"XDG_CONFIG_HOME", "/xdg"}};
  EXPECT_EQ(gofl::config_path(fake_get, &expl), "/xdg/gpu-offload/config");
  g_vars = {{"HOME", "/home/u"}, {"XDG_CONFIG_HOME", "relative"}};  // not absolute: ignored (XDG rule)
  EXPECT_EQ(gofl::config_path(fake_get, &expl), "/home/u/.config/gpu-offload/config");
  g_vars = {{"HOME", "/home/u"}, {"GPU_OFFLOAD_CONFIG", "/etc/g.conf"}};
  EXPECT_EQ(gofl::config_path(fake_get, &expl), "/etc/g.conf");
  EXPECT_TRUE(expl);
}

TEST(Config, SettingsComeFromTheFileWhereTheEnvironmentIsSilent) {
  TempConfig f("device = cpu\nlevel = 8\nsummary = 1\nthreshold = 5e8\nmemory_reserve = 2G\n");
  std::string msgs;
  gofl::Settings s = parse({{"GPU_OFFLOAD_CONFIG", f.path}}, &msgs);
  EXPECT_TRUE(msgs.empty()) << msgs;
  EXPECT_EQ(s.device, gofl::DeviceMode::Cpu);
  EXPECT_EQ(s.level, 8);
  EXPECT_TRUE(s.summary);
  EXPECT_DOUBLE_EQ(s.threshold, 5e8);
  EXPECT_DOUBLE_EQ(s.memory_reserve, 2.0 * 1024 * 1024 * 1024);

  // The environment wins, key by key; an empty variable counts as unset.
  s = parse({{"GPU_OFFLOAD_CONFIG", f.path}, {"GPU_OFFLOAD_LEVEL", "3"}, {"GPU_OFFLOAD_DEVICE", ""}}, &msgs);
  EXPECT_EQ(s.level, 3);
  EXPECT_EQ(s.device, gofl::DeviceMode::Cpu);
  EXPECT_TRUE(s.summary);
}

TEST(Config, TheDefaultFileUnderHome) {
  TempConfig f("level = 2\ntrace = t\n", ".config/gpu-offload/config");
  std::string msgs;
  gofl::Settings s = parse({{"HOME", f.dir}}, &msgs);
  EXPECT_TRUE(msgs.empty()) << msgs;
  EXPECT_EQ(s.level, 2);
  EXPECT_EQ(s.trace_dir, f.dir + "/.config/gpu-offload/t");
  // No file there: silently the defaults.
  s = parse({{"HOME", "/nonexistent-home"}}, &msgs);
  EXPECT_EQ(s.level, 5);
  EXPECT_TRUE(msgs.empty()) << msgs;
}

TEST(Config, InvalidValuesInTheFileNameFileAndLine) {
  TempConfig f("# settings\ndevice = tpu\nlevel = 11\nverify = perhaps\n");
  std::string msgs;
  gofl::Settings s = parse({{"GPU_OFFLOAD_CONFIG", f.path}}, &msgs);
  EXPECT_EQ(s.device, gofl::DeviceMode::Auto);
  EXPECT_EQ(s.level, 5);
  EXPECT_FALSE(s.verify);
  EXPECT_NE(msgs.find(f.path + ":2: device='tpu' is not valid (use cpu, gpu or auto); using auto"), std::string::npos)
      << msgs;
  EXPECT_NE(msgs.find(f.path + ":3: level='11' is not valid (use a whole number from 1 to 10)"), std::string::npos)
      << msgs;
  EXPECT_NE(msgs.find(f.path + ":4: verify='perhaps'"), std::string::npos) << msgs;
  // The same bad value from the environment is named by its variable, and the file's line is not used.
  std::string env_msgs;
  s = parse({{"GPU_OFFLOAD_CONFIG", f.path}, {"GPU_OFFLOAD_LEVEL", "x"}}, &env_msgs);
  EXPECT_EQ(s.level, 5);
  EXPECT_NE(env_msgs.find("gpu-offload: GPU_OFFLOAD_LEVEL='x' is not valid"), std::string::npos) << env_msgs;
  EXPECT_EQ(env_msgs.find(":3: level"), std::string::npos) << env_msgs;
}

TEST(Config, AMissingExplicitFileIsReported) {
  std::string msgs;
  gofl::Settings s = parse({{"GPU_OFFLOAD_CONFIG", "/nonexistent/gofl.conf"}, {"GPU_OFFLOAD_LEVEL", "4"}}, &msgs);
  EXPECT_EQ(s.level, 4);
  EXPECT_NE(msgs.find("GPU_OFFLOAD_CONFIG=/nonexistent/gofl.conf: cannot read it: No such file or directory"),
            std::string::npos)
      << msgs;
}

TEST(Config, TheGpuSettingFromTheEnvironmentOrTheFile) {
  std::string msgs;
  EXPECT_EQ(parse({}, &msgs).gpus, "all");
  EXPECT_EQ(parse({{"GPU_OFFLOAD_GPUS", "0-2"}}, &msgs).gpus, "0,1,2");
  EXPECT_TRUE(msgs.empty()) << msgs;
  TempConfig f("gpus = 1,3\n");
  EXPECT_EQ(parse({{"GPU_OFFLOAD_CONFIG", f.path}}, &msgs).gpus, "1,3");
  TempConfig bad("gpus = first\n");
  const gofl::Settings s = parse({{"GPU_OFFLOAD_CONFIG", bad.path}}, &msgs);
  EXPECT_EQ(s.gpus, "all");
  EXPECT_NE(msgs.find(bad.path + ":1: gpus='first' is not valid (use all, or GPU numbers such as 1, 0,2 or 0-3); using all"),
            std::string::npos)
      << msgs;
}

TEST(Config, TheSplitCopiesSettingIsOnOffOrASize) {
  std::string msgs;
  EXPECT_EQ(parse({}, &msgs).split_copies, gofl::kSplitCopiesDefaultBytes);
  EXPECT_EQ(parse({{"GPU_OFFLOAD_SPLIT_COPIES", "off"}}, &msgs).split_copies, 0);
  EXPECT_EQ(parse({{"GPU_OFFLOAD_SPLIT_COPIES", "0"}}, &msgs).split_copies, 0);
  EXPECT_EQ(parse({{"GPU_OFFLOAD_SPLIT_COPIES", "on"}}, &msgs).split_copies, gofl::kSplitCopiesDefaultBytes);
  EXPECT_EQ(parse({{"GPU_OFFLOAD_SPLIT_COPIES", "64K"}}, &msgs).split_copies, 64 << 10);
  EXPECT_EQ(parse({{"GPU_OFFLOAD_SPLIT_COPIES", "3000"}}, &msgs).split_copies, 3000);
  EXPECT_TRUE(msgs.empty()) << msgs;
  TempConfig f("split_copies = 1M\n");
  EXPECT_EQ(parse({{"GPU_OFFLOAD_CONFIG", f.path}}, &msgs).split_copies, 1 << 20);
  for (const char* bad : {"K", "sometimes", "-4K", "0.5", "inf"}) {
    msgs.clear();
    EXPECT_EQ(parse({{"GPU_OFFLOAD_SPLIT_COPIES", bad}}, &msgs).split_copies, gofl::kSplitCopiesDefaultBytes) << bad;
    EXPECT_NE(msgs.find(std::string("GPU_OFFLOAD_SPLIT_COPIES='") + bad + "' is not valid (use on, off, or the smallest"),
              std::string::npos)
        << msgs;
  }
}

TEST(Config, TheSplitSettingFromTheEnvironmentOrTheFile) {
  std::string msgs;
  EXPECT_EQ(parse({}, &msgs).split, gofl::SplitMode::Auto);
  EXPECT_EQ(parse({{"GPU_OFFLOAD_SPLIT", "force"}}, &msgs).split, gofl::SplitMode::Force);
  EXPECT_EQ(parse({{"GPU_OFFLOAD_SPLIT", "OFF"}}, &msgs).split, gofl::SplitMode::Off);
  EXPECT_TRUE(msgs.empty()) << msgs;
  TempConfig f("split = off\n");
  EXPECT_EQ(parse({{"GPU_OFFLOAD_CONFIG", f.path}}, &msgs).split, gofl::SplitMode::Off);
  EXPECT_EQ(parse({{"GPU_OFFLOAD_CONFIG", f.path}, {"GPU_OFFLOAD_SPLIT", "force"}}, &msgs).split, gofl::SplitMode::Force);
  const gofl::Settings s = parse({{"GPU_OFFLOAD_SPLIT", "always"}}, &msgs);
  EXPECT_EQ(s.split, gofl::SplitMode::Auto);
  EXPECT_NE(msgs.find("GPU_OFFLOAD_SPLIT='always' is not valid (use off, auto or force); using auto"), std::string::npos)
      << msgs;
}

TEST(Config, TheWarmSettingIsOnOffOrOperationsToWarmAtTheStart) {
  std::string msgs;
  EXPECT_TRUE(parse({}, &msgs).warm);
  EXPECT_FALSE(parse({{"GPU_OFFLOAD_WARM", "off"}}, &msgs).warm);
  EXPECT_FALSE(parse({{"GPU_OFFLOAD_WARM", "0"}}, &msgs).warm);
  EXPECT_TRUE(parse({{"GPU_OFFLOAD_WARM", "auto"}}, &msgs).warm);
  EXPECT_TRUE(msgs.empty()) << msgs;
  const gofl::Settings s = parse({{"GPU_OFFLOAD_WARM", "dsyevd,zgemm"}}, &msgs);
  EXPECT_TRUE(s.warm);
  EXPECT_EQ(s.warm_ops, (std::vector<uint16_t>{uint16_t(gofl_op_by_name("dsyevd")), uint16_t(gofl_op_by_name("zgemm"))}));
  EXPECT_TRUE(msgs.empty()) << msgs;
  TempConfig f("warm = dpotrf\n");
  EXPECT_EQ(parse({{"GPU_OFFLOAD_CONFIG", f.path}}, &msgs).warm_ops, (std::vector<uint16_t>{uint16_t(gofl_op_by_name("dpotrf"))}));
  // Unknown names and operations the GPU never runs (dcopy) are named, the others kept.
  const gofl::Settings t = parse({{"GPU_OFFLOAD_WARM", "dgemm,dsyevx,dcopy"}}, &msgs);
  EXPECT_EQ(t.warm_ops, (std::vector<uint16_t>{uint16_t(gofl_op_by_name("dgemm"))}));
  EXPECT_NE(msgs.find("GPU_OFFLOAD_WARM='dsyevx,dcopy' is not valid"), std::string::npos) << msgs;
}

TEST(Config, TheSpareCoreSettingIsOnOrOff) {
  std::string msgs;
  EXPECT_TRUE(parse({}, &msgs).spare_core);
  EXPECT_FALSE(parse({{"GPU_OFFLOAD_SPARE_CORE", "off"}}, &msgs).spare_core);
  EXPECT_TRUE(parse({{"GPU_OFFLOAD_SPARE_CORE", "on"}}, &msgs).spare_core);
  EXPECT_TRUE(msgs.empty()) << msgs;
  TempConfig f("spare_core = off\n");
  EXPECT_FALSE(parse({{"GPU_OFFLOAD_CONFIG", f.path}}, &msgs).spare_core);
  EXPECT_TRUE(parse({{"GPU_OFFLOAD_CONFIG", f.path}, {"GPU_OFFLOAD_SPARE_CORE", "1"}}, &msgs).spare_core);
  EXPECT_TRUE(msgs.empty()) << msgs;
  EXPECT_TRUE(parse({{"GPU_OFFLOAD_SPARE_CORE", "sometimes"}}, &msgs).spare_core);
  EXPECT_NE(msgs.find("GPU_OFFLOAD_SPARE_CORE='sometimes' is not valid (use on or off); using on"), std::string::npos)
      << msgs;
}
