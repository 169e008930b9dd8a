"""Losses of binary and +-1 targets: binary_cross_entropy, binary_cross_entropy_with_logits,
soft_margin_loss, margin_ranking_loss, cosine_embedding_loss.

* BCE on probabilities ``x``: ``-(t max(log x, -100) + (1 - t) max(log(1 - x), -100))``
  (PyTorch clamps the logs at -100, so ``x = 0`` or ``1`` gives a finite loss); gradient
  ``(x - t) / max(x (1 - x), 1e-12)`` as PyTorch's.
* BCE on logits, the stable form (no ``exp`` overflow, exact at +-100 and beyond):
  ``(1 - t) x - l log_sigmoid(x)`` with ``l = 1 + (pos_weight - 1) t`` and
  ``log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|))``; gradient ``l sigmoid(x) - pos_weight t``.
* Soft margin: ``log(1 + exp(-t x))``, computed as a stable softplus.
* Margin ranking: ``max(0, -t (x1 - x2) + margin)``.
* Cosine embedding: ``1 - cos(x1, x2)`` where ``t = 1``, ``max(0, cos(x1, x2) - margin)``
  where ``t = -1``, with ``cos = x1.x2 / sqrt((|x1|^2 + 1e-12)(|x2|^2 + 1e-12))``.

The BCE pair and softplus are ops whose backwards are written for second derivatives;
the rest are compositions. Weights and pos_weight are constants, as in PyTorch (which
refuses them when they require a gradient).
"""
import numbers

import numpy

from ..dtypes import is_floating
from .. import dtypes
from ..autograd import Op, grad_mode
from ..errors import ArgumentError, ArgumentTypeError, AutogradError, DTypeError, ShapeError
from ..tensor import Tensor
from .autocast import autocast_op
from . import conversion, select, unary
from . import reduction as R
from .activation import Sigmoid
from .loss import check_pair, reduce_loss, reduction_of

_EPS = 1e-12


def _log_sigmoid(xp, x):
    """``log(sigmoid(x))`` without overflow, on arrays or (graph namespace) tensors."""
    return xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))


class BinaryCrossEntropy(Op):
    """Elementwise BCE of probabilities ``x`` and targets ``t`` (PyTorch's clamped logs)."""
    name = "binary_cross_entropy"
    twice_differentiable = True
    gpu_saves_generic = True

    def forward(self, xp, x, t):
        if True in self.needs_input_grad:
            self.save_for_backward(x, t)
        with numpy.errstate(divide="ignore"):  # log(0) = -inf, then clamped
            y = (t - 1) * xp.maximum(xp.log1p(-x), -100) - t * xp.maximum(xp.log(x), -100)
        return y.astype(x.dtype, copy=False)

    def backward(self, xp, gy):
        x, t = self.saved
        gx = gt = None
        if self.needs_input_grad[0]:
            gx = gy * (x - t) / xp.maximum((1 - x) * x, _EPS)
        if self.needs_input_grad[1]:  # -logit(x), unclamped as in PyTorch
            with numpy.errstate(divide="ignore"):
                gt = gy * (xp.log1p(-x) - xp.log(x))
        return gx, gt


class BinaryCrossEntropyWithLogits(Op):
    """Elementwise stable BCE of logits ``x``, targets ``t`` and optional ``pos_weight``
    (broadcast against them; no gradient)."""
    name = "binary_cross_entropy_with_logits"
    twice_differentiable = True
    gpu_saves_generic = True

    def forward(self, xp, x, t, pw):
        if True in self.needs_input_grad:
            self.save_for_backward(x, t, pw)
        ls = _log_sigmoid(xp, x)
        if pw is not None:
            ls = ls * ((pw - 1) * t + 1)
        return ((1 - t) * x - ls).astype(x.dtype, copy=False)

    def backward(self, xp, gy):
        x, t, pw = self.saved
        gx = gt = None
        if self.needs_input_grad[0]:
            s = Sigmoid().call(xp, x)
            gx = gy * (s - t) if pw is None else gy * ((pw * t + 1 - t) * s - pw * t)
        if self.needs_input_grad[1]:
            gt = -gy * x if pw is None else gy * (_log_sigmoid(xp, -x) - pw * _log_sigmoid(xp, x))
        return gx, gt, None


class Softplus(Op):
    """``log(1 + exp(z))`` as ``max(z, 0) + log1p(exp(-|z|))``; derivative ``sigmoid(z)``."""
    name = "soft_margin_loss"
    twice_differentiable = True
    gpu_saves_generic = True

    def forward(self, xp, z):
        if self.needs_input_grad[0]:
            self.save_for_backward(z)
        return (xp.maximum(z, 0) + xp.log1p(xp.exp(-xp.abs(z)))).astype(z.dtype, copy=False)

    def backward(self, xp, gy):
        (z,) = self.saved
        return (gy * Sigmoid().call(xp, z),)


