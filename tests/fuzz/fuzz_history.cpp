// A run-history file of any content (policy/history.h), as every preloaded process under --device auto
// reads it: parsing never fails, every run it yields has a finite gain in range, the count stays
// within the bound, and what it yields formats and parses back to itself.
#include <math.h>
#include <stdlib.h>

#include <string>

#include "policy/history.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::vector<gofl::HistoryRun> runs = gofl::parse_history(text);
  if (runs.size() > size_t(gofl::kHistoryMaxRuns)) abort();
  for (const gofl::HistoryRun& r : runs)
    if (!isfinite(r.gained_s) || fabs(r.gained_s) > 1e9 || r.when < 0) abort();
  const std::vector<gofl::HistoryRun> again = gofl::parse_history(gofl::format_history(runs));
  if (again.size() != runs.size()) abort();
  for (size_t i = 0; i < runs.size(); ++i)
    if (again[i].program != runs[i].program || again[i].started != runs[i].started || again[i].when != runs[i].when ||
        fabs(again[i].gained_s - runs[i].gained_s) > 1e-6 * (1 + fabs(runs[i].gained_s)))
      abort();
  if (!runs.empty()) (void)gofl::program_history(runs, runs.back().program);
  return 0;
}
