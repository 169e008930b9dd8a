"""Loss functions: nll_loss, cross_entropy, mse_loss, and the reduction helpers shared by
the other loss modules (:mod:`.loss_pointwise`, :mod:`.loss_binary`).

``nll_loss`` picks ``-w[t] * input[n, t]`` for each target class ``t``; the ``mean``
reduction divides by the summed weights of the non-ignored targets (PyTorch's rule).
``cross_entropy = nll_loss(log_softmax(x))``, with label smoothing as in Szegedy et al.
2016 ("Rethinking the Inception Architecture", arXiv:1512.00567): the target mixes
``1 - eps`` of the one-hot class with ``eps / C`` spread over all classes.
"""
import warnings

import numpy

from ..dtypes import is_floating
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, IndexOutOfRangeError, ShapeError
from ..kernels import cuda, gpu_ops
from ..tensor import Tensor
from .autocast import autocast_op
from . import activation, reduction as R, shape as S
from .indexing import IndexAddInto
from .util import check_number, is_graph

_REDUCTIONS = ("mean", "sum", "none")


class _PickLoss(Op):
    """Losses that pick one column per row of an (M, C) input: ``-c_i * input[i, t_i]``
    with ``c_i = weight[t_i]`` (0 for ignored rows), divided by ``sum(c)`` for "mean".

    The generic backward scatters ``-c * gy`` into the picked positions with
    :class:`~tinynet.ops.indexing.IndexAddInto`, so it can be recorded for second
    derivatives. The GPU kernels (``forward_gpu``) save other things; a ``create_graph``
    backward then reruns the generic forward.
    """
    twice_differentiable = True
    gpu_saves_generic = False

    def __init__(self, ignore_index, reduction):
        self.ignore_index, self.reduction = ignore_index, reduction

    def _coefficients(self, xp, x, target, weight):
        """Row indices, safe targets, per-row coefficients c and the 'mean' denominator."""
        m = x.shape[0]
        valid = target != self.ignore_index
        safe_t = xp.where(valid, target, 0)
        w = (weight[safe_t] * valid).astype(x.dtype, copy=False) if weight is not None else valid.astype(x.dtype)
        self.rows, self.safe_t = xp.arange(m), safe_t
        return w, w.sum()

    def _reduce(self, losses, denom):
        if self.reduction == "none":
            return losses
        total = losses.sum()
        return total if self.reduction == "sum" else total / denom

    def _scaled(self, xp, gy, coef):
        """``coef * gy`` per row: gy is a scalar ("mean"/"sum") or per row ("none")."""
        return coef * gy


class NLLLoss(_PickLoss):
    """NLL on 2-D log-probabilities (M, C) with targets (M,)."""
    name = "nll_loss"

    def forward(self, xp, logp, target, weight):
        w, denom = self._coefficients(xp, logp, target, weight)
        coef = -w / denom if self.reduction == "mean" else -w
        self.save_for_backward(coef)
        self.shape = logp.shape
        return xp.asarray(self._reduce(-logp[self.rows, self.safe_t] * w, denom))

    def backward(self, xp, gy):
        (coef,) = self.saved
        return IndexAddInto(self.shape, (self.rows, self.safe_t), unique=True).call(xp, coef * gy), None, None

    def forward_gpu(self, xp, logp, target, weight):
        if not cuda.supported(logp) or (weight is not None and weight.dtype != logp.dtype):
            self.gpu_path = False
            return self.forward(xp, logp, target, weight)
        y, out = gpu_ops.nll_fwd(logp, target, weight, self.ignore_index, self.reduction)
        self.save_for_backward(target, weight, out)
        self.shape, self.dtype = logp.shape, logp.dtype
        return y

    def backward_gpu(self, xp, gy):
        target, weight, out = self.saved
        return (gpu_ops.nll_bwd(gy, self.shape, self.dtype, target, weight, out, self.ignore_index,
                                self.reduction), None, None)


