// The help texts of the tool and its commands.
#pragma once

#include <stdio.h>

namespace gofl::cli {

struct CommandHelp {
  const char* name;
  const char* summary;  // one line for the overview
  const char* text;     // the full help: synopsis, what it does, every option
};

// Every command, in the order the overview lists them.
extern const CommandHelp kCommandHelp[];
extern const int kCommandCount;

const CommandHelp* find_command_help(const char* name);
void print_overview(FILE* out);
// A command's full help; for run, followed by the level table (printed from src/policy/level.cpp,
// the table the decision uses, never a copy of it).
void print_command_help(const CommandHelp& h, FILE* out);
// Every setting of the registry (policy/settings_table.h): for people, as JSON (the Python package's
// list, python/CMakeLists.txt), or as README's table.
enum class SettingsFormat { Text, Machine, Markdown };
void print_settings_help(FILE* out, SettingsFormat format);

}  // namespace gofl::cli
