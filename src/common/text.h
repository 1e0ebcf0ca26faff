// Small text helpers of the line-based readers (the config file, the profile).
#pragma once

#include <string>

namespace gofl {

// `s` without leading and trailing white space.
inline std::string trim(const std::string& s) {
  const char* ws = " \t\r\n\f\v";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

}  // namespace gofl
