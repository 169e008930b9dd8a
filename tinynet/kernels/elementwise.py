"""Element-wise GPU kernels: activations, fused bias + ReLU, optimizer updates.

Each is a named ``cupy.ElementwiseKernel`` built once (see :func:`cuda.elementwise`).
"""
from . import cuda

_GELU_PRE = """
template <typename T> __device__ T gelu_cdf(T x) { return (T)0.5 * ((T)1 + erf(x * (T)0.70710678118654752440)); }
template <typename T> __device__ T gelu_pdf(T x) { return exp((T)-0.5 * x * x) * (T)0.39894228040143267794; }
template <typename T> __device__ T gelu_tanh_inner(T x) { return (T)0.79788456080286535588 * (x + (T)0.044715 * x * x * x); }
"""


def relu_fwd(x):
    return cuda.elementwise("T x", "T y", "y = x > (T)0 ? x : (T)0", "tinynet_relu_fwd")(x)


def relu_bwd(y, gy):
    return cuda.elementwise("T y, T gy", "T gx", "gx = y > (T)0 ? gy : (T)0", "tinynet_relu_bwd")(y, gy)


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
    """Input gradient (relu mask) and bias gradient (a reduction over all dims but 1)."""
    gx = relu_bwd(y, gy)
    axes = (0,) + tuple(range(2, gx.ndim))
    gb = cuda.reduction("T g", "T gb", "g", "a + b", "gb = a", "0", "tinynet_bias_relu_bwd_db")(gx, axis=axes)
    return gx, gb


def sgd_update(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov, first):
    """One fused SGD step, in place on ``p`` (and the momentum buffer ``buf``)."""
    t = p.dtype
    if buf is None:
        cuda.elementwise("T g, T lr, T wd", "T p", "p -= lr * (g + wd * p)", "tinynet_sgd_fwd")(
            grad, cuda.scalar(t, lr), cuda.scalar(t, weight_decay), p)
        return
    op = ("T d = g + wd * p;"
          "buf = first ? d : mom * buf + ((T)1 - damp) * d;"
          "p -= lr * (nesterov ? d + mom * buf : buf)")
    cuda.elementwise("T g, T lr, T mom, T damp, T wd, bool nesterov, bool first", "T p, T buf", op,
                     "tinynet_sgd_momentum_fwd")(
        grad, cuda.scalar(t, lr), cuda.scalar(t, momentum), cuda.scalar(t, dampening),
        cuda.scalar(t, weight_decay), bool(nesterov), bool(first), p, buf)


def adam_update(p, grad, m, v, lr, b1, b2, eps, weight_decay, decoupled, bc1, bc2):
    """One fused Adam/AdamW step, in place on ``p``, ``m`` and ``v``."""
    t = p.dtype
    op = ("T gg = decoupled ? g : g + wd * p;"
          "if (decoupled) p *= (T)1 - lr * wd;"
          "m = b1 * m + ((T)1 - b1) * gg;"
          "v = b2 * v + ((T)1 - b2) * gg * gg;"
          "p -= (lr / bc1) * m / (sqrt(v) / sqrt_bc2 + eps)")
    cuda.elementwise("T g, T lr, T b1, T b2, T eps, T wd, bool decoupled, T bc1, T sqrt_bc2",
                     "T p, T m, T v", op, "tinynet_adam_fwd")(
        grad, cuda.scalar(t, lr), cuda.scalar(t, b1), cuda.scalar(t, b2), cuda.scalar(t, eps),
        cuda.scalar(t, weight_decay), bool(decoupled), cuda.scalar(t, bc1), cuda.scalar(t, bc2 ** 0.5),
        p, m, v)
