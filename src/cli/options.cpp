#include "cli/options.h"

#include "cli/cli.h"

namespace gofl::cli {
namespace {

std::string valid_options(const std::vector<OptionSpec>& specs) {
  std::string s;
  for (const OptionSpec& o : specs) {
    s += s.empty() ? "" : ", ";
    s += o.name;
    if (o.value) s += std::string(" ") + o.value;
  }
  return s.empty() ? "none" : s;
}

}  // namespace

ParsedOptions parse_options(const char* command, const std::vector<std::string>& args,
                            const std::vector<OptionSpec>& specs, bool stop_at_positional) {
  ParsedOptions out;
  bool options_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_ended || a.size() < 2 || a[0] != '-') {
      out.positionals.push_back(a);
      if (stop_at_positional) options_ended = true;
      continue;
    }
    if (a == "--") {
      options_ended = true;
      continue;
    }
    if (a == "--help" || a == "-h") {
      out.help = true;
      continue;
    }
    const size_t eq = a.find('=');
    const std::string name = a.substr(0, eq);
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& o : specs)
      if (name == o.name) spec = &o;
    if (!spec)
      throw UsageError(command, "unknown option '" + name + "' for " + command + "; valid options: " +
                                    valid_options(specs));
    if (!spec->value) {
      if (eq != std::string::npos) throw UsageError(command, "option " + name + " takes no value");
      out.values[name] = "1";
    } else if (eq != std::string::npos) {
      out.values[name] = a.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      out.values[name] = args[++i];
    } else {
      throw UsageError(command, "option " + name + " needs a value: " + name + " " + spec->value);
    }
  }
  return out;
}

}  // namespace gofl::cli