class CrossEntropyLoss(_PickLoss):
    """Softmax cross-entropy on (M, C) logits with class-index targets, in one op:
    ``loss_i = c_i * (logsumexp(x_i) - x[i, t_i])``, ``dx = c * gy * (softmax(x) - onehot(t))``.
    On the GPU, fused log-softmax + NLL kernels."""
    name = "cross_entropy"

    def forward(self, xp, x, target, weight):
        w, denom = self._coefficients(xp, x, target, weight)
        m = x.max(axis=1, keepdims=True)
        lse = xp.log(xp.exp(x - m).sum(axis=1, keepdims=True)) + m
        coef = w / denom if self.reduction == "mean" else w
        self.save_for_backward(x, coef)
        self.shape, self.lse = x.shape, lse
        return xp.asarray(self._reduce((lse[:, 0] - x[self.rows, self.safe_t]) * w, denom))

    def backward(self, xp, gy):
        x, coef = self.saved
        scale = coef * gy  # per row
        if is_graph(xp):  # softmax rebuilt from x, so that it is differentiated too
            m = xp.amax(x, axis=1, keepdims=True)
            p = xp.exp(x - m)
            p = p / xp.sum(p, axis=1, keepdims=True)
        else:
            p = xp.exp(x - self.lse)
        picked = IndexAddInto(self.shape, (self.rows, self.safe_t), unique=True).call(xp, scale)
        return p * xp.expand_dims(scale, 1) - picked, None, None

    def forward_gpu(self, xp, x, target, weight):
        if not cuda.supported(x) or (weight is not None and weight.dtype != x.dtype):
            self.gpu_path = False
            return self.forward(xp, x, target, weight)
        x = xp.ascontiguousarray(x)
        lse = gpu_ops.logsumexp_rows(x)
        y, out = gpu_ops.nll_fwd(x, target, weight, self.ignore_index, self.reduction, lse=lse)
        self.save_for_backward(x, lse, target, weight, out)
        return y

    def backward_gpu(self, xp, gy):
        x, lse, target, weight, out = self.saved
        gx = gpu_ops.nll_bwd(gy, x.shape, x.dtype, target, weight, out, self.ignore_index, self.reduction,
                             x=x, lse=lse)
        return gx, None, None


def _check_reduction(op, reduction, allowed=_REDUCTIONS):
    if not isinstance(reduction, str) or reduction not in allowed:
        raise ArgumentError(f"{op}: reduction must be one of {allowed}, got {reduction!r}")


def reduction_of(op, reduction, size_average=None, reduce=None, allowed=_REDUCTIONS):
    """The reduction a loss applies.

    PyTorch's deprecated ``size_average``/``reduce`` win when either is given (``reduce=False``
    -> ``"none"``, else ``size_average=False`` -> ``"sum"``, else ``"mean"``), with PyTorch's
    deprecation warning; otherwise ``reduction``, which must be one of ``allowed``.

    Raises:
        ArgumentError: ``reduction`` is not one of ``allowed``.
    """
    if size_average is None and reduce is None:
        _check_reduction(op, reduction, allowed)
        return reduction
    reduce = True if reduce is None else reduce
    size_average = True if size_average is None else size_average
    legacy = "none" if not reduce else "mean" if size_average else "sum"
    warnings.warn(f"size_average and reduce args will be deprecated, please use reduction='{legacy}' instead.",
                  stacklevel=3)
    return legacy


def reduce_loss(losses, reduction):
    """``losses`` as they are (``"none"``), summed (``"sum"``) or averaged (``"mean"``)."""
    if reduction == "none":
        return losses
    return R.sum(losses) if reduction == "sum" else R.mean(losses)


def check_pair(op, input, target, names=("input", "target")):
    """Raise ArgumentTypeError unless both are Tensors, ShapeError unless their shapes are equal
    (tinynet's rule for elementwise losses: no broadcasting between input and target)."""
    for name, t in zip(names, (input, target)):
        if not isinstance(t, Tensor):
            raise ArgumentTypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    if input.shape != target.shape:
        raise ShapeError(f"{op}: {names[0]} shape {input.shape} and {names[1]} shape {target.shape} differ "
                         "(tinynet does not broadcast them)")


def check_elementwise_weight(op, weight, shape):
    """``weight`` (None or a Tensor of exactly ``shape``, as PyTorch's mse/l1/huber require)."""
    if weight is None:
        return None
    if not isinstance(weight, Tensor):
        raise ArgumentTypeError(f"{op}: weight must be a Tensor or None, got {type(weight).__name__}")
    if weight.shape != tuple(shape):
        raise ShapeError(f"{op}: weights and input must have the same size: expected weight of shape "
                         f"{tuple(shape)}, got {weight.shape}")
    return weight


