#include "half.cuh"

// Dropout masks from Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC 2011): a counter-based generator, so element e's random number is a pure
// function of (seed, call offset, e) and no generator state moves between threads.
// The host keeps [seed, offset] and passes both by value, advancing the offset by one per
// draw (tinynet.random.philox_draw), so a draw is one launch with no state on the device.
// Inside a CUDA graph the values would be frozen at capture: there `cells` points at the
// device pair [seed, base] that each replay rewrites, and `offset` is the draw's place in
// the captured step (seed = cells[0], offset = cells[1] + offset); eager launches pass 0.

#include "philox.cuh"  // Philox4x32-10: philox(counter, key0, key1)

// Unit u (element or channel map) of a call draws the uniform (word >> 8) / 2^24 in [0, 1), 24
// random bits, from word u % 4 of the Philox block for counter (u / 4, offset) and key seed.
// group = 1 for dropout (one draw per element), H*W for dropout2d (one per channel map).
// Each thread takes 4 consecutive elements: unit u's number is word u % 4 of the Philox block
// for counter u / 4, so one Philox call serves 4 units of dropout (one block per thread) and,
// for dropout2d, a run of elements of one map; a thread calls Philox again only where its
// elements cross into a unit of another counter. The masks are those of one call per element.
// The 4 values are read and written as one vector where aligned (half.cuh's Vec4).
// Values go through half.cuh's load/store: float and double as themselves, float16 and
// bfloat16 widened, multiplied by the float32 scale and rounded once.
template <typename T, typename S>
__device__ void dropout_fwd(const T* x, T* y, unsigned char* mask, long long n, long long group,
                            float p, S scale, unsigned long long seed, unsigned long long offset) {
    long long i0 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 4;
    if (i0 >= n) return;
    long long u = i0 / group, r = i0 - u * group, ctr = -1;
    u4 w = {0u, 0u, 0u, 0u};
    unsigned char keep[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        if ((u >> 2) != ctr) {
            ctr = u >> 2;
            u4 c = {(unsigned int)ctr, (unsigned int)(ctr >> 32), (unsigned int)offset, (unsigned int)(offset >> 32)};
            w = philox(c, (unsigned int)seed, (unsigned int)(seed >> 32));
        }
        unsigned int word = (u & 3) == 0 ? w.x : (u & 3) == 1 ? w.y : (u & 3) == 2 ? w.z : w.w;
        keep[j] = (word >> 8) * (1.0f / 16777216.0f) >= p;
        if (++r == group) { r = 0; ++u; }
    }
    if (i0 + 4 <= n) {
        *(uchar4*)(mask + i0) = make_uchar4(keep[0], keep[1], keep[2], keep[3]);  // i0 % 4 == 0: aligned
    } else {
        for (int j = 0; i0 + j < n; ++j) mask[i0 + j] = keep[j];
    }
    typedef typename Acc<T>::type F;
    if (vec4_ok(x, i0, n) && vec4_ok(y, i0, n)) {  // one vector read and write
        Vec4<T> v = *(const Vec4<T>*)(x + i0);
#pragma unroll
        for (int j = 0; j < 4; ++j) store(v.v, j, keep[j] ? load(v.v, j) * scale : (F)0);
        *(Vec4<T>*)(y + i0) = v;
        return;
    }
    for (int j = 0; j < 4 && i0 + j < n; ++j) store(y, i0 + j, keep[j] ? load(x, i0 + j) * scale : (F)0);
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
    dropout_fwd<T, T>(x, y, m, n, group, p, scale, seed, offset); }                                 \
extern "C" __global__ void tinynet_dropout_bwd_##S(const T* gy, const unsigned char* m, T* gx,       \
        long long n, T scale) { dropout_bwd<T>(gy, m, gx, n, scale); }

DROPOUT_KERNELS(float, f32)
DROPOUT_KERNELS(double, f64)

// float16 and bfloat16 (half.cuh): the product with the float32 scale is rounded once (to
// nearest even). Same masks as float32. In the backward, TO_FLOAT widens a stored value and
// FROM_FLOAT rounds the scaled one back.
#define DROPOUT_HALF_KERNELS(T, S, TO_FLOAT, FROM_FLOAT)                                             \
extern "C" __global__ void tinynet_dropout_fwd_##S(const T* x, T* y, unsigned char* m,                   \
        long long n, long long group, float p, float scale, unsigned long long seed,                  \
        unsigned long long offset, const unsigned long long* cells) {                                 \
    if (cells) { seed = cells[0]; offset += cells[1]; }                                               \
    dropout_fwd<T, float>(x, y, m, n, group, p, scale, seed, offset);                                 \
}                                                                                                     \
extern "C" __global__ void tinynet_dropout_bwd_##S(const half_bits* gy, const unsigned char* m,        \
        half_bits* gx, long long n, float scale) {                                                    \
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;                                   \
    if (i < n) gx[i] = m[i] ? FROM_FLOAT(TO_FLOAT(gy[i]) * scale) : (half_bits)0;                     \
}

DROPOUT_HALF_KERNELS(half_bits, f16, half_to_float, float_to_half)
DROPOUT_HALF_KERNELS(bf16_bits, bf16, bf16_to_float, float_to_bf16)
