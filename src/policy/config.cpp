#include "policy/config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

#include "common/fs.h"
#include "common/text.h"
#include "policy/registry.h"

namespace gofl {
namespace {

// Text of the file as a message may quote it: control bytes (a NUL would end the message where it is
// printed) as \xNN.
std::string shown(const std::string& s) {
  std::string out;
  for (const unsigned char ch : s) {
    if (ch >= 0x20 && ch != 0x7f) {
      out += char(ch);
    } else {
      char buf[8];
      snprintf(buf, sizeof buf, "\\x%02x", ch);
      out += buf;
    }
  }
  return out;
}

void note(std::string* msgs, const std::string& where, const std::string& what) {
  if (msgs) *msgs += "gpu-offload: " + where + ": " + what + "; line ignored\n";
}

bool privileged() {
  // The same rule as secure_getenv: setuid/setgid programs and those with file capabilities.
  return getauxval(AT_SECURE) != 0;
}

}  // namespace

const char* config_keys() {
  // The registry's keys, in its order.
  static const std::string keys = [] {
    std::string k;
    for (const SettingInfo& i : kSettings)
      if (*i.key) k += (k.empty() ? "" : ", ") + std::string(i.key);
    return k;
  }();
  return keys.c_str();
}

const ConfigEntry* Config::find(const char* var) const {
  for (auto it = entries.rbegin(); it != entries.rend(); ++it)
    if (it->var == var) return &*it;
  return nullptr;
}

std::string config_path(const char* (*get)(const char*), bool* explicit_path) {
  if (explicit_path) *explicit_path = false;
  if (privileged()) return "";
  if (const char* p = get(setting_info(SettingId::CONFIG).var); p && *p) {
    if (explicit_path) *explicit_path = true;
    return p;
  }
  if (const char* x = get("XDG_CONFIG_HOME"); x && x[0] == '/') return std::string(x) + "/gpu-offload/config";
  if (const char* h = get("HOME"); h && h[0] == '/') return std::string(h) + "/.config/gpu-offload/config";
  return "";
}

Config parse_config(const std::string& text, const std::string& file, std::string* msgs) {
  Config cfg;
  cfg.path = file;
  const size_t slash = file.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : file.substr(0, slash == 0 ? 1 : slash);
  size_t pos = 0;
  int lineno = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string raw = text.substr(pos, end - pos);
    pos = end + 1;
    ++lineno;
    const std::string where = file + ":" + std::to_string(lineno);
    std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    if (line.find('\0') != std::string::npos) {
      note(msgs, where, "'" + shown(line) + "' holds a NUL byte");
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos) {
      note(msgs, where, "'" + shown(line) + "' is not a 'key = value' line");
      continue;
    }
    const std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    // A comment after the value starts with whitespace and '#'.
    for (size_t i = 1; i < value.size(); ++i)
      if (value[i] == '#' && (value[i - 1] == ' ' || value[i - 1] == '\t')) {
        value = trim(value.substr(0, i));
        break;
      }
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
    const SettingInfo* k = find_setting_key(key.c_str());
    if (!k) {
      note(msgs, where, "unknown key '" + shown(key) + "' (valid keys: " + config_keys() + ")");
      continue;
    }
    if (value.empty()) {
      note(msgs, where, "'" + key + "' has no value");
      continue;
    }
    // A file or folder: relative values are relative to the config file's folder.
    if (k->type == SettingType::Path && value[0] != '/') value = folder + "/" + value;
    cfg.entries.push_back(ConfigEntry{k->key, k->var, value, where});
  }
  return cfg;
}

Config read_config(const char* (*get)(const char*), std::string* msgs) {
  bool explicit_path = false;
  const std::string path = config_path(get, &explicit_path);
  if (path.empty() || path == "/dev/null") return {};  // the usual way to say "no config file"
  std::string text, why;
  if (!read_regular_file(path, 1u << 20, &text, &why)) {
    // The per-user file is optional; a file named by GPU_OFFLOAD_CONFIG must be there. A FIFO or a
    // device is refused without waiting on it: every preloaded process reads this file at load.
    if ((explicit_path || errno != ENOENT) && msgs)
      *msgs += "gpu-offload: " + std::string(explicit_path ? "GPU_OFFLOAD_CONFIG=" : "") + path +
               ": cannot read it: " + why + "; no config file used\n";
    return {};
  }
  return parse_config(text, path, msgs);
}

}  // namespace gofl
