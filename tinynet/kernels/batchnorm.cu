#include "half.cuh"
// Batch normalisation over (N, C, L) memory (L = H*W, 1 for (N, C) input). The statistics
// and the backward's two sums are per-channel reductions of N*L values, in one launch each:
//   - rows of >= 32 values (convolution outputs): a (C, parts) grid, block (c, p) reducing the
//     contiguous rows n = p, p + parts, ... of channel c; the last block of a channel to finish
//     (an atomic count per channel, as the split-K GEMM in gemm.cu) merges the channel's parts in
//     part order, so the result does not depend on which block finished when (deterministic),
//     and resets the count to 0. One block per channel left all but C SMs idle: 200 us per
//     launch at the time-to-accuracy net's batch 256 on the H200 (32 channels of 28x28);
//   - short rows: one block per channel (bn_stats, bn_grad_sums below).
// The statistics merge Welford states (count, mean, sum of squared deviations) with Chan,
// Golub & LeVeque's pairwise formula (1979), so x is read once without cancellation.
// The running statistics are updated on the device; the elementwise kernels apply / differentiate.
//
// Types: T is the data's (x, y, gy, gx), P the parameters' (weight, bias, running statistics):
// P = T, or float32 for float16 data under autocast (float32 parameters, as PyTorch's batch
// norm takes them). bfloat16 has no kernels here: Op.apply widens it to float32 first. Arithmetic, the batch statistics, the sums and the parts run in
// A = Acc<T>::type (half.cuh): T for float32/float64, float32 for float16/bfloat16, read through
// load() and written through store() (one rounding).

template <typename T>
__device__ T block_sum(T v, T* sh) {
    sh[threadIdx.x] = v;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k];
        __syncthreads();
    }
    T r = sh[0];
    __syncthreads();
    return r;
}

// The running statistics, updated by thread 0 of channel c's last block; ``scaled_var`` is
// momentum times the unbiased batch variance, computed by the caller.
template <typename P, typename A>
__device__ void bn_running(P* rmean, P* rvar, int c, A mu, A scaled_var, A momentum) {
    if (!rmean) return;
    store(rmean, c, ((A)1 - momentum) * (A)load(rmean, c) + momentum * mu);
    store(rvar, c, ((A)1 - momentum) * (A)load(rvar, c) + scaled_var);
}

template <typename T, typename P>
__device__ void bn_stats(const T* x, typename Acc<T>::type* mean, typename Acc<T>::type* invstd, P* rmean,
                         P* rvar, int N, int C, int L, typename Acc<T>::type eps, typename Acc<T>::type momentum) {
    typedef typename Acc<T>::type A;
    __shared__ A sh[256];
    int c = blockIdx.x;
    long long m = (long long)N * L;
    A s = 0;
    for (long long j = threadIdx.x; j < m; j += blockDim.x) s += load(x, (j / L) * C * L + (long long)c * L + j % L);
    A mu = block_sum(s, sh) / (A)m;
    A q = 0;
    for (long long j = threadIdx.x; j < m; j += blockDim.x) {
        A d = load(x, (j / L) * C * L + (long long)c * L + j % L) - mu;
        q += d * d;
    }
    A var = block_sum(q, sh) / (A)m;
    if (threadIdx.x == 0) {
        mean[c] = mu;
        invstd[c] = (A)1 / sqrt(var + eps);
        bn_running<P, A>(rmean, rvar, c, mu, momentum * var * (A)m / (A)(m > 1 ? m - 1 : 1), momentum);
    }
}

template <typename T, typename P>
__device__ void bn_apply(const T* x, const typename Acc<T>::type* mean, const typename Acc<T>::type* invstd,
                         const P* w, const P* b, T* y, long long n, int C, int L) {
    typedef typename Acc<T>::type A;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    int c = (i / L) % C;
    A v = (load(x, i) - mean[c]) * invstd[c];
    store(y, i, v * (w ? (A)load(w, c) : (A)1) + (b ? (A)load(b, c) : (A)0));
}

// Eval mode: the running statistics as the apply kernel's (mean, invstd), one thread a channel,
// invstd = 1 / sqrt(running_var + eps) in A (IEEE division and square root: the bits of the
// same three operations done elementwise).
template <typename P, typename A>
__device__ void bn_eval_stats(const P* rm, const P* rv, A* mean, A* invstd, int C, A eps) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= C) return;
    mean[c] = (A)load(rm, c);
    invstd[c] = (A)1 / sqrt((A)load(rv, c) + eps);
}

// Per channel: sum(gy) and sum(gy * xhat).
template <typename T>
__device__ void bn_grad_sums(const T* x, const T* gy, const typename Acc<T>::type* mean,
                             const typename Acc<T>::type* invstd, typename Acc<T>::type* sum_gy,
                             typename Acc<T>::type* sum_gy_xhat, int N, int C, int L) {
    typedef typename Acc<T>::type A;
    __shared__ A sh[256];
    int c = blockIdx.x;
    long long m = (long long)N * L;
    A a = 0, b = 0;
    for (long long j = threadIdx.x; j < m; j += blockDim.x) {
        long long k = (j / L) * C * L + (long long)c * L + j % L;
        A g = load(gy, k);
        a += g;
        b += g * (load(x, k) - mean[c]) * invstd[c];
    }
    a = block_sum(a, sh);
    b = block_sum(b, sh);
    if (threadIdx.x == 0) { sum_gy[c] = a; sum_gy_xhat[c] = b; }
}

