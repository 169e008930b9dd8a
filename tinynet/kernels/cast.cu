#include "half.cuh"

// Casts between float32 and the half types (float16, bfloat16) of contiguous arrays, four
// elements per thread: autocast's casts of weights, activations and their gradients. The values
// are those of CuPy's astype (round to nearest even through half.cuh's conversions), in one
// RawKernel launch, which costs the host less than CuPy's element-wise kernel call.
// Kernel tinynet_cast_to_D_S reads S and writes D.

// The four values are read and written as one vector each where both addresses allow (a warp's
// accesses contiguous): element by element, a thread's stride of four had the bfloat16 -> float32
// cast of the GPT's (64, 256, 384) activations at 29 us, a third of the memory bandwidth (H200).
template <typename S, typename D>
__device__ void cast4(const S* x, D* y, long long n) {
    long long i0 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 4;
    if (i0 >= n) return;
    if (vec4_ok(x, i0, n) && vec4_ok(y, i0, n)) {
        Vec4<S> a = *(const Vec4<S>*)(x + i0);
        Vec4<D> b;
#pragma unroll
        for (int j = 0; j < 4; ++j) store(b.v, j, load(a.v, j));
        *(Vec4<D>*)(y + i0) = b;
        return;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
        if (i0 + j < n) store(y, i0 + j, load(x, i0 + j));
}

#define CAST_KERNEL(S, SS, D, DS)                                                                   \
extern "C" __global__ void tinynet_cast_to_##DS##_##SS(const S* x, D* y, long long n) { cast4<S, D>(x, y, n); }

CAST_KERNEL(float, f32, half_bits, f16)
CAST_KERNEL(float, f32, bf16_bits, bf16)
CAST_KERNEL(half_bits, f16, float, f32)
CAST_KERNEL(bf16_bits, bf16, float, f32)
