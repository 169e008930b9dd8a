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
//             dQ = scale * dS K    (one block per query tile, looping over the key tiles: from the
//             dS^T tiles dK/dV stored in a float32 scratch when the launcher gives one, else
//             recomputing S, dP and dS); no atomics: every gradient element is written by one
//             thread, in a fixed order.
//   dropout   D = 0 or 1 / (1 - p) per weight (keep4, drawn again in each kernel): O takes
//             (exp(S_j - m) D_j) V_j while l sums the undropped weights; dV = (P D)^T dO,
//             dS = P * (dP D - delta), delta = rowsum(dO * O) still (it equals rowsum(P D dP)).
// The exponentials are base 2 (scores times log2(e)), lse is stored in natural units. A query
// row that sees no key gets O = 0 and lse = +inf, so its P is 0 in backward (the convention of
// tinynet/ops/attention.py).
//
// Register blocking as in an SGEMM: NT = 256 threads per block, a 16 x 16 grid (ty, tx); in a
// TILE x TILE product tile thread (ty, tx) owns rows 4 ty + i and columns 4 tx + j (i, j < 4),
// in an accumulator of up to 64 NH columns the rows 4 ty + i and the columns 64 h + 4 tx + j
// (h < NH: NH = 1 for head dims up to 64, 2 up to 128; see acc_col). The 16 threads of one row
// are 16 lanes of one warp, so row maxima and sums are warp shuffles. Operands are staged in
// shared memory so that a thread's 4 rows and 4 columns are contiguous: A and B of a score-type
// product A B^T transposed (d-major, [DC][TILE]), the B of an accumulate-type product W B row by
// row ([TILE][64]) and W transposed ([c][row], written by the threads that computed it); each
// step of an inner loop is two 16-byte shared loads for 16 FMAs. The staging moves 4 x 4 blocks
// (16-byte global loads where the rows are aligned) and stores 16-byte rows, and the W tile is
// XOR-swizzled (swz), so neither side has bank conflicts. The kernels that loop over tiles keep
// their fixed operand (Q in forward and dQ, K in dK/dV) in shared memory when its head dim is at
// most 64, staged once. Tiles wholly inside the (L, S) matrix, below the causal diagonal and
// without a mask skip the per-element bounds, causal and mask tests (scores).
// Shared memory per block: kept [64][TILE] + stage [2 DC][TILE] + W [TILE][TILE] = 48 KB (dQ from
// the stored dS^T: 32 KB, no kept operand).
//
// Head dims E (queries/keys) and Ev (values) are any value 1..128; L and S any lengths.
// Each input is addressed through its own batch strides (0 along broadcast dims) and row
// stride, elements along a row being contiguous, so broadcast batch dims and transposed
// head layouts need no copies. Grouped-query attention divides the index along the heads
// dim (the last batch dim) by the group size for keys and values. Storage is float32 or
// float16; all arithmetic is float32.

#include "attention_tiles.cuh"  // TILE, NT, DC, the float16 conversions and the tile products
#include "philox.cuh"  // Philox4x32-10, the generator of the dropout on the weights

#define MAXD 128  // largest head dim
#define MAXB 6    // largest number of batch dims
#define LOG2E 1.4426950408889634f
#define LN2 0.6931471805599453f

