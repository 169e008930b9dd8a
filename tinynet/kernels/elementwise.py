"""Element-wise GPU kernels: LeakyReLU, GELU, the fused bias + ReLU forward and the
in-order ``add.at`` of deterministic mode.

Each is a named ``cupy.ElementwiseKernel`` built once (see :func:`cuda.elementwise`), except
GELU's, which are ``gelu.cu``'s vector kernels.
"""
from .. import backend
from . import cuda


def leaky_relu_fwd(x, slope):
    return cuda.elementwise("T x, T s", "T y", "y = x > (T)0 ? x : x * s", "tinynet_leaky_relu_fwd")(
        x, cuda.scalar(x.dtype, slope))


def leaky_relu_bwd(x, gy, slope):
    return cuda.elementwise("T x, T gy, T s", "T gx", "gx = x > (T)0 ? gy : gy * s",
                            "tinynet_leaky_relu_bwd")(x, gy, cuda.scalar(x.dtype, slope))


def gelu_fwd(x, approximate):
    """GELU of ``x`` (float16/bfloat16 computed in float32, float32/float64 in their own
    precision) through ``gelu.cu``: one 16-byte vector a thread, ``x`` made contiguous."""
    cp = backend.cupy
    x = x if x._c_contiguous else cp.ascontiguousarray(x)  # (ascontiguousarray makes a 0-d array 1-d)
    y = cp.empty(x.shape, dtype=x.dtype)
    cuda.launch(cuda.kernel("gelu.cu", "tinynet_gelu_fwd", x.dtype), -(-x.size // (16 // x.dtype.itemsize)),
                (x, y, cuda.i64(x.size), cuda.i32(approximate == "tanh")))
    return y


def gelu_bwd(x, gy, approximate):
    """The gradient of :func:`gelu_fwd` at ``x`` times ``gy`` (same shape and dtype), one launch."""
    cp = backend.cupy
    x = x if x._c_contiguous else cp.ascontiguousarray(x)  # (ascontiguousarray makes a 0-d array 1-d)
    gy = gy if gy._c_contiguous else cp.ascontiguousarray(gy)
    gx = cp.empty(x.shape, dtype=x.dtype)
    cuda.launch(cuda.kernel("gelu.cu", "tinynet_gelu_bwd", x.dtype), -(-x.size // (16 // x.dtype.itemsize)),
                (x, gy, gx, cuda.i64(x.size), cuda.i32(approximate == "tanh")))
    return gx


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