// training: gx = w*invstd*(gy - sum_gy/m - xhat*sum_gy_xhat/m); eval: gx = gy*w*invstd.
template <typename T, typename P>
__device__ void bn_grad_input(const T* x, const T* gy, const typename Acc<T>::type* mean,
                              const typename Acc<T>::type* invstd, const P* w, const typename Acc<T>::type* sum_gy,
                              const typename Acc<T>::type* sum_gy_xhat, T* gx, long long n, int C, int L,
                              long long m, int training) {
    typedef typename Acc<T>::type A;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    int c = (i / L) % C;
    A scale = (w ? (A)load(w, c) : (A)1) * invstd[c];
    if (!training) { store(gx, i, load(gy, i) * scale); return; }
    A xhat = (load(x, i) - mean[c]) * invstd[c];
    store(gx, i, scale * (load(gy, i) - sum_gy[c] / (A)m - xhat * sum_gy_xhat[c] / (A)m));
}

// Merge Welford state b (count nb, mean mb, squared deviations qb) into a (Chan et al. 1979).
template <typename T>
__device__ __forceinline__ void welford_merge(long long& na, T& ma, T& qa, long long nb, T mb, T qb) {
    if (nb == 0) return;
    if (na == 0) { na = nb; ma = mb; qa = qb; return; }
    long long n = na + nb;
    T d = mb - ma, f = (T)nb / (T)n;
    ma += d * f;
    qa += qb + d * d * (T)na * f;
    na = n;
}

// The block's threads merge their states (a power-of-two block of at most 256 threads, in a
// fixed tree: deterministic); thread 0 gets the block's state.
template <typename T>
__device__ void block_welford(long long& n, T& mean, T& q) {
    __shared__ long long sn[256];
    __shared__ T sm[256], sq[256];
    int t = threadIdx.x;
    sn[t] = n; sm[t] = mean; sq[t] = q;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (t < k) {
            long long a = sn[t];
            T m = sm[t], v = sq[t];
            welford_merge(a, m, v, sn[t + k], sm[t + k], sq[t + k]);
            sn[t] = a; sm[t] = m; sq[t] = v;
        }
        __syncthreads();
    }
    n = sn[0]; mean = sm[0]; q = sq[0];
    __syncthreads();
}

// True in the one block of channel c that finishes last (the count reset for the next launch).
__device__ bool last_of_channel(unsigned int* counters, int c) {
    __shared__ int last;
    __threadfence();  // this block's part is visible device-wide before the count says so
    __syncthreads();
    if (threadIdx.x == 0) {
        last = atomicAdd(&counters[c], 1u) == gridDim.y - 1;
        if (last) counters[c] = 0;
    }
    __syncthreads();
    if (last) __threadfence();
    return last;
}

template <typename T, typename P>
__device__ void bn_stats_rows(const T* x, typename Acc<T>::type* part, unsigned int* counters,
                              typename Acc<T>::type* mean, typename Acc<T>::type* invstd, P* rmean, P* rvar,
                              int N, int C, int L, typename Acc<T>::type eps, typename Acc<T>::type momentum) {
    typedef typename Acc<T>::type A;
    int c = blockIdx.x, p = blockIdx.y, parts = gridDim.y;
    long long n = 0;
    A mu = 0, q = 0;
    for (int r = p; r < N; r += parts) {
        const T* row = x + ((long long)r * C + c) * L;
        for (int j = threadIdx.x; j < L; j += blockDim.x) {  // Welford, one value at a time
            A v = load(row, j), d = v - mu;
            ++n;
            mu += d / (A)n;
            q += d * (v - mu);
        }
    }
    block_welford(n, mu, q);
    A* mine = part + 2 * ((long long)c * parts + p);
    if (threadIdx.x == 0) { mine[0] = mu; mine[1] = q; }
    if (!last_of_channel(counters, c)) return;
    n = 0; mu = 0; q = 0;
    for (int k = threadIdx.x; k < parts; k += blockDim.x) {  // the parts, each thread in part order
        const A* other = part + 2 * ((long long)c * parts + k);
        long long rows = (N - k + parts - 1) / parts;
        welford_merge(n, mu, q, rows * L, __ldcg(other), __ldcg(other + 1));  // past L1
    }
    block_welford(n, mu, q);
    if (threadIdx.x == 0) {
        long long m = (long long)N * L;
        A var = q / (A)m;
        mean[c] = mu;
        invstd[c] = (A)1 / sqrt(var + eps);
        bn_running<P, A>(rmean, rvar, c, mu, momentum * q / (A)(m > 1 ? m - 1 : 1), momentum);
    }
}

