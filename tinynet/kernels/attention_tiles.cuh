// The tile products of tinynet's attention kernels (attention.cu, which includes this file;
// tinynet/kernels/cuda.py pastes it in): operands staged in shared memory so that every thread
// reads its 4 rows and 4 columns of a product with two 16-byte loads per step (see the comment
// at the top of attention.cu).

#define TILE 64   // query rows and keys per tile
#define NT 256    // threads per block
#define DC 32     // head-dim columns per staged chunk of a score-type product (A B^T)

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

// Maximum and sum over the 16 lanes that hold one row (lanes 0-15 or 16-31 of a warp).
__device__ __forceinline__ float row_max(float v) {
    for (int o = 8; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

__device__ __forceinline__ float row_sum(float v) {
    for (int o = 8; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// The column of accumulator entry jj (of 4 NH) of this thread: chunks of 64 columns.
__device__ __forceinline__ int acc_col(int jj) { return (jj / 4) * 64 + 4 * (int)(threadIdx.x % 16) + jj % 4; }

// An operand tile in global memory: its first row, row stride, the rows left in the matrix (rows
// at and past it read as 0), and whether every row starts 4-element aligned (vector loads).
template <typename T> struct Tile { const T* p; long long ld, rows; bool vec; };

template <typename T>
__device__ __forceinline__ Tile<T> tile(const T* p, long long ld, long long rows) {
    Tile<T> t = {p, ld, rows, ld % 4 == 0 && (unsigned long long)p % (4 * sizeof(T)) == 0};
    return t;
}

// Elements 0..3 of p, those at and past n read as 0; one 16-byte (8-byte for float16) load if vec.
__device__ __forceinline__ float4 load4(const float* p, bool vec, int n) {
    if (vec && n >= 4) return *(const float4*)p;
    return make_float4(n > 0 ? p[0] : 0.f, n > 1 ? p[1] : 0.f, n > 2 ? p[2] : 0.f, n > 3 ? p[3] : 0.f);
}
__device__ __forceinline__ float4 load4(const half_bits* p, bool vec, int n) {
    if (vec && n >= 4) {
        uint2 u = *(const uint2*)p;
        return make_float4(to_float((half_bits)(u.x & 0xffffu)), to_float((half_bits)(u.x >> 16)),
                           to_float((half_bits)(u.y & 0xffffu)), to_float((half_bits)(u.y >> 16)));
    }
    return make_float4(n > 0 ? to_float(p[0]) : 0.f, n > 1 ? to_float(p[1]) : 0.f, n > 2 ? to_float(p[2]) : 0.f,
                       n > 3 ? to_float(p[3]) : 0.f);
}

__device__ __forceinline__ float4 lds4(const float* p) { return *(const float4*)p; }

// acc[i][o + j] += x_i y_j: one step of a 4 x 4 register-blocked product.
template <int W>
__device__ __forceinline__ void fma16(float acc[4][W], int o, float4 x, float4 y) {
    float xs[4] = {x.x, x.y, x.z, x.w}, ys[4] = {y.x, y.y, y.z, y.w};
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][o + j] += xs[i] * ys[j];
}

// dst[d][r] = A[r][d0 + d] (d < DC, r < TILE): thread u < 128 of the group moves the 4 x 4 block of
// rows 4 (u % 16).. and columns 4 (u / 16).., four 16-byte loads and stores.
template <typename T>
__device__ __forceinline__ void stage_t(float* dst, const Tile<T>& A, int d0, int D, int u) {
    int rq = u % 16, d = 4 * (u / 16);
    float4 v[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        long long r = 4 * rq + k;
        v[k] = r < A.rows ? load4(A.p + r * A.ld + d0 + d, A.vec, D - d0 - d) : make_float4(0.f, 0.f, 0.f, 0.f);
    }
    float* o = dst + d * TILE + 4 * rq;
    *(float4*)o = make_float4(v[0].x, v[1].x, v[2].x, v[3].x);
    *(float4*)(o + TILE) = make_float4(v[0].y, v[1].y, v[2].y, v[3].y);
    *(float4*)(o + 2 * TILE) = make_float4(v[0].z, v[1].z, v[2].z, v[3].z);
    *(float4*)(o + 3 * TILE) = make_float4(v[0].w, v[1].w, v[2].w, v[3].w);
}

// acc = A B^T for the TILE x TILE tile of A's and B's first rows, over D head-dim columns staged
// DC at a time (threads 0-127 stage A, 128-255 B). With kept (D <= 64), A^T lives there for the
// caller's whole loop: staged on the first call, reused when ready; then B takes the whole stage,
// 2 DC columns at a time (each half of the threads staging DC), so one staging and two barriers
// serve head dims up to 64.
template <typename T>
__device__ void tile_abt(float acc[4][4], const Tile<T>& A, const Tile<T>& B, int D, float* kept, bool ready,
                         float* stage) {
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16, u = threadIdx.x;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.f;
    for (int d0 = 0, n; d0 < D; d0 += n) {
        bool wide = kept && ready && D - d0 > DC;  // the same for every thread of the block
        n = wide ? 2 * DC : DC;
        float* as = kept ? kept + d0 * TILE : stage;
        float* bs = wide ? stage : stage + DC * TILE;
        int hi = u / (NT / 2);  // one staging call: (wide) B's halves, else A (unless kept) and B
        bool b = hi || wide;      // fields selected one by one: a selected struct would go to local memory
        Tile<T> src = {b ? B.p : A.p, b ? B.ld : A.ld, b ? B.rows : A.rows, b ? B.vec : A.vec};
        if (b || !(kept && ready))
            stage_t<T>(b ? stage + (wide ? hi : 1) * DC * TILE : as, src, d0 + (wide ? hi * DC : 0), D,
                       u % (NT / 2));
        __syncthreads();
#pragma unroll 4
        for (int d = 0; d < n; ++d) fma16<4>(acc, 0, lds4(as + d * TILE + 4 * ty), lds4(bs + d * TILE + 4 * tx));
        __syncthreads();
    }
}

// Element (row, col) of a TILE x TILE W tile in shared memory: columns XOR-swizzled in groups of
// 8 by bits 2-3 of the row, so the transposed 16-byte stores of write_t spread over all banks.
__device__ __forceinline__ int swz(int row, int col) { return row * TILE + (col ^ ((row << 1) & 24)); }

// W[c][r] = v[r][c] for this thread's entries: W holds the transpose of the product tile.
__device__ __forceinline__ void write_t(float* w, const float v[4][4]) {
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
    for (int j = 0; j < 4; ++j)
        *(float4*)(w + swz(4 * tx + j, 4 * ty)) = make_float4(v[0][j], v[1][j], v[2][j], v[3][j]);
}

// acc[i][jj] += sum_{c < TILE} W[c][4 ty + i] * B[c][acc_col(jj)] for the (transposed) tile W in
// shared memory and the TILE x D block B (64 columns staged at a time, row by row, 16-byte loads
// and stores). Ends synchronised, so the caller may overwrite W.
template <typename T, int NH>
__device__ void tile_wb(float acc[4][4 * NH], const float* w, const Tile<T>& B, int D, float* stage) {
    int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
    for (int h = 0; h < NH; ++h) {
        int c0 = 64 * h;
        if (c0 >= D) break;  // the same for every thread of the block
        float4 v[4];  // the four loads issued before the stores (one global round trip, not four)
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            int r = ty + 16 * k;
            v[k] = r < B.rows ? load4(B.p + r * B.ld + c0 + 4 * tx, B.vec, D - c0 - 4 * tx)
                              : make_float4(0.f, 0.f, 0.f, 0.f);
        }
#pragma unroll
        for (int k = 0; k < 4; ++k) *(float4*)(stage + (ty + 16 * k) * 64 + 4 * tx) = v[k];
        __syncthreads();
        for (int c = 0; c < TILE; c += 4) {  // rows c..c + 3 of W share their swizzle
            const float* wc = w + swz(c, 4 * ty);
#pragma unroll
            for (int e = 0; e < 4; ++e) fma16<4 * NH>(acc, 4 * h, lds4(wc + e * TILE), lds4(stage + (c + e) * 64 + 4 * tx));
        }
        __syncthreads();
    }
}

// Writes rows 4 ty + i (those below rows) and columns below D of acc * factor to the
// (rows, D) matrix dst with row stride ld.
template <typename T, int NH>
__device__ void store_rows(T* dst, const float acc[4][4 * NH], long long rows, int D, long long ld, float factor) {
    int ty = threadIdx.x / 16;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        long long r = 4 * ty + i;
        if (r >= rows) continue;
#pragma unroll
        for (int jj = 0; jj < 4 * NH; ++jj) {
            int c = acc_col(jj);
            if (c < D) dst[r * ld + c] = from_float<T>(acc[i][jj] * factor);
        }
    }
}

