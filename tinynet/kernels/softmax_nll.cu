#ifndef INFINITY  // NVRTC compiles without math.h
#define INFINITY __int_as_float(0x7f800000)
#endif

// Row-wise softmax, log-softmax, NLL loss and their fusion (softmax cross-entropy) for (M, C) input.
// One warp per row for the row kernels; the loss kernels reduce over rows in one block
// and write [loss, weight sum] so "mean" needs no host round trip.

#define WARP 32

template <typename T>
__device__ __forceinline__ T warp_max(T v) {
    for (int o = WARP / 2; o > 0; o /= 2) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
    for (int o = WARP / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// The maximum m of the row xr (C values, strided over the warp's lanes) and sum(exp(xr - m)),
// both the warp's whole-row values.
template <typename T>
__device__ __forceinline__ void row_max_sumexp(const T* xr, int C, int lane, T& m, T& s) {
    m = -INFINITY;
    for (int c = lane; c < C; c += WARP) m = max(m, xr[c]);
    m = warp_max(m);
    s = 0;
    for (int c = lane; c < C; c += WARP) s += exp(xr[c] - m);
    s = warp_sum(s);
}

// logsumexp of each row; optionally the log-probabilities too (y may be null).
template <typename T>
__device__ void row_lse(const T* x, T* y, T* lse, int M, int C) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / WARP, lane = threadIdx.x % WARP;
    if (row >= M) return;
    const T* xr = x + (long long)row * C;
    T m, s;
    row_max_sumexp(xr, C, lane, m, s);
    T l = m + log(s);
    if (lane == 0) lse[row] = l;
    if (y) for (int c = lane; c < C; c += WARP) y[(long long)row * C + c] = xr[c] - l;
}

// softmax of each row: y = exp(x - max) / sum(exp(x - max)) (a row of -inf only gives NaN, as
// PyTorch's softmax and the generic code do).
template <typename T>
__device__ void softmax_fwd(const T* x, T* y, int M, int C) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / WARP, lane = threadIdx.x % WARP;
    if (row >= M) return;
    const T* xr = x + (long long)row * C;
    T m, s;
    row_max_sumexp(xr, C, lane, m, s);
    for (int c = lane; c < C; c += WARP) y[(long long)row * C + c] = exp(xr[c] - m) / s;
}

// softmax backward: gx = y * (gy - sum(gy * y)) per row.
template <typename T>
__device__ void softmax_bwd(const T* y, const T* gy, T* gx, int M, int C) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / WARP, lane = threadIdx.x % WARP;
    if (row >= M) return;
    long long base = (long long)row * C;
    T s = 0;
    for (int c = lane; c < C; c += WARP) s += gy[base + c] * y[base + c];
    s = warp_sum(s);
    for (int c = lane; c < C; c += WARP) gx[base + c] = y[base + c] * (gy[base + c] - s);
}

// log_softmax backward: gx = gy - exp(y) * sum(gy) per row.
template <typename T>
__device__ void log_softmax_bwd(const T* y, const T* gy, T* gx, int M, int C) {
    int row = (blockIdx.x * blockDim.x + threadIdx.x) / WARP, lane = threadIdx.x % WARP;
    if (row >= M) return;
    long long base = (long long)row * C;
    T s = 0;
    for (int c = lane; c < C; c += WARP) s += gy[base + c];
    s = warp_sum(s);
    for (int c = lane; c < C; c += WARP) gx[base + c] = gy[base + c] - exp(y[base + c]) * s;
}

