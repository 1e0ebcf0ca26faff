#include "policy/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/gpu_placement.h"
#include "common/table.h"
#include "policy/config.h"
#include "policy/registry.h"

namespace gofl {

namespace {

bool parse_bool(const char* v, bool* out) {
  if (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on")) return *out = true, true;
  if (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off")) return *out = false, true;
  return false;
}

// "512", "64K", "2M", "1G": bytes (the value is valid: setting_valid said so).
double size_of(const char* v) {
  char* end = nullptr;
  const double b = strtod(v, &end);
  if (*end == 'K' || *end == 'k') return b * 1024.0;
  if (*end == 'M' || *end == 'm') return b * 1024.0 * 1024;
  if (*end == 'G' || *end == 'g') return b * 1024.0 * 1024 * 1024;
  return b;
}

}  // namespace

Settings parse_settings(const char* (*getenv_fn)(const char*), std::string* msgs) {
  Settings s;
  // A variable set in the environment, else the config file's line for it (policy/config.h).
  const Config cfg = read_config(getenv_fn, msgs);
  // How a message names the value's source: the variable, or FILE:LINE: key.
  auto where = [&](const SettingInfo& info) -> std::string {
    if (const char* v = getenv_fn(info.var); v && *v) return info.var;
    const ConfigEntry* e = cfg.find(info.var);
    return e ? e->where + ": " + e->key : std::string(info.var);
  };
  // The value of a user setting when it is set and valid; an invalid one gets the registry's message
  // (naming the valid values and the default kept) and counts as unset.
  auto get = [&](SettingId id) -> const char* {
    const SettingInfo& info = setting_info(id);
    const char* v = getenv_fn(info.var);
    if (!v || !*v) {
      const ConfigEntry* e = cfg.find(info.var);
      v = e ? e->value.c_str() : nullptr;
    }
    if (!v || !*v) return nullptr;
    if (id == SettingId::WARM || setting_valid(info, v)) return v;  // WARM: its valid operations are kept
    if (msgs) *msgs += setting_message(where(info), v, info, info.deflt);
    return nullptr;
  };
  if (const char* v = get(SettingId::DEVICE)) s.device = DeviceMode(setting_choice_index(setting_info(SettingId::DEVICE), v));
  if (const char* v = get(SettingId::LEVEL)) s.level = int(strtol(v, nullptr, 10));
  if (const char* v = get(SettingId::THRESHOLD)) s.threshold = strtod(v, nullptr);
  if (const char* v = get(SettingId::TRACE)) s.trace_dir = v;
  if (const char* v = get(SettingId::SUMMARY)) parse_bool(v, &s.summary);
  if (const char* v = get(SettingId::VERIFY)) parse_bool(v, &s.verify);
  if (const char* v = get(SettingId::PROFILE)) s.profile = v;
  if (const char* v = get(SettingId::RESIDENCY)) parse_bool(v, &s.residency);
  if (const char* v = get(SettingId::HISTORY)) parse_bool(v, &s.history);
  if (const char* v = get(SettingId::GPUS)) {
    GpuList list;
    std::string why;
    if (parse_gpu_list(v, &list, &why)) s.gpus = gpu_list_text(list);
  }
  if (const char* v = get(SettingId::SPLIT)) {
    static const SplitMode modes[] = {SplitMode::Off, SplitMode::Auto, SplitMode::Force};  // the choices' order
    s.split = modes[setting_choice_index(setting_info(SettingId::SPLIT), v)];
  }
  if (const char* v = get(SettingId::MEMORY_RESERVE)) s.memory_reserve = size_of(v);
  if (const char* v = get(SettingId::SPLIT_COPIES)) {
    bool on;
    if (parse_bool(v, &on)) s.split_copies = on ? kSplitCopiesDefaultBytes : 0;
    else s.split_copies = int64_t(size_of(v));
  }
  if (const char* v = get(SettingId::SPARE_CORE)) parse_bool(v, &s.spare_core);
  if (const char* v = get(SettingId::WARM)) {
    if (!parse_bool(v, &s.warm) && strcasecmp(v, "auto") != 0) {
      // A list of operations ("dsyevd,zgemm"): warmed at the start, the program's own as well.
      std::string bad;
      for (const char* p = v; *p;) {
        const char* end = strchr(p, ',');
        const std::string name(p, end ? size_t(end - p) : strlen(p));
        const int op = gofl_op_by_name(name.c_str());
        if (op >= 0 && gofl_ops[op].gpu_capable) s.warm_ops.push_back(uint16_t(op));
        else bad += (bad.empty() ? "" : ",") + name;
        p = end ? end + 1 : p + strlen(p);
      }
      if (!bad.empty() && msgs)
        *msgs += setting_message(where(setting_info(SettingId::WARM)), bad.c_str(), setting_info(SettingId::WARM),
                                 "the others");
    }
  }
  return s;
}

const char* split_mode_name(SplitMode m) {
  return m == SplitMode::Off ? "off" : m == SplitMode::Force ? "force" : "auto";
}

const Settings& settings() {
  // Never destroyed: read at exit (the summary) and by threads still running while the process ends.
  static const Settings* s = [] {
    std::string msgs;
    auto* r = new Settings(parse_settings([](const char* n) -> const char* { return secure_getenv(n); }, &msgs));
    if (!msgs.empty()) fwrite(msgs.data(), 1, msgs.size(), stderr);
    return r;
  }();
  return *s;
}

}  // namespace gofl
