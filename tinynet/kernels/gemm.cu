#include "half.cuh"
// Small dense products for linear layers: C (M, N) = op(A) op(B) [+ bias (N)], row-major,
// where op(A) is A (M, K) or, transposed, the (M, K) view of a stored (K, M) array, and
// likewise op(B) is B (K, N) or the view of a stored (N, K) array.
//
// The textbook shared-memory tiling (Kirk & Hwu, "Programming Massively Parallel
// Processors", ch. 4): a 16 x 16 block computes a 16 x 16 tile of C, one element per
// thread, stepping along K one 16-wide slab at a time; each slab of op(A) and op(B) is
// staged in shared memory so every value read from global memory is used 16 times.
// Threads load along the stored rows (coalesced) and the transpose happens in the
// shared-memory index; the +1 column keeps the transposed accesses off one bank.
// Accumulation is in Acc<T>::type (half.cuh): T itself for float and double; float32 for
// float16 and bfloat16, which load() widens as the slabs are staged (the tiles hold float32)
// and store() rounds once when C is written, the bias added before that rounding (as cuBLAS
// with CUBLAS_COMPUTE_32F). The sums run in K order (with split-K, below: each split's range
// in K order, then the splits in order). At the sizes a linear layer of a small network has,
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

template <typename T>
__device__ void gemm_tiled(const T* A, const T* B, const T* bias, T* C, int M, int N, int K, int trans_a,
                           int trans_b, int kchunk, typename Acc<T>::type* work, unsigned int* counters) {
    typedef typename Acc<T>::type F;  // what the tiles hold and the sums run in
    __shared__ F As[TILE][TILE + 1];  // As[i][k]: op(A)(tile row i, slab column k)
    __shared__ F Bs[TILE][TILE + 1];  // Bs[k][j]: op(B)(slab row k, tile column j)
    __shared__ int last;
    int tx = threadIdx.x, ty = threadIdx.y;
    int m0 = blockIdx.y * TILE, n0 = blockIdx.x * TILE;
    int splits = gridDim.z, kb = blockIdx.z * kchunk;
    int ke = min(K, kb + kchunk);
    F acc = 0;
    for (int k0 = kb; k0 < ke; k0 += TILE) {
        if (trans_a) {  // stored (K, M): this thread reads row k0 + ty, column m0 + tx
            int k = k0 + ty, m = m0 + tx;
            As[tx][ty] = (k < ke && m < M) ? load(A, (long long)k * M + m) : (F)0;
        } else {        // stored (M, K): row m0 + ty, column k0 + tx
            int m = m0 + ty, k = k0 + tx;
            As[ty][tx] = (m < M && k < ke) ? load(A, (long long)m * K + k) : (F)0;
        }
        if (trans_b) {  // stored (N, K): row n0 + ty, column k0 + tx
            int n = n0 + ty, k = k0 + tx;
            Bs[tx][ty] = (n < N && k < ke) ? load(B, (long long)n * K + k) : (F)0;
        } else {        // stored (K, N): row k0 + ty, column n0 + tx
            int k = k0 + ty, n = n0 + tx;
            Bs[ty][tx] = (k < ke && n < N) ? load(B, (long long)k * N + n) : (F)0;
        }
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[ty][k] * Bs[k][tx];
        __syncthreads();
    }
    int m = m0 + ty, n = n0 + tx;
    bool inside = m < M && n < N;
    if (splits == 1) {
        if (inside) store(C, (long long)m * N + n, bias ? acc + load(bias, n) : acc);  // the one rounding
        return;
    }
    if (inside) work[((long long)blockIdx.z * M + m) * N + n] = acc;
    __threadfence();  // the partial is visible device-wide before the count says so
    __syncthreads();
    int tile = blockIdx.y * gridDim.x + blockIdx.x;
    if (tx == 0 && ty == 0) last = atomicAdd(&counters[tile], 1u) == (unsigned int)(splits - 1);
    __syncthreads();
    if (!last) return;
    __threadfence();
    if (inside) {
        F sum = 0;
        for (int r = 0; r < splits; ++r) sum += __ldcg(&work[((long long)r * M + m) * N + n]);  // past L1
        store(C, (long long)m * N + n, bias ? sum + load(bias, n) : sum);  // the one rounding
    }
    if (tx == 0 && ty == 0) counters[tile] = 0;
}

// The split-K workspace holds Acc<T>::type partials: float for the half types, so a split
// product also rounds to T only once, at the end.
#define GEMM_KERNELS(T, S)                                                                          \
extern "C" __global__ void tinynet_gemm_fwd_##S(const T* A, const T* B, const T* bias, T* C, int M,   \
        int N, int K, int trans_a, int trans_b, int kchunk, Acc<T>::type* work,                     \
        unsigned int* counters) {                                                                   \
    gemm_tiled<T>(A, B, bias, C, M, N, K, trans_a, trans_b, kchunk, work, counters); }

GEMM_KERNELS(float, f32)
GEMM_KERNELS(double, f64)
GEMM_KERNELS(half_bits, f16)
GEMM_KERNELS(bf16_bits, bf16)
