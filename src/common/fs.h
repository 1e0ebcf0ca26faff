// Small file-system helpers shared by the preload library and the command-line tool.
#pragma once

#include <string>

namespace gofl {

// mkdir -p: true when `dir` exists as a folder afterwards. On failure errno says why and *failed
// (if given) names the component mkdir could not make; it is empty when `dir` exists but is not
// a folder.
bool make_dirs(const std::string& dir, std::string* failed = nullptr);

}  // namespace gofl