def _to_rows(op, input, target, ignore_index):
    """Move the class dim last and flatten: (N, C, d1..) -> (N*d1.., C); target likewise."""
    if not isinstance(input, Tensor) or not isinstance(target, Tensor):
        raise ArgumentTypeError(f"{op}: input and target must be Tensors, got {type(input).__name__} and "
                                f"{type(target).__name__}")
    xs = input.array.shape  # plain tuples: this runs once per training step
    if not xs or not is_floating(input.array.dtype):
        raise DTypeError(f"{op}: expected float input of shape (N, C) or (N, C, d1, ...), "
                         f"got {input.dtype} {input.shape}")
    if len(xs) == 1:
        input = S.unsqueeze(input, 0)
        target = S.reshape(target, 1)
        xs = input.array.shape
    t = target.array
    if t.dtype.kind not in "iu":
        raise DTypeError(f"{op}: target must hold integer class indices (int64), got {target.dtype}")
    expected = (xs[0],) + xs[2:]
    if t.shape != expected:
        raise ShapeError(f"{op}: expected target of shape {expected} for input {input.shape}, "
                         f"got {target.shape}")
    c = xs[1]
    # on the GPU this check would be a host sync; on the CPU one unsigned comparison (negative
    # indices wrap to huge ones) clears the common case, and only a flagged target is looked at
    if isinstance(t, numpy.ndarray) and (t.view(f"u{t.itemsize}") >= c).any():
        bad = t[(t != ignore_index) & ((t < 0) | (t >= c))]
        if bad.size:
            raise IndexOutOfRangeError(f"{op}: target {int(bad.reshape(-1)[0])} is out of bounds for {c} classes")
    if input.ndim > 2:
        perm = (0,) + tuple(range(2, input.ndim)) + (1,)
        input = S.reshape(S.permute(input, *perm), -1, c)
    return input, t.reshape(-1), expected


@autocast_op
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    """Negative log-likelihood loss on log-probabilities.

    Args:
        input: float (N, C) or (N, C, d1, ...) log-probabilities (e.g. from ``log_softmax``).
        target: int64 (N,) or (N, d1, ...) class indices in ``[0, C)``, or ``ignore_index``.
            Out-of-range indices raise on the CPU; on the GPU they are not checked (the
            check would force a host synchronisation every step).
        weight: optional float (C,) per-class weights.
        ignore_index (int): targets equal to it contribute nothing. Default -100.
        reduction: ``"mean"`` (default; divides by the summed weights of counted targets),
            ``"sum"`` or ``"none"`` (shape of ``target``).
        size_average, reduce: PyTorch's deprecated spelling of ``reduction``; when either is
            given it decides the reduction (with PyTorch's deprecation warning).

    Returns:
        Tensor: scalar, or the per-element losses for ``reduction="none"``.

    Raises:
        ShapeError: target shape does not match. IndexOutOfRangeError: a class index is out
            of range (CPU). DTypeError: float targets or integer input.
        ArgumentError: unknown reduction.
    """
    reduction = reduction_of("nll_loss", reduction, size_average, reduce)
    rows, t, tshape = _to_rows("nll_loss", input, target, ignore_index)
    c = rows.shape[1]
    if weight is not None and (not isinstance(weight, Tensor) or weight.shape != (c,)):
        raise ShapeError(f"nll_loss: weight must be a tensor of shape ({c},), got "
                         f"{getattr(weight, 'shape', type(weight).__name__)}")
    out = NLLLoss(ignore_index, reduction).apply(rows, t, weight.array if weight is not None else None)
    if reduction == "none":
        out = S.reshape(out, *tshape)
    return out


