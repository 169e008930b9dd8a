// Pointwise math of the LSTM and GRU cells (formulas: tinynet/ops/rnn.py), one thread per
// (sample n, unit j) of the (N, H) state. Gate blocks lie side by side in each row of the
// (N, G*H) pre-activations, in PyTorch's order: LSTM i, f, g, o; GRU r, z, n. Forward
// writes exactly what the generic forward saves, so either backward can read it.

template <typename T>
__device__ __forceinline__ T sigmoid(T a) {  // (tanh(a/2) + 1) / 2, tinynet's formula
    return (tanh(a * (T)0.5) + (T)1) * (T)0.5;
}

// LSTM forward: acts (N, 4H) = [sigmoid(i), sigmoid(f), tanh(g), sigmoid(o)] of xg + hg,
// c' = f * c + i * g, tc = tanh(c'), h' = o * tc.
template <typename T>
__device__ void lstm_forward(const T* xg, const T* hg, const T* c, T* acts, T* tc, T* h_next,
                             T* c_next, long long n, int H) {
    long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= n) return;
    long long row = e / H, b = row * 4 * H + e % H;  // gate i of this unit; f, g, o follow at +H
    T i = sigmoid(xg[b] + hg[b]);
    T f = sigmoid(xg[b + H] + hg[b + H]);
    T g = tanh(xg[b + 2 * H] + hg[b + 2 * H]);
    T o = sigmoid(xg[b + 3 * H] + hg[b + 3 * H]);
    acts[b] = i;
    acts[b + H] = f;
    acts[b + 2 * H] = g;
    acts[b + 3 * H] = o;
    T cn = f * c[e] + i * g;
    T t = tanh(cn);
    c_next[e] = cn;
    tc[e] = t;
    h_next[e] = o * t;
}

// LSTM backward from dh', dc': dc = dc' + dh' * o * (1 - tc^2);
// dgates = [dc g i(1-i), dc c f(1-f), dc i (1-g^2), dh' tc o(1-o)] (the same for xg and hg),
// dc_prev = dc * f. dgates and dc_prev may be null.
template <typename T>
__device__ void lstm_backward(const T* gh, const T* gc, const T* acts, const T* tc, const T* c,
                              T* dgates, T* dc_prev, long long n, int H) {
    long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= n) return;
    long long row = e / H, b = row * 4 * H + e % H;
    T i = acts[b], f = acts[b + H], g = acts[b + 2 * H], o = acts[b + 3 * H];
    T t = tc[e];
    T dc = gc[e] + gh[e] * o * ((T)1 - t * t);
    if (dgates) {
        dgates[b] = dc * g * i * ((T)1 - i);
        dgates[b + H] = dc * c[e] * f * ((T)1 - f);
        dgates[b + 2 * H] = dc * i * ((T)1 - g * g);
        dgates[b + 3 * H] = gh[e] * t * o * ((T)1 - o);
    }
    if (dc_prev) dc_prev[e] = dc * f;
}

// GRU forward: r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z); n = tanh(x_n + r * h_n);
// h' = (1 - z) * n + z * h, written (h - n) * z + n. Saves rz (N, 2H) and n (N, H).
template <typename T>
__device__ void gru_forward(const T* xg, const T* hg, const T* h, T* rz, T* n_out, T* h_next,
                            long long n, int H) {
    long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= n) return;
    long long row = e / H, j = e % H, b3 = row * 3 * H + j, b2 = row * 2 * H + j;
    T r = sigmoid(xg[b3] + hg[b3]);
    T z = sigmoid(xg[b3 + H] + hg[b3 + H]);
    T nn = tanh(xg[b3 + 2 * H] + r * hg[b3 + 2 * H]);
    rz[b2] = r;
    rz[b2 + H] = z;
    n_out[e] = nn;
    h_next[e] = (h[e] - nn) * z + nn;
}

// GRU backward from dh': dn = dh' (1-z)(1-n^2), dr = dn h_n r(1-r), dz = dh' (h-n) z(1-z);
// dxg = [dr, dz, dn], dhg = [dr, dz, dn r], dh = dh' z. Each output may be null.
template <typename T>
__device__ void gru_backward(const T* gy, const T* rz, const T* n_in, const T* hg, const T* h,
                             T* dxg, T* dhg, T* dh, long long n, int H) {
    long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e >= n) return;
    long long row = e / H, j = e % H, b3 = row * 3 * H + j, b2 = row * 2 * H + j;
    T r = rz[b2], z = rz[b2 + H], nn = n_in[e], g = gy[e];
    T dn = g * ((T)1 - z) * ((T)1 - nn * nn);
    T dr = dn * hg[b3 + 2 * H] * r * ((T)1 - r);
    T dz = g * (h[e] - nn) * z * ((T)1 - z);
    if (dxg) {
        dxg[b3] = dr;
        dxg[b3 + H] = dz;
        dxg[b3 + 2 * H] = dn;
    }
    if (dhg) {
        dhg[b3] = dr;
        dhg[b3 + H] = dz;
        dhg[b3 + 2 * H] = dn * r;
    }
    if (dh) dh[e] = g * z;
}

#define RNN_CELL_KERNELS(T, S)                                                                      \
extern "C" __global__ void tinynet_lstm_cell_fwd_##S(const T* xg, const T* hg, const T* c, T* acts,  \
        T* tc, T* h, T* cn, long long n, int H) { lstm_forward<T>(xg, hg, c, acts, tc, h, cn, n, H); } \
extern "C" __global__ void tinynet_lstm_cell_bwd_##S(const T* gh, const T* gc, const T* acts,        \
        const T* tc, const T* c, T* dgates, T* dc, long long n, int H) {                             \
    lstm_backward<T>(gh, gc, acts, tc, c, dgates, dc, n, H); }                                       \
extern "C" __global__ void tinynet_gru_cell_fwd_##S(const T* xg, const T* hg, const T* h, T* rz,     \
        T* nn, T* hn, long long n, int H) { gru_forward<T>(xg, hg, h, rz, nn, hn, n, H); }            \
extern "C" __global__ void tinynet_gru_cell_bwd_##S(const T* gy, const T* rz, const T* nn,           \
        const T* hg, const T* h, T* dxg, T* dhg, T* dh, long long n, int H) {                        \
    gru_backward<T>(gy, rz, nn, hg, h, dxg, dhg, dh, n, H); }

RNN_CELL_KERNELS(float, f32)
RNN_CELL_KERNELS(double, f64)
