#include "half.cuh"

#ifndef INFINITY  // NVRTC compiles without math.h
#define INFINITY __int_as_float(0x7f800000)
#endif

// Max and average pooling over NCHW, one thread per output element.
// Max pooling stores the flat (h * W + w) input position of each window's maximum
// (first maximum wins; -1 for a window entirely in padding) so backward can send
// the gradient to exactly that input.

// float16 and bfloat16 (half.cuh): max pooling reads and compares them in float32 (exact: a
// maximum is one of the inputs), and the backward adds its gradients in float32.

// Output element i of an (N*C, Ho, Wo) grid: its row and column, and its plane's index.
__device__ __forceinline__ long long out_position(long long i, int Ho, int Wo, int* oh, int* ow) {
    *ow = i % Wo;
    *oh = (i / Wo) % Ho;
    return i / ((long long)Wo * Ho);
}

template <typename T>
__device__ void max_pool_fwd(const T* x, T* y, int* argmax, long long total, int H, int W,
                             int Ho, int Wo, int kh, int kw, int sh, int sw, int ph, int pw,
                             int dh, int dw) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    int oh, ow;
    const T* xp = x + out_position(i, Ho, Wo, &oh, &ow) * H * W;
    int h0 = oh * sh - ph, w0 = ow * sw - pw;
    typename Acc<T>::type best = -INFINITY;
    int where = -1;
    for (int a = 0; a < kh; ++a) {
        int h = h0 + a * dh;
        if (h < 0 || h >= H) continue;
        for (int b = 0; b < kw; ++b) {
            int w = w0 + b * dw;
            if (w < 0 || w >= W) continue;
            typename Acc<T>::type v = load(xp, h * W + w);
            if (where < 0 || v > best || v != v) { best = v; where = h * W + w; }  // NaN propagates
        }
    }
    store(y, i, best);
    argmax[i] = where;
}

// Max-pool backward gathers: one thread per input element visits the windows that can
// hold it and sums the gradients of those whose stored maximum is this element. Every input
// is written, so no zero-fill launch is needed, and overlapping windows add up in a fixed
// order (no atomics): output rows, then columns, from the last window to the first.
// Window oh covers row h with tap a = (h + ph - oh * sh) / dh when that is a whole number in
// [0, kh), so the candidate rows are oh = ceil((h + ph - (kh - 1) * dh) / sh) ..
// floor((h + ph) / sh) (and the same for columns): a few 32-bit divisions per thread. The
// previous form tested every tap with divisions and split i with three 64-bit ones, which made
// it 2.4x slower than PyTorch's on the CIFAR-10 net's 3x3 stride-2 pooling (592 against 243 us
// for a float16 (512, 64, 25, 25) input on an H200, 2026-11-27).
__device__ __forceinline__ void window_range(int h, int p, int k, int s, int d, int n, int* lo, int* hi) {
    int top = h + p - (k - 1) * d;
    *lo = top <= 0 ? 0 : (top + s - 1) / s;
    *hi = min((h + p) / s, n - 1);  // h + p >= 0
}

template <typename T>
__device__ void max_pool_bwd(const T* gy, const int* argmax, T* gx, long long total, int H, int W,
                             int Ho, int Wo, int kh, int kw, int sh, int sw, int ph, int pw,
                             int dh, int dw) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    long long plane = i / ((long long)W * H);
    int here = (int)(i - plane * W * H);  // h * W + w
    int h = here / W, w = here - h * W;
    const T* g = gy + plane * Ho * Wo;
    const int* am = argmax + plane * Ho * Wo;
    int oh0, oh1, ow0, ow1;
    window_range(h, ph, kh, sh, dh, Ho, &oh0, &oh1);
    window_range(w, pw, kw, sw, dw, Wo, &ow0, &ow1);
    typename Acc<T>::type acc = 0;
    for (int oh = oh1; oh >= oh0; --oh) {
        if (dh > 1 && (h + ph - oh * sh) % dh != 0) continue;
        for (int ow = ow1; ow >= ow0; --ow) {
            if (dw > 1 && (w + pw - ow * sw) % dw != 0) continue;
            int o = oh * Wo + ow;
            if (am[o] == here) acc += load(g, o);
        }
    }
    store(gx, i, acc);
}

// The common case of windows that do not overlap (stride == kernel, no dilation: F.max_pool2d(x, 2)):
// an input lies in at most one window, found by one division per axis, and the index
// arithmetic stays in 32 bits (the caller checks that the input has fewer than 2^31 elements).
// The general gather above spends most of its time in 64-bit divisions: 132 us against
// PyTorch's 80 us for the reference convnet's two poolings at batch 1024 on an H200.
template <typename T>
__device__ void max_pool_bwd_disjoint(const T* gy, const int* argmax, T* gx, int total, int H, int W,
                                      int Ho, int Wo, int kh, int kw, int ph, int pw) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= total) return;
    int row = i / W, w = i - row * W;   // row counts rows over all planes
    int plane = row / H, h = row - plane * H;
    int oh = (h + ph) / kh, ow = (w + pw) / kw;
    typename Acc<T>::type g = 0;
    if (oh < Ho && ow < Wo) {
        int o = (plane * Ho + oh) * Wo + ow;
        if (argmax[o] == h * W + w) g = load(gy, o);
    }
    store(gx, i, g);
}

