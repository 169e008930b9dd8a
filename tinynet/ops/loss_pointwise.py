"""Elementwise regression and divergence losses: l1_loss, smooth_l1_loss, huber_loss, kl_div,
poisson_nll_loss, gaussian_nll_loss (``mse_loss`` lives in :mod:`.loss`).

Each is the elementwise loss of ``input`` and ``target`` (same shape: tinynet does not
broadcast them, where PyTorch broadcasts with a warning), then a reduction: ``"mean"``
(default), ``"sum"`` or ``"none"`` (kl_div also ``"batchmean"``). Formulas, with
``d = input - target``:

* L1: ``|d|``.
* Smooth L1 (Girshick, "Fast R-CNN", 2015): ``0.5 d^2 / beta`` where ``|d| < beta``, else
  ``|d| - 0.5 beta`` (``beta = 0`` is L1).
* Huber (Huber, 1964): ``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``.
* KL divergence: ``target (log target - input)`` (0 where ``target = 0``), or with
  ``log_target=True`` ``exp(target) (target - input)``; ``input`` holds log-probabilities.
* Poisson NLL: ``exp(input) - target input`` (``log_input=True``) or
  ``input - target log(input + eps)``; ``full`` adds Stirling's
  ``target log target - target + 0.5 log(2 pi target)`` where ``target > 1``.
* Gaussian NLL: ``0.5 (log(max(var, eps)) + d^2 / max(var, eps))`` (+ ``0.5 log(2 pi)``
  with ``full``).

The smooth L1/Huber pair is one op (:class:`SmoothL1`) whose backward is written for
second derivatives; the others are compositions of differentiable ops. All are twice
differentiable.
"""
import math
import numbers

import numpy

from ..dtypes import is_floating
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .autocast import autocast_op
from . import conversion, creation, select, unary
from . import reduction as R
from . import shape as S
from .loss import check_elementwise_weight, check_pair, reduce_loss, reduction_of
from .unary import Pointwise

_KL_REDUCTIONS = ("mean", "batchmean", "sum", "none")


class SmoothL1(Pointwise):
    """Smooth L1 (``huber=False``, ``k = beta``) or Huber (``huber=True``, ``k = delta``) of
    the difference ``d``: derivative ``clip(d / beta, -1, 1)`` resp. ``clip(d, -delta, delta)``
    (PyTorch's, equal to the sign outside the quadratic zone)."""
    name = "smooth_l1_loss"

    def __init__(self, k, huber):
        self.k, self.huber = float(k), huber
        if huber:
            self.name = "huber_loss"

    def f(self, xp, d):
        k, a = self.k, xp.abs(d)
        if self.huber:
            y = xp.where(a < k, 0.5 * d * d, k * (a - 0.5 * k))
        else:
            y = xp.where(a < k, 0.5 * d * d / k, a - 0.5 * k)
        return y.astype(d.dtype, copy=False)

    def df(self, xp, d):
        k = self.k
        inside = xp.abs(d) < k
        if self.huber:
            return xp.where(inside, d, xp.sign(d) * k)
        return xp.where(inside, d / k, xp.sign(d))


class _ClampedForward(Op):
    """``max(v, eps)`` with the identity as gradient: PyTorch's ``gaussian_nll_loss`` clamps
    ``var`` in place under ``no_grad``, so the clamp is invisible to autograd."""
    name = "gaussian_nll_loss"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, eps):
        self.eps = eps

    def forward(self, xp, v):
        return xp.maximum(v, self.eps).astype(v.dtype, copy=False)

    def backward(self, xp, gy):
        return (gy,)


