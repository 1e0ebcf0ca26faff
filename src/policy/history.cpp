#include "policy/history.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

namespace gofl {

namespace {

const char* const kHeader = "gpu-offload history 1";

std::string base_name(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// The interpreters whose program is their first non-option argument (or an option's value).
bool is_interpreter(const std::string& exe) {
  const std::string b = base_name(exe);
  for (const char* p : {"python", "pypy", "octave", "julia", "perl", "ruby", "node"})
    if (starts_with(b, p)) return true;
  for (const char* n : {"R", "Rscript", "sh", "bash", "dash", "zsh"})
    if (b == n) return true;
  return false;
}

// A script's path as the same file will be named from any folder.
std::string resolved(const std::string& path) {
  char buf[PATH_MAX];
  if (realpath(path.c_str(), buf)) return buf;
  if (!path.empty() && path[0] != '/' && getcwd(buf, sizeof buf)) return std::string(buf) + "/" + path;
  return path;
}

// A folder or regular file (as asked) of this user's that no one else may read or write.
bool private_to_us(const struct stat& st, bool folder) {
  if (folder ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)) return false;
  return st.st_uid == geteuid() && (st.st_mode & 077) == 0;
}

// The folder holding the file: made 0700 when missing; refused when it is a symbolic link, not a
// folder, someone else's, or open to others.
bool safe_folder(const std::string& path, std::string* why) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  const size_t up = dir.rfind('/');
  if (up != std::string::npos && up > 0) {
    const std::string parent = dir.substr(0, up);
    if (mkdir(parent.c_str(), 0700) != 0 && errno != EEXIST) {
      if (why) *why = parent + ": " + strerror(errno);
      return false;
    }
  }
  if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    if (why) *why = dir + ": " + strerror(errno);
    return false;
  }
  struct stat st;
  if (lstat(dir.c_str(), &st) != 0 || !private_to_us(st, true)) {
    if (why) *why = dir + " is not a folder of this user's closed to others (a link, or another user's): not used";
    return false;
  }
  return true;
}

// Whether `op` may join `list`, one run's operations: a name of the operation table's kind (lower-case
// letters, digits and '_', at most 31), N from 1 to 2^40, no name twice, at most kHistoryMaxOps.
// What format_history writes and parse_ops reads back.
bool takes(const std::vector<HistoryOp>& list, const HistoryOp& op) {
  if (op.name.empty() || op.name.size() > 31 || op.n < 1 || op.n > (int64_t(1) << 40) ||
      list.size() >= size_t(kHistoryMaxOps))
    return false;
  for (const char ch : op.name)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_')) return false;
  return std::none_of(list.begin(), list.end(), [&](const HistoryOp& o) { return o.name == op.name; });
}

// The optional last field of a line: " ops=NAME:N,NAME:N,..." (each as takes() allows).
bool parse_ops(const std::string& field, std::vector<HistoryOp>* ops) {
  const char* const kPrefix = " ops=";
  if (field.rfind(kPrefix, 0) != 0) return false;
  size_t pos = strlen(kPrefix);
  while (pos < field.size()) {
    size_t end = field.find(',', pos);
    if (end == std::string::npos) end = field.size();
    const std::string item = field.substr(pos, end - pos);
    const size_t colon = item.find(':');
    // At most 13 digits: no overflow before takes() bounds N.
    if (colon == std::string::npos || colon + 1 >= item.size() || item.size() - colon > 14) return false;
    HistoryOp op;
    op.name = item.substr(0, colon);
    for (size_t i = colon + 1; i < item.size(); ++i) {
      if (item[i] < '0' || item[i] > '9') return false;
      op.n = op.n * 10 + (item[i] - '0');
    }
    if (!takes(*ops, op)) return false;
    ops->push_back(std::move(op));
    if (end == field.size()) return true;
    pos = end + 1;
  }
  return false;  // "ops=" with nothing after it, or a trailing comma
}

}  // namespace