template <typename T>
__device__ void bn_grad_sums_rows(const T* x, const T* gy, const typename Acc<T>::type* mean,
                                  const typename Acc<T>::type* invstd, typename Acc<T>::type* part,
                                  unsigned int* counters, typename Acc<T>::type* sum_gy,
                                  typename Acc<T>::type* sum_gy_xhat, int N, int C, int L) {
    typedef typename Acc<T>::type A;
    __shared__ A sh[256];
    int c = blockIdx.x, p = blockIdx.y, parts = gridDim.y;
    A mu = mean[c], is = invstd[c], a = 0, b = 0;
    for (int r = p; r < N; r += parts) {
        long long base = ((long long)r * C + c) * L;
        for (int j = threadIdx.x; j < L; j += blockDim.x) {
            A g = load(gy, base + j);
            a += g;
            b += g * (load(x, base + j) - mu) * is;
        }
    }
    a = block_sum(a, sh);
    b = block_sum(b, sh);
    A* mine = part + 2 * ((long long)c * parts + p);
    if (threadIdx.x == 0) { mine[0] = a; mine[1] = b; }
    if (!last_of_channel(counters, c)) return;
    a = 0; b = 0;
    for (int k = threadIdx.x; k < parts; k += blockDim.x) {
        const A* other = part + 2 * ((long long)c * parts + k);
        a += __ldcg(other);
        b += __ldcg(other + 1);
    }
    a = block_sum(a, sh);
    b = block_sum(b, sh);
    if (threadIdx.x == 0) { sum_gy[c] = a; sum_gy_xhat[c] = b; }
}

// The kernels of data type T (suffix S) with parameters of type P; Q is "" for P = T and _pf32
// for float32 parameters with half-precision data (tinynet_batch_norm_fwd_pf32_f16, ...).
// The sums do not read the parameters: they have one version per data type.
#define BN_PARAM_KERNELS(T, P, Q, S)                                                                \
extern "C" __global__ void tinynet_batch_norm_stats_fwd##Q##_##S(const T* x, Acc<T>::type* mean,      \
        Acc<T>::type* invstd, P* rm, P* rv, int N, int C, int L, Acc<T>::type eps, Acc<T>::type mom) { \
    bn_stats<T, P>(x, mean, invstd, rm, rv, N, C, L, eps, mom); }                                     \
extern "C" __global__ void tinynet_batch_norm_eval_stats_fwd##Q##_##S(const P* rm, const P* rv,        \
        Acc<T>::type* mean, Acc<T>::type* invstd, int C, Acc<T>::type eps) {                          \
    bn_eval_stats<P, Acc<T>::type>(rm, rv, mean, invstd, C, eps); }                                   \
extern "C" __global__ void tinynet_batch_norm_fwd##Q##_##S(const T* x, const Acc<T>::type* mean,      \
        const Acc<T>::type* invstd, const P* w, const P* b, T* y, long long n, int C, int L) {         \
    bn_apply<T, P>(x, mean, invstd, w, b, y, n, C, L); }                                              \
extern "C" __global__ void tinynet_batch_norm_bwd##Q##_##S(const T* x, const T* gy,                   \
        const Acc<T>::type* mean, const Acc<T>::type* invstd, const P* w, const Acc<T>::type* a,       \
        const Acc<T>::type* b, T* gx, long long n, int C, int L, long long m, int training) {          \
    bn_grad_input<T, P>(x, gy, mean, invstd, w, a, b, gx, n, C, L, m, training); }                    \
extern "C" __global__ void tinynet_batch_norm_stats_rows_fwd##Q##_##S(const T* x, Acc<T>::type* part, \
        unsigned int* cnt, Acc<T>::type* mean, Acc<T>::type* invstd, P* rm, P* rv, int N, int C, int L, \
        Acc<T>::type eps, Acc<T>::type mom) {                                                         \
    bn_stats_rows<T, P>(x, part, cnt, mean, invstd, rm, rv, N, C, L, eps, mom); }

#define BN_SUM_KERNELS(T, S)                                                                        \
extern "C" __global__ void tinynet_batch_norm_sums_bwd_##S(const T* x, const T* gy,                   \
        const Acc<T>::type* mean, const Acc<T>::type* invstd, Acc<T>::type* a, Acc<T>::type* b, int N, \
        int C, int L) {                                                                               \
    bn_grad_sums<T>(x, gy, mean, invstd, a, b, N, C, L); }                                            \
extern "C" __global__ void tinynet_batch_norm_sums_rows_bwd_##S(const T* x, const T* gy,              \
        const Acc<T>::type* mean, const Acc<T>::type* invstd, Acc<T>::type* part, unsigned int* cnt,   \
        Acc<T>::type* a, Acc<T>::type* b, int N, int C, int L) {                                       \
    bn_grad_sums_rows<T>(x, gy, mean, invstd, part, cnt, a, b, N, C, L); }

BN_PARAM_KERNELS(float, float, , f32)
BN_PARAM_KERNELS(double, double, , f64)
BN_PARAM_KERNELS(half_bits, half_bits, , f16)
BN_PARAM_KERNELS(half_bits, float, _pf32, f16)
BN_SUM_KERNELS(float, f32)
BN_SUM_KERNELS(double, f64)
BN_SUM_KERNELS(half_bits, f16)
