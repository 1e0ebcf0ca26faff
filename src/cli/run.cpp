// gpu-offload run: options become GPU_OFFLOAD_* variables, the library goes first in LD_PRELOAD,
// then the program replaces this process (its exit status and signals are the program's own).
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "cli/cli.h"
#include "common/fs.h"
#include "cli/help.h"
#include "cli/library_path.h"
#include "cli/options.h"
#include "common/gpu_placement.h"
#include "policy/registry.h"

namespace gofl::cli {
namespace {

const std::vector<OptionSpec> kRunOptions = {
    {"--trace", "DIR"}, {"--summary", nullptr}, {"--device", "cpu|gpu|auto"},
    {"--level", "1-10"}, {"--verify", nullptr},  {"--profile", "FILE"},
    {"--residency", "on|off"}, {"--gpus", "LIST|all"}, {"--history", "on|off"},
    {"--split", "off|auto|force"},
};

std::string absolute(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf)) return buf;
  return path;
}

// mkdir -p; the library would only say "tracing is off" per process, so fail here, once, instead.
std::string prepare_trace_dir(const std::string& dir) {
  if (dir.empty()) throw UsageError("run", "--trace needs a folder name");
  std::string failed;
  if (!make_dirs(dir, &failed)) {
    if (failed.empty())
      throw Failure("the trace folder " + dir + " is not a folder; choose another with --trace DIR");
    throw Failure("cannot create the trace folder " + failed + ": " + strerror(errno) +
                  "; choose another with --trace DIR");
  }
  if (access(dir.c_str(), W_OK | X_OK) != 0)
    throw Failure("cannot write into the trace folder " + dir + ": " + strerror(errno) +
                  "; choose another with --trace DIR");
  // Absolute, because the program may change its working directory before its first trace record.
  return absolute(dir);
}

// An option's value checked as the library checks its variable (policy/registry.h): the same rule,
// the same valid values named.
std::string check_setting(const char* option, SettingId id, const std::string& v) {
  const SettingInfo& s = setting_info(id);
  std::string why;
  if (!setting_valid(s, v.c_str(), &why)) {
    if (s.type == SettingType::GpuList)  // the list's fault, as parse_gpu_list names it
      throw UsageError("run", std::string(option) + " '" + v + "' is not valid: " +
                                  (v.empty() ? "it names no GPU" : why) + " (use " + s.values + ")");
    throw UsageError("run", std::string(option) + " '" + v + "' is not valid; use " + s.values + " (default " +
                                s.deflt + ")");
  }
  if (s.type == SettingType::Int) return std::to_string(strtol(v.c_str(), nullptr, 10));  // "07" -> "7"
  return v;
}

std::string check_profile(const std::string& v) {
  // Only whether it can be read: the library says what is wrong inside it.
  std::string why;
  const int fd = open_regular_file(v.c_str(), &why);
  if (fd < 0) throw Failure("cannot read the profile " + v + ": " + why);
  close(fd);
  return absolute(v);
}

// The library first; what was preloaded before stays, without a second copy of ours.
std::string preload_list(const std::string& lib) {
  std::string out = lib;
  const char* old = getenv("LD_PRELOAD");
  if (!old) return out;
  const std::string s = old;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find_first_of(": ", start);
    if (end == std::string::npos) end = s.size();
    const std::string item = s.substr(start, end - start);
    if (!item.empty() && item != lib) out += ":" + item;
    start = end + 1;
  }
  return out;
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  const ParsedOptions o = parse_options("run", args, kRunOptions, true);
  if (o.help) {
    print_command_help(*find_command_help("run"), stdout);
    return 0;
  }
  std::vector<std::pair<const char*, std::string>> env;
  auto var = [](SettingId id) { return setting_info(id).var; };
  // Options with a value the library checks: the option, its setting.
  static const std::pair<const char*, SettingId> kChecked[] = {
      {"--device", SettingId::DEVICE}, {"--level", SettingId::LEVEL},     {"--residency", SettingId::RESIDENCY},
      {"--history", SettingId::HISTORY}, {"--split", SettingId::SPLIT},
  };
  for (const auto& [option, id] : kChecked)
    if (o.has(option)) env.emplace_back(var(id), check_setting(option, id, o.values.at(option)));
  if (o.has("--summary")) env.emplace_back(var(SettingId::SUMMARY), "1");
  if (o.has("--verify")) env.emplace_back(var(SettingId::VERIFY), "1");
  if (o.has("--gpus")) {
    const std::string& v = check_setting("--gpus", SettingId::GPUS, o.values.at("--gpus"));
    GpuList list;
    std::string why;
    parse_gpu_list(v, &list, &why);
    env.emplace_back(var(SettingId::GPUS), gpu_list_text(list));
  }
  if (o.positionals.empty()) throw UsageError("run", "run needs a PROGRAM to run");
  if (o.has("--profile")) env.emplace_back(var(SettingId::PROFILE), check_profile(o.values.at("--profile")));
  const std::string lib = find_preload_library();
  if (o.has("--trace")) env.emplace_back(var(SettingId::TRACE), prepare_trace_dir(o.values.at("--trace")));
  env.emplace_back("LD_PRELOAD", preload_list(lib));

  for (const auto& [name, value] : env)
    if (setenv(name, value.c_str(), 1) != 0) throw Failure(std::string("cannot set ") + name + ": " + strerror(errno));

  std::vector<char*> argv;
  for (const std::string& a : o.positionals) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  fflush(stdout);
  execvp(argv[0], argv.data());
  // Only reached when the program could not be started: report it the way a shell does.
  const int err = errno;
  const std::string& prog = o.positionals[0];
  if (err == ENOENT) {
    if (prog.find('/') == std::string::npos)
      print_error(prog + ": command not found (not in PATH)");
    else
      print_error(prog + ": no such file");
    return 127;
  }
  print_error(prog + ": cannot run it: " + strerror(err));
  return 126;
}

}  // namespace gofl::cli
