// Small fused kernels on the hot path: per-channel bias gradient and bias add, ReLU
// forward/backward on contiguous arrays, and multi-tensor optimizer updates (one launch for up to 16 tensors;
// the pointer table is passed by value as a struct, so no host->device copy is needed).

// Bias gradient of (N, C, L) memory in two deterministic stages (no atomics).
// Stage 1, grid (C, parts): block (c, p) sums the rows n = p, p + parts, ... of channel c,
// its threads striding along each contiguous row of L values, into partial[c * parts + p].
// Stage 2 is bias_grad below on the (1, C, parts) partials: one block per channel.
template <typename T>
__device__ T block_sum(T s) {
    __shared__ T sh[256];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int k = blockDim.x / 2; k > 0; k /= 2) {
        if (threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k];
        __syncthreads();
    }
    return sh[0];
}

template <typename T>
__device__ void bias_grad_rows(const T* g, T* partial, int N, int C, long long L) {
    int c = blockIdx.x, part = blockIdx.y, parts = gridDim.y;
    T s = 0;
    for (int n = part; n < N; n += parts) {
        const T* row = g + ((long long)n * C + c) * L;
        for (long long j = threadIdx.x; j < L; j += blockDim.x) s += row[j];
    }
    s = block_sum<T>(s);
    if (threadIdx.x == 0) partial[(long long)c * parts + part] = s;
}

// One block per channel sums its N*L values (for short rows, and for stage 2).
template <typename T>
__device__ void bias_grad(const T* g, T* out, int N, int C, long long L) {
    int c = blockIdx.x;
    long long m = (long long)N * L;
    T s = 0;
    for (long long j = threadIdx.x; j < m; j += blockDim.x) s += g[(j / L) * C * L + (long long)c * L + j % L];
    s = block_sum<T>(s);
    if (threadIdx.x == 0) out[c] = s;
}

#define MAXT 16
struct Tensors {
    unsigned long long p[MAXT], g[MAXT], a[MAXT], b[MAXT];  // param, grad, state buffers
    long long start[MAXT + 1];                              // element offsets, start[n] = total
};

// This thread's element: tensor *k, offset *j in it; false past the last tensor's end.
__device__ __forceinline__ bool locate(const Tensors& t, int n, int* k, long long* j) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= t.start[n]) return false;
    int m = 0;
    while (m + 1 < n && i >= t.start[m + 1]) ++m;
    *k = m;
    *j = i - t.start[m];
    return true;
}

// SGD (PyTorch's form): d = g + wd*p; buf = first ? d : mom*buf + (1-damp)*d;
// step = nesterov ? d + mom*buf : buf (buf absent when mom == 0: step = d); p -= lr*step.
template <typename T>
__device__ void sgd_multi(Tensors t, int n, T lr, T mom, T damp, T wd, int nesterov, int first) {
    int k;
    long long j;
    if (!locate(t, n, &k, &j)) return;
    T* p = (T*)t.p[k];
    const T* g = (const T*)t.g[k];
    T d = g[j] + wd * p[j];
    if (mom != (T)0) {
        T* buf = (T*)t.a[k];
        T v = first ? d : mom * buf[j] + ((T)1 - damp) * d;
        buf[j] = v;
        d = nesterov ? d + mom * v : v;
    }
    p[j] -= lr * d;
}

// Adam / AdamW (decoupled != 0): see tinynet/optim/sgd.py for the formulas.
template <typename T>
__device__ void adam_multi(Tensors t, int n, T lr, T b1, T b2, T eps, T wd, int decoupled, T bc1, T sqrt_bc2) {
    int k;
    long long j;
    if (!locate(t, n, &k, &j)) return;
    T* p = (T*)t.p[k];
    const T* g = (const T*)t.g[k];
    T* m = (T*)t.a[k];
    T* v = (T*)t.b[k];
    T gg = g[j];
    if (decoupled) p[j] *= (T)1 - lr * wd; else gg += wd * p[j];
    T mj = b1 * m[j] + ((T)1 - b1) * gg;
    T vj = b2 * v[j] + ((T)1 - b2) * gg * gg;
    m[j] = mj;
    v[j] = vj;
    p[j] -= (lr / bc1) * mj / (sqrt(vj) / sqrt_bc2 + eps);
}

#define FUSED_KERNELS(T, S)                                                                         \
extern "C" __global__ void tinynet_bias_add_fwd_##S(T* y, const T* b, long long n, int C, long long L) { \
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;                                  \
    if (i < n) y[i] += b[(i / L) % C]; }                                                             \
extern "C" __global__ void tinynet_bias_grad_bwd_##S(const T* g, T* out, int N, int C, long long L) { \
    bias_grad<T>(g, out, N, C, L); }                                                                 \
extern "C" __global__ void tinynet_bias_grad_rows_bwd_##S(const T* g, T* part, int N, int C,         \
        long long L) { bias_grad_rows<T>(g, part, N, C, L); }                                        \
extern "C" __global__ void tinynet_relu_fwd_##S(const T* x, T* y, long long n) {                     \
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;                                  \
    if (i < n) { T v = x[i]; y[i] = v > (T)0 ? v : (T)0; } }                                         \
extern "C" __global__ void tinynet_relu_bwd_##S(const T* y, const T* gy, T* gx, long long n) {       \
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;                                  \
    if (i < n) gx[i] = y[i] > (T)0 ? gy[i] : (T)0; }                                                 \
extern "C" __global__ void tinynet_sgd_multi_fwd_##S(Tensors t, int n, T lr, T mom, T damp, T wd,    \
        int nesterov, int first) { sgd_multi<T>(t, n, lr, mom, damp, wd, nesterov, first); }         \
extern "C" __global__ void tinynet_adam_multi_fwd_##S(Tensors t, int n, T lr, T b1, T b2, T eps,     \
        T wd, int decoupled, T bc1, T sqrt_bc2) {                                                    \
    adam_multi<T>(t, n, lr, b1, b2, eps, wd, decoupled, bc1, sqrt_bc2); }

FUSED_KERNELS(float, f32)
FUSED_KERNELS(double, f64)
