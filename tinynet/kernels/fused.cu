#include "half.cuh"

// Small fused kernels on the hot path: per-channel bias gradient and bias add, ReLU
// forward/backward on contiguous arrays, multi-tensor optimizer updates (SGD, Adam/AdamW with
// AMSGrad, NAdam, RAdam, Adagrad, Adadelta, RMSprop) and a multi-tensor scaled copy (one launch
// for up to 16 tensors;
// the pointer table is passed by value as a struct, so no host->device copy is needed).

// Bias add in place on (N, C, L) memory: y[i] += b[(i / L) % C]. Each thread adds to 4
// consecutive elements, read and written as one vector where aligned, with one index division,
// stepping the channel as it crosses a row (one 64-bit division per element had cost the
// reference convnet's conv1 output at batch 1024 about 1.5x the time of its memory traffic).
// Half types add in float32, rounded once.
// Without ADD it is the bias broadcast y[i] = b[(i / L) % C] (bits copied), walked the same way:
// it fills the output of a half-type cuBLAS product before the product adds into it (beta = 1),
// which CuPy's broadcast assignment did at a third of the memory bandwidth (GPT step, H200: 68 us
// a launch for 25-50 MB).
template <typename T, bool ADD>
__device__ void bias4(T* y, const T* b, long long n, int C, long long L) {
    long long i0 = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * 4;
    if (i0 >= n) return;
    long long row = i0 / L, l = i0 - row * L;
    int c = (int)(row % C);
    bool vec = vec4_ok(y, i0, n);
    Vec4<T> v;
    if (ADD && vec) v = *(const Vec4<T>*)(y + i0);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
        if (vec) {
            if (ADD) store(v.v, j, load(v.v, j) + load(b, c));
            else v.v[j] = b[c];
        } else if (i0 + j < n) {
            if (ADD) store(y, i0 + j, load(y, i0 + j) + load(b, c));
            else y[i0 + j] = b[c];
        }
        if (++l == L) { l = 0; if (++c == C) c = 0; }
    }
    if (vec) *(Vec4<T>*)(y + i0) = v;
}

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

// Half types (float16, bfloat16; half.cuh) are read and written through load/store, summing
// in float32 (Acc); float32 and float64 read and sum in their own type.
template <typename T, typename A>
__device__ void bias_grad_rows(const T* g, A* partial, int N, int C, long long L) {
    int c = blockIdx.x, part = blockIdx.y, parts = gridDim.y;
    A s = 0;
    for (int n = part; n < N; n += parts) {
        const T* row = g + ((long long)n * C + c) * L;
        for (long long j = threadIdx.x; j < L; j += blockDim.x) s += load(row, j);
    }
    s = block_sum<A>(s);
    if (threadIdx.x == 0) partial[(long long)c * parts + part] = s;
}

// One block per channel sums its N*L values (for short rows, and for stage 2: the partials,
// of type P, are float32 for the half types).
template <typename P, typename T>
__device__ void bias_grad(const P* g, T* out, int N, int C, long long L) {
    typedef typename Acc<T>::type A;
    int c = blockIdx.x;
    long long m = (long long)N * L;
    A s = 0;
    for (long long j = threadIdx.x; j < m; j += blockDim.x) s += load(g, (j / L) * C * L + (long long)c * L + j % L);
    s = block_sum<A>(s);
    if (threadIdx.x == 0) store(out, c, s);
}

