#include "half.cuh"

// Local response normalisation across channels (the math: tinynet/ops/local_response_norm.py).
// The input is seen as (N, C, R), element i = (n * C + c) * R + r; one thread per element.
// The window of channel c is c - before .. c - before + size - 1 (before = size / 2), clipped
// to the channels. D = k + alpha * S / size is kept in the arithmetic type A (float for
// float16/bfloat16, read and written through load/store), each window sum in a fixed order.

template <typename T, typename A>
__device__ void lrn_fwd(const T* x, T* y, A* d, long long total, int C, long long R, int before, int size,
                        A alpha, A beta, A k) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    long long nc = i / R;
    int c = nc % C;
    long long first = i - (long long)c * R;  // channel 0 of this (n, r)
    int lo = max(c - before, 0), hi = min(c - before + size, C);
    A s = 0;
    for (int j = lo; j < hi; ++j) {
        A v = load(x, first + j * R);
        s += v * v;
    }
    A dd = s / size * alpha + k;
    if (d) d[i] = dd;
    store(y, i, load(x, i) / pow(dd, beta));
}

// t_j = g_j x_j / D_j^(beta + 1), the terms the windows of the backward add up.
template <typename T, typename A>
__device__ void lrn_bwd_terms(const T* x, const T* g, const A* d, A* t, long long total, A beta) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    A dd = d[i];
    t[i] = load(g, i) * load(x, i) / (pow(dd, beta) * dd);
}

// dx_i = g_i / D_i^beta - (2 alpha beta / size) x_i sum_{j = c - (size - 1 - before) .. c + before} t_j.
template <typename T, typename A>
__device__ void lrn_bwd(const T* x, const T* g, const A* d, const A* t, T* gx, long long total, int C, long long R,
                        int before, int size, A alpha, A beta) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    long long nc = i / R;
    int c = nc % C;
    long long first = i - (long long)c * R;
    int lo = max(c - (size - 1 - before), 0), hi = min(c + before + 1, C);
    A s = 0;
    for (int j = lo; j < hi; ++j) s += t[first + j * R];
    store(gx, i, load(g, i) / pow(d[i], beta) - 2 * alpha * beta / size * load(x, i) * s);
}

#define LRN_KERNELS(T, A, S)                                                                          \
extern "C" __global__ void tinynet_lrn_fwd_##S(const T* x, T* y, A* d, long long n, int C, long long R, \
        int before, int size, A alpha, A beta, A k) {                                                 \
    lrn_fwd<T, A>(x, y, d, n, C, R, before, size, alpha, beta, k); }                                 \
extern "C" __global__ void tinynet_lrn_bwd_terms_##S(const T* x, const T* g, const A* d, A* t,          \
        long long n, int C, long long R, int before, int size, A alpha, A beta, A k) {                \
    lrn_bwd_terms<T, A>(x, g, d, t, n, beta); }                                                       \
extern "C" __global__ void tinynet_lrn_bwd_##S(const T* x, const T* g, const A* d, const A* t, T* gx,    \
        long long n, int C, long long R, int before, int size, A alpha, A beta, A k) {                \
    lrn_bwd<T, A>(x, g, d, t, gx, n, C, R, before, size, alpha, beta); }

LRN_KERNELS(float, float, f32)
LRN_KERNELS(double, double, f64)
LRN_KERNELS(half_bits, float, f16)
LRN_KERNELS(bf16_bits, float, bf16)
