#include "common/fs.h"

#include <errno.h>
#include <sys/stat.h>

namespace gofl {

bool make_dirs(const std::string& dir, std::string* failed) {
  if (failed) failed->clear();
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    const std::string part = dir.substr(0, pos);
    if (mkdir(part.c_str(), 0777) != 0 && errno != EEXIST) {
      if (failed) *failed = part;
      return false;
    }
  }
  struct stat st;
  if (stat(dir.c_str(), &st) != 0) return false;
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    return false;
  }
  return true;
}

}  // namespace gofl
