// Residency: device copies of host operands kept between calls, reused only while the host bytes are
// provably unchanged (common/host_watch.h watches them: the kernel's write tracking, or a hash of every
// byte). A copy comes from an upload, or is the result a GPU call copied out. Copies are evicted least
// recently used first: when an allocation fails, when free device memory falls below the reserve, and
// when residency is turned off. Used by the engine only; one call at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/host_watch.h"
#include "common/keep_history.h"
#include "policy/registry.h"
#include "cuda/engine.h"

namespace gofl {
namespace cuda {

// The host matrix a device copy mirrors: column-major rows x cols, leading dimension ld.
struct HostMatrix {
  uintptr_t host = 0;
  int64_t rows = 0, cols = 0, ld = 0;
  size_t elem = 0;
  size_t extent() const { return cols <= 0 || rows <= 0 ? 0 : (size_t(cols - 1) * size_t(ld) + size_t(rows)) * elem; }
  size_t packed() const { return size_t(rows) * size_t(cols) * elem; }
};

class ResidentCache {
 public:
  struct Entry {
    HostMatrix m;
    DevMem dev;            // packed: device leading dimension = m.rows
    WatchTicket ticket;
    uint64_t last_use = 0;
    uint8_t origin = 0;    // gofl_residency: GOFL_RES_KEPT (uploaded) or GOFL_RES_OUTPUT
    bool pending = false;  // made by the call in progress: valid only once it succeeds
    bool in_use = false;   // read by the call in progress: not evictable
    bool tracked = false;  // page tracking watches it (else the content check)
    uint64_t hits = 0;
    ContentDigest sample;  // of sampled blocks of the range when it was kept (confirm(), sample())
  };
  struct Hit {
    const void* dev = nullptr;  // the sub-matrix's first element on the device
    int64_t ld = 0;             // its device leading dimension
    uint8_t origin = 0;
    bool fresh = false;         // uploaded by the call in progress
  };

  explicit ResidentCache(HostWatch::ParallelFor pf) : watch_(std::move(pf)) {}
  ~ResidentCache() { clear(); }

  void set_enabled(bool on);
  bool enabled() const { return enabled_; }
  // Operands smaller than this are copied every time: watching them costs about what copying saves.
  void set_min_bytes(size_t b) { min_bytes_ = b; }

  // A valid device copy holding `m` (the whole matrix or a sub-matrix of a kept one, same ld and
  // element size). A copy whose host bytes may have changed is dropped. Marks it in use.
  bool find(const HostMatrix& m, Hit* hit);
  // Whether a kept copy of this element size holds the host bytes [p, p + n), unchecked (for the cost
  // model, which knows a call's operands as byte ranges: a sub-matrix of a kept one lies inside it).
  bool covers(uintptr_t p, size_t n, size_t elem) const;

  // Whether an upload of `m` should be kept. When it should, watching starts here, before the
  // caller reads the host bytes, and the returned entry (pending, in use) owns `dev`.
  Entry* keep_upload(const HostMatrix& m, DevMem&& dev);
  // A GPU result copied out to `m` in full (the host now holds exactly `dev`): keep it.
  void keep_output(const HostMatrix& m, DevMem&& dev);
  // The program's bytes [p, p + n) are about to be written (a copy-out, or an engine that writes
  // them itself): no copy of them stays, and the ranges sharing a byte start a new row of uploads
  // (keep_history.h). An uploaded copy that never served counts as found changed, as a failed
  // check would.
  void overwritten(uintptr_t p, size_t n);

  // The call ended: on success its new copies become valid, on failure they are dropped.
  void end_call(bool ok);
  // Frees copies, least recently used first, until `bytes` were freed (or none is left).
  uint64_t evict(uint64_t bytes);
  void clear();
  uint64_t bytes() const { return bytes_; }
  size_t count() const { return entries_.size(); }
  HostWatch& watch() { return watch_; }

 private:
  // Which uploads are kept (common/keep_history.h): the second in a row, not one a GPU result
  // keeps overwriting, never one of a range that changed before it ever served. At its first
  // reuse page tracking takes over from the content check (confirm()).
  KeepHistory history_;

  // A kept copy under the content check that is about to serve: page tracking takes over, and the
  // digest confirms nothing changed before it did. False: the bytes changed. When the call's operand
  // `m` spans the whole kept range (so the program's own call reads every byte: it is mapped), a
  // range whose sampled blocks changed is found changed first, without being write-protected: a
  // protection outlives the watch (HostWatch::forget), and the program's next write to each page
  // then faults. (A sub-matrix's call says nothing of the rest: the digest checks that it is mapped.)
  bool confirm(Entry& e, const HostMatrix& m);
  // A digest of kSampleBlocks blocks of 4 KiB spread evenly over the range (all of a small one; of a
  // strided one, the first bytes of spread columns).
  static ContentDigest sample(const HostMatrix& m);
  static constexpr size_t kSampleBlocks = 64, kSampleBlock = 4096;
  bool watch_content(const HostMatrix& m, WatchTicket* t);
  void drop(size_t i);
  // No copy overlapping [p, p + n) stays (a new copy of those bytes supersedes them).
  void forget_overlapping(uintptr_t p, size_t n);
  // Keeps `dev` as the copy of `m` (its content watched from here on, superseding any overlapping
  // copy), from `origin` (gofl_residency), pending and in use until the call ends. Null, `dev` left
  // to the caller, when the content cannot be watched.
  Entry* add(const HostMatrix& m, DevMem&& dev, uint8_t origin);

  HostWatch watch_;
  std::vector<std::unique_ptr<Entry>> entries_;
  uint64_t clock_ = 0;
  uint64_t bytes_ = 0;
  size_t min_bytes_ = residency_min_bytes();  // GPU_OFFLOAD_RESIDENCY_MIN_MB, as the policy sees it
  // A GPU result is kept only when this large: a smaller one costs more to check than to copy again.
  static constexpr size_t kMinOutputBytes = size_t(64) << 20;
  bool enabled_ = true;
};

}  // namespace cuda
}  // namespace gofl
