"""Max, average and adaptive average pooling over NCHW batches.

Output size: ``H_out = floor((H + 2p - d(k-1) - 1) / s) + 1`` (``ceil`` with
``ceil_mode``, dropping a last window that would start in the right padding, as
PyTorch does). Max pooling keeps the arg-max of each window so backward sends the
gradient to exactly one input (PyTorch's rule). Adaptive average pooling uses the bins
``[floor(i*H/out), ceil((i+1)*H/out))`` written as two averaging matrices.
"""
import functools
import math
import numbers

import numpy

from .. import backend, determinism, parallel
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..kernels import cuda, gpu_ops
from ..tensor import Tensor
from . import unpool
from .cpu import pooling as cpu_pooling
from .util import check_int
from .window import check_4d, col2im_add, is_batch_last, pair, pool_out, running_max, window_slices, windows


class MaxPool2d(Op):
    """Max pooling as a loop over the kernel offsets: each offset is one strided slice of
    the (-inf padded) input folded into the running maximum. Backward walks the offsets
    in the same order and sends ``gy`` to the first input equal to its window's maximum
    (PyTorch's choice on ties), so nothing but the input and output is kept. When the
    windows do not overlap (stride >= window extent, the usual ``kernel == stride``), each
    offset's share is stored rather than added, and when they also tile the input exactly
    the gradient buffer is not zero-filled first: 1.3-1.5x faster on the 2-core CPU.
    Windows that tile a batch-last input take :class:`tinynet.ops.cpu.pooling.MaxPool2dTiles`."""
    name = "max_pool2d"

    def __init__(self, kernel, stride, padding, dilation, out):
        self.kernel, self.stride, self.padding, self.dilation, self.out = kernel, stride, padding, dilation, out

    def forward(self, xp, x):
        (kh, kw), (sh, sw), (ph, pw), (dh, dw), (ho, wo) = (self.kernel, self.stride, self.padding,
                                                            self.dilation, self.out)
        n, c, h, w = x.shape
        extra_h = max(0, (ho - 1) * sh + dh * (kh - 1) + 1 - (h + 2 * ph))
        extra_w = max(0, (wo - 1) * sw + dw * (kw - 1) + 1 - (w + 2 * pw))
        if ph or pw or extra_h or extra_w:
            x = xp.pad(x, ((0, 0), (0, 0), (ph, ph + extra_h), (pw, pw + extra_w)),
                       constant_values=-numpy.inf)
        slices = window_slices(self.kernel, self.stride, self.dilation, self.out)
        y = (xp.empty((c, ho, wo, n), dtype=x.dtype).transpose(3, 0, 1, 2) if is_batch_last(x)
             else xp.empty((n, c, ho, wo), dtype=x.dtype))                  # the input's layout
        groups = parallel.ranges(c, x.nbytes, xp)                            # channel groups

        def pool(i):  # channels [lo, hi): running maximum over the window offsets
            lo, hi = groups[i]
            running_max(xp, x[:, lo:hi], y[:, lo:hi], slices)

        parallel.parallel_for(len(groups), pool, xp)
        if self.needs_input_grad[0]:
            self.save_for_backward(x, y)
        self.in_hw = (h, w)
        return y

    def backward(self, xp, gy):
        x, y = self.saved
        (h, w), (ph, pw) = self.in_hw, self.padding
        overlap, tiles = self._coverage(x.shape)
        gpad = xp.empty_like(x, dtype=gy.dtype)
        slices = window_slices(self.kernel, self.stride, self.dilation, self.out)
        groups = parallel.ranges(x.shape[1], x.nbytes, xp)                   # channel groups

        def scatter(i):  # channels [lo, hi)
            lo, hi = groups[i]
            xs, ys, gs, g = x[:, lo:hi], y[:, lo:hi], gy[:, lo:hi], gpad[:, lo:hi]
            if not tiles:  # windows that tile the input write every element: no zero fill
                g[...] = 0
            taken = None
            for sl in slices:
                hit = xs[sl] == ys
                if taken is None:
                    taken = hit
                else:
                    xp.greater(hit, taken, out=hit)  # hit and not taken yet, without a temporary
                    taken |= hit
                if overlap:
                    g[sl] += gs * hit
                else:  # each input is in at most one window: a plain (cheaper) strided store
                    g[sl] = gs * hit

        parallel.parallel_for(len(groups), scatter, xp)
        return (gpad[:, :, ph:ph + h, pw:pw + w],)

    def _coverage(self, padded_shape):
        """(windows overlap, windows tile the padded input exactly) for this configuration."""
        dims = list(zip(self.kernel, self.stride, self.dilation, self.out, padded_shape[2:]))
        overlap = any(k > 1 and s < d * (k - 1) + 1 for k, s, d, o, size in dims)
        tiles = all(d == 1 and s == k and o * k == size for k, s, d, o, size in dims)
        return overlap, tiles

    bf16_kernel_gpu = True  # tinynet_max_pool2d_*_bf16 (pool.cu)

    def forward_gpu(self, xp, x):
        if not cuda.supported(x, half=True):  # float16 too (autocast keeps pooling in the input's dtype)
            self.gpu_path = False
            return self.forward(xp, x)
        y, argmax = gpu_ops.max_pool2d_fwd(x, self.kernel, self.stride, self.padding, self.dilation, self.out)
        self.save_for_backward(argmax)
        self.in_shape, self.dtype = x.shape, x.dtype
        return y

    def backward_gpu(self, xp, gy):
        (argmax,) = self.saved
        return (gpu_ops.max_pool2d_bwd(gy.astype(self.dtype, copy=False), argmax, self.in_shape, self.kernel,
                                       self.stride, self.padding, self.dilation),)