// Everything a launch needs, passed by value (tinynet/kernels/attention.py packs it with
// the same field order; every field is 8 bytes, so there is no padding to agree on).
// Strides count elements. Outputs are contiguous: out (B, L, Ev), lse and delta (B, L),
// gq (B, L, E), gk (B, S, E), gv (B, S, Ev), B the product of the batch dims; except with
// gstrided, when gq, gk and gv are views of one gradient buffer with batch strides db and row
// stride d_row (q, k, v split from one projection: grad_buffers.like_base). ds, when not 0, is
// float32 scratch of (B, S', L') (S', L' rounded up to TILE) where dK/dV leaves dS^T for dQ.
// Dropout on the weights (drop_p > 0): see keep4.
struct Sdpa {
    unsigned long long q, k, v, mask, out, lse, gout, delta, gq, gk, gv, ds;  // device pointers
    long long batch[MAXB];                                // broadcast batch shape, 1-padded on the left
    long long qb[MAXB], kb[MAXB], vb[MAXB], mb[MAXB], gb[MAXB], db[MAXB];  // batch strides of q, k, v, mask, dO, dQ/dK/dV
    long long q_row, k_row, v_row, m_row, m_col, g_row;  // row strides (and the mask's column stride)
    long long L, S, E, Ev;
    long long kgroup, vgroup;  // grouped-query attention: query heads per key / value head
    long long mask_kind;       // MASK_NONE, MASK_BOOL (True: the key takes part) or MASK_ADD (float)
    long long causal;          // top-left aligned: query i sees keys j <= i
    long long gstrided, d_row; // gradients in one buffer (db, d_row) rather than contiguous
    double scale;
    unsigned long long cells, seed, offset;  // dropout's Philox key and draw; cells: a capture's [seed, base]
    double drop_p, drop_scale;               // drop_p 0: no dropout; kept weights times drop_scale
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

// Dropout on the weights (drop_p > 0), with the uniforms of tinynet_dropout_fwd (dropout.cu):
// weight (b, i, j) of the (B, L, S) weight matrix is kept when (word >> 8) / 2^24 >= drop_p,
// its word being word j % 4 of the Philox block for counter ((b L + i) ceil(S / 4) + j / 4,
// offset) and key seed (in a CUDA graph, seed = cells[0] and offset += cells[1], as dropout).
// Forward and both backward kernels draw the same words, so no mask is stored. Returns the
// keep bits of keys j..j+3 of row i (bit t: key j + t; j is a multiple of 4).
__device__ __forceinline__ unsigned int keep4(const Sdpa& a, long long b, long long i, long long j) {
    unsigned long long seed = a.seed, offset = a.offset;
    if (a.cells) {
        seed = ((const unsigned long long*)a.cells)[0];
        offset += ((const unsigned long long*)a.cells)[1];
    }
    long long ctr = (b * a.L + i) * ((a.S + 3) / 4) + j / 4;
    u4 c = {(unsigned int)ctr, (unsigned int)(ctr >> 32), (unsigned int)offset, (unsigned int)(offset >> 32)};
    u4 w = philox(c, (unsigned int)seed, (unsigned int)(seed >> 32));
    float p = (float)a.drop_p, u = 1.0f / 16777216.0f;
    return (unsigned int)((w.x >> 8) * u >= p) | ((unsigned int)((w.y >> 8) * u >= p) << 1)
         | ((unsigned int)((w.z >> 8) * u >= p) << 2) | ((unsigned int)((w.w >> 8) * u >= p) << 3);
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

// This thread's entries of the score tile of queries q0.. and keys k0.. (s holds the dot products;
// KEYS: the tile's rows are keys and its columns queries), in log2 units: scale * log2(e) * dot
// (+ the mask), -inf where excluded. Interior tiles take no per-element test.
template <typename T, bool KEYS>
__device__ __forceinline__ void scores(const Sdpa& a, long long mbase, long long q0, long long k0, float s[4][4]) {
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    if (a.mask_kind == MASK_NONE && q0 + TILE <= a.L && k0 + TILE <= a.S && (!a.causal || k0 + TILE - 1 <= q0)) {
        float f = (float)a.scale * LOG2E;
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) s[i][j] *= f;
        return;
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            long long r = 4 * ty + i, c = 4 * tx + j;
            s[i][j] = LOG2E * masked_score<T>(a, mbase, KEYS ? q0 + c : q0 + r, KEYS ? k0 + r : k0 + c, s[i][j]);
        }
}

// The shared memory of every tile kernel.
#define SHARED_TILES                                                                             \
    __shared__ __align__(16) float kept[64 * TILE], stage[2 * DC * TILE], w[TILE * TILE]

// ---- forward: one block per (query tile, batch entry) ----------------------------------
template <typename T, int NH>
__device__ void sdpa_fwd(const Sdpa& a) {
    SHARED_TILES;
    long long b = block_batch();
    if (b >= batch_count(a)) return;
    // causal rows near the end see the most keys: those tiles start first
    long long q0 = (long long)(a.causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x) * TILE;
    Bases at = batch_bases(a, b);
    Tile<T> q = tile((const T*)a.q + at.q + q0 * a.q_row, a.q_row, a.L - q0);
    const T* K = (const T*)a.k + at.k;
    const T* V = (const T*)a.v + at.v;
    float* keep = a.E <= 64 ? kept : nullptr;

    // m: the running row maxima (log2 units); l: this thread's part of the row sums
    float o[4][4 * NH] = {}, m[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY}, l[4] = {}, s[4][4];
    long long kend = a.causal && q0 + TILE < a.S ? q0 + TILE : a.S;  // causal: later keys are all masked
    for (long long k0 = 0; k0 < kend; k0 += TILE) {
        tile_abt<T>(s, q, tile(K + k0 * a.k_row, a.k_row, a.S - k0), (int)a.E, keep, k0 > 0, stage);
        scores<T, false>(a, at.m, q0, k0, s);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            float mx = fmaxf(fmaxf(s[i][0], s[i][1]), fmaxf(s[i][2], s[i][3]));
            float m_new = fmaxf(m[i], row_max(mx));
            float shift = m_new == -INFINITY ? 0.f : m_new;  // no key so far: exp(-inf) = 0 below
            float alpha = exp2f(m[i] - shift);                // rescales the earlier tiles' sums
            float sum = 0.f;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                s[i][j] = exp2f(s[i][j] - shift);
                sum += s[i][j];
            }
            l[i] = l[i] * alpha + sum;
            m[i] = m_new;
#pragma unroll
            for (int jj = 0; jj < 4 * NH; ++jj) o[i][jj] *= alpha;
        }
        if (a.drop_p > 0) {  // the sums above are of the whole weights; O takes the kept ones
            float f = (float)a.drop_scale;
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                unsigned int kb = keep4(a, b, q0 + 4 * (threadIdx.x / 16) + i, k0 + 4 * (threadIdx.x % 16));
#pragma unroll
                for (int j = 0; j < 4; ++j) s[i][j] *= (kb >> j) & 1u ? f : 0.f;
            }
        }
        write_t(w, s);
        __syncthreads();
        tile_wb<T, NH>(o, w, tile(V + k0 * a.v_row, a.v_row, a.S - k0), (int)a.Ev, stage);
    }
    // O = o / l; a row with no key left (l = 0) gives zeros and lse = +inf
    T* out = (T*)a.out + (b * a.L + q0) * a.Ev;
    float* lse = (float*)a.lse + b * a.L + q0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        float sum = row_sum(l[i]);
        float inv = sum > 0.f ? 1.f / sum : 0.f;
