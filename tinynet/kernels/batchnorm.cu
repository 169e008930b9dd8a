// Batch normalisation over (N, C, L) memory (L = H*W, 1 for (N, C) input): one block per
// channel reduces its N*L values (two passes: mean, then centred squares), updates the
// running statistics on the device, and the elementwise kernels apply / differentiate.

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
    bn_grad_input<T>(x, gy, mean, invstd, w, a, b, gx, n, C, L, m, training); }

BN_KERNELS(float, f32)
BN_KERNELS(double, f64)
