// Pasted before a CUDA source to build it for the CPU (tests/test_attention_kernels_emulated.py):
// each thread of a block is a ucontext coroutine; __syncthreads switches back to the scheduler in
// runner.h, which resumes every thread once all of them wait there (or have returned). Shared
// memory is function-static, so the blocks of a grid run one after another. A warp shuffle is a
// barrier of the whole block with the values exchanged through a table (two tables alternate, so a
// thread never overwrites a value another thread has still to read).
#include <ucontext.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>
#include <algorithm>
using std::max;
using std::min;
struct emu_dim3 { unsigned x, y, z; };
static emu_dim3 threadIdx, blockIdx, gridDim, blockDim;
struct alignas(16) float4 { float x, y, z, w; };
struct alignas(8) uint2 { unsigned x, y; };
static inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
static inline float __int_as_float(int i) { float f; memcpy(&f, &i, 4); return f; }
static inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
#define __device__
#define __global__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __align__(n) __attribute__((aligned(n)))
#define EMU_THREADS 1024
static ucontext_t emu_main, emu_ctx[EMU_THREADS];
static int emu_tid, emu_gen[EMU_THREADS];
static float emu_slots[2][EMU_THREADS];
static inline void __syncthreads() { swapcontext(&emu_ctx[emu_tid], &emu_main); }
static inline float __shfl_xor_sync(unsigned, float v, int lane_mask) {
    int t = emu_tid, g = emu_gen[t]++ & 1;
    emu_slots[g][t] = v;
    __syncthreads();
    return emu_slots[g][t ^ lane_mask];
}
static double emu_slots_d[2][EMU_THREADS];
static inline double __shfl_xor_sync(unsigned, double v, int lane_mask) {  // the same, for double
    int t = emu_tid, g = emu_gen[t]++ & 1;
    emu_slots_d[g][t] = v;
    __syncthreads();
    return emu_slots_d[g][t ^ lane_mask];
}
