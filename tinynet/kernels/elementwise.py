"""Element-wise GPU kernels: LeakyReLU, GELU, the fused bias + ReLU forward and the
in-order ``add.at`` of deterministic mode.

Each is a named ``cupy.ElementwiseKernel`` built once (see :func:`cuda.elementwise`).
"""
from .. import backend
from . import cuda

_GELU_PRE = """
template <typename T> __device__ T gelu_cdf(T x) { return (T)0.5 * ((T)1 + erf(x * (T)0.70710678118654752440)); }
template <typename T> __device__ T gelu_pdf(T x) { return exp((T)-0.5 * x * x) * (T)0.39894228040143267794; }
template <typename T> __device__ T gelu_tanh_inner(T x) {
    return (T)0.79788456080286535588 * (x + (T)0.044715 * x * x * x);
}
"""


def leaky_relu_fwd(x, slope):
    return cuda.elementwise("T x, T s", "T y", "y = x > (T)0 ? x : x * s", "tinynet_leaky_relu_fwd")(
        x, cuda.scalar(x.dtype, slope))


def leaky_relu_bwd(x, gy, slope):
    return cuda.elementwise("T x, T gy, T s", "T gx", "gx = x > (T)0 ? gy : gy * s",
                            "tinynet_leaky_relu_bwd")(x, gy, cuda.scalar(x.dtype, slope))


def _half(a):
    return a.dtype.itemsize == 2


def gelu_fwd(x, approximate):
    """GELU of contiguous ``x``: float16/bfloat16 through ``gelu.cu`` (float32 inside), float32/
    float64 through an element-wise kernel."""
    if _half(x):
        x = backend.cupy.ascontiguousarray(x)
        y = backend.cupy.empty(x.shape, dtype=x.dtype)
        cuda.launch(cuda.kernel("gelu.cu", "tinynet_gelu_fwd", x.dtype), -(-x.size // 4),
                    (x, y, cuda.i64(x.size), cuda.i32(approximate == "tanh")))
        return y
    if approximate == "tanh":
        return cuda.elementwise("T x", "T y", "y = (T)0.5 * x * ((T)1 + tanh(gelu_tanh_inner(x)))",
                                "tinynet_gelu_tanh_fwd", _GELU_PRE)(x)
    return cuda.elementwise("T x", "T y", "y = x * gelu_cdf(x)", "tinynet_gelu_fwd", _GELU_PRE)(x)


def gelu_bwd(x, gy, approximate):
    if _half(x):
        cp = backend.cupy
        x, gy = cp.ascontiguousarray(x), cp.ascontiguousarray(gy)
        gx = cp.empty(x.shape, dtype=x.dtype)
        cuda.launch(cuda.kernel("gelu.cu", "tinynet_gelu_bwd", x.dtype), -(-x.size // 4),
                    (x, gy, gx, cuda.i64(x.size), cuda.i32(approximate == "tanh")))
        return gx
    if approximate == "tanh":
        op = ("T t = tanh(gelu_tanh_inner(x));"
              "T d = (T)0.79788456080286535588 * ((T)1 + (T)3 * (T)0.044715 * x * x);"
              "gx = gy * ((T)0.5 * ((T)1 + t) + (T)0.5 * x * ((T)1 - t * t) * d)")
        return cuda.elementwise("T x, T gy", "T gx", op, "tinynet_gelu_tanh_bwd", _GELU_PRE)(x, gy)
    return cuda.elementwise("T x, T gy", "T gx", "gx = gy * (gelu_cdf(x) + x * gelu_pdf(x))",
                            "tinynet_gelu_bwd", _GELU_PRE)(x, gy)


def bias_relu_fwd(x, bias):
    """``relu(x + bias[c])`` with ``c`` the dim-1 index of (N, C, *) input, one pass."""
    inner = 1
    for n in x.shape[2:]:
        inner *= n
    op = "T v = x + b[(i / inner) % C]; y = v > (T)0 ? v : (T)0"
    return cuda.elementwise("T x, raw T b, int64 inner, int64 C", "T y", op, "tinynet_bias_relu_fwd")(
        x, bias, inner, x.shape[1])


def bias_relu_bwd(y, gy):
    """Input gradient (ReLU mask kernel) and bias gradient (per-channel reduction kernel)."""
    from . import gpu_ops
    gx = gpu_ops.relu_bwd(y, gy)
    return gx, gpu_ops.bias_grad(gx)


def add_at_in_order(dst, index, values):
    """``dst[index] += values`` (repeated targets accumulating) in NumPy's order, without
    atomics: the flat target positions are sorted stably, and one thread per distinct
    target adds its values one by one in their original order -- the same additions, in
    the same order, as NumPy's ``add.at``, so the result is the CPU's bit for bit."""
    cp = backend.cupy
    pos = cp.arange(dst.size, dtype=cp.int64).reshape(dst.shape)[index]  # flat target of each value
    vals = cp.ascontiguousarray(cp.broadcast_to(cp.asarray(values, dtype=dst.dtype), pos.shape)).ravel()
    pos = pos.ravel()
    if pos.size == 0:
        return
    order = cp.argsort(pos, kind="stable")
    pos, vals = pos[order], vals[order]
    starts = cp.flatnonzero(cp.concatenate([cp.ones(1, dtype=bool), pos[1:] != pos[:-1]]))
    ends = cp.concatenate([starts[1:], cp.array([pos.size], dtype=starts.dtype)])
    op = "long long p = pos[s]; T acc = dst[p]; for (long long j = s; j < e; ++j) acc += vals[j]; dst[p] = acc"
    flat = dst.reshape(-1) if dst.flags.c_contiguous else None
    target = flat if flat is not None else cp.ascontiguousarray(dst).reshape(-1)
    cuda.elementwise("int64 s, int64 e, raw T vals, raw int64 pos", "raw T dst", op, "tinynet_add_at_in_order")(
        starts, ends, vals, pos, target)
    if flat is None:
        dst[...] = target.reshape(dst.shape)
