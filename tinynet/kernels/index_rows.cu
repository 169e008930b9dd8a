// x[idx] for a 1-D integer index on the first dimension of a C-contiguous array: one launch,
// out[r, ...] = x[idx[r], ...], with the rows copied in the widest word (16, 8, 4, 2 or 1 bytes)
// that divides the row size and the addresses (the launcher picks it), so one kernel serves
// every dtype (its bits are copied).
//
// Index values: -rows <= j < 0 counts from the end (PyTorch's and NumPy's rule). An index
// outside [-rows, rows) reads nothing: its output row is zeros and the thread that copies the
// row's first word records the index and the size in the error record `err`, page-locked host
// memory the device writes through the unified address space: err[1] = the index, err[2] =
// rows, then a system-wide fence, then err[0] = 1. The host reads the record without waiting for
// the device (kernels/index_rows.py) and raises tinynet's IndexOutOfRangeError at the next GPU
// tensor-index gather or tinynet.cuda.synchronize(): PyTorch's device-side check, reported as
// asynchronously as its device-side assert is, without ending the CUDA context.
// Write an out-of-range index to the error record: the index, the size and the dimension, then a
// system-wide fence, then the flag the host reads.
__device__ void record_error(volatile long long* err, long long j, long long size, long long dim) {
    err[1] = j;
    err[2] = size;
    err[3] = dim;
    __threadfence_system();
    err[0] = 1;
}

template <typename W, typename I>
__device__ void gather_rows(const W* src, const I* idx, long long rows, long long row_words,
                            long long total, W* out, volatile long long* err) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    long long r = i / row_words, w = i - r * row_words;
    long long j = (long long)idx[r];
    long long k = j < 0 ? j + rows : j;
    if (k < 0 || k >= rows) {
        out[i] = W();  // value-initialised: zero bits
        if (w == 0) record_error(err, j, rows, 0);
        return;
    }
    out[i] = src[k * row_words + w];
}

#define INDEX_ROWS_KERNEL(W, WS, I, IS)                                                             \
extern "C" __global__ void tinynet_index_rows_##WS##_##IS(const W* src, const I* idx, long long rows, \
        long long row_words, long long total, W* out, long long* err) {                              \
    gather_rows<W, I>(src, idx, rows, row_words, total, out, err); }

// KERNEL instantiated for every copy word (1, 2, 4, 8 and 16 bytes) with index type I
#define FOR_EACH_WIDTH(KERNEL, I, IS)                                                               \
KERNEL(unsigned char, w1, I, IS)                                                                     \
KERNEL(unsigned short, w2, I, IS)                                                                    \
KERNEL(unsigned int, w4, I, IS)                                                                      \
KERNEL(uint2, w8, I, IS)                                                                             \
KERNEL(uint4, w16, I, IS)

FOR_EACH_WIDTH(INDEX_ROWS_KERNEL, int, i32)
FOR_EACH_WIDTH(INDEX_ROWS_KERNEL, long long, i64)

// The range check of the index tensor of gather, scatter, scatter_add, take_along_dim and
// index_select on the GPU (CuPy's fancy indexing, which does their copy, wraps an out-of-range
// index around silently): one thread per index; an index outside [low, size) is recorded in the
// same error record as above, with its dimension in err[3], and raised on the host at the next
// GPU gather, check or tinynet.cuda.synchronize().
template <typename I>
__device__ void check_range(const I* idx, long long n, long long low, long long size, long long dim,
                            volatile long long* err) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    long long j = (long long)idx[i];
    if (j < low || j >= size) record_error(err, j, size, dim);
}

extern "C" __global__ void tinynet_index_check_i32(const int* idx, long long n, long long low, long long size,
                                                   long long dim, long long* err) {
    check_range<int>(idx, n, low, size, dim, err); }
extern "C" __global__ void tinynet_index_check_i64(const long long* idx, long long n, long long low,
                                                   long long size, long long dim, long long* err) {
    check_range<long long>(idx, n, low, size, dim, err); }

// gather along one dimension of a C-contiguous x viewed as (outer, d_len, inner): out, C-contiguous
// (outer, k_len, inner), takes out[o, k, n] = x[o, j, n] with j = idx[o, k, n] (gather and
// take_along_dim: `per_element`, idx of out's shape) or j = idx[k] (index_select: idx 1-D). An index in
// [low, 0) counts from the end (take_along_dim's low = -d_len; gather's and index_select's low = 0);
// one outside [low, d_len) reads nothing, gives a zero and is recorded in `err` as above (dimension
// `dim`). One thread per output element, copied as one word of the element's size (any dtype).
template <typename W, typename I>
__device__ void gather_dim(const W* x, const I* idx, long long total, long long k_len, long long d_len,
                           long long inner, long long low, int per_element, long long dim, W* out,
                           volatile long long* err) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    long long n = i % inner, t = i / inner;
    long long k = t % k_len, o = t / k_len;
    long long j = (long long)idx[per_element ? i : k];
    if (j < low || j >= d_len) {
        out[i] = W();
        record_error(err, j, d_len, dim);
        return;
    }
    if (j < 0) j += d_len;
    out[i] = x[(o * d_len + j) * inner + n];
}

#define GATHER_DIM_KERNEL(W, WS, I, IS)                                                             \
extern "C" __global__ void tinynet_gather_dim_##WS##_##IS(const W* x, const I* idx, long long total,   \
        long long k_len, long long d_len, long long inner, long long low, int per_element, long long dim,  \
        W* out, long long* err) {                                                                     \
    gather_dim<W, I>(x, idx, total, k_len, d_len, inner, low, per_element, dim, out, err); }

FOR_EACH_WIDTH(GATHER_DIM_KERNEL, int, i32)
FOR_EACH_WIDTH(GATHER_DIM_KERNEL, long long, i64)
