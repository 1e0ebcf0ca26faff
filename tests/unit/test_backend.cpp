// The CUDA backend as the preload library meets it, without a GPU: libgpuoffload-cuda.so (when this
// build made it) loads, its handshake names this build's op table and call layout, and it has a
// routine for exactly the operations the table (ops/operations.py, gpu=True) sends to the GPU.
// Registering the routines needs no GPU, so this runs wherever the backend was built.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "common/table.h"
#include "cuda/backend_abi.h"

namespace {

const gofl_backend* backend() {
  static const gofl_backend* b = [] {
    void* h = dlopen(GOFL_TEST_BACKEND, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      ADD_FAILURE() << "cannot load " << GOFL_TEST_BACKEND << ": " << dlerror();
      return static_cast<const gofl_backend*>(nullptr);
    }
    auto entry = reinterpret_cast<gofl_backend_entry_fn>(dlsym(h, GOFL_BACKEND_ENTRY));
    if (!entry) ADD_FAILURE() << GOFL_TEST_BACKEND << " has no " << GOFL_BACKEND_ENTRY;
    return entry ? entry() : nullptr;
  }();
  return b;
}

TEST(Backend, HandshakeNamesThisBuildsTableAndLayout) {
  const gofl_backend* b = backend();
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->abi, uint32_t(GOFL_BACKEND_ABI));
  EXPECT_EQ(b->ops_hash, GOFL_OPS_HASH);
  EXPECT_EQ(b->call_size, sizeof(gofl_call));
  EXPECT_EQ(b->result_size, sizeof(gofl_gpu_result));
  EXPECT_EQ(b->fft_size, sizeof(gofl_fft));
  EXPECT_NE(b->fft_forget, nullptr);
  EXPECT_NE(b->take_setup, nullptr);
}

TEST(Backend, RegistersExactlyTheOperationsTheTableSendsToTheGpu) {
  const gofl_backend* b = backend();
  ASSERT_NE(b, nullptr);
  ASSERT_NE(b->has_routine, nullptr);
  for (int op = 0; op < GOFL_N_OPS; ++op)
    EXPECT_EQ(b->has_routine(uint32_t(op)) != 0, gofl_ops[op].gpu_capable) << gofl_ops[op].name;
  EXPECT_EQ(b->has_routine(GOFL_N_OPS), 0);
}

}  // namespace
