// Layer normalisation (Ba, Kiros & Hinton, 2016, arXiv:1607.06450) of C-contiguous (M, N)
// memory: M rows, each normalised over its N values.
//
//   mean = sum(x) / N,   var = sum((x - mean)^2) / N,   rstd = 1 / sqrt(var + eps),
//   xhat = (x - mean) * rstd,   y = xhat * w + b          (w, b of N values, each optional)
//
// Backward, with g = dy * w and means over the row:
//
//   dx = (g - mean(g) - xhat * mean(g * xhat)) * rstd
//   dw = sum over rows of dy * xhat,   db = sum over rows of dy
//
// Row kernels (forward, dx): a block of (threads, rows) threads; threadIdx.y picks the row,
// the blockDim.x threads of a row stride along it. Rows of up to 256 values take one warp
// each (8 rows a block), longer ones several warps, combined through shared memory.
// The variance takes two passes (mean, then centred squares) in the dtype's precision, as
// the generic code does. The forward keeps a thread's values of the row in registers between
// the passes when the row has at most CACHE values a thread (every row up to 4,096 values
// with the launch of tinynet/ops/layer_norm.py), so the row is read from memory once (GPT
// rows of 384 on an H200: 27.5 -> 19.3 us a call, the same bits); the dx kernel re-reads
// the row from L1/L2 (the register version was slower there, 30 -> 33 us, 2026-11-28).
//
// Parameter gradients (dw, db), deterministic without atomics: a (column tiles, parts)
// grid, block (32, 8): block (t, p) sums the rows of chunk p for 32 adjacent columns
// (a warp reads 32 consecutive values of a row) into parts[p][col]; then sum_parts adds
// the parts of each column in a fixed order.

#define WARP 32
#define MAX_ROWS 8    // blockDim.y of the row kernels is at most this
#define PARAM_ROWS 8  // blockDim.y of the parameter-gradient kernel
#define CACHE 8       // values of its row a thread of the row kernels keeps in registers

template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
    for (int o = WARP / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// Sum of v over the blockDim.x threads of this thread's row, returned to all of them.
// Every thread of the block must call it (it synchronises when a row spans several warps).
template <typename T>
__device__ T row_sum(T v, T* sh) {
    v = warp_sum(v);
    if (blockDim.x <= WARP) return v;  // one warp per row: every lane holds the sum
    int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP, warps = blockDim.x / WARP;
    T* s = sh + threadIdx.y * WARP;
    if (lane == 0) s[warp] = v;
    __syncthreads();
    v = warp_sum(lane < warps ? s[lane] : (T)0);
    __syncthreads();  // s is free for the next call
    return v;
}

template <typename T>
__device__ void ln_forward(const T* x, const T* w, const T* b, T* y, T* mean, T* rstd,
                           long long M, int N, T eps) {
    __shared__ T sh[MAX_ROWS * WARP];
    long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    int n = row < M ? N : 0;  // threads past the last row still join the reductions
    long long base = row * N;
    const int step = blockDim.x;
    T v[CACHE];  // the thread's values of the row, read once from memory (rows of <= CACHE * step)
    bool cached = N <= CACHE * step;
    T s = 0;
    if (cached) {
#pragma unroll
        for (int k = 0; k < CACHE; ++k) {
            int j = threadIdx.x + k * step;
            v[k] = j < n ? x[base + j] : (T)0;
            if (j < n) s += v[k];
        }
    } else {
        for (int j = threadIdx.x; j < n; j += step) s += x[base + j];
    }
    T mu = row_sum(s, sh) / (T)N;
    T q = 0;
    if (cached) {
#pragma unroll
        for (int k = 0; k < CACHE; ++k) {
            T d = v[k] - mu;
            if (threadIdx.x + k * step < n) q += d * d;
        }
    } else {
        for (int j = threadIdx.x; j < n; j += step) {
            T d = x[base + j] - mu;
            q += d * d;
        }
    }
    T r = (T)1 / sqrt(row_sum(q, sh) / (T)N + eps);
#pragma unroll
    for (int k = 0; k < CACHE; ++k) {
        if (!cached) break;
        int j = threadIdx.x + k * step;
        if (j < n) {
            T o = (v[k] - mu) * r;
            if (w) o *= w[j];
            if (b) o += b[j];
            y[base + j] = o;
        }
    }
    if (!cached) {
        for (int j = threadIdx.x; j < n; j += step) {
            T o = (x[base + j] - mu) * r;
            if (w) o *= w[j];
            if (b) o += b[j];
            y[base + j] = o;
        }
    }
    if (n && threadIdx.x == 0) {
        mean[row] = mu;
        rstd[row] = r;
    }
}

// dx of each row: two sums (g, g * xhat) in one pass, then the formula above.
template <typename T>
__device__ void ln_backward_input(const T* x, const T* gy, const T* w, const T* mean, const T* rstd,
                                  T* gx, long long M, int N) {
    __shared__ T sh[MAX_ROWS * WARP];
    long long row = (long long)blockIdx.x * blockDim.y + threadIdx.y;
    int n = row < M ? N : 0;
    long long base = row * N;
    T mu = n ? mean[row] : (T)0, r = n ? rstd[row] : (T)0;
    T sg = 0, sgx = 0;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        T g = w ? gy[base + j] * w[j] : gy[base + j];
        sg += g;
        sgx += g * (x[base + j] - mu) * r;
    }
    T mean_g = row_sum(sg, sh) / (T)N;
    T mean_gx = row_sum(sgx, sh) / (T)N;
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        T g = w ? gy[base + j] * w[j] : gy[base + j];
        T xhat = (x[base + j] - mu) * r;
        gx[base + j] = (g - mean_g - xhat * mean_gx) * r;
    }
}