// Output element i of average pooling: its window [hs, he) x [ws, we) clipped to the input,
// its plane's index (returned through *plane) and its divisor (returned).
template <typename T>
__device__ T avg_window(long long i, int H, int W, int Ho, int Wo, int kh, int kw, int sh, int sw, int ph,
                        int pw, int count_include_pad, int divisor_override, long long* plane,
                        int* hs, int* he, int* ws, int* we) {
    int oh, ow;
    *plane = out_position(i, Ho, Wo, &oh, &ow);
    int h0 = oh * sh - ph, w0 = ow * sw - pw;
    int h1 = min(h0 + kh, H + ph), w1 = min(w0 + kw, W + pw);
    int pool = (h1 - h0) * (w1 - w0);
    *hs = max(h0, 0); *ws = max(w0, 0); *he = min(h1, H); *we = min(w1, W);
    if (divisor_override > 0) return (T)divisor_override;
    if (!count_include_pad) pool = (*he - *hs) * (*we - *ws);
    return (T)pool;
}

template <typename T>
__device__ void avg_pool_fwd(const T* x, T* y, long long total, int H, int W, int Ho, int Wo, int kh,
                             int kw, int sh, int sw, int ph, int pw, int cip, int dov) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    long long plane;
    int hs, he, ws, we;
    T div = avg_window<T>(i, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw, cip, dov, &plane, &hs, &he, &ws, &we);
    const T* xp = x + plane * H * W;
    T acc = 0;
    for (int h = hs; h < he; ++h)
        for (int w = ws; w < we; ++w) acc += xp[h * W + w];
    y[i] = acc / div;
}

template <typename T>
__device__ void avg_pool_bwd(const T* gy, T* gx, long long total, int H, int W, int Ho, int Wo, int kh,
                             int kw, int sh, int sw, int ph, int pw, int cip, int dov) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    long long plane;
    int hs, he, ws, we;
    T g = gy[i] / avg_window<T>(i, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw, cip, dov, &plane, &hs, &he, &ws, &we);
    T* gp = gx + plane * H * W;
    for (int h = hs; h < he; ++h)
        for (int w = ws; w < we; ++w) atomicAdd(gp + h * W + w, g);
}

#define MAX_POOL_KERNELS(T, S)                                                                      \
extern "C" __global__ void tinynet_max_pool2d_fwd_##S(const T* x, T* y, int* am, long long n,         \
        int H, int W, int Ho, int Wo, int kh, int kw, int sh, int sw, int ph, int pw, int dh, int dw) { \
    max_pool_fwd<T>(x, y, am, n, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw, dh, dw); }                     \
extern "C" __global__ void tinynet_max_pool2d_bwd_##S(const T* gy, const int* am, T* gx, long long n,  \
        int H, int W, int Ho, int Wo, int kh, int kw, int sh, int sw, int ph, int pw, int dh, int dw) { \
    max_pool_bwd<T>(gy, am, gx, n, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw, dh, dw); }                   \
extern "C" __global__ void tinynet_max_pool2d_bwd_disjoint_##S(const T* gy, const int* am, T* gx,      \
        int n, int H, int W, int Ho, int Wo, int kh, int kw, int ph, int pw) {                         \
    max_pool_bwd_disjoint<T>(gy, am, gx, n, H, W, Ho, Wo, kh, kw, ph, pw); }

#define AVG_POOL_KERNELS(T, S)                                                                      \
extern "C" __global__ void tinynet_avg_pool2d_fwd_##S(const T* x, T* y, long long n, int H, int W,     \
        int Ho, int Wo, int kh, int kw, int sh, int sw, int ph, int pw, int cip, int dov) {           \
    avg_pool_fwd<T>(x, y, n, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw, cip, dov); }                       \
extern "C" __global__ void tinynet_avg_pool2d_bwd_##S(const T* gy, T* gx, long long n, int H, int W,   \
        int Ho, int Wo, int kh, int kw, int sh, int sw, int ph, int pw, int cip, int dov) {           \
    avg_pool_bwd<T>(gy, gx, n, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw, cip, dov); }

MAX_POOL_KERNELS(float, f32)
MAX_POOL_KERNELS(double, f64)
MAX_POOL_KERNELS(half_bits, f16)
MAX_POOL_KERNELS(bf16_bits, bf16)
AVG_POOL_KERNELS(float, f32)
AVG_POOL_KERNELS(double, f64)
