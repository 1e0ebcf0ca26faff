// The phases of a call (copy-in, compute, copy-out) and their times and bytes, pipelines (copies on
// side streams overlapped with the computation), and what the engine keeps per call.
#include "cuda/engine_state.h"

namespace gofl {
namespace cuda {

void Engine::begin_compute() {
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, "begin_compute before start");
  Impl& im = *impl_;
  // Waiting for the last DMAs here costs a kernel-launch latency and makes copy_in honest.
  const auto t0 = Clock::now();
  check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (copy-in)");
  if (im.uploading) im.copy_in += seconds_since(t0);
  im.uploading = false;
  im.computing = true;
  im.t_compute = Clock::now();
}

// finish_compute() and end_pipeline(): the pending launch error is taken before the waits and
// reported after them, so that a failure the waits report comes first.
void Engine::wait_checked(bool side_streams, const char* where) {
  const cudaError_t launch = cudaGetLastError();
  if (side_streams)
    for (cudaStream_t x : side_) check(cudaStreamSynchronize(x), where);
  check(cudaStreamSynchronize(stream_), where);
  check(launch, "kernel launch");
}

void Engine::finish_compute() {
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, "finish_compute before start");
  Impl& im = *impl_;
  if (!im.computing) begin_compute();
  wait_checked(false, "cudaStreamSynchronize (compute)");
  im.compute += seconds_since(im.t_compute);
  im.computing = false;
  if (fault("compute")) fail(GOFL_GPU_INJECTED, "compute (injected)");
}

// ---- per call -----------------------------------------------------------------------------------------

void Engine::reset_call_stats() {
  if (!impl_) return;
  Impl& im = *impl_;
  im.copy_in = im.compute = im.copy_out = 0;
  im.uploading = im.computing = false;
}

void Engine::begin_call(const gofl_call& c) {
  reset_call_stats();
  if (!impl_) return;
  impl_->precision = c.op < GOFL_N_OPS ? gofl_ops[c.op].precision : 0;
  impl_->call = &c;
  impl_->stage = ThreadStage::for_call(&c);
  impl_->resident_bits = 0;
  impl_->bytes_resident = 0;
  impl_->corrupt_done = false;
  impl_->written = false;
  impl_->rerunnable = false;
  impl_->malloc_s = 0;
}

void Engine::set_rerunnable() {
  if (impl_) impl_->rerunnable = true;
}

bool Engine::rerunnable() const { return impl_ && impl_->rerunnable; }

// ---- pipelines ----------------------------------------------------------------------------------------

Event::Event(bool timing) : e_(Engine::get().take_event(timing)), timing_(timing) {}

Event::~Event() {
  if (e_) Engine::get().keep_event(e_, timing_);
}

cudaEvent_t Engine::take_event(bool timing) {
  if (impl_) {
    std::lock_guard<std::mutex> lk(impl_->event_m);
    std::vector<cudaEvent_t>& spare = impl_->spare_events[timing ? 1 : 0];
    if (!spare.empty()) {
      cudaEvent_t e = spare.back();
      spare.pop_back();
      return e;
    }
  }
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, timing ? cudaEventDefault : cudaEventDisableTiming), "cudaEventCreate");
  return e;
}

void Engine::keep_event(cudaEvent_t e, bool timing) {
  // A recorded event is reused as it is: its next record replaces the last, and nothing waits on a
  // record of an earlier call (a failed call's queued work is waited for by recover()).
  if (impl_ && !impl_->lost) {
    try {  // runs in a destructor: a failed push_back destroys the event instead
      std::lock_guard<std::mutex> lk(impl_->event_m);
      std::vector<cudaEvent_t>& spare = impl_->spare_events[timing ? 1 : 0];
      if (spare.size() < 64) return spare.push_back(e);
    } catch (...) {
    }
  }
  if (cudaEventDestroy(e) != cudaSuccess) (void)cudaGetLastError();
}

void PipelineStep::begin(cudaStream_t copy, cudaStream_t compute) {
  if (copy) {
    check(cudaEventRecord(in_.get(), copy), "cudaEventRecord (step in)");
    check(cudaStreamWaitEvent(compute, in_.get(), 0), "cudaStreamWaitEvent (step in)");
  }
  check(cudaEventRecord(start_.get(), compute), "cudaEventRecord (step start)");
}

void PipelineStep::end(cudaStream_t compute) { check(cudaEventRecord(end_.get(), compute), "cudaEventRecord (step end)"); }

void PipelineStep::wait() const { check(cudaEventSynchronize(end_.get()), "cudaEventSynchronize (step)"); }

double PipelineStep::seconds() const {
  wait();
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start_.get(), end_.get()), "cudaEventElapsedTime (step)");
  return double(ms) * 1e-3;
}

cudaStream_t Engine::copy_stream(int i) const { return side_[i & 1]; }

void Engine::add_compute(double seconds) {
  if (impl_) impl_->compute += seconds;
}

void Engine::end_pipeline() {
  if (!impl_) fail(GOFL_GPU_NO_DEVICE, "end_pipeline before start");
  wait_checked(true, "cudaStreamSynchronize (pipeline)");
  impl_->uploading = impl_->computing = false;
}

bool Engine::output_written() const { return impl_ && impl_->written; }

void Engine::fill_result(gofl_gpu_result* r) {
  if (!r || !impl_) return;
  r->copy_in_s = float(impl_->copy_in);
  r->compute_s = float(impl_->compute);
  r->copy_out_s = float(impl_->copy_out);
  r->resident = impl_->resident_bits;
  r->bytes_resident = impl_->bytes_resident;
}

}  // namespace cuda
}  // namespace gofl
