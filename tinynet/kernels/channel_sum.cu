#include "half.cuh"

// Column sums of a row-major (M, C) matrix: the bias gradient of a channels-last (NHWC)
// convolution, whose output gradient is (N*H*W, C) rows with the channel fastest.
//
// Two deterministic stages. Stage 1: a (ceil(C/32), parts) grid of 32x8 blocks; the 32
// threads of a warp read 32 adjacent columns of one row (coalesced), the 8 warps and the
// parts stride over the rows, and each block adds its 8 partial sums in a fixed order into
// partial[part][column]. Stage 2: one thread per column adds the parts in order. Sums run
// in float32 (float64 for double); float16 and bfloat16 are read through their 16 bits (half.cuh).
// One block per column (CuPy's column sum) read one element per row per block: 7 ms for
// the 512x64x24x24 gradient of the CIFAR-10 net's first convolution.

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

// The same sums with four adjacent columns a thread, read as one aligned vector (16 bytes of
// float, 8 of the half types), for C a multiple of 4: a warp reads 128 adjacent columns of a row
// (256 bytes of a half type where the scalar kernel read 64), a block 128 columns. Each column is
// summed over the same rows in the same order as by channel_sum_rows (same parts, same warps,
// the block's 8 partial sums added in the same order), so the results are the same bits.
template <typename T, typename A>
__device__ void channel_sum_rows4(const T* x, A* partial, long long m, int c) {
    __shared__ A sums[8][128];
    int col = (blockIdx.x * 32 + threadIdx.x) * 4;
    A acc[4] = {0, 0, 0, 0};
    if (col < c) {
        for (long long r = (long long)blockIdx.y * 8 + threadIdx.y; r < m; r += (long long)gridDim.y * 8) {
            Vec4<T> v = *reinterpret_cast<const Vec4<T>*>(x + r * c + col);
            for (int j = 0; j < 4; ++j) acc[j] += load(v.v, j);
        }
    }
    for (int j = 0; j < 4; ++j) sums[threadIdx.y][threadIdx.x * 4 + j] = acc[j];
    __syncthreads();
    if (threadIdx.y == 0 && col < c) {
        for (int j = 0; j < 4; ++j) {
            A total = 0;
            for (int k = 0; k < 8; ++k) total += sums[k][threadIdx.x * 4 + j];
            partial[(long long)blockIdx.y * c + col + j] = total;
        }
    }
}

#define CHANNEL_SUM_KERNELS(T, A, S)                                                                \
extern "C" __global__ void tinynet_channel_sum_rows_##S(const T* x, A* partial, long long m, int c) { \
    channel_sum_rows<T, A>(x, partial, m, c); }                                                     \
extern "C" __global__ void tinynet_channel_sum_parts_##S(const A* partial, T* out, int parts, int c) { \
    channel_sum_parts<T, A>(partial, out, parts, c); }                                             \
extern "C" __global__ void tinynet_channel_sum_rows4_##S(const T* x, A* partial, long long m, int c) { \
    channel_sum_rows4<T, A>(x, partial, m, c); }

CHANNEL_SUM_KERNELS(float, float, f32)
CHANNEL_SUM_KERNELS(double, double, f64)
CHANNEL_SUM_KERNELS(half_bits, float, f16)
CHANNEL_SUM_KERNELS(bf16_bits, float, bf16)
