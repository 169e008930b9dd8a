#include "half.cuh"

// clip_grad_norm_ on the GPU without a host synchronisation: the 2-norm of many gradients in
// three kinds of launch, each taking up to MAXG tensors whose pointers travel by value in a
// struct (no pointer table is copied to the device, so a CUDA graph can record it).
//   1. sqsum:  grid (parts, n): block (p, k) sums the squares of tensor k's elements
//              p, p + parts*blockDim, ... into partial[(base + k) * parts + p] (Acc precision);
//   2. finish: one block adds the `count` partials in a fixed tree order, writes the norm
//              sqrt(sum) and the factor min(1, max_norm / (norm + 1e-6)) (PyTorch's formula);
//   3. scale:  grid (parts, n): every gradient multiplied in place by that factor.
// No atomics: the sums come out the same bits on every run, eager or replayed.
#define MAXG 32
struct Grads {
    unsigned long long g[MAXG];  // device addresses
    long long size[MAXG];        // element counts
};

template <typename T>
__device__ void sqsum(Grads t, typename Acc<T>::type* partial, long long base) {
    typedef typename Acc<T>::type A;
    __shared__ A sh[256];
    int k = blockIdx.y;
    const T* g = (const T*)t.g[k];
    long long n = t.size[k];
    A s = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x) {
        A v = load(g, i);
        s += v * v;
    }
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[(base + k) * gridDim.x + blockIdx.x] = sh[0];
}

template <typename A, typename T>
__device__ void finish(const A* partial, long long count, double max_norm, T* norm, A* factor) {
    __shared__ A sh[256];
    A s = 0;
    for (long long i = threadIdx.x; i < count; i += blockDim.x) s += partial[i];
    sh[threadIdx.x] = s;
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) sh[threadIdx.x] += sh[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        A total = sqrt(sh[0]);
        store(norm, 0, total);
        A f = (A)max_norm / (total + (A)1e-6);
        factor[0] = f > (A)1 ? (A)1 : f;  // a NaN norm gives a NaN factor, as clamp(max=1) does
    }
}

template <typename T>
__device__ void scale(Grads t, const typename Acc<T>::type* factor) {
    int k = blockIdx.y;
    T* g = (T*)t.g[k];
    long long n = t.size[k];
    typename Acc<T>::type f = factor[0];
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        store(g, i, load(g, i) * f);
}

#define GRAD_NORM_KERNELS(T, S)                                                                         \
extern "C" __global__ void tinynet_grad_sqsum_fwd_##S(Grads t, Acc<T>::type* partial, long long base) { \
    sqsum<T>(t, partial, base); }                                                                      \
extern "C" __global__ void tinynet_grad_norm_finish_fwd_##S(const Acc<T>::type* partial, long long count, \
        double max_norm, T* norm, Acc<T>::type* factor) { finish(partial, count, max_norm, norm, factor); } \
extern "C" __global__ void tinynet_grad_scale_fwd_##S(Grads t, const Acc<T>::type* factor) { scale<T>(t, factor); }

GRAD_NORM_KERNELS(float, f32)
GRAD_NORM_KERNELS(double, f64)
GRAD_NORM_KERNELS(half_bits, f16)
GRAD_NORM_KERNELS(bf16_bits, bf16)
