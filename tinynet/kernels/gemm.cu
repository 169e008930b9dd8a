#include "half.cuh"
// Small dense products for linear layers: C (M, N) = op(A) op(B) [+ bias (N)], row-major,
// where op(A) is A (M, K) or, transposed, the (M, K) view of a stored (K, M) array, and
// likewise op(B) is B (K, N) or the view of a stored (N, K) array.
//
// Shared-memory tiling (Kirk & Hwu, "Programming Massively Parallel Processors", ch. 4-5):
// a block of 16 x 16 threads computes a (16 RM) x (16 RN) tile of C, each thread the RM x RN
// outputs (ty + 16 i, tx + 16 j), stepping along K one SLAB-wide slab at a time; each slab of
// op(A) and op(B) is staged in shared memory. Three choices, each made by the host per shape
// (gemm.py, ``plan``) and each instantiated below:
//   - SLAB (16 or 32): every thread reads its SLAB / 16 * RM values of op(A) and of op(B)
//     into registers before storing any, so a slab costs one memory latency; the next
//     slab's reads are issued before the current one is summed. A short K (a layer's input
//     gradient has K = out_features, often 10) takes SLAB 16, since a slab past K is padded
//     with zeros; a longer one SLAB 32 (64 measured slower: more registers, fewer blocks).
//   - RM = RN = 2 (register tiling) for large unsplit products: each value read from shared
//     memory feeds two products instead of one, so a product bound by shared-memory reads
//     (the MLP's weight gradient, 256 x 784 x 64) issues half of them.
//   - split-K, below.
// Threads read along the stored rows (coalesced) and the transpose happens in the
// shared-memory index; the +1 column keeps the transposed accesses off one bank.
// Accumulation is in Acc<T>::type (half.cuh): T itself for float and double; float32 for
// float16 and bfloat16, which load() widens as the slabs are staged (the tiles hold float32)
// and store() rounds once when C is written, the bias added before that rounding (as cuBLAS
// with CUBLAS_COMPUTE_32F). Every output is summed in K order, one multiply-add per k (padded
// k add 0 * 0), whatever the SLAB and RM, RN (with split-K, below: each split's range in K
// order, then the splits in order). At the sizes a linear layer of a small network has,
// one launch with the bias took 14.5 us of host time on the H200 machine, against 20.1 us
// for CuPy's cuBLAS product plus 8.6 us for its separate bias add.

#define TILE 16

// Split-K: a product with few output tiles and a long K (a linear layer's forward at batch
// 64: 64 tiles, K = 784) leaves most SMs idle while each block walks K alone. The host then
// launches gridDim.z = splits blocks per tile, each summing its own K range of kchunk
// (a multiple of TILE). Each writes its partial tile, in the accumulator type, to the
// workspace; the last block of a tile to finish (an atomic count per tile) adds the partials
// in split order 0, 1, ... and writes C, so the result does not depend on which block
// finished when (deterministic), and it resets the tile's counter to 0 for the next product.
// One launch, as without splits.

// Read one slab of op(A) ((16 RM) x SLAB) and op(B) (SLAB x (16 RN)) into registers: all of
// a thread's reads are issued before any is used. Values outside [0, ke) or past M, N are 0.
template <typename T, int SLAB, int RM, int RN>
__device__ __forceinline__ void fetch_slab(const T* A, const T* B, int M, int N, int K, int trans_a, int trans_b,
                                           int m0, int n0, int k0, int ke, int t,
                                           typename Acc<T>::type* ra, typename Acc<T>::type* rb) {
    typedef typename Acc<T>::type F;
#pragma unroll
    for (int r = 0; r < RM * SLAB / TILE; ++r) {
        int idx = t + r * TILE * TILE;
        int i = trans_a ? idx % (TILE * RM) : idx / SLAB, k = k0 + (trans_a ? idx / (TILE * RM) : idx % SLAB);
        int m = m0 + i;
        ra[r] = (m < M && k < ke) ? load(A, trans_a ? (long long)k * M + m : (long long)m * K + k) : (F)0;
    }
#pragma unroll
    for (int r = 0; r < RN * SLAB / TILE; ++r) {
        int idx = t + r * TILE * TILE;
        int j = trans_b ? idx / SLAB : idx % (TILE * RN), k = k0 + (trans_b ? idx % SLAB : idx / (TILE * RN));
        int n = n0 + j;
        rb[r] = (n < N && k < ke) ? load(B, trans_b ? (long long)n * K + k : (long long)k * N + n) : (F)0;
    }
}

