// The report's account of converting data around the LAPACK calls (analysis: conversions.h): its
// table and its line in the summary, shared by the terminal and HTML views.
#include <algorithm>

#include "common/conversions.h"
#include "common/table.h"
#include "report/names.h"
#include "report/text.h"
#include "report/views.h"

namespace gofl::cli {
namespace {

// The library that did most of the converting: the ?copy calls' module when they took the most,
// else the module that called LAPACK (whose own code converted between the calls).
std::string converter(const std::string& caller, const AroundLapack& r) {
  std::string copier;
  uint64_t most = 0;
  for (const auto& [m, ns] : r.copiers)
    if (ns > most) { most = ns; copier = m; }
  return r.copy_ns >= r.gap_ns && !copier.empty() ? copier : caller;
}

}  // namespace

bool conversions_table(const Analysis& a, ReportTable* t) {
  const Conversions& c = a.conversions;
  const AroundLapack total = c.total();
  if (total.calls == 0 || total.conversion_ns() == 0) return false;
  t->id = "conversions";
  t->title = "Converting data around the LAPACK calls (?copy calls next to them, and the time outside any call "
             "just before each)";
  t->headers = {"operation", "called from", "calls", "in the calls", "?copy calls", "copying", "before the calls",
                "converting", "of the program"};
  t->left = {true, true};
  std::vector<std::pair<const std::pair<int, std::string>*, const AroundLapack*>> rows;
  for (const auto& [key, r] : c.around) rows.push_back({&key, &r});
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) {
    return x.second->conversion_ns() != y.second->conversion_ns() ? x.second->conversion_ns() > y.second->conversion_ns()
                                                                    : *x.first < *y.first;
  });
  std::vector<std::string> converters;  // module paths, one per library
  std::vector<std::string> libraries;
  auto seconds = [](uint64_t ns) { return format_seconds(ns * 1e-9); };
  // Blank where the traces' clocks give no program time (a trace whose calls predate its header).
  auto share = [&](uint64_t ns) { return c.program_ns ? format_percent(double(ns), double(c.program_ns)) : ""; };
  for (const auto& [key, r] : rows) {
    t->rows.push_back({gofl_ops[key->first].name, library_label(key->second), format_count(r->calls),
                       seconds(r->in_call_ns), format_count(r->copies), seconds(r->copy_ns), seconds(r->gap_ns),
                       seconds(r->conversion_ns()), share(r->conversion_ns())});
    const std::string who = converter(key->second, *r), lib = library_of_module(who);
    if (r->conversion_ns() > 0 && std::find(libraries.begin(), libraries.end(), lib) == libraries.end()) {
      libraries.push_back(lib);
      converters.push_back(who);
    }
  }
  if (rows.size() > 1) {
    t->rows.push_back({});
    t->rows.push_back({"total", "", format_count(total.calls), seconds(total.in_call_ns), format_count(total.copies),
                       seconds(total.copy_ns), seconds(total.gap_ns), seconds(total.conversion_ns()),
                       share(total.conversion_ns())});
  }
  t->notes.push_back("copying: NumPy's and SciPy's own ?copy calls right before and after the calls (a program's "
                     "own copies are its work, not conversions).");
  t->notes.push_back("before the calls: the time since those copies, where the caller checks and copies the "
                     "operands; counted up to " + format_ratio(kConversionNsPerByte) +
                     " ns per byte the call reads, the rest (" + seconds(total.beyond_cap_ns) +
                     ") being the program's own work (beyond that, or before calls no such copy precedes).");
  if (a.counted_records)
    t->notes.push_back("Calls counted below the threshold have no place in time: their time is estimated, "
                       "and a module's copies among them are shared among its LAPACK calls.");
  if (c.program_ns)
    t->notes.push_back("of the program: of the traced processes' " + seconds(c.program_ns) +
                       " (start to their last call).");
  for (size_t i = 0; i < libraries.size(); ++i)
    t->notes.push_back(library_label(converters[i]) + ": " + conversion_advice(libraries[i]) + " (README: From Python).");
  return true;
}

std::string conversion_summary(const Analysis& a) {
  const Conversions& c = a.conversions;
  const AroundLapack total = c.total();
  if (total.calls == 0 || total.conversion_ns() <= total.in_call_ns) return "";
  std::string copier;
  uint64_t most = 0;
  for (const auto& [m, ns] : total.copiers)
    if (ns > most) { most = ns; copier = m; }
  // The caller module with the most converting, when it is not the copies that dominate.
  std::string caller;
  uint64_t caller_ns = 0;
  for (const auto& [key, r] : c.around)
    if (r.gap_ns > caller_ns) { caller_ns = r.gap_ns; caller = key.second; }
  const std::string who = total.copy_ns >= total.gap_ns && !copier.empty() ? copier : caller;
  const std::string lib = library_of_module(who);
  return "Converting data around the LAPACK calls took " + format_seconds(total.conversion_ns() * 1e-9) + " (" +
         format_seconds(total.copy_ns * 1e-9) + " in " + format_count(total.copies) + " ?copy calls" +
         (copier.empty() ? "" : " by " + library_label(copier)) + ", " + format_seconds(total.gap_ns * 1e-9) +
         " outside any call just before them), against " + format_seconds(total.in_call_ns * 1e-9) + " in the " +
         format_count(total.calls) + " LAPACK calls themselves" +
         (c.program_ns ? ": " + format_percent(double(total.conversion_ns()), double(c.program_ns)) +
                             " of the program's " + format_seconds(c.program_ns * 1e-9)
                       : std::string()) +
         ". " + library_label(who) + ": " + conversion_advice(lib) + " (README: From Python).";
}

}  // namespace gofl::cli
