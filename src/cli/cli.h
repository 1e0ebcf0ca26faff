// What the commands of the gpu-offload tool share: their entry points and the two kinds of failure.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace gofl::cli {

// The command line is wrong: the message, a pointer to the help, exit status 2.
struct UsageError : std::runtime_error {
  UsageError(const std::string& command, const std::string& message)
      : std::runtime_error(message), command(command) {}
  std::string command;  // whose help to point at ("" for the overview)
};

// The command line is fine but the work cannot be done (missing files, damaged traces): exit status 1.
struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Each command gets the arguments after its name and returns the exit status.
int run_command(const std::vector<std::string>& args);
int dump_command(const std::vector<std::string>& args);
int report_command(const std::vector<std::string>& args);
int estimate_command(const std::vector<std::string>& args);   // cli/estimate.cpp
int calibrate_command(const std::vector<std::string>& args);  // cli/calibrate.cpp
int config_command(const std::vector<std::string>& args);

// "gpu-offload: " + message on stderr: every message of the tool starts that way.
void print_error(const std::string& message);
void print_warning(const std::string& message);

}  // namespace gofl::cli