def _no_grad_input(op, name, w):
    """Raise AutogradError when ``w`` requires a gradient while recording: PyTorch refuses
    tensors it cannot differentiate with respect to, rather than dropping their gradient."""
    if w.requires_grad and grad_mode.is_grad_enabled():
        raise AutogradError(f"{op}: the function is not differentiable with respect to {name}; it cannot "
                            "require grad (detach it)")


def _constant(op, name, w, shape, dtype):
    """A weight as a constant tensor of ``dtype`` that broadcasts to ``shape``.

    Raises:
        ArgumentTypeError: not a Tensor. ShapeError: does not broadcast to ``shape``.
        AutogradError: it requires a gradient while recording (PyTorch's rule).
    """
    if w is None:
        return None
    if not isinstance(w, Tensor):
        raise ArgumentTypeError(f"{op}: {name} must be a Tensor or None, got {type(w).__name__}")
    try:
        fits = numpy.broadcast_shapes(w.shape, shape) == tuple(shape)
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"{op}: {name} of shape {w.shape} does not broadcast to the input's shape {tuple(shape)}")
    _no_grad_input(op, name, w)
    return Tensor._wrap(w.array.astype(dtype, copy=False))


def _check_unit_interval(op, name, t):
    """All of ``t`` in [0, 1] (NaN fails); CPU only, as the check would sync the GPU."""
    a = t.array
    if isinstance(a, numpy.ndarray) and a.size and not bool(((a >= 0) & (a <= 1)).all()):
        raise ArgumentError(f"{op}: all elements of {name} should be between 0 and 1")


@autocast_op
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Binary cross-entropy of probabilities:
    ``-w (t log x + (1 - t) log(1 - x))``, each log clamped at -100 as in PyTorch.

    Args:
        input: float tensor of probabilities in [0, 1], any shape.
        target: tensor of the input's shape and dtype, values in [0, 1].
        weight: optional tensor broadcasting to the input's shape (a constant: no gradient).
        size_average, reduce: PyTorch's deprecated spelling of ``reduction``.
        reduction (str): ``"mean"`` (default, over all elements), ``"sum"`` or ``"none"``.

    Returns:
        Tensor: a scalar, or the elementwise losses for ``"none"``; the input's dtype.

    Raises:
        ShapeError: target shape differs from the input's, or weight does not broadcast to it
            (PyTorch: ValueError/RuntimeError). DTypeError: integer input, or a target of
            another dtype (PyTorch: RuntimeError). ArgumentError: input or target outside
            [0, 1] (checked on the CPU only, where PyTorch checks on both), unknown reduction.
        AutogradError: ``weight`` requires grad.
    """
    op = "binary_cross_entropy"
    reduction = reduction_of(op, reduction, size_average, reduce)
    check_pair(op, input, target)
    if not is_floating(input.dtype):
        raise DTypeError(f"{op}: expected a floating-point input, got {input.dtype}")
    if target.dtype != input.dtype:
        raise DTypeError(f"{op}: found target of dtype {target.dtype} but expected {input.dtype} (the input's)")
    _check_unit_interval(op, "input", input)
    _check_unit_interval(op, "target", target)
    w = _constant(op, "weight", weight, input.shape, input.dtype)
    losses = BinaryCrossEntropy().apply(input, target)
    return reduce_loss(losses if w is None else losses * w, reduction)


@autocast_op
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    """Sigmoid + binary cross-entropy in one numerically stable op:
    ``-w (p t log sigmoid(x) + (1 - t) log(1 - sigmoid(x)))``, ``p = pos_weight``.

    Args:
        input: float tensor of logits, any shape. target: float tensor of the same shape
            (probabilities in [0, 1], not checked, as in PyTorch).
        weight: optional per-element weights broadcasting to the input's shape (constant).
        size_average, reduce: PyTorch's deprecated spelling of ``reduction``.
        reduction (str): ``"mean"`` (default, over all elements), ``"sum"`` or ``"none"``.
        pos_weight: optional weights of the positive term, broadcasting to the input's shape
            along the trailing dims, e.g. (C,) per class for an (N, C) input (constant).

    Returns:
        Tensor: a scalar, or the elementwise losses for ``"none"``. Computed in the promoted
        dtype of input and target and returned in the *target's* dtype, as PyTorch does.

    Raises:
        ShapeError: shapes differ, or a weight does not broadcast to the input's shape.
        DTypeError: integer input or target. ArgumentError: unknown reduction.
        AutogradError: ``weight`` or ``pos_weight`` requires grad.
    """
    op = "binary_cross_entropy_with_logits"
    reduction = reduction_of(op, reduction, size_average, reduce)
    check_pair(op, input, target)
    if not is_floating(input.dtype) or not is_floating(target.dtype):
        raise DTypeError(f"{op}: expected floating-point input and target, got {input.dtype} and {target.dtype}")
    dt = dtypes.result_type(input.array, target.array)
    x = input if input.dtype == dt else conversion.to(input, dt)
    t = target if target.dtype == dt else conversion.to(target, dt)
    w = _constant(op, "weight", weight, input.shape, dt)
    pw = _constant(op, "pos_weight", pos_weight, input.shape, dt)
    losses = BinaryCrossEntropyWithLogits().apply(x, t, pw)
    out = reduce_loss(losses if w is None else losses * w, reduction)
    return out if out.dtype == target.dtype else conversion.to(out, target.dtype)


def _margin(op, margin):
    if isinstance(margin, bool) or not isinstance(margin, numbers.Real):
        raise ArgumentTypeError(f"{op}: margin must be a number, got {type(margin).__name__}")
    return float(margin)


@autocast_op
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Two-class logistic loss ``log(1 + exp(-target * input))`` for targets in {-1, 1}.

    Args:
        input: float tensor, any shape. target: tensor of the same shape (converted to the
            input's dtype; the result has the input's dtype, as in PyTorch).
        size_average, reduce, reduction: as in :func:`binary_cross_entropy`.

    Raises:
        ShapeError: shapes differ. DTypeError: integer input. ArgumentError: unknown reduction.
        AutogradError: ``target`` requires grad (not differentiable, as in PyTorch).

    Computed as a stable softplus, so ``-target * input`` beyond ~88 (float32) gives the
    exact loss where PyTorch's ``log1p(exp(.))`` overflows to inf.
    """
    op = "soft_margin_loss"
    reduction = reduction_of(op, reduction, size_average, reduce)
    check_pair(op, input, target)
    if not is_floating(input.dtype):
        raise DTypeError(f"{op}: expected a floating-point input, got {input.dtype}")
    _no_grad_input(op, "target", target)
    t = Tensor._wrap(target.array.astype(input.dtype, copy=False))
    return reduce_loss(Softplus().apply(-(input * t)), reduction)


