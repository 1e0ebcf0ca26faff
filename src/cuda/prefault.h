// Faults in the pages of a call's outputs while the GPU copies in and computes. A NumPy result is
// freshly allocated: without this, the copy-out pays a page fault per 4 KiB page and runs at about
// 10 GB/s instead of the link's 50. MADV_POPULATE_WRITE changes no byte the program can see (an
// untouched page reads as zeros either way), so it may run before the GPU work has succeeded.
// Outputs whose pages are all in memory already (a reused buffer) start no thread.
#pragma once

#include "common/call.h"

namespace gofl {
namespace cuda {

class OutputPrefault {
 public:
  explicit OutputPrefault(const gofl_call& c);
  ~OutputPrefault();  // stops what is left of the population (the copy-out is done) and waits for it
  OutputPrefault(const OutputPrefault&) = delete;
  OutputPrefault& operator=(const OutputPrefault&) = delete;

 private:
  struct Impl;
  Impl* impl_ = nullptr;
};

}  // namespace cuda
}  // namespace gofl