// Loss per row ( -w[t] * (logp[t]) ), summed in one block; out = [sum, weight sum, loss] with
// loss = sum / weight sum for mode 0 ("mean", the one division CuPy's true_divide would do: 0/0
// is NaN, as in PyTorch) and sum otherwise, so the reduced loss needs no launch of its own;
// per_row (may be null) gets the unreduced losses. lse null: logp is the input itself.
template <typename T>
__device__ void nll_reduce(const T* logp_or_x, const T* lse, const long long* t, const T* w,
                           T* out, T* per_row, int M, int C, long long ignore_index, int mode) {
    __shared__ T s_loss[256], s_w[256];
    T acc = 0, accw = 0;
    for (int row = threadIdx.x; row < M; row += blockDim.x) {
        long long tt = t[row];
        T l = 0, wt = 0;
        if (tt != ignore_index && tt >= 0 && tt < C) {
            wt = w ? w[tt] : (T)1;
            T lp = logp_or_x[(long long)row * C + tt] - (lse ? lse[row] : (T)0);
            l = -wt * lp;
        }
        if (per_row) per_row[row] = l;
        acc += l;
        accw += wt;
    }
    s_loss[threadIdx.x] = acc;
    s_w[threadIdx.x] = accw;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (threadIdx.x < k) { s_loss[threadIdx.x] += s_loss[threadIdx.x + k]; s_w[threadIdx.x] += s_w[threadIdx.x + k]; }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        out[0] = s_loss[0];
        out[1] = s_w[0];
        out[2] = mode == 0 ? s_loss[0] / s_w[0] : s_loss[0];
    }
}

// Gradient wrt the input, one thread per element. scale_mode 0: mean (gy[0] / out[1]),
// 1: sum (gy[0]), 2: none (gy[row]). lse null: NLL on log-probabilities (one-hot grad);
// else softmax cross-entropy: (softmax - onehot) * w[t] * scale.
template <typename T>
__device__ void nll_grad(const T* x, const T* lse, const long long* t, const T* w, const T* gy,
                         const T* out, T* gx, int M, int C, long long ignore_index, int scale_mode) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= (long long)M * C) return;
    int row = i / C, c = i % C;
    long long tt = t[row];
    bool valid = tt != ignore_index && tt >= 0 && tt < C;
    T scale = scale_mode == 0 ? gy[0] / out[1] : scale_mode == 1 ? gy[0] : gy[row];
    T wt = valid ? (w ? w[tt] : (T)1) : (T)0;
    T g = (c == tt) ? -wt * scale : (T)0;
    if (lse) g += valid ? exp(x[i] - lse[row]) * wt * scale : (T)0;
    gx[i] = g;
}

#define XENT_KERNELS(T, S)                                                                          \
extern "C" __global__ void tinynet_softmax_fwd_##S(const T* x, T* y, int M, int C) {                 \
    softmax_fwd<T>(x, y, M, C); }                                                                    \
extern "C" __global__ void tinynet_softmax_bwd_##S(const T* y, const T* gy, T* gx, int M, int C) {   \
    softmax_bwd<T>(y, gy, gx, M, C); }                                                               \
extern "C" __global__ void tinynet_log_softmax_fwd_##S(const T* x, T* y, T* lse, int M, int C) {     \
    row_lse<T>(x, y, lse, M, C); }                                                                   \
extern "C" __global__ void tinynet_log_softmax_bwd_##S(const T* y, const T* gy, T* gx, int M, int C) { \
    log_softmax_bwd<T>(y, gy, gx, M, C); }                                                           \
extern "C" __global__ void tinynet_nll_loss_fwd_##S(const T* logp, const long long* t, const T* w,   \
        T* out, T* per_row, int M, int C, long long ig, int mode) {                                  \
    nll_reduce<T>(logp, (const T*)0, t, w, out, per_row, M, C, ig, mode); }                                \
extern "C" __global__ void tinynet_nll_loss_bwd_##S(const long long* t, const T* w, const T* gy,     \
        const T* out, T* gx, int M, int C, long long ig, int mode) {                                 \
    nll_grad<T>((const T*)0, (const T*)0, t, w, gy, out, gx, M, C, ig, mode); }                      \
extern "C" __global__ void tinynet_cross_entropy_fwd_##S(const T* x, const T* lse, const long long* t, \
        const T* w, T* out, T* per_row, int M, int C, long long ig, int mode) {                      \
    nll_reduce<T>(x, lse, t, w, out, per_row, M, C, ig, mode); }                                           \
extern "C" __global__ void tinynet_cross_entropy_bwd_##S(const T* x, const T* lse, const long long* t, \
        const T* w, const T* gy, const T* out, T* gx, int M, int C, long long ig, int mode) {        \
    nll_grad<T>(x, lse, t, w, gy, out, gx, M, C, ig, mode); }

XENT_KERNELS(float, f32)
XENT_KERNELS(double, f64)