#define MAXT 16
struct Tensors {
    unsigned long long p[MAXT], g[MAXT], a[MAXT], b[MAXT], c[MAXT];  // param, grad, state buffers
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

// The prologue every multi-tensor optimizer kernel starts with: this thread's element (tensor k,
// offset j: false past the last tensor's end), the parameter p and the gradient d to use: -g under
// maximize, then the weight decay, L2 (d += wd*p) or decoupled (p *= 1 - lr*wd, AdamW's), applied
// when wd != 0 or, for SGD's and Adam's forms, always (ALWAYS: their wd = 0 still adds 0*p).
template <typename T, bool ALWAYS>
__device__ __forceinline__ bool optim_prologue(const Tensors& t, int n, T lr, T wd, int decoupled, int maximize,
                                               int& k, long long& j, T*& p, T& d) {
    if (!locate(t, n, &k, &j)) return false;
    p = (T*)t.p[k];
    d = ((const T*)t.g[k])[j];
    if (maximize) d = -d;
    if (ALWAYS || wd != (T)0) {
        if (decoupled) p[j] *= (T)1 - lr * wd; else d += wd * p[j];
    }
    return true;
}

// SGD (PyTorch's form): d = (maximize ? -g : g) + wd*p; buf = first ? d : mom*buf + (1-damp)*d;
// step = nesterov ? d + mom*buf : buf (buf absent when mom == 0: step = d); p -= lr*step.
// The SGD and Adam launchers take a last argument `c`: 0 for eager launches (the settings come
// by value), or, inside a CUDA graph, device cells holding them that each replay rewrites
// (tinynet/capture.py), so a scheduler's learning rate and Adam's bias corrections move.
template <typename T>
__device__ void sgd_multi(Tensors t, int n, T lr, T mom, T damp, T wd, int nesterov, int first, int maximize) {
    int k;
    long long j;
    T* p;
    T d;
    if (!optim_prologue<T, true>(t, n, lr, wd, 0, maximize, k, j, p, d)) return;
    if (mom != (T)0) {
        T* buf = (T*)t.a[k];
        T v = first ? d : mom * buf[j] + ((T)1 - damp) * d;
        buf[j] = v;
        d = nesterov ? d + mom * v : v;
    }
    p[j] -= lr * d;
}

// GradScaler's unscale (tinynet/amp/grad_scaler.py): each gradient element times the
// inverse of the scale read from the device (the reciprocal taken in float64 and rounded to
// float32, as PyTorch's), and *found set to 1 where an element was inf or NaN before the
// multiplication (x - x is NaN exactly for inf and NaN). Every writer of *found writes the
// same value, so the races are harmless.
template <typename T>
__device__ void unscale_multi(Tensors t, int n, const float* scale, float* found) {
    int k;
    long long j;
    if (!locate(t, n, &k, &j)) return;
    T* g = (T*)t.g[k];
    T v = g[j];
    if ((v - v) != (v - v)) *found = 1.0f;
    g[j] = v * (T)(float)(1.0 / (double)*scale);
}

// The Adam family's common first half: the prologue (the gradient d, the weight decay; ALWAYS as
// there), then the moments m = b1*m + (1-b1)*d, v = b2*v + (1-b2)*d*d written back to the state
// buffers a and b; false past the last tensor's end.
template <typename T, bool ALWAYS>
__device__ __forceinline__ bool adam_moments(const Tensors& t, int n, T lr, T b1, T b2, T wd, int decoupled,
                                             int maximize, int& k, long long& j, T*& p, T& d, T& mj, T& vj) {
    if (!optim_prologue<T, ALWAYS>(t, n, lr, wd, decoupled, maximize, k, j, p, d)) return false;
    T* m = (T*)t.a[k];
    T* v = (T*)t.b[k];
    mj = b1 * m[j] + ((T)1 - b1) * d;
    vj = b2 * v[j] + ((T)1 - b2) * d * d;
    m[j] = mj;
    v[j] = vj;
    return true;
}

// Adam / AdamW (decoupled != 0): see tinynet/optim/sgd.py for the formulas. maximize uses -g;
// amsgrad keeps the running maximum of v in the third state buffer (c) and divides by it.
template <typename T>
__device__ void adam_multi(Tensors t, int n, T lr, T b1, T b2, T eps, T wd, int decoupled, T bc1, T sqrt_bc2,
                           int amsgrad, int maximize) {
    int k;
    long long j;
    T* p;
    T d, mj, vj;
    if (!adam_moments<T, true>(t, n, lr, b1, b2, wd, decoupled, maximize, k, j, p, d, mj, vj)) return;
    if (amsgrad) {
        T* vmax = (T*)t.c[k];
        T old = vmax[j];
        vj = (vj != vj || vj > old) ? vj : old;  // NumPy's maximum: a NaN wins
        vmax[j] = vj;
    }
    p[j] -= (lr / bc1) * mj / (sqrt(vj) / sqrt_bc2 + eps);
}

// NAdam's and RAdam's kernels share everything but the last line (tinynet/optim/adam_variants.py):
// adam_moments, then Step::update(p, d, m, v, lr, eps, c0, c1, c2) with the three per-step numbers
// computed on the host.
// NAdam: denom = sqrt(v / bc2) + eps, p += cg*d/denom + cm*m/denom with cg = -lr (1-mu_t)/(1-P_t) and
// cm = -lr mu_{t+1}/(1 - P_t mu_{t+1}) from the momentum schedule (c0, c1, c2 = bc2, cg, cm).
struct NAdamStep {
    template <typename T>
    static __device__ __forceinline__ T update(T p, T d, T mj, T vj, T lr, T eps, T bc2, T cg, T cm) {
        T denom = sqrt(vj / bc2) + eps;
        T w = p + cg * d / denom;
        return w + cm * mj / denom;
    }
};

// RAdam: with the rectification rect > 0 (rho_t > 5) p -= lr (m/bc1) sqrt(bc2)/(sqrt(v)+eps) rect,
// else p -= lr m/bc1 (SGD with momentum) (c0, c1, c2 = bc1, sqrt(bc2), rect).
struct RAdamStep {
    template <typename T>
    static __device__ __forceinline__ T update(T p, T d, T mj, T vj, T lr, T eps, T bc1, T sqrt_bc2, T rect) {
        T corrected = mj / bc1;
        if (rect > (T)0) return p - corrected * lr * (sqrt_bc2 / (sqrt(vj) + eps)) * rect;
        return p - corrected * lr;
    }
};

template <typename T, typename Step>
__device__ void adam_like_multi(Tensors t, int n, T lr, T b1, T b2, T eps, T wd, int decoupled, int maximize,
                                T c0, T c1, T c2) {
    int k;
    long long j;
    T* p;
    T d, mj, vj;
    if (!adam_moments<T, false>(t, n, lr, b1, b2, wd, decoupled, maximize, k, j, p, d, mj, vj)) return;
    p[j] = Step::update(p[j], d, mj, vj, lr, eps, c0, c1, c2);
}

// Adagrad: d = (maximize ? -g : g) + wd*p; sum += d*d; p -= clr*d / (sqrt(sum) + eps), clr the
// decayed rate lr / (1 + (step-1)*lr_decay) computed on the host. See tinynet/optim/adaptive.py.
template <typename T>
__device__ void adagrad_multi(Tensors t, int n, T clr, T eps, T wd, int maximize) {
    int k;
    long long j;
    T* p;
    T d;
    if (!optim_prologue<T, false>(t, n, (T)0, wd, 0, maximize, k, j, p, d)) return;
    T* s = (T*)t.a[k];
    T sj = s[j] + d * d;
    s[j] = sj;
    p[j] -= clr * d / (sqrt(sj) + eps);
}

// Adadelta: d = (maximize ? -g : g) + wd*p; v = rho*v + (1-rho)*d*d;
// delta = sqrt(u + eps) / sqrt(v + eps) * d; u = rho*u + (1-rho)*delta*delta; p -= lr*delta.
template <typename T>
__device__ void adadelta_multi(Tensors t, int n, T lr, T rho, T eps, T wd, int maximize) {
    int k;
    long long j;
    T* p;
    T d;
    if (!optim_prologue<T, false>(t, n, lr, wd, 0, maximize, k, j, p, d)) return;
    T* v = (T*)t.a[k];
    T* u = (T*)t.b[k];
    T vj = rho * v[j] + ((T)1 - rho) * d * d;
    T delta = sqrt(u[j] + eps) / sqrt(vj + eps) * d;
    v[j] = vj;
    u[j] = rho * u[j] + ((T)1 - rho) * delta * delta;
    p[j] -= lr * delta;
}

// RMSprop: d = (maximize ? -g : g) + wd*p; v = alpha*v + (1-alpha)*d*d; centered: the mean
// gradient a = alpha*a + (1-alpha)*d (third state buffer, c) and avg = sqrt(v - a*a) + eps, else
// avg = sqrt(v) + eps; with momentum buf = mom*buf + d/avg and p -= lr*buf, else p -= lr*d/avg.
template <typename T>
__device__ void rmsprop_multi(Tensors t, int n, T lr, T alpha, T eps, T wd, T mom, int maximize, int centered) {
    int k;
    long long j;
    T* p;
    T d;
    if (!optim_prologue<T, false>(t, n, lr, wd, 0, maximize, k, j, p, d)) return;
    T* v = (T*)t.a[k];
    T vj = alpha * v[j] + ((T)1 - alpha) * d * d;
    v[j] = vj;
    T avg;
    if (centered) {
        T* a = (T*)t.c[k];
        T aj = alpha * a[j] + ((T)1 - alpha) * d;
        a[j] = aj;
        avg = sqrt(vj - aj * aj) + eps;
    } else {
        avg = sqrt(vj) + eps;
    }
    if (mom > (T)0) {
        T* buf = (T*)t.b[k];
        T bj = mom * buf[j] + d / avg;
        buf[j] = bj;
        p[j] -= lr * bj;
    } else {
        p[j] -= lr * d / avg;
    }
}

// The bias kernels of every type: the row stage's partials are of type P (T itself, float32 for
// the half types).
#define BIAS_KERNELS(T, S, P)                                                                       \
extern "C" __global__ void tinynet_bias_add_fwd_##S(T* y, const T* b, long long n, int C, long long L) { \
    bias4<T, true>(y, b, n, C, L); }                                                                   \
