#include "half.cuh"

// Dropout masks from Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC 2011): a counter-based generator, so element e's random number is a pure
// function of (seed, call offset, e) and no generator state moves between threads.
// The host keeps [seed, offset] and passes both by value, advancing the offset by one per
// draw (tinynet.random.philox_draw), so a draw is one launch with no state on the device.
// Inside a CUDA graph the values would be frozen at capture: there `cells` points at the
// device pair [seed, base] that each replay rewrites, and `offset` is the draw's place in
// the captured step (seed = cells[0], offset = cells[1] + offset); eager launches pass 0.

struct u4 { unsigned int x, y, z, w; };

__device__ __forceinline__ u4 philox_round(u4 c, unsigned int k0, unsigned int k1) {
    unsigned int hi0 = __umulhi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
    unsigned int hi1 = __umulhi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
    u4 r = {hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0};
    return r;
}

__device__ __forceinline__ u4 philox(u4 c, unsigned int k0, unsigned int k1) {
    for (int i = 0; i < 10; ++i) {
        c = philox_round(c, k0, k1);
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return c;
}

// Uniform in [0, 1) with 24 random bits, for unit u (element or channel) of this call.
__device__ __forceinline__ float unit_uniform(long long u, unsigned long long seed, unsigned long long offset) {
    u4 c = {(unsigned int)(u >> 2), (unsigned int)(u >> 34), (unsigned int)offset, (unsigned int)(offset >> 32)};
    u4 r = philox(c, (unsigned int)seed, (unsigned int)(seed >> 32));
    unsigned int word = (u & 3) == 0 ? r.x : (u & 3) == 1 ? r.y : (u & 3) == 2 ? r.z : r.w;
    return (word >> 8) * (1.0f / 16777216.0f);
}

// group = 1 for dropout (one draw per element), H*W for dropout2d (one per channel map).
template <typename T>
__device__ void dropout_fwd(const T* x, T* y, unsigned char* mask, long long n, long long group,
                            float p, T scale, unsigned long long seed, unsigned long long offset) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned char keep = unit_uniform(i / group, seed, offset) >= p;
    mask[i] = keep;
    y[i] = keep ? x[i] * scale : (T)0;
}

template <typename T>
__device__ void dropout_bwd(const T* gy, const unsigned char* mask, T* gx, long long n, T scale) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    gx[i] = mask[i] ? gy[i] * scale : (T)0;
}

#define DROPOUT_KERNELS(T, S)                                                                      \
extern "C" __global__ void tinynet_dropout_fwd_##S(const T* x, T* y, unsigned char* m, long long n,  \
        long long group, float p, T scale, unsigned long long seed, unsigned long long offset,      \
        const unsigned long long* cells) {                                                          \
    if (cells) { seed = cells[0]; offset += cells[1]; }                                             \
    dropout_fwd<T>(x, y, m, n, group, p, scale, seed, offset); }                                    \
extern "C" __global__ void tinynet_dropout_bwd_##S(const T* gy, const unsigned char* m, T* gx,       \
        long long n, T scale) { dropout_bwd<T>(gy, m, gx, n, scale); }

DROPOUT_KERNELS(float, f32)
DROPOUT_KERNELS(double, f64)

// float16 and bfloat16 (half.cuh): the product with the float32 scale is rounded once (to
// nearest even). Same masks as float32.
// The half-width kernels: TO_FLOAT widens a stored value, FROM_FLOAT rounds the scaled one back.
#define DROPOUT_HALF_KERNELS(S, TO_FLOAT, FROM_FLOAT)                                                \
extern "C" __global__ void tinynet_dropout_fwd_##S(const half_bits* x, half_bits* y, unsigned char* m,   \
        long long n, long long group, float p, float scale, unsigned long long seed,                  \
        unsigned long long offset, const unsigned long long* cells) {                                 \
    if (cells) { seed = cells[0]; offset += cells[1]; }                                               \
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;                                   \
    if (i >= n) return;                                                                               \
    unsigned char keep = unit_uniform(i / group, seed, offset) >= p;                                  \
    m[i] = keep;                                                                                      \
    y[i] = keep ? FROM_FLOAT(TO_FLOAT(x[i]) * scale) : (half_bits)0;                                  \
}                                                                                                     \
extern "C" __global__ void tinynet_dropout_bwd_##S(const half_bits* gy, const unsigned char* m,        \
        half_bits* gx, long long n, float scale) {                                                    \
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;                                   \
    if (i < n) gx[i] = m[i] ? FROM_FLOAT(TO_FLOAT(gy[i]) * scale) : (half_bits)0;                     \
}

DROPOUT_HALF_KERNELS(f16, half_to_float, float_to_half)
DROPOUT_HALF_KERNELS(bf16, bf16_to_float, float_to_bf16)
