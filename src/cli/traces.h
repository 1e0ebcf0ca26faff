// The trace files named on a command line, opened and checked before any output is written.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "trace/reader.h"

namespace gofl::cli {

// Expands DIRs and checks every file's header. A file that fails the check is skipped with a
// warning on stderr naming it and why, unless it is the only one (TraceError then, as when no file
// passes). Warns about files that end in a partial record.
std::vector<std::unique_ptr<TraceReader>> open_traces(const std::vector<std::string>& args);

}  // namespace gofl::cli
