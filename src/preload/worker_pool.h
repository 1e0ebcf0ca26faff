// The preload library's own CPU threads, for work a caller splits into chunks (copy_split.h): started
// on the first job only, so a program that never has one gets no thread.
#pragma once

#include <stdint.h>

namespace gofl {

using ChunkFn = void (*)(void* ctx, int64_t chunk);

// How a job went, for a caller that judges whether splitting paid (copy_split.cpp).
struct PoolJobTimes {
  uint64_t total_ns = 0;      // from handing the job out until every chunk was done
  uint64_t caller_ns = 0;     // the calling thread's own chunks (claims included)
  int64_t caller_chunks = 0;  // how many chunks the calling thread ran
};

// Runs fn(ctx, 0) ... fn(ctx, chunks - 1), each exactly once, on the pool's threads and the calling
// thread, and returns when all are done. Returns false without running any when the pool cannot take
// the job: it has one thread in all (worker_pool_threads), its threads could not be started, or
// another thread's job is running (jobs never wait for each other: the caller does the work itself).
// chunks: 1 to 65535. `times`, when given, receives how the job went.
bool worker_pool_run(int64_t chunks, ChunkFn fn, void* ctx, PoolJobTimes* times = nullptr);

// Threads a job runs on, the caller included: worker_pool_threads() when first asked (lazily: a Python
// program may set the thread variables after the library loaded), or as many as could be started.
int worker_pool_size();
// The CPUs this process may use (sched_getaffinity), at most kWorkerPoolMaxThreads (the copies it was
// measured on gained up to 16 threads), and at most OPENBLAS_NUM_THREADS (else GOTO_NUM_THREADS, else
// OMP_NUM_THREADS, OpenBLAS's order) where one is set: the user's word on how many threads BLAS may use.
int worker_pool_threads();
constexpr int kWorkerPoolMaxThreads = 16;

// fork(): the child has none of the parent's threads; its first job starts its own.
void worker_pool_fork_child();

}  // namespace gofl
