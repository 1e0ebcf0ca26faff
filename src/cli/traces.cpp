#include "cli/traces.h"

#include "cli/cli.h"

namespace gofl::cli {

std::vector<std::unique_ptr<TraceReader>> open_traces(const std::vector<std::string>& args) {
  std::vector<std::unique_ptr<TraceReader>> out;
  const std::vector<std::string> paths = trace_paths(args);
  std::string last_error;
  for (const std::string& path : paths) {
    auto r = std::make_unique<TraceReader>();
    try {
      r->open(path);
    } catch (const TraceError& e) {
      // One process killed before its first record, or a full disk, must not hide the others.
      if (paths.size() == 1) throw;
      print_warning(std::string(e.what()) + "; skipped");
      last_error = e.what();
      continue;
    }
    if (r->tail_bytes())
      print_warning(path + ": ends in a partial record (" + std::to_string(r->tail_bytes()) +
                    " bytes; its writer stopped mid-write); reading the " + std::to_string(r->record_count()) +
                    " complete records");
    out.push_back(std::move(r));
  }
  if (out.empty() && !paths.empty())
    throw TraceError("none of the " + std::to_string(paths.size()) + " trace files can be read (the last: " +
                     last_error + ")");
  return out;
}

}  // namespace gofl::cli