template <typename T, int SLAB, int RM, int RN>
__device__ void gemm_tiled(const T* A, const T* B, const T* bias, T* C, int M, int N, int K, int trans_a,
                           int trans_b, int kchunk, typename Acc<T>::type* work, unsigned int* counters) {
    typedef typename Acc<T>::type F;         // what the tiles hold and the sums run in
    __shared__ F As[TILE * RM][SLAB + 1];    // As[i][k]: op(A)(tile row i, slab column k)
    __shared__ F Bs[SLAB][TILE * RN + 1];    // Bs[k][j]: op(B)(slab row k, tile column j)
    __shared__ int last;
    int tx = threadIdx.x, ty = threadIdx.y, t = ty * TILE + tx;
    int m0 = blockIdx.y * TILE * RM, n0 = blockIdx.x * TILE * RN;
    int splits = gridDim.z, kb = blockIdx.z * kchunk;
    int ke = min(K, kb + kchunk);
    F ra[RM * SLAB / TILE], rb[RN * SLAB / TILE], acc[RM][RN];
#pragma unroll
    for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int j = 0; j < RN; ++j) acc[i][j] = 0;
    fetch_slab<T, SLAB, RM, RN>(A, B, M, N, K, trans_a, trans_b, m0, n0, kb, ke, t, ra, rb);
    for (int k0 = kb; k0 < ke; k0 += SLAB) {
#pragma unroll
        for (int r = 0; r < RM * SLAB / TILE; ++r) {  // fetch_slab's index arithmetic
            int idx = t + r * TILE * TILE;
            As[trans_a ? idx % (TILE * RM) : idx / SLAB][trans_a ? idx / (TILE * RM) : idx % SLAB] = ra[r];
        }
#pragma unroll
        for (int r = 0; r < RN * SLAB / TILE; ++r) {
            int idx = t + r * TILE * TILE;
            Bs[trans_b ? idx % SLAB : idx / (TILE * RN)][trans_b ? idx / SLAB : idx % (TILE * RN)] = rb[r];
        }
        __syncthreads();
        if (k0 + SLAB < ke)  // the next slab's reads are in flight while this one is summed
            fetch_slab<T, SLAB, RM, RN>(A, B, M, N, K, trans_a, trans_b, m0, n0, k0 + SLAB, ke, t, ra, rb);
#pragma unroll
        for (int k = 0; k < SLAB; ++k) {
            F a[RM], b[RN];
#pragma unroll
            for (int i = 0; i < RM; ++i) a[i] = As[ty + TILE * i][k];
#pragma unroll
            for (int j = 0; j < RN; ++j) b[j] = Bs[k][tx + TILE * j];
#pragma unroll
            for (int i = 0; i < RM; ++i)
#pragma unroll
                for (int j = 0; j < RN; ++j) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
    if (splits == 1) {
#pragma unroll
        for (int i = 0; i < RM; ++i)
#pragma unroll
            for (int j = 0; j < RN; ++j) {
                int m = m0 + ty + TILE * i, n = n0 + tx + TILE * j;
                if (m < M && n < N) store(C, (long long)m * N + n, bias ? acc[i][j] + load(bias, n) : acc[i][j]);
            }
        return;  // above: the one rounding
    }
#pragma unroll
    for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int j = 0; j < RN; ++j) {
            int m = m0 + ty + TILE * i, n = n0 + tx + TILE * j;
            if (m < M && n < N) work[((long long)blockIdx.z * M + m) * N + n] = acc[i][j];
        }
    __threadfence();  // the partials are visible device-wide before the count says so
    __syncthreads();
    int tile = blockIdx.y * gridDim.x + blockIdx.x;
    if (tx == 0 && ty == 0) last = atomicAdd(&counters[tile], 1u) == (unsigned int)(splits - 1);
    __syncthreads();
    if (!last) return;
    __threadfence();
#pragma unroll
    for (int i = 0; i < RM; ++i)
#pragma unroll
        for (int j = 0; j < RN; ++j) {
            int m = m0 + ty + TILE * i, n = n0 + tx + TILE * j;
            if (m < M && n < N) {
                F sum = 0;
                for (int r = 0; r < splits; ++r) sum += __ldcg(&work[((long long)r * M + m) * N + n]);  // past L1
                store(C, (long long)m * N + n, bias ? sum + load(bias, n) : sum);  // the one rounding
            }
        }
    if (tx == 0 && ty == 0) counters[tile] = 0;
}

// The split-K workspace holds Acc<T>::type partials: float for the half types, so a split
// product also rounds to T only once, at the end.
#define GEMM_KERNEL(T, S, SLAB, R)                                                                 \
extern "C" __global__ void tinynet_gemm_fwd_s##SLAB##r##R##_##S(const T* A, const T* B, const T* bias, T* C, \
        int M, int N, int K, int trans_a, int trans_b, int kchunk, Acc<T>::type* work,              \
        unsigned int* counters) {                                                                   \
    gemm_tiled<T, SLAB, R, R>(A, B, bias, C, M, N, K, trans_a, trans_b, kchunk, work, counters); }
#define GEMM_KERNELS(T, S) \
    GEMM_KERNEL(T, S, 16, 1) GEMM_KERNEL(T, S, 32, 1) GEMM_KERNEL(T, S, 16, 2) GEMM_KERNEL(T, S, 32, 2)

GEMM_KERNELS(float, f32)
GEMM_KERNELS(double, f64)
GEMM_KERNELS(half_bits, f16)
GEMM_KERNELS(bf16_bits, bf16)
