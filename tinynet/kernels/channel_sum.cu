// Column sums of a row-major (M, C) matrix: the bias gradient of a channels-last (NHWC)
// convolution, whose output gradient is (N*H*W, C) rows with the channel fastest.
//
// Two deterministic stages. Stage 1: a (ceil(C/32), parts) grid of 32x8 blocks; the 32
// threads of a warp read 32 adjacent columns of one row (coalesced), the 8 warps and the
// parts stride over the rows, and each block adds its 8 partial sums in a fixed order into
// partial[part][column]. Stage 2: one thread per column adds the parts in order. Sums run
// in float32 (float64 for double); float16 and bfloat16 are read through their 16 bits.
// One block per column (CuPy's column sum) read one element per row per block: 7 ms for
// the 512x64x24x24 gradient of the CIFAR-10 net's first convolution.

typedef unsigned short half_bits;
struct bf16_bits { unsigned short v; };

__device__ __forceinline__ float load(const float* p, long long i) { return p[i]; }
__device__ __forceinline__ double load(const double* p, long long i) { return p[i]; }
__device__ __forceinline__ float load(const half_bits* p, long long i) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(p[i]));
    return f;
}
__device__ __forceinline__ float load(const bf16_bits* p, long long i) {
    return __uint_as_float(((unsigned int)p[i].v) << 16);
}

__device__ __forceinline__ void store(float* p, int i, float v) { p[i] = v; }
__device__ __forceinline__ void store(double* p, int i, double v) { p[i] = v; }
__device__ __forceinline__ void store(half_bits* p, int i, float v) {
    half_bits h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v));
    p[i] = h;
}
__device__ __forceinline__ void store(bf16_bits* p, int i, float v) {  // round to nearest even, NaN kept quiet
    unsigned int u = __float_as_uint(v);
    p[i].v = (u & 0x7fffffffu) > 0x7f800000u ? (unsigned short)((u >> 16) | 0x40u)
                                             : (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

template <typename T, typename A>
__device__ void channel_sum_rows(const T* x, A* partial, long long m, int c) {
    __shared__ A sums[8][32];
    int col = blockIdx.x * 32 + threadIdx.x;
    A acc = 0;
    if (col < c) {
        for (long long r = (long long)blockIdx.y * 8 + threadIdx.y; r < m; r += (long long)gridDim.y * 8)
            acc += load(x, r * c + col);
    }
    sums[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < c) {
        A total = 0;
        for (int k = 0; k < 8; ++k) total += sums[k][threadIdx.x];
        partial[(long long)blockIdx.y * c + col] = total;
    }
}

template <typename T, typename A>
__device__ void channel_sum_parts(const A* partial, T* out, int parts, int c) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= c) return;
    A total = 0;
    for (int p = 0; p < parts; ++p) total += partial[(long long)p * c + col];
    store(out, col, total);
}

#define CHANNEL_SUM_KERNELS(T, A, S)                                                                \
extern "C" __global__ void tinynet_channel_sum_rows_##S(const T* x, A* partial, long long m, int c) { \
    channel_sum_rows<T, A>(x, partial, m, c); }                                                     \
extern "C" __global__ void tinynet_channel_sum_parts_##S(const A* partial, T* out, int parts, int c) { \
    channel_sum_parts<T, A>(partial, out, parts, c); }

CHANNEL_SUM_KERNELS(float, float, f32)
CHANNEL_SUM_KERNELS(double, double, f64)
CHANNEL_SUM_KERNELS(half_bits, float, f16)
CHANNEL_SUM_KERNELS(bf16_bits, float, bf16)
