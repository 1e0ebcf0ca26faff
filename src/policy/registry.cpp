// The settings registry: see registry.h.
#include "policy/registry.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <atomic>

#include "common/gpu_placement.h"
#include "common/table.h"

namespace gofl {

#define GOFL_SETTING_INFO_(id, key, kind, type, choices, min, max, deflt, values, help) \
  {SettingId::id, "GPU_OFFLOAD_" #id, key, SettingKind::kind, SettingType::type, choices, min, max, deflt, values, help},
const SettingInfo kSettings[kSettingCount] = {GOFL_SETTINGS(GOFL_SETTING_INFO_)};
#undef GOFL_SETTING_INFO_

namespace {

bool is_bool(const char* v) {
  for (const char* w : {"1", "0", "yes", "no", "true", "false", "on", "off"})
    if (!strcasecmp(v, w)) return true;
  return false;
}

bool is_size(const char* v, double* bytes) {
  char* end = nullptr;
  const double b = strtod(v, &end);
  double unit = 1;
  if (end && (*end == 'K' || *end == 'k')) unit = 1024.0, ++end;
  else if (end && (*end == 'M' || *end == 'm')) unit = 1024.0 * 1024, ++end;
  else if (end && (*end == 'G' || *end == 'g')) unit = 1024.0 * 1024 * 1024, ++end;
  if (end == v || !end || *end != '\0' || !(b >= 0)) return false;
  if (bytes) *bytes = b * unit;
  return true;
}

}  // namespace

int setting_choice_index(const SettingInfo& s, const char* v) {
  const char* choices = s.choices;
  int i = 0;
  for (const char* p = choices; *p; ++i) {
    const char* end = strchr(p, '|');
    const size_t n = end ? size_t(end - p) : strlen(p);
    if (strlen(v) == n && strncasecmp(p, v, n) == 0) return i;
    p = end ? end + 1 : p + n;
  }
  return -1;
}

namespace {

bool parse_long(const SettingInfo& s, const char* v, long* out) {
  char* end = nullptr;
  errno = 0;
  const long l = strtol(v, &end, 10);
  if (end == v || *end != '\0' || errno != 0 || l < s.min || l > s.max) return false;
  *out = l;
  return true;
}

std::atomic<bool> g_told[kSettingCount];

// An invalid value of a knob read outside parse_settings: said once per setting.
void tell(const SettingInfo& s, const char* v, const std::string& fallback) {
  if (g_told[int(s.id)].exchange(true)) return;
  const std::string m = setting_message(s.var, v, s, fallback.c_str());
  fwrite(m.data(), 1, m.size(), stderr);
}

}  // namespace

const SettingInfo* find_setting(const char* var) {
  for (const SettingInfo& s : kSettings)
    if (!strcmp(s.var, var)) return &s;
  return nullptr;
}

const SettingInfo* find_setting_key(const char* key) {
  for (const SettingInfo& s : kSettings)
    if (*s.key && !strcmp(s.key, key)) return &s;
  return nullptr;
}

const char* setting_kind_name(SettingKind k) {
  return k == SettingKind::User ? "user" : k == SettingKind::Tuning ? "tuning" : "test";
}

const char* setting_type_name(SettingType t) {
  switch (t) {
    case SettingType::Bool: return "bool";
    case SettingType::Enum: return "enum";
    case SettingType::Int: return "int";
    case SettingType::Number: return "number";
    case SettingType::Size: return "size";
    case SettingType::BoolOrSize: return "bool_or_size";
    case SettingType::GpuList: return "gpu_list";
    case SettingType::WarmList: return "warm_list";
    case SettingType::Path: return "path";
    case SettingType::Text: return "text";
  }
  return "text";
}

bool setting_valid(const SettingInfo& s, const char* v, std::string* why) {
  if (!v || !*v) return false;
  switch (s.type) {
    case SettingType::Bool: return is_bool(v);
    case SettingType::Enum: return setting_choice_index(s, v) >= 0;
    case SettingType::Int: {
      long l;
      return parse_long(s, v, &l);
    }
    case SettingType::Number: {
      char* end = nullptr;
      const double t = strtod(v, &end);
      return end != v && *end == '\0' && t >= 0;
    }
    case SettingType::Size: return is_size(v, nullptr);
    case SettingType::BoolOrSize: {
      double b;
      return is_bool(v) || (is_size(v, &b) && b >= 1 && b < 0x1p62);
    }
    case SettingType::GpuList: {
      GpuList list;
      std::string w;
      const bool ok = parse_gpu_list(v, &list, &w);
      if (!ok && why) *why = w;
      return ok;
    }
    case SettingType::WarmList: {
      if (is_bool(v) || !strcasecmp(v, "auto")) return true;
      for (const char* p = v; *p;) {
        const char* end = strchr(p, ',');
        const std::string name(p, end ? size_t(end - p) : strlen(p));
        const int op = gofl_op_by_name(name.c_str());
        if (op < 0 || !gofl_ops[op].gpu_capable) return false;
        p = end ? end + 1 : p + strlen(p);
      }
      return true;
    }
    case SettingType::Path:
    case SettingType::Text: return true;
  }
  return false;
}

std::string setting_message(const std::string& where, const char* value, const SettingInfo& s, const char* fallback) {
  return "gpu-offload: " + where + "='" + value + "' is not valid (use " + s.values + "); using " + fallback + "\n";
}

const char* setting_env(SettingId id) {
  const char* v = secure_getenv(setting_info(id).var);
  return v && *v ? v : nullptr;
}

long setting_long(SettingId id, long dflt) {
  const SettingInfo& s = setting_info(id);
  const char* v = setting_env(id);
  long l;
  if (!v) return dflt;
  if (parse_long(s, v, &l)) return l;
  tell(s, v, std::to_string(dflt));
  return dflt;
}

bool setting_bool(SettingId id, bool dflt) {
  const SettingInfo& s = setting_info(id);
  const char* v = setting_env(id);
  if (!v) return dflt;
  for (const char* w : {"1", "yes", "true", "on"})
    if (!strcasecmp(v, w)) return true;
  for (const char* w : {"0", "no", "false", "off"})
    if (!strcasecmp(v, w)) return false;
  tell(s, v, dflt ? "1" : "0");
  return dflt;
}

int setting_choice(SettingId id, int dflt) {
  const SettingInfo& s = setting_info(id);
  const char* v = setting_env(id);
  if (!v) return dflt;
  const int i = setting_choice_index(s, v);
  if (i >= 0) return i;
  tell(s, v, s.deflt);
  return dflt;
}

size_t residency_min_bytes() {
  static const size_t b =
      size_t(setting_long(SettingId::RESIDENCY_MIN_MB, strtol(setting_info(SettingId::RESIDENCY_MIN_MB).deflt, nullptr, 10)))
      << 20;
  return b;
}

}  // namespace gofl
