// Residency in the engine (cuda/resident.h keeps the copies): inputs served by kept device copies,
// results kept for later calls, the settings, and making room when device memory runs short.
#include "cuda/engine_state.h"

#include <cstdlib>

namespace gofl {
namespace cuda {

namespace {
// The call operand a host pointer belongs to (its bits in gofl_gpu_result.resident), or -1.
int operand_of(const gofl_call* c, const void* host) {
  if (!c) return -1;
  const auto h = reinterpret_cast<uintptr_t>(host);
  for (int i = 0; i < c->n_operands && i < GOFL_MAX_OPERANDS; ++i) {
    const auto b = reinterpret_cast<uintptr_t>(c->operands[i].ptr);
    if (h >= b && h < b + uint64_t(c->operands[i].elems) * c->operands[i].elem_size) return i;
  }
  return -1;
}
}  // namespace

bool Engine::kept(const void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem, Input* in) {
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, "input before start");
  if (rows <= 0 || cols <= 0 || elem == 0) return false;
  const HostMatrix m{reinterpret_cast<uintptr_t>(host), rows, cols, std::max(ld, rows), elem};
  ResidentCache::Hit hit;
  if (!impl_->resident->find(m, &hit)) return false;
  if (!hit.fresh) {  // a copy this call uploaded itself (a @ a) saved nothing against earlier calls
    if (const int i = operand_of(impl_->call, host); i >= 0) impl_->resident_bits |= uint32_t(hit.origin) << (2 * i);
    impl_->bytes_resident += m.packed();
  }
  in->dev = hit.dev;
  in->ld = hit.ld;
  return true;
}

bool Engine::input_if_resident(const void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem, cudaStream_t on,
                               Input* in, DevMem* spare) {
  if (rows <= 0 || cols <= 0 || elem == 0) return false;
  if (kept(host, rows, cols, ld, elem, in)) return true;
  const HostMatrix m{reinterpret_cast<uintptr_t>(host), rows, cols, std::max(ld, rows), elem};
  DevMem d = alloc(m.packed());
  // A staged input was read before watching could begin: it serves this call only.
  if (impl_->stage && impl_->stage->input(reinterpret_cast<const char*>(host), m.extent())) {
    *spare = std::move(d);
    return false;
  }
  // Kept or not, the bytes are read only after watching began (resident.h).
  ResidentCache::Entry* k = fault("corrupt") ? nullptr : impl_->resident->keep_upload(m, std::move(d));
  if (!k) {
    *spare = std::move(d);
    return false;
  }
  upload(k->dev.get(), host, rows, cols, ld, elem, on);
  in->dev = k->dev.get();
  in->ld = rows;
  return true;
}

Engine::Input Engine::input(const void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem, cudaStream_t on) {
  return input_of(host, rows, cols, ld, elem, 0, on);
}

Engine::Input Engine::input_triangle(const void* host, int64_t n, int64_t ld, size_t elem, char uplo, cudaStream_t on) {
  return input_of(host, n, n, ld, elem, uplo, on);
}

Engine::Input Engine::input_of(const void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem, char uplo,
                               cudaStream_t on) {
  Input in;
  in.ld = std::max<int64_t>(rows, 1);
  if (rows <= 0 || cols <= 0 || elem == 0) return in;
  DevMem spare;
  if (input_if_resident(host, rows, cols, ld, elem, on, &in, &spare)) return in;
  if (uplo) upload_triangle(spare.get(), host, rows, ld, elem, uplo, on);
  else upload(spare.get(), host, rows, cols, ld, elem, on);
  in.dev = spare.get();
  in.ld = rows;
  in.owned = std::move(spare);
  return in;
}

void Engine::keep_output(DevMem&& dev, void* host, int64_t rows, int64_t cols, int64_t ld, size_t elem) {
  // The test switch that corrupts a result leaves the host unlike the device: nothing is kept then.
  if (!impl_ || rows <= 0 || cols <= 0 || corrupt_result()) return;
  // A staged call's outputs reach the host only after the call (thread_stage.h): the host does not
  // hold them yet.
  if (impl_->stage) return;
  impl_->resident->keep_output(HostMatrix{reinterpret_cast<uintptr_t>(host), rows, cols, std::max(ld, rows), elem},
                               std::move(dev));
}

void Engine::set_residency(bool on, int64_t reserve_bytes, double reserve_fraction) {
  if (!impl_) return;
  impl_->resident->set_enabled(on);
  impl_->reserve_bytes = reserve_bytes;
  impl_->reserve_fraction = reserve_fraction;
}

ResidentCache* Engine::resident() const { return impl_ ? impl_->resident : nullptr; }

void Engine::make_room(uint64_t need) {
  if (!impl_ || impl_->resident->bytes() == 0) return;
  size_t free_b = 0, total = 0;
  if (cudaMemGetInfo(&free_b, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return;
  }
  const uint64_t reserve = impl_->reserve(total);
  const uint64_t have = uint64_t(free_b) + cached_bytes();
  if (have >= reserve + need) return;
  // Another process (or this call) needs the memory: kept copies go, least recently used first.
  impl_->resident->evict(reserve + need - have);
  trim();
}

void Engine::end_call(bool ok) {
  if (!impl_) return;
  impl_->resident->end_call(ok);
  impl_->call = nullptr;
  impl_->stage = nullptr;
}

}  // namespace cuda
}  // namespace gofl
