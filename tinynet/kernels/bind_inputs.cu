// tinynet.compile's input binding, recorded as the first kernel of a captured step
// (tinynet/cuda/compiled.py): each replay copies the call's tensor arguments into the graph's
// static input buffers. The destinations and sizes are fixed at the capture and travel by value
// (struct Bind); the source addresses change at every call, so the kernel reads them from device
// cells that the replay refills with the graph's other per-replay numbers (tinynet/capture.py:
// one host-to-device copy for all of them). A source address of 0 means "nothing to copy" (the
// argument is the static buffer itself). Arguments are copied in words of 4 bytes when their
// itemsize allows, else of their itemsize (1 or 2 bytes): a source is a tensor of the static
// buffer's dtype, so its address is aligned to that word.

#define MAXB 16

struct Bind {
    unsigned long long dst[MAXB];  // the static buffers
    long long start[MAXB + 1];     // word offsets of each buffer in the launch, start[n] = total
    int unit[MAXB];                // bytes per word: 4, 2 or 1
};

extern "C" __global__ void tinynet_bind_inputs(Bind b, int n, const unsigned long long* srcs) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= b.start[n]) return;
    int k = 0;
    while (i >= b.start[k + 1]) ++k;
    unsigned long long src = srcs[k];
    if (src == 0 || src == b.dst[k]) return;
    long long j = i - b.start[k];
    if (b.unit[k] == 4) {
        ((unsigned int*)b.dst[k])[j] = ((const unsigned int*)src)[j];
    } else if (b.unit[k] == 2) {
        ((unsigned short*)b.dst[k])[j] = ((const unsigned short*)src)[j];
    } else {
        ((unsigned char*)b.dst[k])[j] = ((const unsigned char*)src)[j];
    }
}
