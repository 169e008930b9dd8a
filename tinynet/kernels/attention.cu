#ifndef INFINITY  // NVRTC compiles without math.h
#define INFINITY __int_as_float(0x7f800000)
#endif

// Fused scaled dot-product attention in the manner of FlashAttention (Dao et al., 2022,
// arXiv:2205.14135) with FlashAttention-2's split of the work (Dao, 2023, arXiv:2307.08691):
// the (L, S) score matrix is never stored; it is computed one TILE x TILE tile at a time
// in registers and shared memory.
//
// Per batch entry b (all batch and head dims flattened) and query tile:
//   forward   S = scale * Q K^T + mask,  online softmax over the key tiles (running row
//             maximum m and sum l, earlier partial outputs rescaled by exp(m_old - m_new)),
//             O = (sum_j exp(S_j - m) V_j) / l  and  lse = m + log(l)  per query row
//   backward  delta = rowsum(dO * O);  P = exp(S - lse) recomputed tile by tile;
//             dV = P^T dO,  dP = dO V^T,  dS = P * (dP - delta),
//             dK = scale * dS^T Q  (one block per key tile, looping over the query tiles),
//             dQ = scale * dS K    (one block per query tile, looping over the key tiles);
//             no atomics: every gradient element is written by one thread, in a fixed order.
// A query row that sees no key gets O = 0 and lse = +inf, so its P is 0 in backward
// (the convention of tinynet/ops/attention.py).
//
// Threads: NT = 256 per block, viewed as a 16 x 16 grid (ty, tx). A TILE x TILE product
// tile gives thread (ty, tx) the rows ty + 16 i and columns tx + 16 j (i, j < 4); an
// accumulator with a head dim of up to MAXD = 128 columns gives it the rows ty + 16 i and
// the columns tx + 16 j (j < 8, see acc_col). The 16 threads of one row are 16 lanes of
// one warp, so row maxima and sums are warp shuffles.
// Shared memory per block: the (TILE, TILE + 1) float tile of P (or dS) and one staging
// area of max(2 * TILE * (DC + 1), TILE * VC) floats for the operand chunks: 33.5 KB.
//
// Head dims E (queries/keys) and Ev (values) are any value 1..128; L and S any lengths.
// Each input is addressed through its own batch strides (0 along broadcast dims) and row
// stride, elements along a row being contiguous, so broadcast batch dims and transposed
// head layouts need no copies. Grouped-query attention divides the index along the heads
// dim (the last batch dim) by the group size for keys and values. Storage is float32 or
// float16; all arithmetic is float32.

#define TILE 64   // query rows and keys per tile
#define NT 256    // threads per block
#define DC 32     // head-dim columns per staged chunk of a score-type product (A B^T)
#define VC 64     // columns per staged chunk of an accumulate-type product (W B)
#define MAXD 128  // largest head dim
#define MAXB 6    // largest number of batch dims