class AvgPool2d(Op):
    name = "avg_pool2d"

    def __init__(self, kernel, stride, padding, out, divisor, count_include_pad, divisor_override):
        self.kernel, self.stride, self.padding, self.out, self.divisor = kernel, stride, padding, out, divisor
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward_gpu(self, xp, x):
        overlap = any(k > s for k, s in zip(self.kernel, self.stride))  # the kernel's backward adds atomically
        if not cuda.supported(x) or (overlap and determinism.are_deterministic_algorithms_enabled()):
            self.gpu_path = False
            return self.forward(xp, x)
        self.in_shape = x.shape
        return gpu_ops.avg_pool2d_fwd(x, self.kernel, self.stride, self.padding, self.out,
                                      self.count_include_pad, self.divisor_override)

    def backward_gpu(self, xp, gy):
        return (gpu_ops.avg_pool2d_bwd(gy, self.in_shape, self.kernel, self.stride, self.padding,
                                       self.count_include_pad, self.divisor_override),)

    def forward(self, xp, x):
        (kh, kw), (sh, sw), (ph, pw), (ho, wo) = self.kernel, self.stride, self.padding, self.out
        n, c, h, w = x.shape
        extra_h = max(0, (ho - 1) * sh + kh - (h + 2 * ph))
        extra_w = max(0, (wo - 1) * sw + kw - (w + 2 * pw))
        x = xp.pad(x, ((0, 0), (0, 0), (ph, ph + extra_h), (pw, pw + extra_w)))
        win = windows(xp, x, kh, kw, sh, sw, 1, 1, ho, wo)
        div = xp.asarray(self.divisor, dtype=x.dtype)
        self.save_for_backward(div)
        self.pshape, self.in_hw = x.shape, (h, w)
        return win.sum(axis=(4, 5)) / div

    def backward(self, xp, gy):
        (div,) = self.saved
        pshape, (h, w) = self.pshape, self.in_hw
        (kh, kw), (sh, sw), (ph, pw) = self.kernel, self.stride, self.padding
        g = gy / div
        cols = xp.broadcast_to(g[:, :, None, None], g.shape[:2] + (kh, kw) + g.shape[2:])
        gpad = xp.zeros(pshape, dtype=gy.dtype)
        col2im_add(gpad, cols, sh, sw, 1, 1)
        return (gpad[:, :, ph:ph + h, pw:pw + w],)


class AdaptiveAvgPool2d(Op):
    """``A_h x A_w^T`` with the two averaging matrices; backward ``A_h^T gy A_w``."""
    name = "adaptive_avg_pool2d"
    twice_differentiable = True
    gpu_saves_generic = True

    def forward(self, xp, x, ah, aw):
        self.save_for_backward(ah, aw)
        return ah @ x @ aw.T

    def backward(self, xp, gy):
        ah, aw = self.saved
        return xp.swapaxes(ah, 0, 1) @ gy @ aw, None, None


def _pool_args(op, input, kernel_size, stride, padding, dilation):
    check_4d(op, "input", input, "(N, C, H, W)")
    return _pool_params(op, kernel_size, stride, padding, dilation)


def _pool_params(op, kernel_size, stride, padding, dilation):
    k = pair(op, "kernel_size", kernel_size)
    s = k if stride is None or isinstance(stride, (tuple, list)) and not stride else pair(op, "stride", stride)
    p = pair(op, "padding", padding)
    d = pair(op, "dilation", dilation)
    if min(k) < 1 or min(s) < 1 or min(d) < 1:
        raise ArgumentError(f"{op}: kernel_size, stride and dilation must be >= 1, got {k}, {s}, {d}")
    if p[0] > k[0] // 2 or p[1] > k[1] // 2 or min(p) < 0:
        raise ArgumentError(f"{op}: padding must be between 0 and half the kernel size {k}, got {p}")
    return k, s, p, d


def _plain(v):
    """An int or a pair of ints, nothing that compares equal to one (bools, floats, lists)."""
    return type(v) is int or (type(v) is tuple and len(v) == 2 and type(v[0]) is int and type(v[1]) is int)


