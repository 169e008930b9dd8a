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

template <typename T>
__device__ void bn_stats(const T* x, T* mean, T* invstd, T* rmean, T* rvar, int N, int C, int L,
                         T eps, T momentum) {
    __shared__ T sh[256];
    int c = blockIdx.x;
    long long m = (long long)N * L;
    T s = 0;
    for (long long j = threadIdx.x; j < m; j += blockDim.x) s += x[(j / L) * C * L + (long long)c * L + j % L];
    T mu = block_sum(s, sh) / (T)m;
    T q = 0;
    for (long long j = threadIdx.x; j < m; j += blockDim.x) {
        T d = x[(j / L) * C * L + (long long)c * L + j % L] - mu;
        q += d * d;
    }
    T var = block_sum(q, sh) / (T)m;
    if (threadIdx.x == 0) {
        mean[c] = mu;
        invstd[c] = (T)1 / sqrt(var + eps);
        if (rmean) {
            rmean[c] = ((T)1 - momentum) * rmean[c] + momentum * mu;
            rvar[c] = ((T)1 - momentum) * rvar[c] + momentum * var * (T)m / (T)(m > 1 ? m - 1 : 1);
        }
    }
}

template <typename T>
__device__ void bn_apply(const T* x, const T* mean, const T* invstd, const T* w, const T* b, T* y,
                         long long n, int C, int L) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    int c = (i / L) % C;
    T v = (x[i] - mean[c]) * invstd[c];
    y[i] = v * (w ? w[c] : (T)1) + (b ? b[c] : (T)0);
}

// Per channel: sum(gy) and sum(gy * xhat).
template <typename T>
__device__ void bn_grad_sums(const T* x, const T* gy, const T* mean, const T* invstd, T* sum_gy,
                             T* sum_gy_xhat, int N, int C, int L) {
    __shared__ T sh[256];
    int c = blockIdx.x;
    long long m = (long long)N * L;
    T a = 0, b = 0;
    for (long long j = threadIdx.x; j < m; j += blockDim.x) {
        long long k = (j / L) * C * L + (long long)c * L + j % L;
        a += gy[k];
        b += gy[k] * (x[k] - mean[c]) * invstd[c];
    }
    a = block_sum(a, sh);
    b = block_sum(b, sh);
    if (threadIdx.x == 0) { sum_gy[c] = a; sum_gy_xhat[c] = b; }
}

// training: gx = w*invstd*(gy - sum_gy/m - xhat*sum_gy_xhat/m); eval: gx = gy*w*invstd.
template <typename T>
__device__ void bn_grad_input(const T* x, const T* gy, const T* mean, const T* invstd, const T* w,
                              const T* sum_gy, const T* sum_gy_xhat, T* gx, long long n, int C, int L,
                              long long m, int training) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    int c = (i / L) % C;
    T scale = (w ? w[c] : (T)1) * invstd[c];
    if (!training) { gx[i] = gy[i] * scale; return; }
    T xhat = (x[i] - mean[c]) * invstd[c];
    gx[i] = scale * (gy[i] - sum_gy[c] / (T)m - xhat * sum_gy_xhat[c] / (T)m);
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

template <typename T>
__device__ void bn_stats_rows(const T* x, T* part, unsigned int* counters, T* mean, T* invstd, T* rmean,
                              T* rvar, int N, int C, int L, T eps, T momentum) {
    int c = blockIdx.x, p = blockIdx.y, parts = gridDim.y;
    long long n = 0;
    T mu = 0, q = 0;
    for (int r = p; r < N; r += parts) {
        const T* row = x + ((long long)r * C + c) * L;
        for (int j = threadIdx.x; j < L; j += blockDim.x) {  // Welford, one value at a time
            T v = row[j], d = v - mu;
            ++n;
            mu += d / (T)n;
            q += d * (v - mu);
        }
    }
    block_welford(n, mu, q);
    T* mine = part + 2 * ((long long)c * parts + p);
    if (threadIdx.x == 0) { mine[0] = mu; mine[1] = q; }
    if (!last_of_channel(counters, c)) return;
    n = 0; mu = 0; q = 0;
    for (int k = threadIdx.x; k < parts; k += blockDim.x) {  // the parts, each thread in part order
        const T* other = part + 2 * ((long long)c * parts + k);
        long long rows = (N - k + parts - 1) / parts;
        welford_merge(n, mu, q, rows * L, __ldcg(other), __ldcg(other + 1));  // past L1
    }
    block_welford(n, mu, q);
    if (threadIdx.x == 0) {
        long long m = (long long)N * L;
        T var = q / (T)m;
        mean[c] = mu;
        invstd[c] = (T)1 / sqrt(var + eps);
        if (rmean) {
            rmean[c] = ((T)1 - momentum) * rmean[c] + momentum * mu;
            rvar[c] = ((T)1 - momentum) * rvar[c] + momentum * q / (T)(m > 1 ? m - 1 : 1);
        }
    }
}

