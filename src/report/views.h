// The two views of `gpu-offload report`: the terminal tables (text_view.cpp) and the self-contained
// HTML page (html_view.cpp), both printing one Analysis (analysis.h).
#pragma once

#include <stdio.h>

#include <string>
#include <utility>
#include <vector>

#include "report/analysis.h"

namespace gofl::cli {

// The answer in a few sentences: how much math time, how much of it on the GPU and at what copy
// cost, what the model expected, what copying was avoidable, verify and failures.
std::vector<std::string> report_summary(const Analysis& a);

// Short words for shares and sizes, shared by both views.
std::string format_percent(double part, double whole);  // "12.3%"
std::string format_bytes(double bytes);                  // "950 B", "8.00 MB", "1.20 GB"
std::string format_ratio(double r);                      // "1.07", "12.3", "0.045"

// One table of the report, as both views show it. A row of one cell is a heading inside the table,
// an empty row a rule (above a total).
struct ReportTable {
  std::string id;     // the HTML anchor ("operations", "sites", ...)
  std::string title;  // the line above it
  std::vector<std::string> headers;
  std::vector<bool> left;  // left-aligned columns (the first always)
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> notes;  // lines below it; a table without headers is its title and notes only
};

// The report's tables in order: operations, by device, call sites (the `top` busiest; none for 0),
// reasons, GPU failures, verify, the cost model, crossovers, avoidable copies. Tables without data
// are left out or say so in their notes.
std::vector<ReportTable> report_tables(const Analysis& a, long top);

// The conversions around the LAPACK calls (conversions_view.cpp): the table (false when there is
// nothing to show) and the summary's line (empty unless converting took longer than the calls).
bool conversions_table(const Analysis& a, ReportTable* t);
std::string conversion_summary(const Analysis& a);

// Header facts as (label, value) pairs: files, processes, programs (command lines cut to
// `program_width` characters), device, level, profile, traced.
std::vector<std::pair<std::string, std::string>> report_facts(const Analysis& a, size_t program_width);

// Prints the terminal report to stdout; `what` names the traces on the command line, `top` is
// report_tables' top.
void print_text_report(const Analysis& a, const std::string& what, long top);

// Writes the page; `what` names the traces on the command line, `top` is report_tables' top.
void write_html_report(FILE* out, const Analysis& a, const std::string& what, long top);

}  // namespace gofl::cli