extern "C" __global__ void tinynet_bias_fill_fwd_##S(T* y, const T* b, long long n, int C, long long L) { \
    bias4<T, false>(y, b, n, C, L); }                                                                  \
extern "C" __global__ void tinynet_bias_grad_bwd_##S(const T* g, T* out, int N, int C, long long L) { \
    bias_grad<T, T>(g, out, N, C, L); }                                                              \
extern "C" __global__ void tinynet_bias_grad_rows_bwd_##S(const T* g, P* part, int N, int C,         \
        long long L) { bias_grad_rows<T, P>(g, part, N, C, L); }

#define FUSED_KERNELS(T, S)                                                                         \
BIAS_KERNELS(T, S, T)                                                                                \
extern "C" __global__ void tinynet_relu_fwd_##S(const T* x, T* y, long long n) {                     \
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;                                  \
    if (i < n) { T v = x[i]; y[i] = v > (T)0 ? v : (T)0; } }                                         \
extern "C" __global__ void tinynet_relu_bwd_##S(const T* y, const T* gy, T* gx, long long n) {       \
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;                                  \
    if (i < n) gx[i] = y[i] > (T)0 ? gy[i] : (T)0; }                                                 \
extern "C" __global__ void tinynet_sgd_multi_fwd_##S(Tensors t, int n, T lr, T mom, T damp, T wd,    \
        int nesterov, int first, int maximize, const double* c, const float* found_inf) {            \
    if (found_inf && *found_inf != 0.0f) return;  /* GradScaler: inf/NaN gradients skip the step */  \
    if (c) { lr = (T)c[0]; mom = (T)c[1]; damp = (T)c[2]; wd = (T)c[3]; }                            \
    sgd_multi<T>(t, n, lr, mom, damp, wd, nesterov, first, maximize); }                               \
