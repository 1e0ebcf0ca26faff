// The trace files named on a command line, opened and checked before any output is written.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "trace/reader.h"

namespace gofl::cli {

// Expands DIRs, opens every file and checks its header (TraceError for the first bad one), and
// warns on stderr about files that end in a partial record.
std::vector<std::unique_ptr<TraceReader>> open_traces(const std::vector<std::string>& args);

}  // namespace gofl::cli
