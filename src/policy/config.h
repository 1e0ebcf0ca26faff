// The optional config file: `key = value` lines, the lowest-precedence source of settings (command-line
// options of `gpu-offload run` become GPU_OFFLOAD_* variables, which come before the file).
//
//   # comments and blank lines are ignored
//   device = auto
//   level = 7
//   trace = /scratch/traces        (a relative path is taken relative to the file's folder)
//
// Keys: the user settings of the registry (policy/settings_table.h) that have one; each stands for the
// GPU_OFFLOAD_* variable of the same name in capitals and takes the same values. A malformed line or an unknown key gets a message naming file:line and is ignored; the last line of a key wins.
//
// Where: GPU_OFFLOAD_CONFIG (a missing file is then reported, as is anything but a regular file;
// /dev/null means none), else $XDG_CONFIG_HOME/gpu-offload/config,
// else $HOME/.config/gpu-offload/config (silently absent). A privileged process (AT_SECURE: setuid,
// setgid, capabilities) reads no config file at all, as it reads no GPU_OFFLOAD_* variable.
#pragma once

#include <string>
#include <vector>

namespace gofl {

struct ConfigEntry {
  std::string key;    // "memory_reserve"
  std::string var;    // "GPU_OFFLOAD_MEMORY_RESERVE"
  std::string value;  // trimmed; trace and profile made absolute against the file's folder
  std::string where;  // "FILE:LINE" for messages
};

struct Config {
  std::string path;                  // the file read; empty if none
  std::vector<ConfigEntry> entries;  // in file order
  // The last entry for a GPU_OFFLOAD_* variable name, or nullptr.
  const ConfigEntry* find(const char* var) const;
};

// The keys a config file may hold, comma-separated (for messages and help).
const char* config_keys();

// The config file to read ("" for none): see above. `explicit_path` says it came from GPU_OFFLOAD_CONFIG.
std::string config_path(const char* (*get)(const char*), bool* explicit_path);

// Reads the config file named by config_path; messages (file:line) are appended to msgs.
Config read_config(const char* (*get)(const char*), std::string* msgs);

// Parses the text of a config file named `file` (exposed for tests).
Config parse_config(const std::string& text, const std::string& file, std::string* msgs);

}  // namespace gofl
