// Device copies kept between calls: see resident.h.
#include "cuda/resident.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace gofl {
namespace cuda {

namespace {

// Where `m` lies in the device copy of kept matrix `k`, when m is a sub-matrix of k as stored on the
// host: its first element's offset (in elements) and its device leading dimension.
bool inside(const HostMatrix& k, const HostMatrix& m, size_t* dev_off, int64_t* dev_ld) {
  if (m.elem != k.elem || m.host < k.host || m.rows <= 0 || m.cols <= 0) return false;
  const uint64_t off = m.host - k.host;
  if (off % k.elem != 0) return false;
  const int64_t idx = int64_t(off / k.elem);
  // Contiguous on the host (one column, or ld == rows): the device copy holds the same bytes in the
  // same order, so any contiguous piece of it is a hit, stored as the piece's own packed matrix.
  const bool k_flat = k.cols == 1 || k.ld == k.rows;
  const bool m_flat = m.cols == 1 || m.ld == m.rows;
  if (k_flat && m_flat) {
    if (idx + m.rows * m.cols > k.rows * k.cols) return false;
    *dev_off = size_t(idx);
    *dev_ld = m.rows;
    return true;
  }
  if (k.cols == 1 || (m.ld != k.ld && m.cols > 1)) return false;
  const int64_t row = idx % k.ld, col = idx / k.ld;
  if (row + m.rows > k.rows || col + m.cols > k.cols) return false;
  *dev_off = size_t(col) * size_t(k.rows) + size_t(row);
  *dev_ld = k.rows;
  return true;
}

// Whether the host bytes of `m` and [p, p + n) share a byte.
bool overlaps(const HostMatrix& m, uintptr_t p, size_t n) { return m.host < p + n && p < m.host + m.extent(); }

}  // namespace

void ResidentCache::set_enabled(bool on) {
  enabled_ = on;
  if (!on) clear();
}

bool ResidentCache::watch_content(const HostMatrix& m, WatchTicket* t) {
  return watch_.watch_content(reinterpret_cast<const void*>(m.host), m.extent(), t);
}

ContentDigest ResidentCache::sample(const HostMatrix& m) {
  const auto* base = reinterpret_cast<const unsigned char*>(m.host);
  std::vector<unsigned char> blocks(kSampleBlocks * kSampleBlock);
  const bool strided = m.cols > 1 && m.ld > m.rows;
  const size_t n = m.extent();
  if (!strided && n <= blocks.size()) return content_digest(base, n);
  // Strided: the first bytes of evenly spread columns, never the gaps between them (a routine never
  // reads those, so the program may have unmapped them). Otherwise blocks spread over the range.
  const size_t pitch = size_t(m.ld) * m.elem;
  const size_t take = strided ? std::min(size_t(m.rows) * m.elem, kSampleBlock) : kSampleBlock;
  for (size_t i = 0; i < kSampleBlocks; ++i) {
    const size_t at = strided ? size_t(m.cols - 1) * i / (kSampleBlocks - 1) * pitch
                              : (n - kSampleBlock) / (kSampleBlocks - 1) * i;
    std::memcpy(blocks.data() + i * kSampleBlock, base + at, take);
  }
  return content_digest(blocks.data(), blocks.size());
}

bool ResidentCache::confirm(Entry& e, const HostMatrix& m) {
  if (e.tracked || e.pending) return e.pending || watch_.unchanged(e.ticket);
  const bool spans = m.host == e.m.host && m.extent() >= e.m.extent();
  if (spans && sample(e.m) != e.sample) return false;
  WatchTicket pages;
  const bool tracking = watch_.mechanism() == WatchMechanism::PageTracking &&
                        watch_.watch(reinterpret_cast<const void*>(e.m.host), e.m.extent(), &pages);
  // Tracking started before the digest is compared: a write in between fails one or the other.
  if (!watch_.unchanged(e.ticket)) {
    if (tracking) watch_.forget(&pages);
    return false;
  }
  if (tracking) {
    watch_.forget(&e.ticket);
    e.ticket = pages;
    e.tracked = pages.mechanism == WatchMechanism::PageTracking;
  }
  return true;
}

void ResidentCache::drop(size_t i) {
  watch_.forget(&entries_[i]->ticket);
  bytes_ -= entries_[i]->dev.bytes();
  entries_.erase(entries_.begin() + std::ptrdiff_t(i));
}

bool ResidentCache::find(const HostMatrix& m, Hit* hit) {
  if (!enabled_ || entries_.empty()) return false;
  for (size_t i = 0; i < entries_.size(); ++i) {
    Entry& e = *entries_[i];
    size_t off = 0;
    int64_t ld = 0;
    if (!inside(e.m, m, &off, &ld)) continue;
    if (!confirm(e, m)) {
      history_.served(e.m.host, e.m.extent(), false);
      drop(i);
      return false;
    }
    e.last_use = ++clock_;
    e.in_use = true;
    if (!e.pending) {
      ++e.hits;
      history_.served(e.m.host, e.m.extent(), true);
    }
    hit->dev = e.dev.get<char>() + off * e.m.elem;
    hit->ld = ld;
    hit->origin = e.origin;
    hit->fresh = e.pending;
    return true;
  }
  return false;
}

bool ResidentCache::covers(uintptr_t p, size_t n, size_t elem) const {
  if (!enabled_ || n == 0) return false;
  // Taken at its word: input() checks it for real in the call. A check here would be a second one per call,
  // before the prediction: reading every byte under the content check, and a page-table scan under page
  // tracking (0.4-0.8 ms for 512 MB on the GPU test machine: H200, 16-core host). A copy the program has
  // changed since then costs one wrong prediction, and input() drops it.
  for (const auto& e : entries_)
    if (e->m.elem == elem && p >= e->m.host && p + n <= e->m.host + e->m.extent()) return true;
  return false;
}

ResidentCache::Entry* ResidentCache::add(const HostMatrix& m, DevMem&& dev, uint8_t origin) {
  forget_overlapping(m.host, m.extent());
  auto e = std::make_unique<Entry>();
  e->m = m;
  if (!watch_content(m, &e->ticket)) return nullptr;
  e->sample = sample(m);
  e->dev = std::move(dev);
  e->origin = origin;
  e->pending = e->in_use = true;
  e->last_use = ++clock_;
  bytes_ += e->dev.bytes();
  entries_.push_back(std::move(e));
  return entries_.back().get();
}

ResidentCache::Entry* ResidentCache::keep_upload(const HostMatrix& m, DevMem&& dev) {
  if (!enabled_ || m.packed() < min_bytes_) return nullptr;
  if (!history_.upload(m.host, m.extent())) return nullptr;
  // Watching starts before the caller reads the bytes: a write racing with the copy is seen.
  return add(m, std::move(dev), GOFL_RES_KEPT);
}

void ResidentCache::keep_output(const HostMatrix& m, DevMem&& dev) {
  if (!enabled_ || m.packed() < std::max(min_bytes_, kMinOutputBytes)) return;
  // The copy-out is complete: the host holds exactly dev, and any later write is seen.
  add(m, std::move(dev), GOFL_RES_OUTPUT);
}

void ResidentCache::forget_overlapping(uintptr_t p, size_t n) {
  for (size_t i = entries_.size(); i-- > 0;)
    if (overlaps(entries_[i]->m, p, n)) drop(i);
}

void ResidentCache::overwritten(uintptr_t p, size_t n) {
  // An upload changed before it served: its range's history learns that it churns.
  for (const auto& e : entries_)
    if (overlaps(e->m, p, n) && e->origin == GOFL_RES_KEPT && e->hits == 0 && !e->pending)
      history_.served(e->m.host, e->m.extent(), false);
  history_.written(p, n);
  forget_overlapping(p, n);
}

void ResidentCache::end_call(bool ok) {
  for (size_t i = entries_.size(); i-- > 0;) {
    Entry& e = *entries_[i];
    if (e.pending && !ok) {
      drop(i);
      continue;
    }
    e.pending = e.in_use = false;
  }
}

uint64_t ResidentCache::evict(uint64_t want) {
  uint64_t freed = 0;
  while (freed < want) {
    size_t lru = entries_.size();
    for (size_t i = 0; i < entries_.size(); ++i)
      if (!entries_[i]->in_use && (lru == entries_.size() || entries_[i]->last_use < entries_[lru]->last_use)) lru = i;
    if (lru == entries_.size()) break;
    freed += entries_[lru]->dev.bytes();
    drop(lru);
  }
  return freed;
}

void ResidentCache::clear() {
  for (auto& e : entries_) watch_.forget(&e->ticket);
  entries_.clear();
  bytes_ = 0;
}

}  // namespace cuda
}  // namespace gofl
