"""Local response normalisation across channels (Krizhevsky, Sutskever & Hinton 2012,
"ImageNet Classification with Deep Convolutional Neural Networks", section 3.3), as
PyTorch's ``local_response_norm``. With the input seen as (N, C, R):

    S_c = sum_{j in W(c)} x_j^2,   D_c = k + alpha * S_c / n,   y_c = x_c / D_c^beta,

the window ``W(c)`` being the ``n`` channels ``c - n//2 .. c + (n-1)//2``, zero outside
``0..C-1`` (PyTorch's zero-padded average pool: the sum is always divided by ``n``).
Differentiating, channel ``i`` lies in the windows of ``j = i - (n-1)//2 .. i + n//2``:

    dx_i = g_i / D_i^beta - (2 alpha beta / n) * x_i * sum_j g_j x_j / D_j^(beta+1).

Forward saves the input and ``D``. The backward is written with functions the graph
namespace has, and a ``create_graph`` backward recomputes ``D`` from the input tensor, so
gradients of any order are exact. On the GPU (tinynet's kernels on) the forward is one
launch and the backward two (``kernels/local_response_norm.cu``), in float32/float64 and in
float16/bfloat16 with float32 arithmetic; the generic code builds the window sums from
``n`` shifted slices, which the unfold it replaced did with an (N, C, R, n) gradient.
"""
import numpy

from .. import backend
from ..autograd import Op
from ..errors import ArgumentError, ShapeError
from ..kernels import cuda
from ..tensor import Tensor
from .autocast import autocast_op
from .blas import matmul
from .util import check_float, check_int, is_graph


def _window_sum(xp, a, before, after):
    """``out[:, c] = sum of a[:, c - before .. c + after]`` over the channel axis of an
    (N, C, R) array or tensor, zero outside the channels (``before + after + 1`` slices)."""
    c = a.shape[1]
    if before or after:
        zero = xp.zeros_like(a[:, :1])
        a = xp.concatenate([zero] * before + [a] + [zero] * after, axis=1)
    out = a[:, 0:c]
    for o in range(1, before + after + 1):
        out = out + a[:, o:o + c]
    return out


