"""``linear_cross_entropy``: the cross entropy of the logits of a linear layer, with
PyTorch's opt-in chunked path that never holds the whole (batch, classes) logits matrix
(``LinearCrossEntropyOptions``), useful for large vocabularies.

Reference path (``options=None``): ``cross_entropy(linear(input, linear_weight,
linear_bias), target, ...)`` composed of tinynet's ops, every option of
:func:`~tinynet.nn.functional.cross_entropy` included; a linear_weight (C, d_1 .. d_K, in)
gives the K-dimensional loss over logits (N, C, d_1 .. d_K).

Chunked path (``options`` given, class-index targets, no label smoothing, no
out_features): :class:`LinearCrossEntropyChunked` computes the logits ``x W^T + b`` of
``batch_chunk_size`` rows at a time in ``acc_dtype``, keeps only each row's loss
``logsumexp(z) - z[t]`` (times the class weight; 0 for ``ignore_index``), and recomputes
each chunk in backward: ``dz = (softmax(z) - onehot(t)) * scale`` gives ``dx = dz W``,
``dW = dz^T x`` and ``db = sum(dz)``. The values equal the reference path's up to rounding.
The chunk size follows PyTorch's ``chunking_method`` (``"aspect_ratio[:N]"``: the next
power of two of ``ceil(rows / ceil(classes / in_features))``, divided by N); since
tinynet's backward recomputes from the saved inputs, ``retain_graph=True`` works whatever
``allow_retain_graph`` says.
"""
import dataclasses
import math
import warnings

import numpy

from .. import backend, dtypes
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from .linear import linear
from .loss import cross_entropy, reduction_of
from .shape import reshape
from .util import check_float, check_int, check_number, check_tensor

_POLICIES = ("auto", "accurate", "balanced", "compact")
_AUTO = {("cpu", "bfloat16"): ("accurate", "aspect_ratio"), ("cpu", "float16"): ("accurate", "aspect_ratio")}
_AUTO_FALLBACK = ("compact", "aspect_ratio:2")


