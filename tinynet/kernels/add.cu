#include "half.cuh"

// y = a + b for contiguous arrays of n elements, a and y float32, b float32, float16 or bfloat16
// widened exactly to float32 before the one float32 addition (so the same bits as casting b to
// float32 first, then adding). Four elements per thread, each operand read as one vector where
// its address allows (half.cuh's Vec4): the GPT's residual adds (a float32 stream plus a
// bfloat16 branch under autocast) and the engine's float32 gradient sums, which CuPy's
// element-wise add ran at about half the memory bandwidth (H200 profile, 2026-11-28).
// Kernel tinynet_add_f32_S reads a float32 a and an S b.
template <typename S>
__device__ void add4(const float* a, const S* b, float* y, long long n) {
    long long i0 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 4;
    if (i0 >= n) return;
    if (vec4_ok(a, i0, n) && vec4_ok(b, i0, n) && vec4_ok((const float*)y, i0, n)) {
        Vec4<float> x = *(const Vec4<float>*)(a + i0), r;
        Vec4<S> z = *(const Vec4<S>*)(b + i0);
#pragma unroll
        for (int j = 0; j < 4; ++j) r.v[j] = x.v[j] + load(z.v, j);
        *(Vec4<float>*)(y + i0) = r;
        return;
    }
#pragma unroll
    for (int j = 0; j < 4; ++j)
        if (i0 + j < n) y[i0 + j] = a[i0 + j] + load(b, i0 + j);
}

#define ADD_KERNEL(S, SS)                                                                           \
extern "C" __global__ void tinynet_add_f32_##SS(const float* a, const S* b, float* y, long long n) { \
    add4<S>(a, b, y, n); }

ADD_KERNEL(float, f32)
ADD_KERNEL(half_bits, f16)
ADD_KERNEL(bf16_bits, bf16)
