#include "cli/traces.h"

#include "cli/cli.h"

namespace gofl::cli {

std::vector<std::unique_ptr<TraceReader>> open_traces(const std::vector<std::string>& args) {
  std::vector<std::unique_ptr<TraceReader>> out;
  for (const std::string& path : trace_paths(args)) {
    auto r = std::make_unique<TraceReader>();
    r->open(path);
    if (r->tail_bytes())
      print_warning(path + ": ends in a partial record (" + std::to_string(r->tail_bytes()) +
                    " bytes; its writer stopped mid-write); reading the " + std::to_string(r->record_count()) +
                    " complete records");
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace gofl::cli
