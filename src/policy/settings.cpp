#include "policy/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/gpu_placement.h"
#include "common/table.h"
#include "policy/config.h"

namespace gofl {

namespace {

bool parse_bool(const char* v, bool* out) {
  if (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on")) return *out = true, true;
  if (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off")) return *out = false, true;
  return false;
}

// "512", "64K", "2M", "1G": bytes; false when it is not such a size.
bool parse_size(const char* v, double* bytes) {
  char* end = nullptr;
  const double b = strtod(v, &end);
  double unit = 1;
  if (end && (*end == 'K' || *end == 'k')) unit = 1024.0, ++end;
  else if (end && (*end == 'M' || *end == 'm')) unit = 1024.0 * 1024, ++end;
  else if (end && (*end == 'G' || *end == 'g')) unit = 1024.0 * 1024 * 1024, ++end;
  if (end == v || !end || *end != '\0' || !(b >= 0)) return false;
  *bytes = b * unit;
  return true;
}

void complain(std::string* msgs, const std::string& var, const char* value, const char* valid, const char* fallback) {
  if (!msgs) return;
  *msgs += "gpu-offload: ";
  *msgs += var;
  *msgs += "='";
  *msgs += value;
  *msgs += "' is not valid (use ";
  *msgs += valid;
  *msgs += "); using ";
  *msgs += fallback;
  *msgs += "\n";
}

}  // namespace

Settings parse_settings(const char* (*getenv_fn)(const char*), std::string* msgs) {
  Settings s;
  // A variable set in the environment, else the config file's line for it (policy/config.h).
  const Config cfg = read_config(getenv_fn, msgs);
  auto get = [&](const char* var) -> const char* {
    if (const char* v = getenv_fn(var); v && *v) return v;
    const ConfigEntry* e = cfg.find(var);
    return e ? e->value.c_str() : nullptr;
  };
  // How a message names the value's source: the variable, or FILE:LINE: key.
  auto where = [&](const char* var) -> std::string {
    if (const char* v = getenv_fn(var); v && *v) return var;
    const ConfigEntry* e = cfg.find(var);
    return e ? e->where + ": " + e->key : std::string(var);
  };
  if (const char* v = get("GPU_OFFLOAD_DEVICE"); v && *v) {
    const int mode = gofl_device_mode_by_name(v);
    if (mode >= 0) s.device = DeviceMode(mode);
    else complain(msgs, where("GPU_OFFLOAD_DEVICE"), v, "cpu, gpu or auto", "auto");
  }
  if (const char* v = get("GPU_OFFLOAD_LEVEL"); v && *v) {
    char* end = nullptr;
    long l = strtol(v, &end, 10);
    if (end && *end == '\0' && l >= 1 && l <= 10) s.level = int(l);
    else complain(msgs, where("GPU_OFFLOAD_LEVEL"), v, "a whole number from 1 to 10", "5");
  }
  if (const char* v = get("GPU_OFFLOAD_THRESHOLD"); v && *v) {
    char* end = nullptr;
    double t = strtod(v, &end);
    if (end && *end == '\0' && t >= 0) s.threshold = t;
    else complain(msgs, where("GPU_OFFLOAD_THRESHOLD"), v, "a number of flops >= 0", "1e6");
  }
  if (const char* v = get("GPU_OFFLOAD_TRACE"); v && *v) s.trace_dir = v;
  if (const char* v = get("GPU_OFFLOAD_SUMMARY"); v && *v) {
    if (!parse_bool(v, &s.summary)) complain(msgs, where("GPU_OFFLOAD_SUMMARY"), v, "1 or 0", "0");
  }
  if (const char* v = get("GPU_OFFLOAD_VERIFY"); v && *v) {
    if (!parse_bool(v, &s.verify)) complain(msgs, where("GPU_OFFLOAD_VERIFY"), v, "1 or 0", "0");
  }
  if (const char* v = get("GPU_OFFLOAD_PROFILE"); v && *v) s.profile = v;
  if (const char* v = get("GPU_OFFLOAD_RESIDENCY"); v && *v) {
    if (!parse_bool(v, &s.residency)) complain(msgs, where("GPU_OFFLOAD_RESIDENCY"), v, "on or off", "on");
  }
  if (const char* v = get("GPU_OFFLOAD_HISTORY"); v && *v) {
    if (!parse_bool(v, &s.history)) complain(msgs, where("GPU_OFFLOAD_HISTORY"), v, "on or off", "on");
  }
  if (const char* v = get("GPU_OFFLOAD_GPUS"); v && *v) {
    GpuList list;
    std::string why;
    if (parse_gpu_list(v, &list, &why)) s.gpus = gpu_list_text(list);
    else complain(msgs, where("GPU_OFFLOAD_GPUS"), v, "all, or GPU numbers such as 1, 0,2 or 0-3", "all");
  }
  if (const char* v = get("GPU_OFFLOAD_SPLIT"); v && *v) {
    if (!strcasecmp(v, "off")) s.split = SplitMode::Off;
    else if (!strcasecmp(v, "auto")) s.split = SplitMode::Auto;
    else if (!strcasecmp(v, "force")) s.split = SplitMode::Force;
    else complain(msgs, where("GPU_OFFLOAD_SPLIT"), v, "off, auto or force", "auto");
  }
  if (const char* v = get("GPU_OFFLOAD_MEMORY_RESERVE"); v && *v) {
    double b;
    if (parse_size(v, &b)) s.memory_reserve = b;
    else complain(msgs, where("GPU_OFFLOAD_MEMORY_RESERVE"), v, "a size in bytes, optionally with K, M or G", "the level's reserve");
  }
  if (const char* v = get("GPU_OFFLOAD_SPLIT_COPIES"); v && *v) {
    bool on;
    double b;
    if (parse_bool(v, &on)) s.split_copies = on ? kSplitCopiesDefaultBytes : 0;
    else if (parse_size(v, &b) && b >= 1 && b < 0x1p62) s.split_copies = int64_t(b);
    else complain(msgs, where("GPU_OFFLOAD_SPLIT_COPIES"), v, "on, off, or the smallest copy to split: bytes, optionally with K, M or G", "on");
  }
  if (const char* v = get("GPU_OFFLOAD_SPARE_CORE"); v && *v) {
    if (!parse_bool(v, &s.spare_core)) complain(msgs, where("GPU_OFFLOAD_SPARE_CORE"), v, "on or off", "on");
  }
  if (const char* v = get("GPU_OFFLOAD_WARM"); v && *v) {
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
      if (!bad.empty())
        complain(msgs, where("GPU_OFFLOAD_WARM"), bad.c_str(),
                 "on, off, or operations the GPU runs, as a trace names them: dgemm,zheevd,...", "the others");
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