template <typename T>
__device__ void bn_grad_sums_rows(const T* x, const T* gy, const T* mean, const T* invstd, T* part,
                                  unsigned int* counters, T* sum_gy, T* sum_gy_xhat, int N, int C, int L) {
    __shared__ T sh[256];
    int c = blockIdx.x, p = blockIdx.y, parts = gridDim.y;
    T mu = mean[c], is = invstd[c], a = 0, b = 0;
    for (int r = p; r < N; r += parts) {
        long long base = ((long long)r * C + c) * L;
        for (int j = threadIdx.x; j < L; j += blockDim.x) {
            T g = gy[base + j];
            a += g;
            b += g * (x[base + j] - mu) * is;
        }
    }
    a = block_sum(a, sh);
    b = block_sum(b, sh);
    T* mine = part + 2 * ((long long)c * parts + p);
    if (threadIdx.x == 0) { mine[0] = a; mine[1] = b; }
    if (!last_of_channel(counters, c)) return;
    a = 0; b = 0;
    for (int k = threadIdx.x; k < parts; k += blockDim.x) {
        const T* other = part + 2 * ((long long)c * parts + k);
        a += __ldcg(other);
        b += __ldcg(other + 1);
    }
    a = block_sum(a, sh);
    b = block_sum(b, sh);
    if (threadIdx.x == 0) { sum_gy[c] = a; sum_gy_xhat[c] = b; }
}

#define BN_KERNELS(T, S)                                                                            \
extern "C" __global__ void tinynet_batch_norm_stats_fwd_##S(const T* x, T* mean, T* invstd, T* rm, T* rv, \
        int N, int C, int L, T eps, T mom) { bn_stats<T>(x, mean, invstd, rm, rv, N, C, L, eps, mom); } \
extern "C" __global__ void tinynet_batch_norm_fwd_##S(const T* x, const T* mean, const T* invstd,     \
        const T* w, const T* b, T* y, long long n, int C, int L) {                                   \
    bn_apply<T>(x, mean, invstd, w, b, y, n, C, L); }                                                \
extern "C" __global__ void tinynet_batch_norm_sums_bwd_##S(const T* x, const T* gy, const T* mean,   \
        const T* invstd, T* a, T* b, int N, int C, int L) {                                          \
    bn_grad_sums<T>(x, gy, mean, invstd, a, b, N, C, L); }                                           \
extern "C" __global__ void tinynet_batch_norm_bwd_##S(const T* x, const T* gy, const T* mean,        \
        const T* invstd, const T* w, const T* a, const T* b, T* gx, long long n, int C, int L,       \
        long long m, int training) {                                                                 \
    bn_grad_input<T>(x, gy, mean, invstd, w, a, b, gx, n, C, L, m, training); }                     \
extern "C" __global__ void tinynet_batch_norm_stats_rows_fwd_##S(const T* x, T* part, unsigned int* cnt, \
        T* mean, T* invstd, T* rm, T* rv, int N, int C, int L, T eps, T mom) {                       \
    bn_stats_rows<T>(x, part, cnt, mean, invstd, rm, rv, N, C, L, eps, mom); }                       \
extern "C" __global__ void tinynet_batch_norm_sums_rows_bwd_##S(const T* x, const T* gy, const T* mean, \
        const T* invstd, T* part, unsigned int* cnt, T* a, T* b, int N, int C, int L) {              \
    bn_grad_sums_rows<T>(x, gy, mean, invstd, part, cnt, a, b, N, C, L); }

BN_KERNELS(float, f32)
BN_KERNELS(double, f64)
