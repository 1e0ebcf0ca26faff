// Option parsing shared by the commands: --name VALUE, --name=VALUE, flags, `--` ends the options.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gofl::cli {

struct OptionSpec {
  const char* name;   // "--trace"
  const char* value;  // the value's name in messages ("DIR"), nullptr for a flag
};

struct ParsedOptions {
  std::map<std::string, std::string> values;  // flags map to "1"; a repeated option keeps its last value
  std::vector<std::string> positionals;
  bool help = false;                          // --help or -h was given

  bool has(const char* name) const { return values.count(name) != 0; }
};

// Throws UsageError for an unknown option or a missing value. With stop_at_positional the first
// positional and everything after it are positionals (run: they are the program's command line);
// otherwise options may follow positionals (report DIR --top 5).
ParsedOptions parse_options(const char* command, const std::vector<std::string>& args,
                            const std::vector<OptionSpec>& specs, bool stop_at_positional);

}  // namespace gofl::cli