std::string program_identity(const std::string& exe, const std::vector<std::string>& argv) {
  std::string id = exe;
  if (!is_interpreter(exe)) return id;
  const bool python = starts_with(base_name(exe), "python") || starts_with(base_name(exe), "pypy");
  for (size_t i = 1; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    // `python -m gpu_offload [OPTIONS] [--] SCRIPT`: the program is the script it runs.
    if (python && a == "-m" && i + 1 < argv.size() && argv[i + 1] == "gpu_offload") {
      std::vector<std::string> rest = {argv[0]};
      size_t j = i + 2;
      for (; j < argv.size() && argv[j].size() > 2 && starts_with(argv[j], "--"); ++j)
        if (argv[j].find('=') == std::string::npos && argv[j] != "--summary" && argv[j] != "--verify") ++j;  // its value
      if (j < argv.size() && argv[j] == "--") ++j;
      rest.insert(rest.end(), argv.begin() + long(std::min(j, argv.size())), argv.end());
      return program_identity(exe, rest);
    }
    // The program given as an option's value.
    for (const char* opt : {"-m", "-c", "-e", "--eval"})
      if (a == opt && i + 1 < argv.size()) return id + "\n" + opt + " " + argv[i + 1];
    if (python && a.size() > 2 && (starts_with(a, "-m") || starts_with(a, "-c")))
      return id + "\n" + a.substr(0, 2) + " " + a.substr(2);  // -mmodule, -c'code'
    if (starts_with(a, "--eval=")) return id + "\n--eval " + a.substr(7);
    if (starts_with(a, "--file=")) return id + "\nscript " + resolved(a.substr(7));  // R, as Rscript runs it
    if (a == "--") {
      if (i + 1 < argv.size()) return id + "\nscript " + resolved(argv[i + 1]);
      break;
    }
    if (!a.empty() && a[0] == '-') {
      if (python && (a == "-W" || a == "-X")) ++i;  // options with a separate value
      continue;
    }
    return id + "\nscript " + resolved(a);
  }
  return id;  // an interactive session
}

uint64_t program_key(const std::string& identity) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : identity) h = (h ^ ch) * 1099511628211ull;
  return h;
}

std::string history_path(const char* (*get)(const char*)) {
  const char* xdg = get("XDG_CACHE_HOME");
  if (xdg && xdg[0] == '/') return std::string(xdg) + "/gpu-offload/history";
  const char* home = get("HOME");
  if (home && home[0] == '/') return std::string(home) + "/.cache/gpu-offload/history";
  return "";
}

std::vector<HistoryRun> parse_history(const std::string& text) {
  std::vector<HistoryRun> runs;
  size_t pos = 0;
  bool first = true;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();  // a last line without its newline: cut short, skipped below
    const std::string line = text.substr(pos, end - pos);
    const bool complete = end < text.size();
    pos = end + 1;
    if (first) {
      first = false;
      if (line != kHeader) return {};  // not our format (or another version of it): nothing read
      continue;
    }
    if (!complete || line.size() > kHistoryMaxLine) continue;
    char hex[17] = "";
    double gained = 0;
    int started = -1;
    long long when = -1;
    int used = 0;
    if (sscanf(line.c_str(), "%16[0-9a-f] %lf %d %lld%n", hex, &gained, &started, &when, &used) != 4 ||
        strlen(hex) != 16 || !isfinite(gained) || fabs(gained) > 1e9 || (started != 0 && started != 1) || when < 0)
      continue;
    HistoryRun r;
    if (size_t(used) != line.size() && !parse_ops(line.substr(size_t(used)), &r.gpu_ops)) continue;
    r.program = strtoull(hex, nullptr, 16);
    r.gained_s = gained;
    r.started = started == 1;
    r.when = when;
    runs.push_back(std::move(r));
  }
  if (runs.size() > size_t(kHistoryMaxRuns)) runs.erase(runs.begin(), runs.end() - kHistoryMaxRuns);
  return runs;
}

std::string format_history(const std::vector<HistoryRun>& runs) {
  std::string out = std::string(kHeader) + "\n";
  const size_t from = runs.size() > size_t(kHistoryMaxRuns) ? runs.size() - kHistoryMaxRuns : 0;
  char line[96];
  for (size_t i = from; i < runs.size(); ++i) {
    const HistoryRun& r = runs[i];
    snprintf(line, sizeof line, "%016llx %.6f %d %lld", (unsigned long long)r.program,
             std::clamp(isfinite(r.gained_s) ? r.gained_s : 0.0, -1e9, 1e9), r.started ? 1 : 0, (long long)r.when);
    const std::string text = line;
    std::string ops;
    std::vector<HistoryOp> kept;  // only what parse_ops takes back, in a line it reads
    for (const HistoryOp& o : r.gpu_ops) {
      const std::string item = (ops.empty() ? " ops=" : ",") + o.name + ":" + std::to_string(o.n);
      if (!takes(kept, o) || text.size() + ops.size() + item.size() > kHistoryMaxLine) continue;
      ops += item;
      kept.push_back(o);
    }
    out += text + ops + "\n";
  }
  return out;
}