// Stage 1 of dw, db: block (t, p) covers columns [32 t, 32 t + 32) and rows
// [p * chunk, (p + 1) * chunk); gw_part / gb_part (parts, N) may each be null.
template <typename T>
__device__ void ln_backward_params(const T* x, const T* gy, const T* mean, const T* rstd, T* gw_part,
                                   T* gb_part, long long M, int N, long long chunk) {
    __shared__ T sw[PARAM_ROWS][WARP + 1], sb[PARAM_ROWS][WARP + 1];
    int col = blockIdx.x * WARP + threadIdx.x, part = blockIdx.y;
    long long lo = part * chunk, hi = lo + chunk < M ? lo + chunk : M;
    T aw = 0, ab = 0;
    if (col < N) {
        for (long long r = lo + threadIdx.y; r < hi; r += PARAM_ROWS) {
            T d = gy[r * N + col];
            aw += d * (x[r * N + col] - mean[r]) * rstd[r];
            ab += d;
        }
    }
    sw[threadIdx.y][threadIdx.x] = aw;
    sb[threadIdx.y][threadIdx.x] = ab;
    __syncthreads();
    if (threadIdx.y == 0 && col < N) {
        for (int k = 1; k < PARAM_ROWS; ++k) {
            aw += sw[k][threadIdx.x];
            ab += sb[k][threadIdx.x];
        }
        if (gw_part) gw_part[(long long)part * N + col] = aw;
        if (gb_part) gb_part[(long long)part * N + col] = ab;
    }
}

// Stage 2: out[col] = sum over p of part[p][col], one thread per column.
template <typename T>
__device__ void sum_parts(const T* part, T* out, int parts, int N) {
    long long col = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (col >= N) return;
    T s = 0;
    for (int p = 0; p < parts; ++p) s += part[(long long)p * N + col];
    out[col] = s;
}

#define LAYER_NORM_KERNELS(T, S)                                                                    \
extern "C" __global__ void tinynet_layer_norm_fwd_##S(const T* x, const T* w, const T* b, T* y,      \
        T* mean, T* rstd, long long M, int N, T eps) { ln_forward<T>(x, w, b, y, mean, rstd, M, N, eps); } \
extern "C" __global__ void tinynet_layer_norm_bwd_##S(const T* x, const T* gy, const T* w,           \
        const T* mean, const T* rstd, T* gx, long long M, int N) {                                   \
    ln_backward_input<T>(x, gy, w, mean, rstd, gx, M, N); }                                          \
extern "C" __global__ void tinynet_layer_norm_params_bwd_##S(const T* x, const T* gy, const T* mean, \
        const T* rstd, T* gw, T* gb, long long M, int N, long long chunk) {                          \
    ln_backward_params<T>(x, gy, mean, rstd, gw, gb, M, N, chunk); }                                 \
extern "C" __global__ void tinynet_layer_norm_sum_parts_bwd_##S(const T* part, T* out, int parts,    \
        int N) { sum_parts<T>(part, out, parts, N); }

LAYER_NORM_KERNELS(float, f32)
LAYER_NORM_KERNELS(double, f64)
