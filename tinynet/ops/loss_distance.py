"""Losses on distances and margins: ``hinge_embedding_loss``, ``triplet_margin_loss``,
``triplet_margin_with_distance_loss``, ``multilabel_soft_margin_loss`` and
``multi_margin_loss`` (PyTorch's formulas, composed of differentiable ops; the distances
themselves are in :mod:`.distance`).

* Hinge embedding: ``x`` where ``y = 1``, ``max(0, margin - x)`` where ``y = -1``
  (a label of neither kind contributes both terms, as PyTorch's).
* Triplet margin (Schroff et al., 2015, "FaceNet", arXiv:1503.03832; the swap of Balntas
  et al., 2016): ``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the
  :func:`pairwise_distance` (``eps`` added to the difference); with ``swap``,
  ``d(a, n)`` becomes ``min(d(a, n), d(p, n))``.
* Multi-class margin (Weston and Watkins, 1999): per sample
  ``sum_{i != y} w[y] max(0, margin - x[y] + x[i])^p / C``, ``p`` 1 or 2.
* Multi-label soft margin: ``-(y log sigmoid(x) + (1 - y) log sigmoid(-x))`` per class
  (times ``weight``), averaged over the classes (the last dimension).
"""
import numbers

import numpy

from .. import backend
from ..errors import ShapeError
from ..tensor import Tensor
from . import unary
from .loss import check_pair, reduce_loss, reduction_of
from .compare_extrema import minimum
from .select import where
from .reduction import mean as _mean
from .distance import pairwise_distance
from .smooth_activations import logsigmoid
from .util import check_float, check_number, check_tensor


