"""Layer, group and instance normalisation.

Layer normalisation (Ba, Kiros & Hinton, 2016, arXiv:1607.06450) normalises each sample
over its last ``k`` dims (the ``normalized_shape``), with ``N`` values per sample:

    mean = sum(x) / N,   var = sum((x - mean)^2) / N   (biased),
    xhat = (x - mean) / sqrt(var + eps),   y = weight * xhat + bias.

Its closed-form backward, with ``g = dy * weight`` and means over the normalised dims:

    dx = (g - mean(g) - xhat * mean(g * xhat)) / sqrt(var + eps),
    dweight = sum over the leading dims of dy * xhat,   dbias = sum of dy.

Group normalisation (Wu & He, 2018, arXiv:1803.08494) is layer normalisation of each
``(sample, group of C/G channels)`` block, followed by a per-channel affine map; instance
normalisation (Ulyanov et al., 2016, arXiv:1607.08022) the same with one channel per
group, optionally tracking running statistics like batch normalisation.

On the GPU (float32/float64 CuPy arrays, kernels enabled) layer normalisation runs as
tinynet's kernels (``kernels/layer_norm.cu``): one launch for the forward, which writes
``y`` and the per-row mean and ``rstd`` the generic code saves; for the backward one launch
for ``dx`` (both row sums and the formula above) and two small deterministic ones for
``dweight``/``dbias`` (per-chunk column sums, then their sum). Group and instance
normalisation reach the same kernels through :class:`LayerNorm`.
"""
import math
import numbers

import numpy

from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..kernels import cuda
from ..tensor import Tensor
from .autocast import autocast_op
from .cpu import layer_norm as cpu_ln
from .normalization import batch_norm
from .shape import reshape
from .util import check_float, check_int, is_graph


def _stats(xp, x, axes, eps):
    """Mean, centred input and ``1 / sqrt(var + eps)`` over ``axes`` (kept as size-1 dims),
    on arrays or on tensors (the graph namespace); two passes for an accurate variance."""
    mean = xp.mean(x, axis=axes, keepdims=True)
    xc = x - mean
    rstd = 1 / xp.sqrt(xp.mean(xc * xc, axis=axes, keepdims=True) + eps)
    return mean, xc, rstd