def _number(op, name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ArgumentTypeError(f"{op}: {name} must be a number, got {type(v).__name__}")
    return float(v)


def _difference(op, input, target):
    """``input - target`` (promoted dtype), which must be floating point."""
    d = input - target
    if not is_floating(d.dtype):
        raise DTypeError(f"{op}: expected a floating-point input or target, got {input.dtype} and {target.dtype}")
    return d


def _weighted(losses, weight, reduction, mean_by_weight):
    """``losses * weight`` reduced; PyTorch's "mean" divides by ``sum(weight)`` for mse/l1 and
    by the element count for huber."""
    if weight is None:
        return reduce_loss(losses, reduction)
    losses = losses * weight
    if reduction == "mean" and mean_by_weight:
        return R.sum(losses) / R.sum(weight)
    return reduce_loss(losses, reduction)


@autocast_op
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Mean absolute error ``|input - target|``, reduced.

    Args:
        input: tensor of any shape. target: tensor of the same shape (input and target are
            promoted; at least one must be floating point).
        size_average, reduce: PyTorch's deprecated spelling of ``reduction`` (when given,
            they decide it, with PyTorch's deprecation warning).
        reduction (str): ``"mean"`` (default), ``"sum"`` or ``"none"`` (input's shape).
        weight: optional tensor of the input's shape multiplied into each error; ``"mean"``
            is then ``sum(w |d|) / sum(w)`` (PyTorch's rule).

    Returns:
        Tensor: a scalar, or the elementwise losses for ``"none"``.

    Raises:
        ShapeError: input and target (or weight) shapes differ (PyTorch broadcasts input and
            target with a warning). DTypeError: no floating-point operand.
        ArgumentError: unknown reduction.
    """
    reduction = reduction_of("l1_loss", reduction, size_average, reduce)
    check_pair("l1_loss", input, target)
    weight = check_elementwise_weight("l1_loss", weight, input.shape)
    return _weighted(unary.abs(_difference("l1_loss", input, target)), weight, reduction, True)


@autocast_op
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """Smooth L1 loss: quadratic ``0.5 d^2 / beta`` for ``|d| < beta``, linear ``|d| - 0.5 beta``
    beyond (Girshick 2015, arXiv:1504.08083), ``d = input - target``.

    Args:
        input, target: tensors of one shape (promoted, as in :func:`l1_loss`).
        size_average, reduce, reduction: as in :func:`l1_loss`.
        beta (float): where the loss turns linear, >= 0. Default 1.0; 0 gives the L1 loss.

    Returns:
        Tensor: a scalar, or the elementwise losses for ``"none"``.

    Raises:
        ArgumentError: ``beta < 0`` or unknown reduction. ArgumentTypeError: ``beta`` is not
            a number. ShapeError, DTypeError: as in :func:`l1_loss`.
    """
    reduction = reduction_of("smooth_l1_loss", reduction, size_average, reduce)
    beta = _number("smooth_l1_loss", "beta", beta)
    if beta < 0:
        raise ArgumentError(f"smooth_l1_loss: does not support negative values for beta, got {beta}")
    check_pair("smooth_l1_loss", input, target)
    d = _difference("smooth_l1_loss", input, target)
    return reduce_loss(unary.abs(d) if beta == 0 else SmoothL1(beta, False).apply(d), reduction)


@autocast_op
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """Huber loss (Huber 1964): ``0.5 d^2`` for ``|d| < delta``, ``delta (|d| - 0.5 delta)``
    beyond, ``d = input - target``; equals ``delta * smooth_l1_loss(beta=delta)``.

    Args:
        input: floating-point tensor; the result has its dtype (PyTorch's rule: the target is
            converted to it). target: tensor of the same shape.
        reduction (str): ``"mean"`` (default), ``"sum"`` or ``"none"``.
        delta (float): where the loss turns linear, > 0. Default 1.0.
        weight: optional tensor of the input's shape multiplied into each loss (``"mean"``
            still divides by the element count, as PyTorch does).

    Raises:
        ArgumentError: ``delta <= 0`` or unknown reduction. DTypeError: integer input.
        ShapeError: input, target or weight shapes differ.
    """
    reduction = reduction_of("huber_loss", reduction)
    delta = _number("huber_loss", "delta", delta)
    if not delta > 0:
        raise ArgumentError(f"huber_loss: does not support non-positive values for delta, got {delta}")
    check_pair("huber_loss", input, target)
    weight = check_elementwise_weight("huber_loss", weight, input.shape)
    if not is_floating(input.dtype):
        raise DTypeError(f"huber_loss: expected a floating-point input, got {input.dtype}")
    if target.dtype != input.dtype:
        target = conversion.to(target, input.dtype)
    losses = SmoothL1(delta, True).apply(input - target)
    return _weighted(losses, weight, reduction, False)


@autocast_op
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """Kullback-Leibler divergence ``KL(target || exp(input))`` elementwise, reduced.

    ``input`` holds log-probabilities (e.g. ``log_softmax``); ``target`` holds probabilities,
    or log-probabilities with ``log_target=True``. Elementwise:
    ``target * (log(target) - input)`` (0 where ``target == 0``, NaN where it is negative), or
    ``exp(target) * (target - input)``.

    Args:
        input: float tensor (N, *). target: float tensor of the same shape.
        size_average, reduce: PyTorch's deprecated spelling of ``reduction``.
        reduction (str): ``"mean"`` (default; the mean over *all* elements), ``"batchmean"``
            (the sum divided by N, the true KL divergence per sample), ``"sum"`` or ``"none"``.
            Unlike PyTorch, ``"mean"`` does not warn that it differs from ``"batchmean"``.
        log_target (bool): ``target`` is given as log-probabilities. Default False.

    Returns:
        Tensor: a scalar, or the elementwise losses for ``"none"``.

    Raises:
        ShapeError: shapes differ (PyTorch broadcasts silently). DTypeError: an integer
            input or target. ArgumentError: unknown reduction.

    The target's gradient at ``target == 0`` is ``-input`` (the limit with ``0 log 0 = 0``);
    PyTorch gives NaN there.
    """
    reduction = reduction_of("kl_div", reduction, size_average, reduce, _KL_REDUCTIONS)
    check_pair("kl_div", input, target)
    if not is_floating(input.dtype) or not is_floating(target.dtype):
        raise DTypeError(f"kl_div: integral inputs not supported, got input {input.dtype} and target {target.dtype}")
    if log_target:
        losses = unary.exp(target) * (target - input)
    else:  # xlogy(t, t) - t * x
        losses = target * unary.log(select.where(target == 0, 1.0, target)) - target * input
    if reduction != "batchmean":
        return reduce_loss(losses, reduction)
    total = R.sum(losses)
    return total / input.shape[0] if input.ndim else total


@autocast_op
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                     reduction="mean"):
    """Negative log-likelihood of a Poisson-distributed ``target`` with rate ``exp(input)``
    (``log_input=True``) or ``input``.

    Elementwise ``exp(input) - target * input``, or ``input - target * log(input + eps)``;
    ``full=True`` adds the Stirling approximation of ``log(target!)``,
    ``target log target - target + 0.5 log(2 pi target)``, where ``target > 1``.

    Args:
        input, target: tensors of one shape (promoted; integer ones give the default float).
        log_input (bool): ``input`` is the log of the rate. Default True.
        full (bool): add the Stirling term. Default False.
        size_average, reduce: PyTorch's deprecated spelling of ``reduction``.
        eps (float): keeps ``log`` finite when ``log_input=False``. Default 1e-8.
        reduction (str): ``"mean"`` (default), ``"sum"`` or ``"none"``.

    Raises:
        ShapeError: shapes differ (PyTorch broadcasts). ArgumentError: unknown reduction.

    With ``full=True`` the target's gradient where ``target <= 1`` (the Stirling term masked
    out) is that of the remaining terms; PyTorch gives NaN there for ``target = 0``.
    """
    reduction = reduction_of("poisson_nll_loss", reduction, size_average, reduce)
    check_pair("poisson_nll_loss", input, target)
    eps = _number("poisson_nll_loss", "eps", eps)
    if log_input:
        losses = unary.exp(input) - target * input
    else:
        losses = input - target * unary.log(input + eps)
    if full:
        big = target > 1
        t = select.where(big, target, 1)  # keeps log finite where the term is masked out
        stirling = t * unary.log(t) - t + 0.5 * unary.log(2 * math.pi * t)
        losses = losses + select.where(big, stirling, 0.0)
    return reduce_loss(losses, reduction)


def _gaussian_var(input, var):
    """``var`` shaped to broadcast with ``input`` by PyTorch's rules (heteroscedastic: the
    input's shape; homoscedastic: one dimension short, or one mismatched dimension of 1)."""
    if var.shape == input.shape:
        return var
    if var.shape == input.shape[:-1]:
        return S.unsqueeze(var, -1)
    if var.ndim == input.ndim and sum(v for i, v in zip(input.shape, var.shape) if i != v) == 1:
        return var
    raise ShapeError(f"gaussian_nll_loss: var is of incorrect size: expected {input.shape}, {input.shape[:-1]} "
                     f"or {input.shape} with one dimension 1, got {var.shape}")


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """Negative log-likelihood of ``target`` under a normal distribution of mean ``input``
    and variance ``var``: ``0.5 (log v + (input - target)^2 / v)``, ``v = max(var, eps)``
    (the clamp passes gradients through unchanged, as in PyTorch), plus ``0.5 log(2 pi)``
    with ``full``.

    Args:
        input: float tensor (N, *), the predicted means. target: tensor of the same shape.
        var: positive variances: a tensor of the input's shape, of the input's shape without
            its last dimension, or of the input's shape with one dimension 1; or a number.
        full (bool): include the constant. Default False.
        eps (float): the smallest variance used. Default 1e-6.
        reduction (str): ``"mean"`` (default), ``"sum"`` or ``"none"``.

    Raises:
        ArgumentError: a negative variance (checked on the CPU only: on the GPU the check
            would force a host synchronisation), or unknown reduction.
        ShapeError: ``var`` has none of the allowed shapes, or target's shape differs from
            input's (PyTorch broadcasts them).
    """
    if not isinstance(input, Tensor):
        raise ArgumentTypeError(f"gaussian_nll_loss: input must be a Tensor, got {type(input).__name__}")
    for name, t in (("input", input), ("target", target), ("var", var)):
        if isinstance(t, Tensor) and t.array.dtype.kind == "c":  # as PyTorch (no complex Gaussian here)
            raise DTypeError(f"gaussian_nll_loss: {name} must be a real tensor, got {t.dtype}")
    if isinstance(var, Tensor):
        if isinstance(var.array, numpy.ndarray) and bool((var.array < 0).any()):
            raise ArgumentError("gaussian_nll_loss: var has negative entry/entries")
        var = _gaussian_var(input, var)
    else:
        if _number("gaussian_nll_loss", "var", var) < 0:
            raise ArgumentError(f"gaussian_nll_loss: var has negative entry/entries, got {var}")
        var = creation.full_like(input, var)
    reduction = reduction_of("gaussian_nll_loss", reduction)
    check_pair("gaussian_nll_loss", input, target)
    v = _ClampedForward(_number("gaussian_nll_loss", "eps", eps)).apply(var)
    d = input - target
    losses = 0.5 * (unary.log(v) + d * d / v)
    if full:
        losses = losses + 0.5 * math.log(2 * math.pi)
    return reduce_loss(losses, reduction)