extern "C" __global__ void tinynet_unscale_multi_fwd_##S(Tensors t, int n, const float* scale,        \
        float* found) { unscale_multi<T>(t, n, scale, found); }                                     \
extern "C" __global__ void tinynet_adam_multi_fwd_##S(Tensors t, int n, T lr, T b1, T b2, T eps,     \
        T wd, int decoupled, T bc1, T sqrt_bc2, int amsgrad, int maximize, const double* c,           \
        const float* found_inf) {                                                                    \
    if (found_inf && *found_inf != 0.0f) return;                                                     \
    if (c) { lr = (T)c[0]; b1 = (T)c[1]; b2 = (T)c[2]; eps = (T)c[3]; wd = (T)c[4];                  \
             bc1 = (T)c[5]; sqrt_bc2 = (T)c[6]; }                                                    \
    adam_multi<T>(t, n, lr, b1, b2, eps, wd, decoupled, bc1, sqrt_bc2, amsgrad, maximize); }          \
extern "C" __global__ void tinynet_nadam_multi_fwd_##S(Tensors t, int n, T lr, T b1, T b2, T eps,    \
        T wd, int decoupled, int maximize, T bc2, T cg, T cm) {                                      \
    adam_like_multi<T, NAdamStep>(t, n, lr, b1, b2, eps, wd, decoupled, maximize, bc2, cg, cm); }                    \