// float16 is stored as its 16 bits; conversions are single PTX instructions, so no
// header (cuda_fp16.h) is needed under NVRTC.
typedef unsigned short half_bits;

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(half_bits h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

template <typename T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ half_bits from_float<half_bits>(float x) {
    half_bits h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return h;
}

// Everything a launch needs, passed by value (tinynet/kernels/attention.py packs it with
// the same field order; every field is 8 bytes, so there is no padding to agree on).
// Strides count elements. Outputs are contiguous: out (B, L, Ev), lse and delta (B, L),
// gq (B, L, E), gk (B, S, E), gv (B, S, Ev), B the product of the batch dims; except with
// gstrided, when gq, gk and gv are views of one gradient buffer with batch strides db and row
// stride d_row (q, k, v split from one projection: grad_buffers.like_base).
struct Sdpa {
    unsigned long long q, k, v, mask, out, lse, gout, delta, gq, gk, gv;  // device pointers
    long long batch[MAXB];                                // broadcast batch shape, 1-padded on the left
    long long qb[MAXB], kb[MAXB], vb[MAXB], mb[MAXB], gb[MAXB], db[MAXB];  // batch strides of q, k, v, mask, dO, dQ/dK/dV
    long long q_row, k_row, v_row, m_row, m_col, g_row;  // row strides (and the mask's column stride)
    long long L, S, E, Ev;
    long long kgroup, vgroup;  // grouped-query attention: query heads per key / value head
    long long mask_kind;       // MASK_NONE, MASK_BOOL (True: the key takes part) or MASK_ADD (float)
    long long causal;          // top-left aligned: query i sees keys j <= i
    long long gstrided, d_row; // gradients in one buffer (db, d_row) rather than contiguous
    double scale;
};

#define MASK_NONE 0
#define MASK_BOOL 1
#define MASK_ADD 2

// Where batch entry b starts in each input (element offsets).
struct Bases { long long q, k, v, m, g, o; };

__device__ Bases batch_bases(const Sdpa& a, long long b) {
    Bases r = {0, 0, 0, 0, 0, 0};
    for (int d = MAXB - 1; d >= 0; --d) {
        long long n = a.batch[d], i = b % n;
        b /= n;
        bool heads = d == MAXB - 1;
        r.q += i * a.qb[d];
        r.k += (heads ? i / a.kgroup : i) * a.kb[d];
        r.v += (heads ? i / a.vgroup : i) * a.vb[d];
        r.m += i * a.mb[d];
        r.g += i * a.gb[d];
        r.o += i * a.db[d];
    }
    return r;
}

__device__ __forceinline__ long long batch_count(const Sdpa& a) {
    long long n = 1;
    for (int d = 0; d < MAXB; ++d) n *= a.batch[d];
    return n;
}

// The batch entry of this block: blockIdx.y + gridDim.y * blockIdx.z (y alone is limited to
// 65535); the grid may round the count up, and blocks past the end return at once.
__device__ __forceinline__ long long block_batch() {
    return blockIdx.y + (long long)gridDim.y * blockIdx.z;
}

// Score of query i and key j from dot = q_i . k_j: scaled, masked; -inf for excluded keys
// and for positions outside the (L, S) matrix.
template <typename T>
__device__ __forceinline__ float masked_score(const Sdpa& a, long long mbase, long long i, long long j, float dot) {
    if (i >= a.L || j >= a.S || (a.causal && j > i)) return -INFINITY;
    float s = dot * (float)a.scale;
    if (a.mask_kind == MASK_NONE) return s;
    long long at = mbase + i * a.m_row + j * a.m_col;
    if (a.mask_kind == MASK_BOOL) return ((const unsigned char*)a.mask)[at] ? s : -INFINITY;
    return s + to_float(((const T*)a.mask)[at]);
}

// Maximum and sum over the 16 lanes that hold one row (lanes 0-15 or 16-31 of a warp).
__device__ __forceinline__ float row_max(float v) {
    for (int o = 8; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float row_sum(float v) {
    for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// The column of accumulator entry jj (of 8) of this thread: chunks of VC columns, 16 apart.
__device__ __forceinline__ int acc_col(int jj) { return (jj / 4) * VC + (jj % 4) * 16 + (int)(threadIdx.x % 16); }

// acc[i][j] = sum_{d < D} A[ty + 16 i][d] * B[tx + 16 j][d]: a TILE x TILE block of A B^T.
// A and B point at the tiles' first rows; rows at and past a_rows / b_rows read as 0.
// The operands pass through shared memory DC columns at a time.
template <typename T>
__device__ void tile_abt(float acc[4][4], const T* A, long long a_row, long long a_rows,
                         const T* B, long long b_row, long long b_rows, int D, float* stage) {
    float (*As)[DC + 1] = (float (*)[DC + 1])stage;  // + 1: column reads hit distinct banks
    float (*Bs)[DC + 1] = As + TILE;
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;
    for (int d0 = 0; d0 < D; d0 += DC) {
        for (int t = threadIdx.x; t < TILE * DC; t += NT) {
            int r = t / DC, d = t % DC;
            bool in = d0 + d < D;
            As[r][d] = in && r < a_rows ? to_float(A[r * a_row + d0 + d]) : 0.f;
            Bs[r][d] = in && r < b_rows ? to_float(B[r * b_row + d0 + d]) : 0.f;
        }
        __syncthreads();
#pragma unroll 8
        for (int d = 0; d < DC; ++d) {
            float x[4], y[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) x[i] = As[ty + 16 * i][d];
#pragma unroll
            for (int j = 0; j < 4; ++j) y[j] = Bs[tx + 16 * j][d];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] += x[i] * y[j];
        }
        __syncthreads();
    }
}

// acc[i][jj] += sum_{c < TILE} W[ty + 16 i][c] * B[c][acc_col(jj)] for a TILE x TILE tile W in
// shared memory (its transpose with TRANSPOSE: W[c][ty + 16 i]) and a TILE x D block B
// (rows at and past b_rows read as 0), staged VC columns at a time. Ends synchronised, so
// the caller may overwrite W.
template <typename T, bool TRANSPOSE>
__device__ void tile_wb(float acc[4][8], float (*W)[TILE + 1], const T* B, long long b_row, long long b_rows,
                        int D, float* stage) {
    float (*Bs)[VC] = (float (*)[VC])stage;
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
    for (int h = 0; h < MAXD / VC; ++h) {
        int c0 = h * VC;
        if (c0 >= D) break;  // the same for every thread of the block
        for (int t = threadIdx.x; t < TILE * VC; t += NT) {
            int r = t / VC, c = t % VC;
            Bs[r][c] = r < b_rows && c0 + c < D ? to_float(B[r * b_row + c0 + c]) : 0.f;
        }
        __syncthreads();
#pragma unroll 4
        for (int c = 0; c < TILE; ++c) {
            float y[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) y[j] = Bs[c][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                float w = TRANSPOSE ? W[c][ty + 16 * i] : W[ty + 16 * i][c];
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][4 * h + j] += w * y[j];
            }
        }
        __syncthreads();
    }
}

// Writes rows ty + 16 i (those below rows) and columns below D of acc * factor to the
// (rows, D) matrix dst with row stride ld.
template <typename T>
__device__ void store_rows(T* dst, const float acc[4][8], long long rows, int D, long long ld, float factor) {
    int ty = threadIdx.x / 16;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        long long r = ty + 16 * i;
        if (r >= rows) continue;
#pragma unroll
        for (int jj = 0; jj < 8; ++jj) {
            int c = acc_col(jj);
            if (c < D) dst[r * ld + c] = from_float<T>(acc[i][jj] * factor);
        }
    }
}

// ---- forward: one block per (query tile, batch entry) ----------------------------------
template <typename T>
__device__ void sdpa_fwd(const Sdpa& a) {
    __shared__ float ps[TILE][TILE + 1];
    __shared__ float stage[2 * TILE * (DC + 1)];
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    long long b = block_batch();
    if (b >= batch_count(a)) return;
    // causal rows near the end see the most keys: those tiles start first
    long long q0 = (long long)(a.causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x) * TILE;
    Bases at = batch_bases(a, b);
    const T* Q = (const T*)a.q + at.q + q0 * a.q_row;
    const T* K = (const T*)a.k + at.k;
    const T* V = (const T*)a.v + at.v;

    float o[4][8] = {}, m[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY}, l[4] = {}, s[4][4];
    long long kend = a.causal && q0 + TILE < a.S ? q0 + TILE : a.S;  // causal: later keys are all masked
    for (long long k0 = 0; k0 < kend; k0 += TILE) {
        tile_abt<T>(s, Q, a.q_row, a.L - q0, K + k0 * a.k_row, a.k_row, a.S - k0, (int)a.E, stage);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            float mx = -INFINITY;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                s[i][j] = masked_score<T>(a, at.m, q0 + ty + 16 * i, k0 + tx + 16 * j, s[i][j]);
                mx = fmaxf(mx, s[i][j]);
            }
            float m_new = fmaxf(m[i], row_max(mx));
            float shift = m_new == -INFINITY ? 0.f : m_new;  // no key so far: exp(-inf) = 0 below
            float alpha = expf(m[i] - shift);                 // rescales the earlier tiles' sums
            float sum = 0.f;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                float p = expf(s[i][j] - shift);
                ps[ty + 16 * i][tx + 16 * j] = p;
                sum += p;
            }
            l[i] = l[i] * alpha + row_sum(sum);
            m[i] = m_new;
#pragma unroll
            for (int jj = 0; jj < 8; ++jj) o[i][jj] *= alpha;
        }
        __syncthreads();
        tile_wb<T, false>(o, ps, V + k0 * a.v_row, a.v_row, a.S - k0, (int)a.Ev, stage);
    }
    // O = o / l; a row with no key left (l = 0) gives zeros and lse = +inf
    T* out = (T*)a.out + (b * a.L + q0) * a.Ev;
    float* lse = (float*)a.lse + b * a.L + q0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        float inv = l[i] > 0.f ? 1.f / l[i] : 0.f;