std::vector<HistoryRun> read_history(const std::string& path, std::string* why) {
  if (path.empty()) return {};
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (why) *why = errno == ENOENT ? "" : path + ": " + strerror(errno);
    return {};
  }
  struct stat st;
  std::string text;
  if (fstat(fd, &st) == 0 && private_to_us(st, false) && size_t(st.st_size) <= kHistoryMaxBytes) {
    text.resize(size_t(st.st_size));
    size_t got = 0;
    while (got < text.size()) {
      const ssize_t n = read(fd, &text[got], text.size() - got);
      if (n <= 0) break;
      got += size_t(n);
    }
    text.resize(got);
  } else if (why) {
    *why = path + " is not a private file of this user's of at most " + std::to_string(kHistoryMaxBytes >> 10) +
           " KB: not used";
  }
  close(fd);
  return parse_history(text);
}

ProgramHistory program_history(const std::vector<HistoryRun>& runs, uint64_t program) {
  ProgramHistory h;
  for (auto it = runs.rbegin(); it != runs.rend() && h.runs < kHistoryRunsConsidered; ++it) {
    if (it->program != program) continue;
    ++h.runs;
    if (it->started && it->gained_s > 0) ++h.paid;
    h.gained_s += it->gained_s;
    for (const HistoryOp& o : it->gpu_ops) {
      const auto same =
          std::find_if(h.gpu_ops.begin(), h.gpu_ops.end(), [&](const HistoryOp& k) { return k.name == o.name; });
      if (same != h.gpu_ops.end()) same->n = std::max(same->n, o.n);
      else if (h.gpu_ops.size() < size_t(kHistoryMaxOps)) h.gpu_ops.push_back(o);
    }
  }
  return h;
}

bool record_history(const std::string& path, const HistoryRun& run, std::string* why) {
  if (path.empty()) {
    if (why) *why = "no cache folder (neither XDG_CACHE_HOME nor HOME is set)";
    return false;
  }
  if (!safe_folder(path, why)) return false;
  // Writers take turns on a lock file beside it; the file itself is replaced whole, never edited.
  const std::string lock_path = path + ".lock";
  const int lock = open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
  if (lock < 0) {
    if (why) *why = lock_path + ": " + strerror(errno);
    return false;
  }
  struct stat st;
  bool ok = fstat(lock, &st) == 0 && private_to_us(st, false);
  if (!ok && why) *why = lock_path + " is not a private file of this user's: not used";
  // At most about a second: the program is exiting, and the lock is held for microseconds.
  for (int i = 0; ok && flock(lock, LOCK_EX | LOCK_NB) != 0; ++i) {
    if (errno != EWOULDBLOCK || i >= 200) {
      if (why) *why = lock_path + ": cannot lock it";
      ok = false;
      break;
    }
    const struct timespec pause = {0, 5 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
  if (ok) {
    std::string unreadable;
    std::vector<HistoryRun> runs = read_history(path, &unreadable);
    if (!unreadable.empty()) {
      // A file there that is not ours to read (a link, another user's): left alone, not replaced.
      struct stat there;
      if (lstat(path.c_str(), &there) == 0 && !private_to_us(there, false)) {
        if (why) *why = unreadable;
        ok = false;
      }
    }
    if (ok) {
      runs.push_back(run);
      const std::string text = format_history(runs);
      const std::string tmp = path + ".tmp." + std::to_string(getpid());
      unlink(tmp.c_str());  // a leftover of a process that had this pid and was killed mid-write
      const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      ok = fd >= 0;
      size_t put = 0;
      while (ok && put < text.size()) {
        const ssize_t n = write(fd, text.data() + put, text.size() - put);
        if (n <= 0) ok = false;
        else put += size_t(n);
      }
      if (fd >= 0 && close(fd) != 0) ok = false;
      if (ok && rename(tmp.c_str(), path.c_str()) != 0) ok = false;
      if (!ok) {
        if (why) *why = path + ": cannot write it: " + strerror(errno);
        unlink(tmp.c_str());
      }
    }
  }
  close(lock);  // releases the lock
  return ok;
}

}  // namespace gofl