class LayerNorm(Op):
    """Normalise over the last ``k`` dims, then ``* weight + bias`` (each optional, of the
    normalised shape). Forward saves the input, the mean and ``rstd = 1/sqrt(var + eps)``
    (PyTorch's choice: the input is kept alive by the graph anyway, and ``xhat`` is
    recomputed in one pass). ``forward_gpu`` saves the same four values (the input and
    weight as given, the statistics of the generic shape), so ``gpu_saves_generic`` holds.

    The backward is written with the graph namespace's functions, and in a ``create_graph``
    backward the statistics are recomputed from the input tensor, so second derivatives
    are exact.
    """
    name = "layer_norm"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, k, eps):
        self.k, self.eps = k, eps

    def _axes(self, ndim):
        return tuple(range(ndim - self.k, ndim)), tuple(range(ndim - self.k))

    def forward(self, xp, x, weight, bias):
        if cpu_ln.takes(xp, x, weight, bias):  # the CPU's row code
            m, n = self._rows(x)
            flat = lambda a: None if a is None else a.reshape(n)  # noqa: E731
            y, mean, rstd = cpu_ln.forward(numpy.ascontiguousarray(x).reshape(m, n), flat(weight), flat(bias),
                                           self.eps)
            if True in self.needs_input_grad:  # the generic code's saved values and shapes
                stats = x.shape[:x.ndim - self.k] + (1,) * self.k
                self.save_for_backward(x, mean.reshape(stats), rstd.reshape(stats), weight)
            return y.reshape(x.shape)
        axes, _ = self._axes(x.ndim)
        mean, xc, rstd = _stats(xp, x, axes, self.eps)
        y = xc * rstd
        if weight is not None:
            y = y * weight
        if bias is not None:
            y = y + bias
        if True in self.needs_input_grad:
            self.save_for_backward(x, mean, rstd, weight)
        return y.astype(x.dtype, copy=False)

    def backward(self, xp, gy):
        x, mean, rstd, weight = self.saved
        if not is_graph(xp) and cpu_ln.takes(xp, x, gy, weight):
            m, n = self._rows(x)
            gx, gw, gb = cpu_ln.backward(numpy.ascontiguousarray(gy).reshape(m, n),
                                         numpy.ascontiguousarray(x).reshape(m, n), mean.reshape(m, 1),
                                         rstd.reshape(m, 1), None if weight is None else weight.reshape(n),
                                         self.needs_input_grad)
            shape = x.shape[x.ndim - self.k:]
            return (None if gx is None else gx.reshape(x.shape), None if gw is None else gw.reshape(shape),
                    None if gb is None else gb.reshape(shape))
        axes, lead = self._axes(x.ndim)
        if is_graph(xp):  # the statistics as functions of the input, so this can be differentiated
            mean, xc, rstd = _stats(xp, x, axes, self.eps)
            xhat = xc * rstd
        else:
            xhat = (x - mean) * rstd
        gx = gw = gb = None
        if self.needs_input_grad[0]:
            g = gy * weight if weight is not None else gy
            gx = (g - xp.mean(g, axis=axes, keepdims=True)
                  - xhat * xp.mean(g * xhat, axis=axes, keepdims=True)) * rstd
        if self.needs_input_grad[1]:
            gw = xp.sum(gy * xhat, axis=lead) if lead else gy * xhat
        if self.needs_input_grad[2]:
            gb = xp.sum(gy, axis=lead) if lead else gy
        return gx, gw, gb

    # ---- GPU kernels (kernels/layer_norm.cu) ------------------------------------------------
    def _rows(self, x):
        """(M rows, N values per row) of ``x`` seen as (M, N)."""
        n = math.prod(x.shape[x.ndim - self.k:])
        return x.size // n, n

    def forward_gpu(self, xp, x, weight, bias):
        params = [p for p in (weight, bias) if p is not None]
        if not cuda.supported(x, *params) or any(p.dtype != x.dtype for p in params) or x.size == 0:
            self.gpu_path = False  # float16, mixed dtypes, empty input: the generic code
            return self.forward(xp, x, weight, bias)
        m, n = self._rows(x)
        if n >= 2 ** 31:  # the kernels index a row with an int
            self.gpu_path = False
            return self.forward(xp, x, weight, bias)
        y = xp.empty(x.shape, dtype=x.dtype)
        stats_shape = x.shape[:x.ndim - self.k] + (1,) * self.k  # as the generic keepdims mean
        mean, rstd = xp.empty(stats_shape, dtype=x.dtype), xp.empty(stats_shape, dtype=x.dtype)
        threads, rows = _row_block(n)
        cuda.kernel("layer_norm.cu", "tinynet_layer_norm_fwd", x.dtype)(
            ((m + rows - 1) // rows,), (threads, rows),
            (xp.ascontiguousarray(x), _contiguous(xp, weight), _contiguous(xp, bias), y, mean, rstd,
             xp.int64(m), xp.int32(n), cuda.scalar(x.dtype, self.eps)))
        if True in self.needs_input_grad:  # x and weight as given: a create_graph backward maps them
            self.save_for_backward(x, mean, rstd, weight)
        return y

    def backward_gpu(self, xp, gy):
        x, mean, rstd, weight = self.saved
        if not cuda.supported(gy) or gy.dtype != x.dtype:
            return self.backward(xp, gy)
        m, n = self._rows(x)
        x, gy = xp.ascontiguousarray(x), xp.ascontiguousarray(gy)
        need = self.needs_input_grad
        gx = gw = gb = None
        if need[0]:
            gx = xp.empty(x.shape, dtype=x.dtype)
            threads, rows = _row_block(n)
            cuda.kernel("layer_norm.cu", "tinynet_layer_norm_bwd", x.dtype)(
                ((m + rows - 1) // rows,), (threads, rows),
                (x, gy, _contiguous(xp, weight), mean, rstd, gx, xp.int64(m), xp.int32(n)))
        if need[1] or need[2]:
            gw, gb = _param_grads(xp, x, gy, mean, rstd, m, n, need[1], need[2])
            shape = x.shape[x.ndim - self.k:]
            gw = gw.reshape(shape) if gw is not None else None
            gb = gb.reshape(shape) if gb is not None else None
        return gx, gw, gb


PARAM_BLOCKS = 512  # blocks the parameter-gradient stage aims for (an H100 has 132 SMs)


def _row_block(n):
    """(threads per row, rows per block) for rows of ``n`` values: about 8 values per
    thread, whole warps, at most 512 threads a row and 256 a block (8 rows at most)."""
    threads = min(512, 32 * max(1, -(-n // 256)))
    return threads, max(1, 256 // threads)


def _contiguous(xp, a):
    return None if a is None else xp.ascontiguousarray(a)


def _param_grads(xp, x, gy, mean, rstd, m, n, need_w, need_b):
    """``sum(gy * xhat)`` and ``sum(gy)`` over the M rows, each (N,) or None: a grid of
    (32-column tiles, parts) blocks writes per-part column sums, then one thread per
    column adds its parts in order (deterministic, no atomics)."""
    tiles = -(-n // 32)
    parts = max(1, min(-(-m // 32), -(-PARAM_BLOCKS // tiles)))  # at least 32 rows a part
    chunk = -(-m // parts)
    parts = -(-m // chunk)
    shape = (parts, n)
    gw = xp.empty(shape, dtype=x.dtype) if need_w else None
    gb = xp.empty(shape, dtype=x.dtype) if need_b else None
    cuda.kernel("layer_norm.cu", "tinynet_layer_norm_params_bwd", x.dtype)(
        (tiles, parts), (32, 8), (x, gy, mean, rstd, gw, gb, xp.int64(m), xp.int32(n), xp.int64(chunk)))
    if parts == 1:
        return (None if gw is None else gw[0]), (None if gb is None else gb[0])
    add = cuda.kernel("layer_norm.cu", "tinynet_layer_norm_sum_parts_bwd", x.dtype)
    out = []
    for part in (gw, gb):
        if part is not None:
            total = xp.empty(n, dtype=x.dtype)
            cuda.launch(add, n, (part, total, xp.int32(parts), xp.int32(n)))
            part = total
        out.append(part)
    return tuple(out)


def _shape_tuple(op, normalized_shape):
    if isinstance(normalized_shape, Tensor) or not isinstance(normalized_shape, (tuple, list)):
        raise ArgumentTypeError(f"{op}: normalized_shape must be a tuple or list of ints, got "
                                f"{type(normalized_shape).__name__}")
    for s in normalized_shape:  # plain ints >= 0 (the common case) need no conversion
        if type(s) is not int or s < 0:
            break
    else:
        if normalized_shape:
            return tuple(normalized_shape)
    shape = tuple(check_int(op, "normalized_shape", s, 0) for s in normalized_shape)
    if not shape:
        raise ArgumentError(f"{op}: expected normalized_shape to have at least one element, got ()")
    return shape


def _check_param(op, name, t, shape, x):
    if t is None:
        return
    check_float(op, name, t)
    if t.array.shape != tuple(shape):
        raise ShapeError(f"{op}: expected {name} of shape {tuple(shape)}, got {tuple(t.shape)}")
    if t.array.dtype != x.array.dtype:
        raise DTypeError(f"{op}: expected {name} of the input's dtype {x.dtype}, got {t.dtype}")


def _number(op, name, v):
    if type(v) is not float and (isinstance(v, bool) or not isinstance(v, numbers.Real)):
        raise ArgumentTypeError(f"{op}: {name} must be a number, got {type(v).__name__}")
    return float(v)


@autocast_op
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Layer normalisation over the last ``len(normalized_shape)`` dims.

    Args:
        input (Tensor): float, shape ``(*, *normalized_shape)``.
        normalized_shape (tuple or list of ints): the trailing shape normalised over (as
            in PyTorch, a bare int is refused here; ``nn.LayerNorm`` takes one).
        weight, bias (Tensor, optional): float, of shape ``normalized_shape`` and the input's dtype.
        eps (float): added to the variance. Default 1e-5.

    Returns:
        Tensor of the input's shape and dtype.

    Raises:
        ArgumentTypeError: ``normalized_shape`` is not a sequence of ints, or not Tensors.
        ArgumentError: an empty ``normalized_shape``.
        DTypeError: a non-float input, or parameters of another dtype.
        ShapeError: the input's trailing shape, or a parameter's shape, is not
            ``normalized_shape``.
    """
    check_float("layer_norm", "input", input)
    shape = _shape_tuple("layer_norm", normalized_shape)
    k = len(shape)
    have = input.array.shape
    if len(have) < k or have[len(have) - k:] != shape:
        raise ShapeError(f"layer_norm: given normalized_shape={shape}, expected input with shape "
                         f"(*, {', '.join(map(str, shape))}), got {tuple(input.shape)}")
    _check_param("layer_norm", "weight", weight, shape, input)
    _check_param("layer_norm", "bias", bias, shape, input)
    return LayerNorm(k, _number("layer_norm", "eps", eps)).apply(input, weight, bias)


def _affine(y, weight, bias):
    """``y * weight + bias`` with (C,) parameters broadcast along dim 1 of ``y``."""
    shape = (y.shape[1],) + (1,) * (y.ndim - 2)
    if weight is not None:
        y = y * reshape(weight, shape)
    if bias is not None:
        y = y + reshape(bias, shape)
    return y


def _channel_params(op, input, weight, bias):
    c = input.shape[1]
    for name, t in (("weight", weight), ("bias", bias)):
        _check_param(op, name, t, (c,), input)


def _normalize_blocks(input, blocks, eps):
    """Layer normalisation of ``input`` seen as ``(N, blocks, -1)`` over its last dim."""
    n = input.shape[0]
    per = int(numpy.prod(input.shape[1:], dtype=numpy.int64)) // blocks if blocks else 0
    y = LayerNorm(1, eps).apply(reshape(input, (n, blocks, per)), None, None)
    return reshape(y, input.shape)


@autocast_op
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Group normalisation: the C channels of each sample in ``num_groups`` groups, each
    group normalised over its channels and spatial positions, then a per-channel affine map.

    Args:
        input (Tensor): float, shape (N, C, *) with C divisible by ``num_groups``.
        num_groups (int): G >= 1.
        weight, bias (Tensor, optional): float (C,).
        eps (float): added to the variance. Default 1e-5.

    Returns:
        Tensor of the input's shape.

    Raises:
        ShapeError: fewer than 2 dims, C not divisible by G, or parameters not (C,).
        ArgumentError: ``num_groups < 1``. DTypeError / ArgumentTypeError: as :func:`layer_norm`.
    """
    check_float("group_norm", "input", input)
    g = check_int("group_norm", "num_groups", num_groups, 1)
    if input.ndim < 2:
        raise ShapeError(f"group_norm: expected input of shape (N, C, *) with at least 2 dims, got "
                         f"{tuple(input.shape)}")
    if input.shape[1] % g:
        raise ShapeError(f"group_norm: expected the number of channels to be divisible by num_groups, got "
                         f"input of shape {tuple(input.shape)} and num_groups={g}")
    _channel_params("group_norm", input, weight, bias)
    y = _normalize_blocks(input, g, _number("group_norm", "eps", eps))
    return _affine(y, weight, bias)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats=True,
                  momentum=0.1, eps=1e-5):
    """Instance normalisation: each channel of each sample normalised over its spatial
    positions, then a per-channel affine map.

    Args:
        input (Tensor): float, shape (N, C, *) with more than one spatial position when
            ``use_input_stats``.
        running_mean, running_var (Tensor, optional): float (C,); when given with
            ``use_input_stats`` they are updated in place to
            ``(1 - momentum) * running + momentum * stat``, the statistic averaged over the
            batch (unbiased variance for ``running_var``).
        weight, bias (Tensor, optional): float (C,).
        use_input_stats (bool): normalise with each instance's statistics (default True);
            False uses the running statistics (required then).
        momentum (float): default 0.1. eps (float): default 1e-5.

    Returns:
        Tensor of the input's shape.

    Raises:
        ShapeError: fewer than 2 dims, one spatial position with ``use_input_stats``, or
        statistics/parameters not (C,). ArgumentError: ``use_input_stats=False`` without
        running statistics. DTypeError / ArgumentTypeError: as :func:`layer_norm`.
    """
    check_float("instance_norm", "input", input)
    if input.ndim < 2:
        raise ShapeError(f"instance_norm: expected input of shape (N, C, *), got {tuple(input.shape)}")
    _channel_params("instance_norm", input, weight, bias)
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var)):
        if t is not None and (not isinstance(t, Tensor) or tuple(t.shape) != (c,)):
            raise ShapeError(f"instance_norm: expected {name} of shape ({c},), got "
                             f"{getattr(t, 'shape', type(t).__name__)}")
    eps = _number("instance_norm", "eps", eps)
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise ArgumentError("instance_norm: expected running_mean and running_var to be defined when "
                                "use_input_stats is False")
        return batch_norm(input, running_mean, running_var, weight, bias, False, 0.0, eps)
    spatial = int(numpy.prod(input.shape[2:], dtype=numpy.int64))
    if spatial <= 1:
        raise ShapeError(f"instance_norm: expected more than 1 spatial element when using input statistics, "
                         f"got input of shape {tuple(input.shape)}")
    if running_mean is not None or running_var is not None:
        _update_running(input, running_mean, running_var, _number("instance_norm", "momentum", momentum))
    y = _normalize_blocks(input, c, eps)
    return _affine(y, weight, bias)


def _update_running(input, running_mean, running_var, momentum):
    """PyTorch's running statistics of instance norm: the per-instance mean and unbiased
    variance averaged over the batch, folded in with ``momentum`` (in place, no gradient)."""
    if input.numel() == 0:  # no channel or no sample: nothing to fold in
        return
    x = input.array.reshape(input.shape[0], input.shape[1], -1)
    if running_mean is not None:
        rm = running_mean.array
        rm *= 1 - momentum
        rm += (momentum * x.mean(axis=2).mean(axis=0)).astype(rm.dtype, copy=False)
    if running_var is not None:
        rv = running_var.array
        rv *= 1 - momentum
        rv += (momentum * x.var(axis=2, ddof=1).mean(axis=0)).astype(rv.dtype, copy=False)


# ---- the torch-level forms (torch.layer_norm, ...): PyTorch's ATen signatures ------------
def torch_layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    """``torch.layer_norm``: :func:`layer_norm` (``cudnn_enable`` is accepted and ignored)."""
    return layer_norm(input, normalized_shape, weight, bias, eps)


def torch_group_norm(input, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    """``torch.group_norm``: :func:`group_norm` (``cudnn_enabled`` is accepted and ignored)."""
    return group_norm(input, num_groups, weight, bias, eps)


def torch_instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                        cudnn_enabled):
    """``torch.instance_norm`` with ATen's argument order (all required): :func:`instance_norm`."""
    return instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum, eps)