@functools.lru_cache(maxsize=512)
def _max_pool_geometry(kernel_size, stride, padding, dilation, ceil_mode, h, w):
    """``(kernel, stride, padding, dilation, (H_out, W_out))`` of max_pool2d over an (H, W)
    plane, checked (the errors of :func:`_pool_params` and ``pool_out``): each module's
    arguments are parsed once, not at every call (errors are not cached)."""
    k, s, p, d = _pool_params("max_pool2d", kernel_size, stride, padding, dilation)
    return k, s, p, d, tuple(pool_out("max_pool2d", (h, w)[i], k[i], s[i], p[i], d[i], ceil_mode) for i in range(2))


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """2-D max pooling.

    Args:
        input: float (N, C, H, W).
        kernel_size: int or pair. stride: int or pair, default ``kernel_size``.
        padding: int or pair, implicit -inf padding, at most half the kernel. Default 0.
        dilation: int or pair. Default 1. ceil_mode (bool): round the output size up.

        return_indices (bool): also return the int64 flat index ``h * W + w`` of each
            window's maximum in its input plane (``nn.MaxUnpool2d``'s input). Default False.

    Returns:
        Tensor (N, C, H_out, W_out); with ``return_indices`` a pair (values, indices).

    Raises:
        ShapeError: input not 4-D or too small. ArgumentError: bad kernel/stride/padding.
    """
    check_4d("max_pool2d", "input", input, "(N, C, H, W)")
    x = input.array
    h, w = x.shape[2:]
    if _plain(kernel_size) and (stride is None or _plain(stride)) and _plain(padding) and _plain(dilation) \
            and type(ceil_mode) is bool:  # a module's own arguments: the checked geometry from the cache
        k, s, p, d, out = _max_pool_geometry(kernel_size, stride, padding, dilation, ceil_mode, h, w)
    else:
        k, s, p, d, out = _max_pool_geometry.__wrapped__(kernel_size, stride, padding, dilation, ceil_mode, h, w)
    if not backend.is_gpu_array(x) and cpu_pooling.tiles_batch_last(x, k, s, p, d, out):
        y = cpu_pooling.MaxPool2dTiles(k, s, p, d, out).apply(input)
    else:
        y = MaxPool2d(k, s, p, d, out).apply(input)
    if not return_indices:
        return y
    return y, Tensor._wrap(unpool.max_pool2d_indices(x, k, s, p, d, out))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-D average pooling.

    Args:
        input: float (N, C, H, W).
        kernel_size, stride (default ``kernel_size``), padding: int or pair.
        ceil_mode (bool): round the output size up. Default False.
        count_include_pad (bool): zero padding counts in the divisor. Default True.
        divisor_override (int, optional): divide every window's sum by this instead.

    Returns:
        Tensor (N, C, H_out, W_out).
    """
    k, s, p, _ = _pool_args("avg_pool2d", input, kernel_size, stride, padding, 1)
    if divisor_override is not None and check_int("avg_pool2d", "divisor_override", divisor_override) == 0:
        raise ArgumentError("avg_pool2d: divisor_override must not be zero")
    h, w = input.shape[2:]
    out = tuple(pool_out("avg_pool2d", (h, w)[i], k[i], s[i], p[i], 1, ceil_mode) for i in range(2))
    sizes = []
    for i, size in enumerate((h, w)):
        start = numpy.arange(out[i]) * s[i] - p[i]
        end = numpy.minimum(start + k[i], size + p[i])
        if not count_include_pad:
            start, end = numpy.maximum(start, 0), numpy.minimum(end, size)
        sizes.append(end - start)
    div = numpy.outer(sizes[0], sizes[1]) if divisor_override is None else \
        numpy.full(out, float(divisor_override))
    return AvgPool2d(k, s, p, out, div, count_include_pad, divisor_override).apply(input)


def _adaptive_matrix(size, out):
    m = numpy.zeros((out, size))
    for i in range(out):
        lo, hi = (i * size) // out, math.ceil((i + 1) * size / out)
        m[i, lo:hi] = 1.0 / (hi - lo)
    return m


def adaptive_avg_pool2d(input, output_size):
    """Average pooling to a fixed output size (1 gives global average pooling).

    Args:
        input: float (N, C, H, W).
        output_size: int or (h, w); ``None`` in a pair keeps that input size.

    Returns:
        Tensor (N, C, h, w).
    """
    check_4d("adaptive_avg_pool2d", "input", input, "(N, C, H, W)")
    wanted = output_size if isinstance(output_size, (tuple, list)) else (output_size, output_size)
    if len(wanted) != 2 or any(v is not None and (isinstance(v, bool) or not isinstance(v, numbers.Integral))
                               for v in wanted):
        raise ArgumentTypeError(f"adaptive_avg_pool2d: output_size must be an int or a pair of ints (or None), "
                                f"got {output_size!r}")
    oh, ow = (input.shape[2 + i] if v is None else v for i, v in enumerate(wanted))
    if oh < 1 or ow < 1:
        raise ArgumentError(f"adaptive_avg_pool2d: output_size must be >= 1, got {output_size}")
    if min(input.shape[2:]) < 1:
        raise ShapeError(f"adaptive_avg_pool2d: expected input with non-zero height and width, got shape "
                         f"{input.shape}")
    xp = backend.array_module(input.array)
    ah = xp.asarray(_adaptive_matrix(input.shape[2], oh), dtype=input.dtype)
    aw = xp.asarray(_adaptive_matrix(input.shape[3], ow), dtype=input.dtype)
    return AdaptiveAvgPool2d().apply(input, ah, aw)