#pragma unroll
        for (int jj = 0; jj < 8; ++jj) o[i][jj] *= inv;
        long long r = ty + 16 * i;
        if (tx == 0 && q0 + r < a.L) lse[r] = l[i] > 0.f ? m[i] + logf(l[i]) : INFINITY;
    }
    store_rows<T>(out, o, a.L - q0, (int)a.Ev, a.Ev, 1.f);
}

// ---- backward ----------------------------------------------------------------------------
// delta = rowsum(dO * O), one warp per query row.
template <typename T>
__device__ void sdpa_delta(const Sdpa& a) {
    long long row = (blockIdx.x * (long long)blockDim.x + threadIdx.x) / 32;
    int lane = threadIdx.x % 32;
    if (row >= batch_count(a) * a.L) return;  // a whole warp: its lanes share the row
    long long b = row / a.L, i = row % a.L;
    const T* g = (const T*)a.gout + batch_bases(a, b).g + i * a.g_row;
    const T* o = (const T*)a.out + row * a.Ev;
    float s = 0.f;
    for (long long c = lane; c < a.Ev; c += 32) s += to_float(g[c]) * to_float(o[c]);
    for (int w = 16; w > 0; w >>= 1) s += __shfl_xor_sync(0xffffffffu, s, w);
    if (lane == 0) ((float*)a.delta)[row] = s;
}