@autocast_op
def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """Ranking hinge loss ``max(0, -target * (input1 - input2) + margin)``: ``target = 1``
    asks for ``input1`` to rank higher by ``margin``, ``-1`` for ``input2``.

    Args:
        input1, input2: tensors (N,) or of any one shape. target: tensor of that shape, +-1.
        margin (float): default 0.
        size_average, reduce, reduction: as in :func:`binary_cross_entropy`.

    Raises:
        ShapeError: the three shapes differ (PyTorch broadcasts tensors of equal ndim).
        ArgumentTypeError: ``margin`` is not a number. ArgumentError: unknown reduction.
    """
    op = "margin_ranking_loss"
    reduction = reduction_of(op, reduction, size_average, reduce)
    margin = _margin(op, margin)
    check_pair(op, input1, input2, ("input1", "input2"))
    check_pair(op, input1, target, ("input1", "target"))
    losses = unary.clamp(-target * (input1 - input2) + margin, min=0)
    if not is_floating(losses.dtype):
        raise DTypeError(f"{op}: expected floating-point inputs, got {input1.dtype} and {input2.dtype}")
    return reduce_loss(losses, reduction)


@autocast_op
def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None, reduction="mean"):
    """Cosine embedding loss: ``1 - cos(x1, x2)`` for ``target = 1`` (similar pairs),
    ``max(0, cos(x1, x2) - margin)`` for ``target = -1``, 0 for other target values.

    ``cos = x1.x2 / sqrt((|x1|^2 + 1e-12) (|x2|^2 + 1e-12))`` along the feature dim, with
    PyTorch's epsilon.

    Args:
        input1, input2: float tensors (N, D), or (D,) with a 0-d target.
        target: tensor (N,) (or 0-d) of 1 and -1.
        margin (float): in [-1, 1], 0 to 0.5 suggested. Default 0.
        size_average, reduce, reduction: as in :func:`binary_cross_entropy`.

    Raises:
        ShapeError: input shapes differ, or do not fit the target (1-D target and 2-D inputs,
            or 0-d target and 1-D inputs). ArgumentError: unknown reduction.
    """
    op = "cosine_embedding_loss"
    reduction = reduction_of(op, reduction, size_average, reduce)
    margin = _margin(op, margin)
    check_pair(op, input1, input2, ("input1", "input2"))
    if not isinstance(target, Tensor):
        raise ArgumentTypeError(f"{op}: target must be a Tensor, got {type(target).__name__}")
    if target.ndim not in (0, 1) or input1.ndim != target.ndim + 1 or target.shape != input1.shape[:target.ndim]:
        raise ShapeError(f"{op}: expected a 1-D target (N,) with 2-D inputs (N, D) or a 0-d target with 1-D inputs, "
                         f"got target {target.shape} and inputs {input1.shape}")
    if not is_floating(input1.dtype) and not is_floating(input2.dtype):
        raise DTypeError(f"{op}: expected floating-point inputs, got {input1.dtype} and {input2.dtype}")
    dim = target.ndim
    prod = R.sum(input1 * input2, dim)
    mag1 = R.sum(input1 * input1, dim) + _EPS
    mag2 = R.sum(input2 * input2, dim) + _EPS
    cos = prod / unary.sqrt(mag1 * mag2)
    pos = select.where(target == 1, 1 - cos, 0.0)
    neg = select.where(target == -1, unary.clamp(cos - margin, min=0), 0.0)
    return reduce_loss(pos + neg, reduction)