extern "C" __global__ void tinynet_radam_multi_fwd_##S(Tensors t, int n, T lr, T b1, T b2, T eps,    \
        T wd, int decoupled, int maximize, T bc1, T sqrt_bc2, T rect) {                              \
    adam_like_multi<T, RAdamStep>(t, n, lr, b1, b2, eps, wd, decoupled, maximize, bc1, sqrt_bc2, rect); }            \
extern "C" __global__ void tinynet_adagrad_multi_fwd_##S(Tensors t, int n, T clr, T eps, T wd,       \
        int maximize) { adagrad_multi<T>(t, n, clr, eps, wd, maximize); }                            \
extern "C" __global__ void tinynet_adadelta_multi_fwd_##S(Tensors t, int n, T lr, T rho, T eps,      \
        T wd, int maximize) { adadelta_multi<T>(t, n, lr, rho, eps, wd, maximize); }                 \
extern "C" __global__ void tinynet_rmsprop_multi_fwd_##S(Tensors t, int n, T lr, T alpha, T eps,     \
        T wd, T mom, int maximize, int centered) {                                                   \
    rmsprop_multi<T>(t, n, lr, alpha, eps, wd, mom, maximize, centered); }

FUSED_KERNELS(float, f32)
FUSED_KERNELS(double, f64)

// Multi-tensor scaled copy p_k[j] = g_k[j] * scale (DistributedDataParallel's buckets,
// nn/parallel/_reducer.py: the gradients times 1/world_size into the flat buffer's slices, and
// the reduced slices back into the gradients with scale 1). Half types multiply in float32.
#define SCALE_COPY_KERNEL(T, S, F)                                                                  \
extern "C" __global__ void tinynet_scale_copy_multi_fwd_##S(Tensors t, int n, F scale) {             \
    int k;                                                                                           \
    long long j;                                                                                     \
    if (locate(t, n, &k, &j)) store((T*)t.p[k], j, load((const T*)t.g[k], j) * scale); }

SCALE_COPY_KERNEL(float, f32, float)
SCALE_COPY_KERNEL(double, f64, double)
SCALE_COPY_KERNEL(half_bits, f16, float)
SCALE_COPY_KERNEL(bf16_bits, bf16, float)

// The half types (float16, bfloat16): bias add and ReLU read and write 16 bits with float32
// arithmetic (ReLU copies the kept values' bits); the bias gradient sums in float32, its row
// stage writing float32 partials that tinynet_bias_grad_parts_bwd adds into the half output.
#define FUSED_HALF_KERNELS(T, S)                                                                    \
BIAS_KERNELS(T, S, float)                                                                            \
extern "C" __global__ void tinynet_bias_grad_parts_bwd_##S(const float* part, T* out, int N, int C,  \
        long long L) { bias_grad<float, T>(part, out, N, C, L); }                                    \
extern "C" __global__ void tinynet_relu_fwd_##S(const T* x, T* y, long long n) {                     \
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;                                  \
    if (i < n) { if (load(x, i) > 0.0f) y[i] = x[i]; else store(y, i, 0.0f); } }                     \
extern "C" __global__ void tinynet_relu_bwd_##S(const T* y, const T* gy, T* gx, long long n) {       \
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;                                  \
    if (i < n) { if (load(y, i) > 0.0f) gx[i] = gy[i]; else store(gx, i, 0.0f); } }

FUSED_HALF_KERNELS(half_bits, f16)
FUSED_HALF_KERNELS(bf16_bits, bf16)
