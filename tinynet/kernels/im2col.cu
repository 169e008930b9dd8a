// im2col / col2im for the non-cuDNN convolution path (the GEMM runs in cuBLAS).
// cols layout: (G, N*Ho*Wo, Cg*kh*kw), row (n, oh, ow), column (c, a, b) -- the layout the
// generic path builds, so the GEMMs are shared.

template <typename T>
__device__ void im2col(const T* x, T* cols, long long total, int N, int C, int H, int W, int G,
                       int Ho, int Wo, int kh, int kw, int sh, int sw, int pt, int pl, int dh, int dw) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    int Cg = C / G;
    long long K = (long long)Cg * kh * kw;
    long long rows = (long long)N * Ho * Wo;
    int col = i % K;
    long long r = (i / K) % rows;
    int g = i / (K * rows);
    int b = col % kw, a = (col / kw) % kh, c = col / (kw * kh);
    int ow = r % Wo, oh = (r / Wo) % Ho;
    long long n = r / ((long long)Wo * Ho);
    int h = oh * sh - pt + a * dh, w = ow * sw - pl + b * dw;
    T v = 0;
    if (h >= 0 && h < H && w >= 0 && w < W) v = x[((n * C + (long long)g * Cg + c) * H + h) * W + w];
    cols[i] = v;
}

// One thread per input element gathers every column entry that read it (deterministic).
template <typename T>
__device__ void col2im(const T* cols, T* gx, long long total, int N, int C, int H, int W, int G,
                       int Ho, int Wo, int kh, int kw, int sh, int sw, int pt, int pl, int dh, int dw) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= total) return;
    int w = i % W, h = (i / W) % H;
    int cc = (i / ((long long)W * H)) % C;
    long long n = i / ((long long)W * H * C);
    int Cg = C / G, g = cc / Cg, c = cc % Cg;
    long long K = (long long)Cg * kh * kw;
    long long rows = (long long)N * Ho * Wo;
    T acc = 0;
    for (int a = 0; a < kh; ++a) {
        int hh = h + pt - a * dh;
        if (hh < 0 || hh % sh) continue;
        int oh = hh / sh;
        if (oh >= Ho) continue;
        for (int b = 0; b < kw; ++b) {
            int ww = w + pl - b * dw;
            if (ww < 0 || ww % sw) continue;
            int ow = ww / sw;
            if (ow >= Wo) continue;
            long long r = (n * Ho + oh) * Wo + ow;
            acc += cols[((long long)g * rows + r) * K + ((long long)c * kh + a) * kw + b];
        }
    }
    gx[i] = acc;
}

#define IM2COL_KERNELS(T, S)                                                                        \
extern "C" __global__ void tinynet_im2col_fwd_##S(const T* x, T* cols, long long n, int N, int C,    \
        int H, int W, int G, int Ho, int Wo, int kh, int kw, int sh, int sw, int pt, int pl, int dh,  \
        int dw) { im2col<T>(x, cols, n, N, C, H, W, G, Ho, Wo, kh, kw, sh, sw, pt, pl, dh, dw); }    \
extern "C" __global__ void tinynet_col2im_bwd_##S(const T* cols, T* gx, long long n, int N, int C,   \
        int H, int W, int G, int Ho, int Wo, int kh, int kw, int sh, int sw, int pt, int pl, int dh,  \
        int dw) { col2im<T>(cols, gx, n, N, C, H, W, G, Ho, Wo, kh, kw, sh, sw, pt, pl, dh, dw); }

IM2COL_KERNELS(float, f32)
IM2COL_KERNELS(double, f64)
