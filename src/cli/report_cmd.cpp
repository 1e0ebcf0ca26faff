// gpu-offload report: reads the traces, analyses them (report/analysis.h) and prints the terminal
// view or writes the HTML page (report/views.h).
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/help.h"
#include "cli/options.h"
#include "cli/traces.h"
#include "policy/profile.h"
#include "policy/settings.h"
#include "report/analysis.h"
#include "report/views.h"

namespace gofl::cli {
namespace {

long parse_top(const ParsedOptions& o) {
  if (!o.has("--top")) return 10;
  const std::string& v = o.values.at("--top");
  char* end = nullptr;
  const long n = strtol(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || n < 0 || n > 1000000)
    throw UsageError("report", "--top '" + v + "' is not valid; use a whole number >= 0");
  return n;
}

}  // namespace

int report_command(const std::vector<std::string>& args) {
  const ParsedOptions o =
      parse_options("report", args, {{"--top", "N"}, {"--html", "FILE"}, {"--profile", "FILE"}}, false);
  if (o.help) {
    fputs(find_command_help("report")->text, stdout);
    return 0;
  }
  if (o.positionals.empty()) throw UsageError("report", "report needs a trace folder (or trace files)");
  const long top = parse_top(o);
  std::string html;
  if (o.has("--html")) {
    html = o.values.at("--html");
    if (html.empty()) throw UsageError("report", "--html needs a file name");
  }
  // The profile to compare with: the one asked for, else this machine's own; never a file a trace
  // names (a trace may come from anyone).
  ProfileChoice choice;
  Profile chosen;
  if (o.has("--profile")) {
    std::string err;
    if (!read_profile(o.values.at("--profile"), &chosen, &err)) throw Failure(err);
    choice.chosen = &chosen;
  } else {
    std::string ignored;
    auto get = [](const char* n) -> const char* { return getenv(n); };
    choice.own_path = parse_settings(get, &ignored).profile;
    if (choice.own_path.empty()) choice.own_path = user_profile_path(get);
  }
  auto traces = open_traces(o.positionals);
  Analysis a = analyze(traces);
  use_profile(a, choice);
  std::string what;
  for (const std::string& p : o.positionals) what += (what.empty() ? "" : " ") + p;

  if (!html.empty()) {
    FILE* f = html == "-" ? stdout : fopen(html.c_str(), "w");
    if (!f) throw Failure("cannot write the HTML report " + html + ": " + strerror(errno));
    write_html_report(f, a, what, top);
    const bool ok = html == "-" ? fflush(f) == 0 : fclose(f) == 0;
    if (!ok) throw Failure("writing the HTML report " + html + " failed: " + strerror(errno));
    if (html != "-")
      printf("HTML report written to %s (one self-contained file; open it in a browser)\n", html.c_str());
    return 0;
  }

  print_text_report(a, what, top);
  return 0;
}

}  // namespace gofl::cli