@dataclasses.dataclass(frozen=True)
class LinearCrossEntropyOptions:
    """Settings of the chunked :func:`linear_cross_entropy` (PyTorch's fields and checks).

    Args:
        allow_retain_graph (bool): PyTorch's switch for a second backward; tinynet's
            backward recomputes, so it always allows one. Default False.
        batch_chunk_size (int, optional): rows per chunk; None: from ``chunking_method``.
        chunking_method (str, optional): ``"auto"`` (default), ``"aspect_ratio"``,
            ``"aspect_ratio:N"`` or None (use ``batch_chunk_size``, else one chunk).
        acc_policy (str): ``"auto"``, ``"accurate"``, ``"balanced"`` or ``"compact"``;
            tinynet computes every intermediate in ``acc_dtype`` whatever the policy.
        acc_dtype (dtype, optional): the dtype of the logits and sums; default float32 for
            float16/bfloat16 input, else the input's dtype.

    Raises:
        ArgumentError: an unknown policy or chunking method, a chunk size below 1, an
            acc_dtype that is not a float dtype.
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: str = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        op = "LinearCrossEntropyOptions"
        if self.acc_policy not in _POLICIES:
            raise ArgumentError(f"{op}: invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = str(self.chunking_method).partition(":")
            if not (name == "aspect_ratio" and (not sep or factor.isdigit() and int(factor) > 0)):
                raise ArgumentError(f"{op}: invalid chunking_method: {self.chunking_method!r}")
        if self.batch_chunk_size is not None and (isinstance(self.batch_chunk_size, bool) or not isinstance(
                self.batch_chunk_size, int) or self.batch_chunk_size < 1):
            raise ArgumentError(f"{op}: batch_chunk_size must be positive int or None, got "
                                f"{self.batch_chunk_size!r}")
        if self.acc_dtype is not None:
            dt = dtypes.as_dtype(self.acc_dtype, op)
            if dt not in (dtypes.float16, dtypes.bfloat16, dtypes.float32, dtypes.float64):
                raise ArgumentError(f"{op}: acc_dtype must be None, float16, bfloat16, float32 or float64, got "
                                    f"{self.acc_dtype!r}")

    def resolve(self, rows, in_features, num_classes, dtype, device_type):
        """(rows per chunk, accumulation dtype) for a call (PyTorch's ``_adjust``).

        Raises:
            ArgumentError: ``batch_chunk_size`` and ``chunking_method`` disagree.
        """
        method = self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None
        if method == "auto":
            method = _AUTO.get((device_type, str(dtypes.as_dtype(dtype, "linear_cross_entropy")).split(".")[-1]),
                               _AUTO_FALLBACK)[1]
        size = rows if self.batch_chunk_size is None else min(self.batch_chunk_size, rows)
        if method is not None:
            factor = int(method.split(":", 1)[1]) if ":" in method else 1
            target = -(-rows // -(-num_classes // max(in_features, 1)))
            computed = min((1 << (max(target, 1) - 1).bit_length()) // factor, rows)
            if self.batch_chunk_size is not None and self.batch_chunk_size != computed:
                raise ArgumentError(f"linear_cross_entropy: batch_chunk_size (={self.batch_chunk_size}) and "
                                    f"chunking_method ('{method}') give different chunk sizes "
                                    f"({self.batch_chunk_size} vs {computed}); pass only one.")
            size = computed
        low = numpy.dtype(dtype) in (numpy.dtype(numpy.float16), numpy.dtype(dtypes.bfloat16))
        acc = self.acc_dtype if self.acc_dtype is not None else (dtypes.float32 if low else dtype)
        return max(1, size), numpy.dtype(acc)


class LinearCrossEntropyChunked(Op):
    """Per-row losses of ``x`` (B, in), ``w`` (C, in), optional ``b`` (C,) and class
    weights ``cw`` (C,) against ``target`` (B,), reduced; see the module docstring."""
    name = "linear_cross_entropy"

    def __init__(self, target, ignore_index, reduction, chunk, acc):
        self.target, self.ignore_index, self.reduction, self.chunk, self.acc = \
            target, ignore_index, reduction, chunk, acc

    def _logits(self, xp, x, w, b, lo, hi):
        z = x[lo:hi].astype(self.acc) @ w.astype(self.acc).T
        return z + b.astype(self.acc) if b is not None else z

    def _rows(self, xp, cw, lo, hi):
        t = self.target[lo:hi]
        valid = t != self.ignore_index
        safe = xp.where(valid, t, 0)
        scale = cw.astype(self.acc)[safe] if cw is not None else xp.ones(t.shape, dtype=self.acc)
        return safe, xp.where(valid, scale, 0)

    def forward(self, xp, x, w, b, cw):
        rows = x.shape[0]
        losses = xp.zeros(rows, dtype=self.acc)
        total = xp.zeros((), dtype=self.acc)
        for lo in range(0, rows, self.chunk):
            hi = min(lo + self.chunk, rows)
            z = self._logits(xp, x, w, b, lo, hi)
            top = z.max(axis=1, keepdims=True)
            lse = xp.log(xp.exp(z - top).sum(axis=1)) + top[:, 0]
            safe, scale = self._rows(xp, cw, lo, hi)
            losses[lo:hi] = (lse - xp.take_along_axis(z, safe[:, None], 1)[:, 0]) * scale
            total += scale.sum()
        self.total = total
        self.save_for_backward(x, w, b, cw)
        if self.reduction == "none":
            return losses.astype(x.dtype)
        out = losses.sum() if self.reduction == "sum" else losses.sum() / total
        return xp.asarray(out, dtype=x.dtype)

    def backward(self, xp, gy):
        x, w, b, cw = self.saved
        rows = x.shape[0]
        need_x, need_w, need_b, _ = self.needs_input_grad
        gx = xp.zeros(x.shape, dtype=self.acc) if need_x else None
        gw = xp.zeros(w.shape, dtype=self.acc) if need_w else None
        gb = xp.zeros(w.shape[:1], dtype=self.acc) if need_b and b is not None else None
        g = gy.astype(self.acc)
        if self.reduction == "mean":
            g = g / self.total
        for lo in range(0, rows, self.chunk):
            hi = min(lo + self.chunk, rows)
            z = self._logits(xp, x, w, b, lo, hi)
            p = xp.exp(z - z.max(axis=1, keepdims=True))
            p /= p.sum(axis=1, keepdims=True)
            safe, scale = self._rows(xp, cw, lo, hi)
            p[xp.arange(hi - lo), safe] -= 1
            dz = p * (scale * (g[lo:hi] if self.reduction == "none" else g))[:, None]
            if need_x:
                gx[lo:hi] = dz @ w.astype(self.acc)
            if need_w:
                gw += dz.T @ x[lo:hi].astype(self.acc)
            if gb is not None:
                gb += dz.sum(axis=0)
        cast = (lambda a, like: None if a is None else a.astype(like.dtype))
        return cast(gx, x), cast(gw, w), cast(gb, w), None


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None, reduction="mean",
                         ignore_index=None, label_smoothing=0.0, options=None):
    """Cross entropy of the logits ``linear(input, linear_weight, linear_bias)`` against
    ``target`` (PyTorch's ``F.linear_cross_entropy``).

    Args:
        input (Tensor): float (N, in) or (in,).
        linear_weight (Tensor): (C, in), or (C, d_1, ..., d_K, in) for the K-dimensional loss.
        target (Tensor): class indices (N,) (or (N, d_1, ..., d_K)), or class probabilities
            of the logits' shape.
        linear_bias (Tensor, optional): (C, d_1, ..., d_K).
        weight (Tensor, optional): (C,) class weights.
        reduction (str): ``'mean'`` (default), ``'sum'`` or ``'none'``.
        ignore_index (int, optional): a class index left out (default -100 for index
            targets; not allowed with probability targets).
        label_smoothing (float): in [0, 1]. Default 0.
        options (LinearCrossEntropyOptions, optional): run the chunked path (see the module
            docstring); unsupported settings fall back to the reference path with a warning.

    Returns:
        Tensor: 0-d, or the target's batch shape with ``'none'``.

    Raises:
        ShapeError: ranks or sizes that do not fit (input not 1-D/2-D, linear_weight below
            2-D, another in_features, a bias of another shape, K-dimensional weights with
            unbatched input).
        ArgumentError: ignore_index with probability targets, a bad reduction or label
            smoothing, options that disagree. ArgumentTypeError: options of another type.
        IndexOutOfRangeError: a class index outside [0, C) (chunked path, on the CPU).
    """
    op = "linear_cross_entropy"
    check_float(op, "input", input)
    check_tensor(op, "linear_weight", linear_weight)
    check_tensor(op, "target", target)
    reduction = reduction_of(op, reduction)
    label_smoothing = check_number(op, "label_smoothing", label_smoothing, 0.0, 1.0)
    if options is not None and not isinstance(options, LinearCrossEntropyOptions):
        raise ArgumentTypeError(f"{op}: options must be a LinearCrossEntropyOptions or None, got "
                                f"{type(options).__name__}")
    if input.ndim not in (1, 2):
        raise ShapeError(f"{op}: expected input with dimensionality 1 or 2, got {input.ndim}")
    if linear_weight.ndim < 2:
        raise ShapeError(f"{op}: expected linear_weight with dimensionality at least 2, got {linear_weight.ndim}")
    batch, in_features = tuple(input.shape[:-1]), input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise ShapeError(f"{op}: expected equal input and linear_weight last dimensions (in_features), got "
                         f"{in_features} and {linear_weight.shape[-1]}, respectively")
    num_classes, out_features = linear_weight.shape[0], tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(check_tensor(op, "linear_bias", linear_bias).shape) != (
            num_classes, *out_features):
        raise ShapeError(f"{op}: expected linear_bias shape {(num_classes, *out_features)}, got "
                         f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise ShapeError(f"{op}: K-dimensional loss defined by linear_weight shape {tuple(linear_weight.shape)} "
                         f"requires batched input, (N, {in_features}), got unbatched input with shape "
                         f"{tuple(input.shape)}")
    probabilities = tuple(target.shape) == (*batch, num_classes, *out_features)
    if probabilities and ignore_index is not None:
        raise ArgumentError(f"{op}: ignore_index cannot be specified when target contains probabilities")
    ignore_index = -100 if ignore_index is None else check_int(op, "ignore_index", ignore_index)
    index_target = target.array.dtype == numpy.int64
    if options is not None and (out_features or label_smoothing != 0.0 or not index_target):
        warnings.warn(f"{op}: ``options`` ignored; chunked path needs reduction in {{'mean','sum','none'}}, "
                      f"label_smoothing == 0, target.dtype == int64, out_features == (). Got reduction={reduction!r}, "
                      f"label_smoothing={label_smoothing}, target.dtype={target.dtype}, out_features={out_features}",
                      stacklevel=2)
        options = None
    if options is None:
        flat_w = reshape(linear_weight, (math.prod(linear_weight.shape[:-1]), in_features))
        flat_b = reshape(linear_bias, (-1,)) if linear_bias is not None else None
        logits = reshape(linear(input, flat_w, flat_b), (*batch, num_classes, *out_features))
        return cross_entropy(logits, target, weight, ignore_index=ignore_index, reduction=reduction,
                             label_smoothing=label_smoothing)
    x = input if batch else reshape(input, (1, in_features))
    t = target if batch else reshape(target, (1,))
    if tuple(t.shape) != (x.shape[0],):
        raise ShapeError(f"{op}: expected a target of shape {batch}, got {tuple(target.shape)}")
    if linear_weight.dtype != input.dtype:
        raise DTypeError(f"{op}: expected input and linear_weight to have the same dtype, got {input.dtype} and "
                         f"{linear_weight.dtype}")
    if weight is not None and tuple(check_float(op, "weight", weight).shape) != (num_classes,):
        raise ShapeError(f"{op}: expected weight of shape ({num_classes},), got {tuple(weight.shape)}")
    a = t.array
    if isinstance(a, numpy.ndarray):
        bad = a[(a != ignore_index) & ((a < 0) | (a >= num_classes))]
        if bad.size:
            raise IndexOutOfRangeError(f"{op}: target {int(bad[0])} is out of bounds for {num_classes} classes")
    backend.common_module(op, [v.array for v in (input, linear_weight, target, linear_bias, weight)
                               if isinstance(v, Tensor)])
    chunk, acc = options.resolve(x.shape[0], in_features, num_classes, x.array.dtype,
                                 "cuda" if backend.is_gpu_array(x.array) else "cpu")
    y = LinearCrossEntropyChunked(a, ignore_index, reduction, chunk, acc).apply(x, linear_weight, linear_bias, weight)
    return reshape(y, ()) if reduction == "none" and not batch else y