// P = exp(S - lse) for this thread's entries of the (q0, k0) tile (s holds Q K^T on entry),
// kept in s and, unless ps is null, stored in ps; dP = dO V^T in dp.
template <typename T>
__device__ void weights_and_dp(const Sdpa& a, const Bases& at, long long b, long long q0, long long k0,
                               float s[4][4], float dp[4][4], float (*ps)[TILE + 1], float* stage) {
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const float* lse = (const float*)a.lse + b * a.L;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        long long r = q0 + ty + 16 * i;
        float shift = r < a.L ? lse[r] : INFINITY;  // +inf: the row's weights are 0
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            float p = expf(masked_score<T>(a, at.m, r, k0 + tx + 16 * j, s[i][j]) - shift);
            s[i][j] = p;
            if (ps) ps[ty + 16 * i][tx + 16 * j] = p;
        }
    }
    const T* G = (const T*)a.gout + at.g + q0 * a.g_row;
    const T* V = (const T*)a.v + at.v + k0 * a.v_row;
    tile_abt<T>(dp, G, a.g_row, a.L - q0, V, a.v_row, a.S - k0, (int)a.Ev, stage);
}

// dS = P * (dP - delta) into ps (rows past L have P = 0, so their delta is not read).
__device__ __forceinline__ void write_ds(const float p[4][4], const float dp[4][4], const float delta[4],
                                         float (*ps)[TILE + 1]) {
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) ps[ty + 16 * i][tx + 16 * j] = p[i][j] * (dp[i][j] - delta[i]);
}

__device__ __forceinline__ void load_delta(const Sdpa& a, long long b, long long q0, float delta[4]) {
    const float* d = (const float*)a.delta + b * a.L;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        long long r = q0 + threadIdx.x / 16 + 16 * i;
        delta[i] = r < a.L ? d[r] : 0.f;
    }
}

