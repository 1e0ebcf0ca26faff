#include "report/text.h"

#include <algorithm>

namespace gofl::cli {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string format_seconds(double s) {
  char buf[32];
  if (s >= 1.0) snprintf(buf, sizeof buf, "%.2f s", s);
  else if (s >= 1e-3) snprintf(buf, sizeof buf, "%.1f ms", s * 1e3);
  else if (s >= 1e-6) snprintf(buf, sizeof buf, "%.1f us", s * 1e6);
  else snprintf(buf, sizeof buf, "%.0f ns", s * 1e9);
  return buf;
}

std::string format_si(double v) {
  static const char* const kPrefix[] = {"", " k", " M", " G", " T", " P", " E"};
  int i = 0;
  while (v >= 999.5 && i < 6) {
    v /= 1000.0;
    ++i;
  }
  char buf[32];
  if (i == 0) snprintf(buf, sizeof buf, "%.0f", v);
  else snprintf(buf, sizeof buf, "%.*f%s", v < 9.995 ? 2 : v < 99.95 ? 1 : 0, v, kPrefix[i]);
  return buf;
}

std::string format_count(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

TextTable::TextTable(std::vector<std::string> headers, std::vector<bool> left)
    : headers_(std::move(headers)), left_(std::move(left)) {
  left_.resize(headers_.size(), false);
  if (!left_.empty()) left_[0] = true;
}

void TextTable::add_row(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::add_rule() { rows_.emplace_back(); }

void TextTable::print(FILE* out, const char* indent) const {
  std::vector<size_t> width(headers_.size());
  for (size_t c = 0; c < headers_.size(); ++c) {
    width[c] = headers_[c].size();
    for (const auto& r : rows_)
      if (!r.empty()) width[c] = std::max(width[c], r[c].size());
  }
  size_t total = 0;
  for (size_t w : width) total += w + 2;
  auto line = [&](const std::vector<std::string>& cells) {
    std::string s = indent;
    for (size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - cells[c].size(), ' ');
      s += left_[c] ? cells[c] + pad : pad + cells[c];
      if (c + 1 < cells.size()) s += "  ";
    }
    while (!s.empty() && s.back() == ' ') s.pop_back();
    fprintf(out, "%s\n", s.c_str());
  };
  line(headers_);
  for (const auto& r : rows_) {
    if (r.empty()) fprintf(out, "%s%s\n", indent, std::string(total > 2 ? total - 2 : 0, '-').c_str());
    else line(r);
  }
}

}  // namespace gofl::cli
