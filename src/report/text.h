// Text formatting shared by dump and report: CSV fields, numbers for people, aligned tables.
#pragma once

#include <stdint.h>
#include <stdio.h>

#include <string>
#include <vector>

namespace gofl::cli {

// A CSV field, quoted (RFC 4180) only when it holds a comma, quote or line break.
std::string csv_field(const std::string& s);

std::string format_seconds(double s);  // "1.23 s", "45.6 ms", "789 us", "12 ns"
std::string format_si(double v);       // "950", "1.20 k", "3.40 M", "5.67 G", "1.20 T"
std::string format_count(uint64_t n);  // "1234567" as "1,234,567"

// Columns sized to their widest cell; the first column left-aligned, the others right-aligned
// unless marked left.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> headers, std::vector<bool> left = {});
  void add_row(std::vector<std::string> cells);
  void add_rule();  // a line of dashes, e.g. above a total
  void print(FILE* out, const char* indent = "  ") const;

 private:
  std::vector<std::string> headers_;
  std::vector<bool> left_;
  std::vector<std::vector<std::string>> rows_;  // an empty row is a rule
};

}  // namespace gofl::cli
