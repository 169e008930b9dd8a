// Batches gathered on the device for a step replayed from a CUDA graph
// (tinynet.utils.data.ResidentBatches): batch k of an epoch is rows perm[k*B .. k*B+B-1] of
// a GPU-resident dataset, and k is read from a device counter, so the same recorded kernels
// gather a new batch at every replay. Rows are copied as 4-byte words when their size
// allows (images of float32), else byte by byte.

// Past the end of the order the position wraps around (mod n), so a replay too many never
// reads outside the index.
template <typename W>
__device__ void gather_rows(const W* src, const long long* perm, const long long* counter, long long n,
                            long long batch, long long row_words, W* out) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= batch * row_words) return;
    long long r = i / row_words, w = i - r * row_words;
    long long source_row = perm[(counter[0] * batch + r) % n];
    out[i] = src[source_row * row_words + w];
}

extern "C" __global__ void tinynet_batch_gather_words(const unsigned int* src, const long long* perm,
        const long long* counter, long long n, long long batch, long long row_words, unsigned int* out) {
    gather_rows<unsigned int>(src, perm, counter, n, batch, row_words, out);
}

extern "C" __global__ void tinynet_batch_gather_bytes(const unsigned char* src, const long long* perm,
        const long long* counter, long long n, long long batch, long long row_bytes, unsigned char* out) {
    gather_rows<unsigned char>(src, perm, counter, n, batch, row_bytes, out);
}

// After the step's gathers: the next replay reads the next batch.
extern "C" __global__ void tinynet_batch_counter_advance(long long* counter) { counter[0] += 1; }