#pragma unroll
        for (int jj = 0; jj < 4 * NH; ++jj) o[i][jj] *= inv;
        long long r = 4 * (threadIdx.x / 16) + i;
        if (threadIdx.x % 16 == 0 && q0 + r < a.L) lse[r] = sum > 0.f ? (m[i] + log2f(sum)) * LN2 : INFINITY;
    }
    store_rows<T, NH>(out, o, a.L - q0, (int)a.Ev, a.Ev, 1.f);
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

// lse (log2 units; +inf past L: the row's weights are 0) and delta of queries q0 + 4 t + i, i < 4.
__device__ __forceinline__ void row_stats(const Sdpa& a, long long b, long long q0, int t, float sh[4], float dl[4]) {
    const float* lse = (const float*)a.lse + b * a.L;
    const float* delta = (const float*)a.delta + b * a.L;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        long long r = q0 + 4 * t + i;
        sh[i] = r < a.L ? lse[r] * LOG2E : INFINITY;
        dl[i] = r < a.L ? delta[r] : 0.f;
    }
}

// dK and dV of one key tile: one block per (key tile, batch entry), looping over the query
// tiles that can see it. Its products are transposed (rows: keys): S^T = K Q^T, dP^T = V dO^T.
template <typename T, int NH>
__device__ void sdpa_dkv(const Sdpa& a) {
    SHARED_TILES;
    long long b = block_batch(), k0 = (long long)blockIdx.x * TILE;
    if (b >= batch_count(a)) return;
    Bases at = batch_bases(a, b);
    const T* Q = (const T*)a.q + at.q;
    const T* G = (const T*)a.gout + at.g;
    Tile<T> k = tile((const T*)a.k + at.k + k0 * a.k_row, a.k_row, a.S - k0);
    Tile<T> v = tile((const T*)a.v + at.v + k0 * a.v_row, a.v_row, a.S - k0);
    float* keep = a.E <= 64 ? kept : nullptr;
    float dk[4][4 * NH] = {}, dv[4][4 * NH] = {}, p[4][4], dp[4][4], sh[4], dl[4];
    long long qstart = a.causal ? k0 : 0;  // causal: earlier queries see none of these keys
    for (long long q0 = qstart; q0 < a.L; q0 += TILE) {
        Tile<T> q = tile(Q + q0 * a.q_row, a.q_row, a.L - q0), g = tile(G + q0 * a.g_row, a.g_row, a.L - q0);
        tile_abt<T>(p, k, q, (int)a.E, keep, q0 > qstart, stage);
        tile_abt<T>(dp, v, g, (int)a.Ev, nullptr, false, stage);
        scores<T, true>(a, at.m, q0, k0, p);
        row_stats(a, b, q0, threadIdx.x % 16, sh, dl);  // of this thread's columns
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) p[i][j] = exp2f(p[i][j] - sh[j]);
        if (a.drop_p > 0) {  // D: dS^T = P^T (dP^T D - delta) into dp, then P^T D for dV
            float f = (float)a.drop_scale;
#pragma unroll
            for (int j = 0; j < 4; ++j) {  // column j: query q0 + 4 tx + j, keys k0 + 4 ty ..
                unsigned int kb = keep4(a, b, q0 + 4 * (threadIdx.x % 16) + j, k0 + 4 * (threadIdx.x / 16));
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    float d = (kb >> i) & 1u ? f : 0.f;
                    dp[i][j] = p[i][j] * (dp[i][j] * d - dl[j]);
                    p[i][j] *= d;
                }
            }
        } else {
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) dp[i][j] = p[i][j] * (dp[i][j] - dl[j]);  // dS^T
        }
        write_t(w, p);
        __syncthreads();
        tile_wb<T, NH>(dv, w, g, (int)a.Ev, stage);  // dV += (P D)^T dO
        if (a.ds) {  // whole tiles, rows past S and columns past L being 0: no bounds to test
            long long lp = (a.L + TILE - 1) / TILE * TILE, sp = (a.S + TILE - 1) / TILE * TILE;
            float4* d = (float4*)a.ds + ((b * sp + k0 + 4 * (threadIdx.x / 16)) * lp + q0) / 4 + threadIdx.x % 16;
#pragma unroll
            for (int i = 0; i < 4; ++i) d[i * (lp / 4)] = make_float4(dp[i][0], dp[i][1], dp[i][2], dp[i][3]);
        }
        write_t(w, dp);
        __syncthreads();
        tile_wb<T, NH>(dk, w, q, (int)a.E, stage);   // dK += dS^T Q
    }
    T* gk = (T*)a.gk + (a.gstrided ? at.o + k0 * a.d_row : (b * a.S + k0) * a.E);
    T* gv = (T*)a.gv + (a.gstrided ? at.o + k0 * a.d_row : (b * a.S + k0) * a.Ev);
    store_rows<T, NH>(gk, dk, a.S - k0, (int)a.E, a.gstrided ? a.d_row : a.E, (float)a.scale);
    store_rows<T, NH>(gv, dv, a.S - k0, (int)a.Ev, a.gstrided ? a.d_row : a.Ev, 1.f);
}

