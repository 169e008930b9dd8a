"""Element-wise GPU kernels: LeakyReLU, GELU and the fused bias + ReLU forward.

Each is a named ``cupy.ElementwiseKernel`` built once (see :func:`cuda.elementwise`).
"""
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


def gelu_fwd(x, approximate):
    if approximate == "tanh":
        return cuda.elementwise("T x", "T y", "y = (T)0.5 * x * ((T)1 + tanh(gelu_tanh_inner(x)))",
                                "tinynet_gelu_tanh_fwd", _GELU_PRE)(x)
    return cuda.elementwise("T x", "T y", "y = x * gelu_cdf(x)", "tinynet_gelu_fwd", _GELU_PRE)(x)


def gelu_bwd(x, gy, approximate):
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
