// The settings registry (src/policy/settings_table.h): it names every GPU_OFFLOAD_* variable the
// source tree reads, nothing reads one but through it, `gpu-offload help settings` lists them all
// (tuning and test-only ones marked), README's table is the registry's, and invalid values get a
// message naming the valid ones and the default kept.
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cctype>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "policy/config.h"
#include "policy/registry.h"
#include "policy/settings.h"

#ifndef GOFL_SOURCE_DIR
#error "GOFL_SOURCE_DIR: the source tree (tests/unit/CMakeLists.txt)"
#endif
#ifndef GOFL_CLI
#error "GOFL_CLI: the gpu-offload tool (tests/unit/CMakeLists.txt)"
#endif

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

bool is_source(const fs::path& p) {
  const std::string e = p.extension().string();
  return e == ".cpp" || e == ".h" || e == ".py" || e == ".inc" || e == ".cu" || e == ".txt" || e == ".in";
}

// Every file of src/, python/ and tools/ with the text of each.
std::vector<std::pair<fs::path, std::string>> source_files() {
  std::vector<std::pair<fs::path, std::string>> out;
  for (const char* dir : {"src", "python", "tools"})
    for (const auto& e : fs::recursive_directory_iterator(fs::path(GOFL_SOURCE_DIR) / dir))
      if (e.is_regular_file() && is_source(e.path())) out.emplace_back(e.path(), read_file(e.path()));
  return out;
}

std::string run(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

const char* (*g_get)(const char*) = nullptr;

}  // namespace

TEST(Registry, NamesEveryVariableTheSourceTreeMentions) {
  const std::regex name("GPU_OFFLOAD_[A-Z0-9_]*[A-Z0-9]");
  std::set<std::string> missing;
  for (const auto& [path, text] : source_files())
    for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it) {
      const std::string n = it->str();
      if (n == "GPU_OFFLOAD_H") continue;  // include/gpu_offload.h's include guard
      if (!gofl::find_setting(n.c_str())) missing.insert(n + " (" + path.string() + ")");
    }
  std::string list;
  for (const std::string& m : missing) list += "  " + m + "\n";
  EXPECT_TRUE(missing.empty()) << "GPU_OFFLOAD_* names not in src/policy/settings_table.h:\n" << list;
}

TEST(Registry, NothingReadsAVariableButThroughIt) {
  // A literal name handed to getenv / secure_getenv in the C++ code (the Python package reads
  // GPU_OFFLOAD_LIBRARY itself, and checks values with the registry's list: _settings.json).
  const std::regex direct(R"(getenv\s*\(\s*"GPU_OFFLOAD_)");
  std::string found;
  for (const auto& [path, text] : source_files())
    if (path.extension() != ".py" && std::regex_search(text, direct)) found += "  " + path.string() + "\n";
  EXPECT_TRUE(found.empty()) << "read directly, not through policy/registry.h:\n" << found;
  // And no backend-private reader of its own.
  for (const auto& [path, text] : source_files())
    EXPECT_EQ(text.find("env_long("), std::string::npos) << path;
}

TEST(Registry, EntriesAreWellFormed) {
  std::set<std::string> vars, keys;
  for (const gofl::SettingInfo& s : gofl::kSettings) {
    EXPECT_TRUE(vars.insert(s.var).second) << s.var;
    if (*s.key) {
      EXPECT_TRUE(keys.insert(s.key).second) << s.key;
      EXPECT_EQ(s.kind, gofl::SettingKind::User) << s.var << ": only user settings have a config key";
      std::string upper = s.key;
      for (char& c : upper) c = char(toupper(c));
      EXPECT_EQ(std::string("GPU_OFFLOAD_") + upper, s.var);
    }
    EXPECT_TRUE(*s.values && *s.deflt && *s.help) << s.var;
    if (s.type == gofl::SettingType::Enum) {
      EXPECT_TRUE(*s.choices) << s.var;
      EXPECT_TRUE(gofl::setting_valid(s, s.deflt)) << s.var << ": the default is one of the choices";
    }
    if (s.type == gofl::SettingType::Int) { EXPECT_LE(s.min, s.max) << s.var; }
  }
}