// dQ of one query tile: one block per (query tile, batch entry), looping over the key tiles.
template <typename T, int NH>
__device__ void sdpa_dq(const Sdpa& a) {
    SHARED_TILES;
    long long b = block_batch();
    if (b >= batch_count(a)) return;
    long long q0 = (long long)(a.causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x) * TILE;
    Bases at = batch_bases(a, b);
    Tile<T> q = tile((const T*)a.q + at.q + q0 * a.q_row, a.q_row, a.L - q0);
    Tile<T> g = tile((const T*)a.gout + at.g + q0 * a.g_row, a.g_row, a.L - q0);
    const T* K = (const T*)a.k + at.k;
    const T* V = (const T*)a.v + at.v;
    float* keep = a.E <= 64 ? kept : nullptr;
    float dq[4][4 * NH] = {}, s[4][4], dp[4][4], sh[4], dl[4];
    row_stats(a, b, q0, threadIdx.x / 16, sh, dl);  // of this thread's rows
    long long kend = a.causal && q0 + TILE < a.S ? q0 + TILE : a.S;
    for (long long k0 = 0; k0 < kend; k0 += TILE) {
        Tile<T> k = tile(K + k0 * a.k_row, a.k_row, a.S - k0);
        tile_abt<T>(s, q, k, (int)a.E, keep, k0 > 0, stage);
        tile_abt<T>(dp, g, tile(V + k0 * a.v_row, a.v_row, a.S - k0), (int)a.Ev, nullptr, false, stage);
        scores<T, false>(a, at.m, q0, k0, s);
        float f = a.drop_p > 0 ? (float)a.drop_scale : 1.f;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            unsigned int kb = a.drop_p > 0 ? keep4(a, b, q0 + 4 * (threadIdx.x / 16) + i, k0 + 4 * (threadIdx.x % 16)) : 15u;
#pragma unroll
            for (int j = 0; j < 4; ++j)  // dS = P (dP D - delta)
                s[i][j] = exp2f(s[i][j] - sh[i]) * (dp[i][j] * ((kb >> j) & 1u ? f : 0.f) - dl[i]);
        }
        write_t(w, s);
        __syncthreads();
        tile_wb<T, NH>(dq, w, k, (int)a.E, stage);  // dQ += dS K
    }
    T* gq = (T*)a.gq + (a.gstrided ? at.o + q0 * a.d_row : (b * a.L + q0) * a.E);
    store_rows<T, NH>(gq, dq, a.L - q0, (int)a.E, a.gstrided ? a.d_row : a.E, (float)a.scale);
}

