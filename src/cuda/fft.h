// The FFTW executes' routine (fft.cpp): cuFFT plans made lazily per FFTW plan and kept under it.
#pragma once

namespace gofl {
namespace cuda {

// The FFTW plan `plan` is destroyed: its cuFFT plan is retired, and freed now when the caller holds
// the backend's run lock (no call can be using it), else at the start of the next FFT run.
void fft_forget(const void* plan, bool inside_run_lock);

}  // namespace cuda
}  // namespace gofl
