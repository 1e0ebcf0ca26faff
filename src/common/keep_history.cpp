// Which uploads residency keeps: see keep_history.h.
#include "common/keep_history.h"

namespace gofl {

KeepHistory::Range& KeepHistory::at(uintptr_t host, size_t extent) {
  if (ranges_.size() >= kMaxRanges) ranges_.clear();
  const uint64_t key = uint64_t(host) * 1000003u ^ uint64_t(extent);
  Range& r = ranges_[key];
  if (r.host != host || r.extent != extent) r = Range{host, extent};  // new, or another range's key
  return r;
}

bool KeepHistory::upload(uintptr_t host, size_t extent) {
  Range& r = at(host, extent);
  ++r.in_a_row;
  if (r.misses > 0 && r.hits == 0) return false;  // changed before it ever served: churns
  return r.in_a_row >= kKeptFromUpload;
}

void KeepHistory::served(uintptr_t host, size_t extent, bool hit) {
  Range& r = at(host, extent);
  (hit ? r.hits : r.misses)++;
}

void KeepHistory::written(uintptr_t p, size_t n) {
  if (n == 0) return;
  for (auto& [key, r] : ranges_)
    if (r.host < p + n && p < r.host + r.extent) r.in_a_row = 0;
}

}  // namespace gofl
