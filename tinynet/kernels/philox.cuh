// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), the
// counter-based generator of tinynet's GPU dropout (dropout.cu) and of the fused attention
// kernels' dropout (attention.cu): philox(counter, key) is a pure function, so a kernel draws
// the random number of any element without state shared between threads or launches.

struct u4 { unsigned int x, y, z, w; };

__device__ __forceinline__ u4 philox_round(u4 c, unsigned int k0, unsigned int k1) {
    unsigned int hi0 = __umulhi(0xD2511F53u, c.x), lo0 = 0xD2511F53u * c.x;
    unsigned int hi1 = __umulhi(0xCD9E8D57u, c.z), lo1 = 0xCD9E8D57u * c.z;
    u4 r = {hi1 ^ c.y ^ k0, lo1, hi0 ^ c.w ^ k1, lo0};
    return r;
}

__device__ __forceinline__ u4 philox(u4 c, unsigned int k0, unsigned int k1) {
    for (int i = 0; i < 10; ++i) {
        c = philox_round(c, k0, k1);
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return c;
}
