// The settings registry: policy/settings_table.h as data, the check of a value against its entry,
// and the reading of a variable (secure_getenv: a privileged program reads none). Compiled into the
// preload library, the command-line tool and the CUDA backend (gofl_common), so that each reads a
// GPU_OFFLOAD_* variable only through here.
#pragma once

#include <string>

#include "policy/settings_table.h"

namespace gofl {

enum class SettingKind { User, Tuning, Test };
enum class SettingType {
  Bool,        // 1/0, yes/no, true/false, on/off
  Enum,        // one of `choices`
  Int,         // a whole number in [min, max]
  Number,      // a number >= 0
  Size,        // bytes, optionally with K, M or G
  BoolOrSize,  // a Bool, or a Size >= 1
  GpuList,     // all, or GPU numbers and ranges (common/gpu_placement.h)
  WarmList,    // a Bool, auto, or GPU-capable operations, comma-separated
  Path,        // a file or folder
  Text,        // anything
};

#define GOFL_SETTING_ID_(id, ...) id,
enum class SettingId { GOFL_SETTINGS(GOFL_SETTING_ID_) Count };
#undef GOFL_SETTING_ID_
constexpr int kSettingCount = int(SettingId::Count);

struct SettingInfo {
  SettingId id;
  const char* var;      // "GPU_OFFLOAD_DEVICE"
  const char* key;      // "device"; "" when the config file cannot set it
  SettingKind kind;
  SettingType type;
  const char* choices;  // Enum: "cpu|gpu|auto"
  long min, max;        // Int
  const char* deflt;
  const char* values;
  const char* help;
};

extern const SettingInfo kSettings[kSettingCount];
inline const SettingInfo& setting_info(SettingId id) { return kSettings[int(id)]; }
// By variable name or config key; nullptr if there is none.
const SettingInfo* find_setting(const char* var);
const SettingInfo* find_setting_key(const char* key);
const char* setting_kind_name(SettingKind k);  // user, tuning, test
const char* setting_type_name(SettingType t);  // bool, enum, int, ...

// Whether `value` is valid for the setting; `why` (optional) gets a detail where there is one (a GPU
// list's fault).
bool setting_valid(const SettingInfo& s, const char* value, std::string* why = nullptr);
// Enum: the index of `value` among the choices (compared without case), or -1.
int setting_choice_index(const SettingInfo& s, const char* value);
// "gpu-offload: WHERE='VALUE' is not valid (use VALUES); using FALLBACK\n": WHERE is the variable, or
// FILE:LINE: key for a config file line.
std::string setting_message(const std::string& where, const char* value, const SettingInfo& s, const char* fallback);

// The variable, through secure_getenv; nullptr when unset or empty.
const char* setting_env(SettingId id);
// A tuning knob read from its variable: its value when set and valid, else `dflt` (an invalid value
// gets the message above on stderr, once per setting and process).
long setting_long(SettingId id, long dflt);
bool setting_bool(SettingId id, bool dflt);
// Enum: the index of the value in `choices`, else `dflt`.
int setting_choice(SettingId id, int dflt);

// The smallest operand residency keeps on the GPU (GPU_OFFLOAD_RESIDENCY_MIN_MB, default 4 MiB):
// the policy's reuse accounting and the backend's cache both ask here.
size_t residency_min_bytes();

}  // namespace gofl