class LocalResponseNorm(Op):
    """The normalisation of an (N, C, *) input seen as (N, C, R); see the module docstring."""
    name = "local_response_norm"
    twice_differentiable = True
    gpu_saves_generic = True  # the input as given and D of shape (N, C, R), as the generic code
    bf16_kernel_gpu = True

    def __init__(self, size, alpha, beta, k):
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def _d(self, xp, x3):
        """``D = k + alpha * S / n`` of the (N, C, R) input."""
        s = _window_sum(xp, x3 * x3, self.size // 2, (self.size - 1) // 2)
        return s / self.size * self.alpha + self.k

    def forward(self, xp, x):
        x3 = x.reshape(x.shape[0], x.shape[1], -1)
        d = self._d(xp, x3)
        if self.needs_input_grad[0]:
            self.save_for_backward(x, d)
        return (x3 / d ** self.beta).reshape(x.shape).astype(x.dtype, copy=False)

    def backward(self, xp, gy):
        x, d = self.saved
        x3 = x.reshape(x.shape[0], x.shape[1], -1)
        if is_graph(xp):  # D as a function of the input, so this can be differentiated
            d = self._d(xp, x3)
        g = gy.reshape(x3.shape)
        q = d ** self.beta
        t = _window_sum(xp, g * x3 / (q * d), (self.size - 1) // 2, self.size // 2)
        gx = (g / q - (2 * self.alpha * self.beta / self.size) * x3 * t).reshape(x.shape)
        return (gx if is_graph(xp) else gx.astype(x.dtype, copy=False),)

    # ---- GPU kernels (kernels/local_response_norm.cu) ----------------------------------------
    def _launch_args(self, xp, x):
        n, c = x.shape[0], x.shape[1]
        acc = xp.float64 if x.dtype == xp.float64 else xp.float32  # D and the arithmetic
        return (n, c, x.size // (n * c)), acc, (xp.int64(x.size), xp.int32(c), xp.int64(x.size // (n * c)),
                                                xp.int32(self.size // 2), xp.int32(self.size),
                                                cuda.scalar(acc, self.alpha), cuda.scalar(acc, self.beta),
                                                cuda.scalar(acc, self.k))

    def forward_gpu(self, xp, x):
        if not cuda.supported(x, half=True):
            self.gpu_path = False
            return self.forward(xp, x)
        shape3, acc, tail = self._launch_args(xp, x)
        y = xp.empty(x.shape, dtype=x.dtype)
        d = xp.empty(shape3, dtype=acc) if self.needs_input_grad[0] else None
        cuda.launch(cuda.kernel("local_response_norm.cu", "tinynet_lrn_fwd", x.dtype), x.size,
                    (xp.ascontiguousarray(x), y, d) + tail)
        if d is not None:  # the input as given: a create_graph backward maps it to the input tensor
            self.save_for_backward(x, d)
        return y

    def backward_gpu(self, xp, gy):
        x, d = self.saved
        shape3, acc, tail = self._launch_args(xp, x)
        x, gy = xp.ascontiguousarray(x), xp.ascontiguousarray(gy.astype(x.dtype, copy=False))
        t = xp.empty(shape3, dtype=acc)  # g_j x_j / D_j^(beta+1)
        cuda.launch(cuda.kernel("local_response_norm.cu", "tinynet_lrn_bwd_terms", x.dtype), x.size,
                    (x, gy, d, t) + tail)
        gx = xp.empty(x.shape, dtype=x.dtype)
        cuda.launch(cuda.kernel("local_response_norm.cu", "tinynet_lrn_bwd", x.dtype), x.size,
                    (x, gy, d, t, gx) + tail)
        return (gx,)


@autocast_op
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Normalise each channel by the squares of its ``size`` neighbouring channels.

    ``y_c = x_c / (k + alpha / size * sum_{c' in window(c)} x_{c'}^2) ** beta`` (module
    docstring); the window is zero-padded at the edges, ``size // 2`` channels before ``c``
    and ``(size - 1) // 2`` after, and the sum is divided by ``size`` everywhere.

    Args:
        input: float (N, C, *) with at least 3 dims.
        size (int): channels in the window, >= 1.
        alpha, beta, k (float): the formula's constants; defaults 1e-4, 0.75, 1.0.

    Returns:
        Tensor of the input's shape and dtype. Under CUDA autocast the input is cast to
        float32 and the result is float32, as PyTorch's (whose decomposition takes ``pow``,
        an autocast float32 op); PyTorch squares and sums float16 inputs in float16 first.

    Raises:
        ShapeError: fewer than 3 dims.
        ArgumentError: ``size`` < 1.
        DTypeError: an integer input.
    """
    check_float("local_response_norm", "input", input)
    if input.ndim < 3:
        raise ShapeError(f"local_response_norm: expected input with 3 or more dims (N, C, *), got {input.shape}")
    size = check_int("local_response_norm", "size", size)
    if size < 1:
        raise ArgumentError(f"local_response_norm: size must be >= 1, got {size}")
    if input.numel() == 0:
        return input
    return LocalResponseNorm(size, float(alpha), float(beta), float(k)).apply(input)


def _cross_map_window(channels, size):
    """The (C, C) 0/1 matrix of the channels each channel's sum covers in PyTorch's legacy
    ``CrossMapLRN2d`` (its running-window recurrence: the first channel is never dropped
    from the running sum, so late channels' windows keep it)."""
    pre = int((size - 1) / 2 + 1)
    m = numpy.zeros((channels, channels))
    if channels == 0:
        return m
    m[0, :min(pre, channels)] = 1
    for c in range(1, channels):
        m[c] = m[c - 1]
        if c < channels - pre + 1:
            m[c, c + pre - 1] += 1
        if c > pre:
            m[c, c - pre] -= 1
    return m


def cross_map_lrn2d(input, size, alpha=1e-4, beta=0.75, k=1):
    """PyTorch's ``nn.CrossMapLRN2d`` forward: ``y = x * (k + alpha/size * S)^-beta`` with
    ``S_c`` the sum of squares over the channels PyTorch's legacy recurrence gives channel
    ``c`` (:func:`_cross_map_window`), composed of differentiable ops. Its gradient is the
    exact derivative of this forward (PyTorch's hand-written backward assumes a symmetric
    window instead, and so differs from it, and fails for ``size=1``).

    Raises:
        ShapeError: input not 4-D. ArgumentTypeError / DTypeError: a non-float input, a
        non-int size. ArgumentError: ``size < 1``.
    """
    op = "CrossMapLRN2d"
    check_float(op, "input", input)
    if input.ndim != 4:
        raise ShapeError(f"{op}: Expected input to be 4D, got {input.ndim}D instead.")
    size = check_int(op, "size", size, 1)
    n, c, h, w = input.shape
    xp = backend.array_module(input.array)
    window = Tensor._wrap(xp.asarray(_cross_map_window(c, size), dtype=input.array.dtype))
    sums = matmul(window, (input * input).reshape(n, c, h * w)).reshape(n, c, h, w)
    return input * (sums * (alpha / size) + k) ** (-beta)