TEST(Registry, TheConfigFileTakesEveryKeyAndOnlyThose) {
  std::string text, msgs;
  for (const gofl::SettingInfo& s : gofl::kSettings)
    if (*s.key) text += std::string(s.key) + " = " + s.deflt + "\n";
  const gofl::Config c = gofl::parse_config(text + "library = x\nstart_ahead = 1\n", "/c", &msgs);
  size_t keyed = 0;
  for (const gofl::SettingInfo& s : gofl::kSettings) keyed += *s.key ? 1 : 0;
  EXPECT_EQ(c.entries.size(), keyed) << msgs;
  EXPECT_NE(msgs.find("unknown key 'library'"), std::string::npos) << msgs;
  EXPECT_NE(msgs.find("unknown key 'start_ahead'"), std::string::npos) << msgs;
}

TEST(Registry, HelpListsEverySettingAndMarksTuningAndTestOnes) {
  const std::string help = run(std::string(GOFL_CLI) + " help settings");
  for (const gofl::SettingInfo& s : gofl::kSettings) {
    const size_t at = help.find(std::string("  ") + s.var);
    ASSERT_NE(at, std::string::npos) << s.var << " missing from 'help settings':\n" << help;
    const std::string line = help.substr(at, help.find('\n', at) - at);
    if (s.kind == gofl::SettingKind::Tuning) { EXPECT_NE(line.find("[tuning]"), std::string::npos) << line; }
    if (s.kind == gofl::SettingKind::Test) { EXPECT_NE(line.find("[test only]"), std::string::npos) << line; }
    if (s.kind == gofl::SettingKind::User) { EXPECT_EQ(line.find(" ["), std::string::npos) << line; }
    if (*s.key) { EXPECT_NE(line.find(std::string("config key ") + s.key), std::string::npos) << line; }
  }
  // The machine-readable list (the Python package's) holds each too.
  const std::string machine = run(std::string(GOFL_CLI) + " help settings --machine");
  for (const gofl::SettingInfo& s : gofl::kSettings)
    EXPECT_NE(machine.find(std::string("{\"name\": \"") + s.var + "\""), std::string::npos) << s.var;
  // help config's key table is the registry's.
  const std::string config = run(std::string(GOFL_CLI) + " help config");
  for (const gofl::SettingInfo& s : gofl::kSettings)
    if (*s.key) { EXPECT_NE(config.find(std::string(s.key) + " "), std::string::npos) << s.key; }
}

TEST(Registry, ReadmeTableIsTheRegistrys) {
  const std::string table = run(std::string(GOFL_CLI) + " help settings --markdown");
  ASSERT_FALSE(table.empty());
  const std::string readme = read_file(fs::path(GOFL_SOURCE_DIR) / "README.md");
  EXPECT_NE(readme.find(table), std::string::npos)
      << "README.md's settings table differs from the registry; replace it with the output of "
         "'gpu-offload help settings --markdown':\n"
      << table;
}

TEST(Registry, InvalidUserValuesGetAMessageAndTheDefault) {
  // Every user setting the library parses, set to a value none of them takes.
  g_get = [](const char* n) -> const char* {
    if (!strcmp(n, "GPU_OFFLOAD_CONFIG")) return "/dev/null";
    const gofl::SettingInfo* s = gofl::find_setting(n);
    if (!s || !*s->key) return nullptr;
    return "??bogus";
  };
  std::string msgs;
  const gofl::Settings s = gofl::parse_settings([](const char* n) { return g_get(n); }, &msgs);
  const gofl::Settings d;
  EXPECT_EQ(int(s.device), int(d.device));
  EXPECT_EQ(s.level, d.level);
  EXPECT_EQ(s.threshold, d.threshold);
  EXPECT_EQ(s.residency, d.residency);
  EXPECT_EQ(s.split_copies, d.split_copies);
  for (const gofl::SettingInfo& i : gofl::kSettings) {
    if (!*i.key || i.type == gofl::SettingType::Path || i.type == gofl::SettingType::Text) continue;
    const std::string expect = std::string("gpu-offload: ") + i.var + "='??bogus' is not valid (use " + i.values +
                               "); using ";
    EXPECT_NE(msgs.find(expect), std::string::npos) << expect << "\nin:\n" << msgs;
  }
}

