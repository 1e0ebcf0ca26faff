// gpu-offload: finds the command, hands it its arguments, turns failures into messages and exit statuses.
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/help.h"
#include "trace/reader.h"

#ifndef GOFL_VERSION
#error "GOFL_VERSION comes from CMake's PROJECT_VERSION (CMakeLists.txt)"
#endif

namespace gofl::cli {

void print_error(const std::string& message) { fprintf(stderr, "gpu-offload: %s\n", message.c_str()); }
void print_warning(const std::string& message) { fprintf(stderr, "gpu-offload: warning: %s\n", message.c_str()); }

namespace {

int help_command(const std::vector<std::string>& args) {
  if (args.empty()) {
    print_overview(stdout);
    return 0;
  }
  if (args[0] == "settings") {
    if (args.size() > 2 || (args.size() == 2 && args[1] != "--machine" && args[1] != "--markdown"))
      throw UsageError("help", "help settings takes --machine or --markdown");
    print_settings_help(stdout, args.size() == 1           ? SettingsFormat::Text
                                : args[1] == "--machine" ? SettingsFormat::Machine
                                                         : SettingsFormat::Markdown);
    return 0;
  }
  if (args.size() > 1) throw UsageError("help", "help takes one command name");
  const CommandHelp* h = find_command_help(args[0].c_str());
  if (!h) {
    std::string names;
    for (int i = 0; i < kCommandCount; ++i) names += std::string(names.empty() ? "" : ", ") + kCommandHelp[i].name;
    throw UsageError("", "no such command '" + args[0] + "'; commands: " + names);
  }
  print_command_help(*h, stdout);
  return 0;
}

struct Command {
  const char* name;
  int (*fn)(const std::vector<std::string>&);
};

const Command kCommands[] = {
    {"run", run_command},
    {"dump", dump_command},
    {"report", report_command},
    {"config", config_command},
    {"estimate", estimate_command},
    {"calibrate", calibrate_command},
    {"help", help_command},
};

int dispatch(int argc, char** argv) {
  if (argc < 2) {
    print_overview(stderr);
    return 2;
  }
  const std::string first = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  if (first == "--help" || first == "-h") return help_command(rest);
  if (first == "--version" || first == "version") {
    printf("gpu-offload %s\n", GOFL_VERSION);
    return 0;
  }
  for (const Command& c : kCommands)
    if (first == c.name) return c.fn(rest);
  std::string names;
  for (const Command& c : kCommands) names += std::string(names.empty() ? "" : ", ") + c.name;
  if (!first.empty() && first[0] == '-')
    throw UsageError("", "unknown option '" + first + "'; before a command only --help and --version are valid");
  throw UsageError("", "unknown command '" + first + "'; commands: " + names);
}

}  // namespace
}  // namespace gofl::cli

int main(int argc, char** argv) {
  using namespace gofl::cli;
  try {
    return dispatch(argc, argv);
  } catch (const UsageError& e) {
    print_error(e.what());
    if (e.command.empty())
      fprintf(stderr, "Run 'gpu-offload --help' for the commands.\n");
    else
      fprintf(stderr, "Run 'gpu-offload help %s' for its options.\n", e.command.c_str());
    return 2;
  } catch (const Failure& e) {
    print_error(e.what());
    return 1;
  } catch (const gofl::TraceError& e) {
    print_error(e.what());
    return 1;
  }
}
