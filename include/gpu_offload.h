/* gpu-offload's public C interface: available in any program running with libgpuoffload.so
 * (look the functions up with dlsym(RTLD_DEFAULT, ...) so the program also runs without it). */
#ifndef GPU_OFFLOAD_H
#define GPU_OFFLOAD_H

#ifdef __cplusplus
extern "C" {
#endif

/* Where this thread's last intercepted top-level call ran: device 0 = CPU, 1 = GPU; reason is a
 * gofl_reason (see `gpu-offload help reasons`); gpu_status is the failure code of a GPU attempt. */
void gpu_offload_last_call(int* device, int* reason, int* gpu_status);

/* Which operands of this thread's last intercepted call a device copy kept from an earlier call
 * served (residency): 2 bits per operand in the routine's operand order, 0 = copied, 1 = kept since
 * an upload, 2 = left on the GPU by an earlier GPU call's result; 0 for a call that ran on the CPU. */
unsigned gpu_offload_last_call_resident(void);

/* How many GPUs this thread's last intercepted call was split over (cuBLASXt / cusolverMg; see
 * --split), 0 when it ran on one GPU or on the CPU. */
int gpu_offload_last_call_split(void);

/* For this thread's last intercepted call, if it ran on the GPU: how many of the program's other
 * threads were inside CPU calls of some size (2e7 flops or more) when it started. Those hold the
 * cores, so its host copies ran on the calling thread alone while they did. 0 for a call that ran on
 * the CPU. */
unsigned gpu_offload_last_call_cpu_beside(void);

/* 1 when this thread's last intercepted call ran on the GPU staged: its own thread copied its
 * operands into pinned memory before it took the GPU and wrote its results after it gave it back
 * (small BLAS calls made while other threads' calls hold the GPU or the cores); 0 otherwise. */
int gpu_offload_last_call_staged(void);

/* 1 when this thread's last intercepted call ran on the GPU while it waited in line: the thread that
 * held the GPU ran it on its own thread before handing the GPU over (GPU_OFFLOAD_LINE_SERVES); 0
 * otherwise. */
int gpu_offload_last_call_served(void);

/* Why the GPU attempt of this thread's last intercepted call failed, when its reason is "GPU
 * failed": the failure and the step, as "CUDA error 700 at cusolverDnXgeqrf"; "" otherwise. */
const char* gpu_offload_last_call_failure(void);

/* Test-only: make a step of the GPU path fail ("alloc", "h2d", "compute") or corrupt its result
 * ("corrupt"); NULL restores normal operation. Results stay correct: the CPU library runs instead
 * (or, for "corrupt", verify mode reports the mismatch). */
void gpu_offload_test_fault(const char* spec);

#ifdef __cplusplus
}
#endif

#endif