def _float_pair(op, input, target, reduction, size_average, reduce):
    """The checks of a loss of a float ``input`` against a ``target`` of its shape; returns
    the reduction (PyTorch's legacy ``size_average``/``reduce`` folded in)."""
    reduction = reduction_of(op, reduction, size_average, reduce)
    check_pair(op, input, target)
    check_float(op, "input", input)
    return reduction


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None, reduction="mean"):
    """Hinge embedding loss of distances ``input`` with labels ``target`` (+-1).

    Args:
        input (Tensor): float, any shape. target (Tensor): the same shape, 1 or -1.
        margin (float): default 1.0.
        size_average, reduce, reduction: PyTorch's (``"mean"``, ``"sum"`` or ``"none"``).

    Raises:
        ArgumentTypeError: non-Tensor inputs or a non-number margin.
        DTypeError: a non-float input.
        ShapeError: shapes differ.
        ArgumentError: an unknown reduction.
    """
    op = "hinge_embedding_loss"
    reduction = _float_pair(op, input, target, reduction, size_average, reduce)
    check_number(op, "margin", margin)
    margin_part = where(target != 1, unary.clamp(margin - input, min=0), 0.0)
    self_part = where(target != -1, input, 0.0)
    return reduce_loss(margin_part + self_part, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False, size_average=None,
                        reduce=None, reduction="mean"):
    """Triplet margin loss ``max(0, margin + d(a, p) - d(a, n))`` over (N, D) or (D,) inputs.

    Args:
        anchor, positive, negative (Tensor): float, all of one rank (1 or 2).
        margin (float): default 1.0. p (float): the norm's degree, default 2.
        eps (float): added to differences (``pairwise_distance``), default 1e-6.
        swap (bool): use ``min(d(a, n), d(p, n))`` as the negative distance. Default False.
        size_average, reduce, reduction: PyTorch's.

    Raises:
        ArgumentTypeError / DTypeError: non-float Tensors.
        ShapeError: ranks differ or are not 1 or 2.
        ArgumentError: an unknown reduction.
    """
    op = "triplet_margin_loss"
    reduction = reduction_of(op, reduction, size_average, reduce)
    for name, t in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        check_float(op, name, t)
    ranks = {anchor.ndim, positive.ndim, negative.ndim}
    if len(ranks) != 1 or ranks.pop() not in (1, 2):
        raise ShapeError(f"{op}: the anchor, positive and negative must all be 1-D or all 2-D, got "
                         f"{anchor.ndim}-D, {positive.ndim}-D and {negative.ndim}-D")
    check_number(op, "margin", margin)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return reduce_loss(unary.clamp(margin + d_pos - d_neg, min=0), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    """Multi-label one-versus-all logistic loss over (N, C) or (C,) scores and 0/1 targets.

    Args:
        input (Tensor): float (N, C) or (C,). target (Tensor): the same shape, 0 or 1.
        weight (Tensor, optional): per-class weights (C,).
        size_average, reduce, reduction: PyTorch's; ``"none"`` gives one loss per sample.

    Raises:
        ArgumentTypeError / DTypeError: non-Tensor or non-float input.
        ShapeError: shapes differ.
        ArgumentError: an unknown reduction.
    """
    op = "multilabel_soft_margin_loss"
    reduction = _float_pair(op, input, target, reduction, size_average, reduce)
    if input.ndim not in (1, 2):
        raise ShapeError(f"{op}: expected input of shape (N, C) or (C,), got {tuple(input.shape)}")
    t = target.to(input.dtype)
    losses = -(t * logsigmoid(input) + (1 - t) * logsigmoid(-input))
    if weight is not None:
        losses = losses * check_tensor(op, "weight", weight)
    return reduce_loss(_mean(losses, dim=-1), reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                      reduction="mean"):
    """Multi-class hinge loss: per sample ``sum_{i != y} w[y] max(0, margin - x[y] + x[i])^p / C``.

    Args:
        input (Tensor): float (N, C) scores, or (C,) for one sample.
        target (Tensor): int64 class indices (N,) (or 0-d / (1,) for one sample).
        p (int): 1 or 2. Default 1. margin (float): default 1.0.
        weight (Tensor, optional): float (C,) class weights.
        size_average, reduce, reduction: PyTorch's.

    Raises:
        ArgumentTypeError / DTypeError: non-Tensors, a non-float input, a non-integer target.
        ArgumentError: ``p`` not 1 or 2, an unknown reduction.
        ShapeError: mismatched shapes.
        IndexOutOfRangeError: a target outside ``[0, C)`` (checked on the CPU).
    """
    from ..errors import ArgumentError, DTypeError, IndexOutOfRangeError
    from .gather import gather
    from .reduction import sum as _sum
    op = "multi_margin_loss"
    reduction = reduction_of(op, reduction, size_average, reduce)
    check_float(op, "input", input)
    check_tensor(op, "target", target)
    if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p not in (1, 2):
        raise ArgumentError(f"{op}: only p == 1 and p == 2 supported, got {p!r}")
    check_number(op, "margin", margin)
    if input.ndim not in (1, 2) or input.numel() == 0 and input.ndim == 1:
        raise ShapeError(f"{op}: expected a non-empty vector or a matrix, got shape {tuple(input.shape)}")
    if target.array.dtype.kind not in "iu":
        raise DTypeError(f"{op}: expected an integer target (class indices), got {target.dtype}")
    backend.common_module(op, [t.array for t in (input, target, weight) if isinstance(t, Tensor)])
    x = input if input.ndim == 2 else input.reshape(1, -1)
    n, c = x.shape
    if target.numel() != n or target.ndim > 1:
        raise ShapeError(f"{op}: target should be 1-D with one class index per sample ({n}), got shape "
                         f"{tuple(target.shape)}")
    t = target.reshape(n, 1)
    a = t.array
    if isinstance(a, numpy.ndarray) and a.size and (a.min() < 0 or a.max() >= c):
        raise IndexOutOfRangeError(f"{op}: target out of range: class indices must be in [0, {c}), got "
                                   f"{int(a.min() if a.min() < 0 else a.max())}")
    if weight is not None:
        check_float(op, "weight", weight)
        if tuple(weight.shape) != (c,):
            raise ShapeError(f"{op}: weight must have shape ({c},), got {tuple(weight.shape)}")
    hinge = unary.clamp(margin - gather(x, 1, t) + x, min=0)
    if p == 2:
        hinge = hinge * hinge
    if weight is not None:
        hinge = hinge * gather(weight.reshape(1, c).expand(n, c), 1, t)
    xp = backend.array_module(a)
    others = xp.arange(c).reshape(1, c) != a.reshape(n, 1)  # the target's own term is left out
    per_sample = _sum(where(Tensor._wrap(others), hinge, 0.0), 1) / c
    if input.ndim == 1:
        per_sample = per_sample.reshape(())
    return reduce_loss(per_sample, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None, margin=1.0, swap=False,
                                      reduction="mean"):
    """Triplet margin loss ``max(0, margin + d(a, p) - d(a, n))`` with any distance ``d``.

    Args:
        anchor, positive, negative (Tensor): inputs of one rank that ``distance_function`` takes.
        distance_function (callable): two tensors -> distances; default
            :func:`pairwise_distance` (the Euclidean distance, eps 1e-6).
        margin (float): > 0. Default 1.0.
        swap (bool): use ``min(d(a, n), d(p, n))`` as the negative distance. Default False.
        reduction (str): ``"mean"``, ``"sum"`` or ``"none"``.

    Raises:
        ArgumentTypeError: non-Tensors, or a distance_function that is not callable.
        ShapeError: the three ranks differ.
        ArgumentError: a margin <= 0, an unknown reduction.
    """
    from ..errors import ArgumentError, ArgumentTypeError
    op = "triplet_margin_with_distance_loss"
    reduction = reduction_of(op, reduction)
    for name, t in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        check_tensor(op, name, t)
    if not (anchor.ndim == positive.ndim == negative.ndim):
        raise ShapeError(f"{op}: the anchor, positive and negative must have the same number of dimensions, got "
                         f"{anchor.ndim}, {positive.ndim} and {negative.ndim}")
    if check_number(op, "margin", margin) <= 0:
        raise ArgumentError(f"{op}: margin must be greater than 0, got {margin}")
    if distance_function is not None and not callable(distance_function):
        raise ArgumentTypeError(f"{op}: distance_function must be callable, got {type(distance_function).__name__}")
    d = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = d(anchor, positive), d(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, d(positive, negative))
    return reduce_loss(unary.clamp(margin + d_pos - d_neg, min=0), reduction)