TEST(Registry, InvalidTuningValuesGetAMessageOnceAndTheDefault) {
  setenv("GPU_OFFLOAD_COPY_THREADS", "many", 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(gofl::setting_long(gofl::SettingId::COPY_THREADS, 7), 7);
  EXPECT_EQ(gofl::setting_long(gofl::SettingId::COPY_THREADS, 7), 7);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err, "gpu-offload: GPU_OFFLOAD_COPY_THREADS='many' is not valid (use a whole number >= 1); using 7\n");
  setenv("GPU_OFFLOAD_COPY_THREADS", "3", 1);
  EXPECT_EQ(gofl::setting_long(gofl::SettingId::COPY_THREADS, 7), 3);
  unsetenv("GPU_OFFLOAD_COPY_THREADS");

  setenv("GPU_OFFLOAD_SPLIT_BLOCK", "32", 1);  // below its minimum
  testing::internal::CaptureStderr();
  EXPECT_EQ(gofl::setting_long(gofl::SettingId::SPLIT_BLOCK, 4096), 4096);
  err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("GPU_OFFLOAD_SPLIT_BLOCK='32' is not valid (use a whole number >= 64); using 4096"),
            std::string::npos)
      << err;
  unsetenv("GPU_OFFLOAD_SPLIT_BLOCK");

  setenv("GPU_OFFLOAD_GETRS_SWAPS", "cpu", 1);
  testing::internal::CaptureStderr();
  EXPECT_EQ(gofl::setting_choice(gofl::SettingId::GETRS_SWAPS, 0), 0);
  err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("GPU_OFFLOAD_GETRS_SWAPS='cpu' is not valid (use host or gpu); using host"), std::string::npos)
      << err;
  setenv("GPU_OFFLOAD_GETRS_SWAPS", "GPU", 1);
  EXPECT_EQ(gofl::setting_choice(gofl::SettingId::GETRS_SWAPS, 0), 1);
  unsetenv("GPU_OFFLOAD_GETRS_SWAPS");

  setenv("GPU_OFFLOAD_START_AHEAD", "sometimes", 1);
  testing::internal::CaptureStderr();
  EXPECT_FALSE(gofl::setting_bool(gofl::SettingId::START_AHEAD, false));
  err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("GPU_OFFLOAD_START_AHEAD='sometimes' is not valid (use 1 or 0); using 0"), std::string::npos)
      << err;
  setenv("GPU_OFFLOAD_START_AHEAD", "1", 1);
  EXPECT_TRUE(gofl::setting_bool(gofl::SettingId::START_AHEAD, false));
  unsetenv("GPU_OFFLOAD_START_AHEAD");
}

TEST(Registry, ResidencyMinimumHasOneHome) {
  // Default 4 MiB, the table's default; the policy and the backend both ask residency_min_bytes().
  if (!getenv("GPU_OFFLOAD_RESIDENCY_MIN_MB")) { EXPECT_EQ(gofl::residency_min_bytes(), size_t(4) << 20); }
  for (const auto& [path, text] : source_files())
    if (path.extension() == ".cpp" || path.extension() == ".h") {
      EXPECT_EQ(text.find("GOFL_RESIDENCY_MIN_BYTES"), std::string::npos) << path;
    }
}
