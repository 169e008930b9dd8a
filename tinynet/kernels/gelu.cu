#include "half.cuh"

// GELU (Hendrycks & Gimpel, 2016, arXiv:1606.08415) on float16 and bfloat16 arrays, computed in
// float32 and rounded once: y = x * Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2, and its
// derivative Phi(x) + x * phi(x) with phi the standard normal density; the "tanh" form
// y = x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))). float32 and float64 take the element-wise
// kernels of elementwise.py. Four elements per thread, contiguous arrays of n elements.

__device__ __forceinline__ float gelu_inner(float x) { return 0.79788456080286535588f * (x + 0.044715f * x * x * x); }

__device__ __forceinline__ float gelu_value(float v, int tanh_form) {
    return tanh_form ? 0.5f * v * (1.0f + tanhf(gelu_inner(v))) : v * 0.5f * (1.0f + erff(v * 0.70710678118654752440f));
}

__device__ __forceinline__ float gelu_slope(float v, int tanh_form) {
    if (tanh_form) {
        float t = tanhf(gelu_inner(v));
        float dinner = 0.79788456080286535588f * (1.0f + 3.0f * 0.044715f * v * v);
        return 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * dinner;
    }
    return 0.5f * (1.0f + erff(v * 0.70710678118654752440f)) + v * expf(-0.5f * v * v) * 0.39894228040143267794f;
}

// Four elements per thread, read and written as one 8-byte vector where aligned (half.cuh).
template <typename T>
__device__ void gelu_fwd(const T* x, T* y, long long n, int tanh_form) {
    long long i0 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 4;
    if (i0 >= n) return;
    if (vec4_ok(x, i0, n) && vec4_ok((const T*)y, i0, n)) {
        Vec4<T> a = *(const Vec4<T>*)(x + i0), b;
#pragma unroll
        for (int j = 0; j < 4; ++j) store(b.v, j, gelu_value(load(a.v, j), tanh_form));
        *(Vec4<T>*)(y + i0) = b;
        return;
    }
    for (long long i = i0; i < i0 + 4 && i < n; ++i) store(y, i, gelu_value(load(x, i), tanh_form));
}

template <typename T>
__device__ void gelu_bwd(const T* x, const T* gy, T* gx, long long n, int tanh_form) {
    long long i0 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 4;
    if (i0 >= n) return;
    if (vec4_ok(x, i0, n) && vec4_ok(gy, i0, n) && vec4_ok((const T*)gx, i0, n)) {
        Vec4<T> a = *(const Vec4<T>*)(x + i0), g = *(const Vec4<T>*)(gy + i0), b;
#pragma unroll
        for (int j = 0; j < 4; ++j) store(b.v, j, load(g.v, j) * gelu_slope(load(a.v, j), tanh_form));
        *(Vec4<T>*)(gx + i0) = b;
        return;
    }
    for (long long i = i0; i < i0 + 4 && i < n; ++i) store(gx, i, load(gy, i) * gelu_slope(load(x, i), tanh_form));
}

#define GELU_KERNELS(T, S)                                                                          \
extern "C" __global__ void tinynet_gelu_fwd_##S(const T* x, T* y, long long n, int tanh_form) {     \
    gelu_fwd<T>(x, y, n, tanh_form); }                                                             \
extern "C" __global__ void tinynet_gelu_bwd_##S(const T* x, const T* gy, T* gx, long long n,      \
        int tanh_form) { gelu_bwd<T>(x, gy, gx, n, tanh_form); }

GELU_KERNELS(half_bits, f16)
GELU_KERNELS(bf16_bits, bf16)