@autocast_op
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
                  reduction="mean", label_smoothing=0.0):
    """Softmax cross-entropy: ``nll_loss(log_softmax(input, 1), target)``.

    Args:
        input: float (N, C) or (N, C, d1, ...) unnormalised scores (logits).
        target: int64 class indices of shape (N,) / (N, d1, ...), or float class
            probabilities of the input's shape.
        weight, size_average, ignore_index, reduce, reduction: as in :func:`nll_loss`.
        label_smoothing (float): ``eps`` in [0, 1]; the target becomes
            ``(1 - eps) * onehot + eps / C``. Default 0.

    Raises:
        ArgumentError: ``label_smoothing`` outside [0, 1] or unknown reduction.
        ShapeError, DTypeError, IndexOutOfRangeError: as in :func:`nll_loss`.
    """
    reduction = reduction_of("cross_entropy", reduction, size_average, reduce)
    label_smoothing = check_number("cross_entropy", "label_smoothing", label_smoothing, 0.0, 1.0)
    if not isinstance(input, Tensor) or input.ndim < 1:
        raise ShapeError("cross_entropy: input must be a tensor of shape (N, C) or (N, C, d1, ...)")
    if not label_smoothing and isinstance(target, Tensor) and target.dtype.kind in "iu":
        rows, t, tshape = _to_rows("cross_entropy", input, target, ignore_index)
        if weight is not None and (not isinstance(weight, Tensor) or weight.shape != (rows.shape[1],)):
            raise ShapeError(f"cross_entropy: weight must be a tensor of shape ({rows.shape[1]},), got "
                             f"{getattr(weight, 'shape', type(weight).__name__)}")
        w = weight.array.astype(rows.dtype, copy=False) if weight is not None else None
        out = CrossEntropyLoss(ignore_index, reduction).apply(rows, t, w)
        return S.reshape(out, *tshape) if reduction == "none" else out
    logp = activation.log_softmax(input, dim=1 if input.ndim > 1 else 0)
    c = input.shape[1] if input.ndim > 1 else input.shape[0]
    w = None
    if weight is not None:
        w = S.reshape(weight, *((1, c) + (1,) * (input.ndim - 2))) if input.ndim > 1 else weight
    if isinstance(target, Tensor) and is_floating(target.dtype):
        if target.shape != input.shape:
            raise ShapeError(f"cross_entropy: probability targets must have the input's shape "
                             f"{input.shape}, got {target.shape}")
        probs = target * (1 - label_smoothing) + label_smoothing / c if label_smoothing else target
        per = logp * probs if w is None else logp * probs * w
        losses = -R.sum(per, dim=1 if input.ndim > 1 else 0)
        if reduction == "none":
            return losses
        total = R.sum(losses)
        if reduction == "sum":
            return total
        return total / losses.array.size if losses.array.size else total * float("nan")  # mean over N, d1, ...
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return nll
    valid = Tensor._wrap((target.array != ignore_index).astype(logp.dtype))
    per = logp if w is None else logp * w
    smooth = -R.sum(per, dim=1 if input.ndim > 1 else 0) * valid
    if reduction == "sum":
        smooth = R.sum(smooth)
    elif reduction == "mean":  # the denominator stays on the device: no host sync
        if weight is not None:
            t = (target.array * (target.array != ignore_index)).reshape(-1)
            denom = (weight.array[t] * valid.array.reshape(-1)).sum()
        else:
            denom = valid.array.sum()
        smooth = R.sum(smooth) / Tensor._wrap(denom)
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / c)


@autocast_op
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean squared error ``(input - target)^2``, reduced by ``reduction``.

    Args:
        input: float tensor of any shape. target: tensor of the same shape (an integer
            target is promoted, as in PyTorch).
        size_average, reduce: PyTorch's deprecated spelling of ``reduction``.
        reduction: ``"mean"`` (default), ``"sum"`` or ``"none"`` (the input's shape).
        weight: optional tensor of the input's shape, multiplied into each squared error; the
            ``"mean"`` reduction then is ``sum(w * (x - y)^2) / sum(w)`` (PyTorch's rule).

    Returns:
        Tensor: a scalar, or the elementwise losses for ``reduction="none"``; dtype promoted
        from input and target.

    Raises:
        ShapeError: shapes differ (tinynet does not broadcast them; PyTorch broadcasts with a
            warning), or ``weight`` has another shape. ArgumentError: unknown reduction.
        DTypeError: neither input nor target is floating point.
    """
    reduction = reduction_of("mse_loss", reduction, size_average, reduce)
    check_pair("mse_loss", input, target)
    weight = check_elementwise_weight("mse_loss", weight, input.shape)
    d = input - target
    if not is_floating(d.dtype):
        raise DTypeError(f"mse_loss: expected a floating-point input or target, got {input.dtype} and {target.dtype}")
    sq = d * d
    if weight is None:
        return reduce_loss(sq, reduction)
    sq = sq * weight
    return R.sum(sq) / R.sum(weight) if reduction == "mean" else reduce_loss(sq, reduction)
