// gpu-offload config: the settings a program started from here would get, and where each comes from
// (GPU_OFFLOAD_* variable, config file line, or the default); the library's own messages for invalid ones.
#include <stdio.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/options.h"
#include "common/table.h"
#include "policy/config.h"
#include "policy/registry.h"
#include "policy/settings.h"

namespace gofl::cli {
namespace {

const char* plain_getenv(const char* name) { return getenv(name); }

std::string number(double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string warm_text(const Settings& s) {
  if (!s.warm) return "off";
  std::string ops;
  for (const uint16_t op : s.warm_ops) ops += (ops.empty() ? "" : ",") + std::string(gofl_ops[op].name);
  return ops.empty() ? "on" : "on, and at the start: " + ops;
}

}  // namespace

int config_command(const std::vector<std::string>& args) {
  const ParsedOptions o = parse_options("config", args, {}, false);
  if (o.help) {
    fputs(find_command_help("config")->text, stdout);
    return 0;
  }
  if (!o.positionals.empty()) throw UsageError("config", "config takes no arguments ('" + o.positionals[0] + "' given)");

  std::string msgs;
  const Settings s = parse_settings(plain_getenv, &msgs);
  std::string ignored;  // the file's own messages are in msgs already
  const Config cfg = read_config(plain_getenv, &ignored);
  bool explicit_path = false;
  const std::string path = config_path(plain_getenv, &explicit_path);

  // Where a setting comes from, as the library decides it: the variable, else the file, else the default.
  auto source = [&](const char* var) -> std::string {
    std::string from, named;
    if (const char* v = getenv(var); v && *v) {
      from = var;
      named = std::string(var) + "='";
    } else if (const ConfigEntry* e = cfg.find(var)) {
      from = e->where;
      named = e->where + ": " + e->key + "='";
    } else {
      return "default";
    }
    if (msgs.find(named) != std::string::npos) from += " (not valid: the default is used)";
    return from;
  };

  printf("Settings of programs started from here: 'gpu-offload run' options first, then GPU_OFFLOAD_*\n"
         "variables, then the config file, then the defaults.\n\n");
  std::string file_state = "none";
  if (!path.empty()) {
    file_state = path;
    if (cfg.path.empty()) file_state += explicit_path ? " (GPU_OFFLOAD_CONFIG; cannot be read)" : " (not there)";
    else if (explicit_path) file_state += " (GPU_OFFLOAD_CONFIG)";
  }
  printf("  %-15s %s\n\n", "config file", file_state.c_str());
  struct Row {
    SettingId id;
    std::string value;
  };
  const std::vector<Row> rows = {
      {SettingId::DEVICE, device_mode_name(s.device)},
      {SettingId::LEVEL, std::to_string(s.level)},
      {SettingId::TRACE, s.trace_dir.empty() ? "(no trace)" : s.trace_dir},
      {SettingId::SUMMARY, s.summary ? "on" : "off"},
      {SettingId::VERIFY, s.verify ? "on" : "off"},
      {SettingId::PROFILE, s.profile.empty() ? "(per-user default, else built-in)" : s.profile},
      {SettingId::MEMORY_RESERVE,
       s.memory_reserve < 0 ? "(the level's)" : number(s.memory_reserve) + " bytes"},
      {SettingId::THRESHOLD, number(s.threshold) + " flops"},
      {SettingId::RESIDENCY, s.residency ? "on" : "off"},
      {SettingId::GPUS, s.gpus},
      {SettingId::HISTORY, s.history ? "on" : "off"},
      {SettingId::SPLIT_COPIES,
       s.split_copies > 0 ? "strided ?copy of " + number(double(s.split_copies)) + " bytes or more" : "off"},
      {SettingId::SPLIT, split_mode_name(s.split)},
      {SettingId::WARM, warm_text(s)},
      {SettingId::SPARE_CORE, s.spare_core ? "on" : "off"},
  };
  printf("  %-15s %-34s %s\n", "setting", "value", "from");
  // Every setting the config file can set, in the registry's order (policy/settings_table.h).
  for (const SettingInfo& info : kSettings) {
    if (!*info.key) continue;
    std::string value = "(see 'gpu-offload help settings')";
    for (const Row& r : rows)
      if (r.id == info.id) value = r.value;
    printf("  %-15s %-34s %s\n", info.key, value.c_str(), source(info.var).c_str());
  }
  fflush(stdout);
  if (!msgs.empty()) {
    fwrite(msgs.data(), 1, msgs.size(), stderr);
    return 1;
  }
  return 0;
}

}  // namespace gofl::cli