// dQ of one query tile from the dS^T tiles that dK/dV stored (a.ds): one product per key tile
// (dQ += dS K) instead of three, at the cost of writing and reading dS once.
template <typename T, int NH>
__device__ void sdpa_dq_stored(const Sdpa& a) {
    __shared__ __align__(16) float stage[2 * DC * TILE], w[TILE * TILE];
    long long b = block_batch();
    if (b >= batch_count(a)) return;
    long long q0 = (long long)(a.causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x) * TILE;
    Bases at = batch_bases(a, b);
    const T* K = (const T*)a.k + at.k;
    long long lp = (a.L + TILE - 1) / TILE * TILE, sp = (a.S + TILE - 1) / TILE * TILE;
    const float* ds = (const float*)a.ds + b * sp * lp + q0;
    float dq[4][4 * NH] = {};
    long long kend = a.causal && q0 + TILE < a.S ? q0 + TILE : a.S;
    for (long long k0 = 0; k0 < kend; k0 += TILE) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {  // W[key][query] = dS^T, the layout write_t leaves
            int r = threadIdx.x / 16 + 16 * e, c = 4 * (threadIdx.x % 16);
            *(float4*)(w + swz(r, c)) = *(const float4*)(ds + (k0 + r) * lp + c);
        }  // no barrier here: tile_wb's first one, after it stages K, covers these stores too
        tile_wb<T, NH>(dq, w, tile(K + k0 * a.k_row, a.k_row, a.S - k0), (int)a.E, stage);  // dQ += dS K
    }
    T* gq = (T*)a.gq + (a.gstrided ? at.o + q0 * a.d_row : (b * a.L + q0) * a.E);
    store_rows<T, NH>(gq, dq, a.L - q0, (int)a.E, a.gstrided ? a.d_row : a.E, (float)a.scale);
}

// Kernels _d64 serve head dims E and Ev up to 64 (NH = 1), the others up to 128. Launch bounds:
// two blocks of 256 threads per SM (128 registers) for all but dK/dV up to 128, which holds two
// accumulators of 32 and keeps one block per SM.
#define SDPA_KERNELS(T, S)                                                                                         \
extern "C" __global__ void __launch_bounds__(NT, 2) tinynet_sdpa_fwd_##S(Sdpa a) { sdpa_fwd<T, 2>(a); }             \
extern "C" __global__ void __launch_bounds__(NT, 2) tinynet_sdpa_fwd_d64_##S(Sdpa a) { sdpa_fwd<T, 1>(a); }         \
extern "C" __global__ void tinynet_sdpa_delta_bwd_##S(Sdpa a) { sdpa_delta<T>(a); }                                  \
extern "C" __global__ void __launch_bounds__(NT) tinynet_sdpa_dkv_bwd_##S(Sdpa a) { sdpa_dkv<T, 2>(a); }            \
extern "C" __global__ void __launch_bounds__(NT, 2) tinynet_sdpa_dkv_bwd_d64_##S(Sdpa a) { sdpa_dkv<T, 1>(a); }     \
extern "C" __global__ void __launch_bounds__(NT, 2) tinynet_sdpa_dq_bwd_##S(Sdpa a) { sdpa_dq<T, 2>(a); }           \
extern "C" __global__ void __launch_bounds__(NT, 2) tinynet_sdpa_dq_bwd_d64_##S(Sdpa a) { sdpa_dq<T, 1>(a); }       \
extern "C" __global__ void __launch_bounds__(NT, 2) tinynet_sdpa_dqs_bwd_##S(Sdpa a) { sdpa_dq_stored<T, 2>(a); }   \
extern "C" __global__ void __launch_bounds__(NT, 2) tinynet_sdpa_dqs_bwd_d64_##S(Sdpa a) { sdpa_dq_stored<T, 1>(a); }

SDPA_KERNELS(float, f32)
SDPA_KERNELS(half_bits, f16)