// dK and dV of one key tile: one block per (key tile, batch entry), looping over the query
// tiles that can see it.
template <typename T>
__device__ void sdpa_dkv(const Sdpa& a) {
    __shared__ float ps[TILE][TILE + 1];
    __shared__ float stage[2 * TILE * (DC + 1)];
    long long b = block_batch(), k0 = (long long)blockIdx.x * TILE;
    if (b >= batch_count(a)) return;
    Bases at = batch_bases(a, b);
    const T* Q = (const T*)a.q + at.q;
    const T* K = (const T*)a.k + at.k + k0 * a.k_row;
    const T* G = (const T*)a.gout + at.g;
    float dk[4][8] = {}, dv[4][8] = {}, s[4][4], dp[4][4], delta[4];
    long long qstart = a.causal ? k0 / TILE * TILE : 0;  // causal: earlier queries see none of these keys
    for (long long q0 = qstart; q0 < a.L; q0 += TILE) {
        tile_abt<T>(s, Q + q0 * a.q_row, a.q_row, a.L - q0, K, a.k_row, a.S - k0, (int)a.E, stage);
        weights_and_dp<T>(a, at, b, q0, k0, s, dp, ps, stage);  // ps = P (synchronised by tile_abt)
        tile_wb<T, true>(dv, ps, G + q0 * a.g_row, a.g_row, a.L - q0, (int)a.Ev, stage);  // dV += P^T dO
        load_delta(a, b, q0, delta);
        write_ds(s, dp, delta, ps);
        __syncthreads();
        tile_wb<T, true>(dk, ps, Q + q0 * a.q_row, a.q_row, a.L - q0, (int)a.E, stage);   // dK += dS^T Q
    }
    if (a.gstrided) {
        store_rows<T>((T*)a.gk + at.o + k0 * a.d_row, dk, a.S - k0, (int)a.E, a.d_row, (float)a.scale);
        store_rows<T>((T*)a.gv + at.o + k0 * a.d_row, dv, a.S - k0, (int)a.Ev, a.d_row, 1.f);
        return;
    }
    store_rows<T>((T*)a.gk + (b * a.S + k0) * a.E, dk, a.S - k0, (int)a.E, a.E, (float)a.scale);
    store_rows<T>((T*)a.gv + (b * a.S + k0) * a.Ev, dv, a.S - k0, (int)a.Ev, a.Ev, 1.f);
}

// dQ of one query tile: one block per (query tile, batch entry), looping over the key tiles.
template <typename T>
__device__ void sdpa_dq(const Sdpa& a) {
    __shared__ float ps[TILE][TILE + 1];
    __shared__ float stage[2 * TILE * (DC + 1)];
    long long b = block_batch();
    if (b >= batch_count(a)) return;
    long long q0 = (long long)(a.causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x) * TILE;
    Bases at = batch_bases(a, b);
    const T* Q = (const T*)a.q + at.q + q0 * a.q_row;
    const T* K = (const T*)a.k + at.k;
    float dq[4][8] = {}, s[4][4], dp[4][4], delta[4];
    load_delta(a, b, q0, delta);
    long long kend = a.causal && q0 + TILE < a.S ? q0 + TILE : a.S;
    for (long long k0 = 0; k0 < kend; k0 += TILE) {
        tile_abt<T>(s, Q, a.q_row, a.L - q0, K + k0 * a.k_row, a.k_row, a.S - k0, (int)a.E, stage);
        weights_and_dp<T>(a, at, b, q0, k0, s, dp, nullptr, stage);
        write_ds(s, dp, delta, ps);
        __syncthreads();
        tile_wb<T, false>(dq, ps, K + k0 * a.k_row, a.k_row, a.S - k0, (int)a.E, stage);  // dQ += dS K
    }
    if (a.gstrided)
        store_rows<T>((T*)a.gq + at.o + q0 * a.d_row, dq, a.L - q0, (int)a.E, a.d_row, (float)a.scale);
    else
        store_rows<T>((T*)a.gq + (b * a.L + q0) * a.E, dq, a.L - q0, (int)a.E, a.E, (float)a.scale);
}

// Launch bounds: forward and dQ fit 128 registers (two blocks of 256 threads per SM); dK/dV
// holds two accumulators and would spill, so it keeps one block per SM.
#define SDPA_KERNELS(T, S)                                                                           \
extern "C" __global__ void __launch_bounds__(NT, 2) tinynet_sdpa_fwd_##S(Sdpa a) { sdpa_fwd<T>(a); }     \
extern "C" __global__ void tinynet_sdpa_delta_bwd_##S(Sdpa a) { sdpa_delta<T>(a); }                      \
extern "C" __global__ void __launch_bounds__(NT) tinynet_sdpa_dkv_bwd_##S(Sdpa a) { sdpa_dkv<T>(a); }    \
extern "C" __global__ void __launch_bounds__(NT, 2) tinynet_sdpa_dq_bwd_##S(Sdpa a) { sdpa_dq<T>(a); }

SDPA_KERNELS(float, f32)
SDPA_KERNELS(half_bits, f16)
