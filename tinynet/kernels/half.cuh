// Half-width types for tinynet's kernels, shared by every .cu file that starts with
// `#include "half.cuh"` (tinynet.kernels.cuda.source puts this text in place of that line, so
// CuPy's kernel cache keys on the whole source).
//
// float16 is stored as its 16 bits and converted by single PTX instructions (no cuda_fp16.h
// under NVRTC). bfloat16 is the high 16 bits of a float32, a struct so that overloads tell it
// from float16: widening is a shift, narrowing rounds to nearest even in integer arithmetic
// (NaN kept quiet), which needs no sm_80 instruction. Arithmetic on both runs in float32
// (Acc), read through load and written through store, rounded once.
typedef unsigned short half_bits;
struct bf16_bits { unsigned short v; };

template <typename T> struct Acc { typedef T type; };  // the type arithmetic runs in
template <> struct Acc<half_bits> { typedef float type; };
template <> struct Acc<bf16_bits> { typedef float type; };

__device__ __forceinline__ float half_to_float(unsigned short h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
__device__ __forceinline__ unsigned short float_to_half(float f) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
__device__ __forceinline__ float bf16_to_float(unsigned short h) { return __uint_as_float(((unsigned int)h) << 16); }
__device__ __forceinline__ unsigned short float_to_bf16(float f) {
    unsigned int u = __float_as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((u >> 16) | 0x40u);  // NaN
    return (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

__device__ __forceinline__ float load(const float* p, long long i) { return p[i]; }
__device__ __forceinline__ double load(const double* p, long long i) { return p[i]; }
__device__ __forceinline__ float load(const half_bits* p, long long i) { return half_to_float(p[i]); }
__device__ __forceinline__ float load(const bf16_bits* p, long long i) { return bf16_to_float(p[i].v); }
__device__ __forceinline__ void store(float* p, long long i, float v) { p[i] = v; }
__device__ __forceinline__ void store(double* p, long long i, double v) { p[i] = v; }
__device__ __forceinline__ void store(half_bits* p, long long i, float v) { p[i] = float_to_half(v); }
__device__ __forceinline__ void store(bf16_bits* p, long long i, float v) { p[i].v = float_to_bf16(v); }

// Four consecutive values as one aligned access (16 bytes of float, 32 of double, 8 of the half
// types): element-wise kernels that give each thread 4 elements read and write them as one
// vector where the address allows (vec4_ok), so a warp's accesses stay contiguous.
template <typename T> struct alignas(4 * sizeof(T)) Vec4 { T v[4]; };
template <typename T>
__device__ __forceinline__ bool vec4_ok(const T* p, long long i, long long n) {
    return i + 4 <= n && ((unsigned long long)(p + i)) % sizeof(Vec4<T>) == 0;
}
