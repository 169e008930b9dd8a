"""Distances and similarities, written with tinynet's differentiable ops (so forward and
backward come from those ops, on both devices):

* ``cosine_similarity(x1, x2, dim, eps)``: ``sum(x1/n1 * x2/n2)`` with ``n = max(||x||_2, eps)``
  along ``dim``, each input divided by its own norm first as PyTorch does (the result stays in
  [-1, 1]); the clamp to ``eps`` changes the value but not the gradient, as PyTorch's (it
  clamps the norms in place under no_grad).
* ``pairwise_distance(x1, x2, p, eps, keepdim)``: ``||x1 - x2 + eps||_p`` over the last dim.
* ``cdist(x1, x2, p)``: ``||x1[..., i, :] - x2[..., j, :]||_p`` for every pair (batch
  dims broadcast). Computed from the differences, so float32 results can differ from
  PyTorch's matrix-product shortcut for p = 2 in the last digits.
* ``pdist(input, p)``: the ``cdist`` of the rows of one (N, M) input with themselves, for the
  pairs ``i < j`` only.
"""

import numpy

from ..autograd import no_grad
from ..errors import ShapeError
from .arith import _check_shapes, add, mul, sub
from .autocast import autocast_op
from .division import div
from .reduction import sum as _sum
from .stats import norm
from .unary import clamp
from .util import check_float, check_number, dim_index


@autocast_op
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Cosine similarity of ``x1`` and ``x2`` (broadcast together) along ``dim``.

    Args:
        x1, x2 (Tensor): float, broadcastable shapes.
        dim (int): the dimension of the vectors. Default 1.
        eps (float): the smallest norm divided by. Default 1e-8.

    Returns:
        Tensor of the broadcast shape without ``dim``; values in [-1, 1].

    Raises:
        ArgumentTypeError: not Tensors.
        DTypeError: not floating point.
        ShapeError: shapes that do not broadcast.
        IndexOutOfRangeError: ``dim`` outside the broadcast shape.
    """
    check_float("cosine_similarity", "x1", x1)
    check_float("cosine_similarity", "x2", x2)
    check_number("cosine_similarity", "eps", eps)
    _check_shapes("cosine_similarity", x1, x2)
    shape = numpy.broadcast_shapes(x1.shape, x2.shape)  # both broadcast first, as PyTorch's expand_outplace
    d = dim_index("cosine_similarity", dim, len(shape))
    x1 = x1 if x1.shape == shape else x1.expand(*shape)
    x2 = x2 if x2.shape == shape else x2.expand(*shape)
    return _sum(mul(div(x1, _clamped_norm(x1, d, eps)), div(x2, _clamped_norm(x2, d, eps))), dim=d)


def _clamped_norm(x, dim, eps):
    """``||x||_2`` along ``dim`` (kept) with its value raised to ``eps`` but its gradient the
    norm's own (PyTorch clamps in place under no_grad)."""
    n = norm(x, 2, dim, keepdim=True)
    with no_grad():
        lift = clamp(n, min=eps) - n
    return add(n, lift)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dimension (inputs broadcast together).

    Args:
        x1, x2 (Tensor): float, broadcastable, at least 1-D.
        p (float): the norm's exponent (``inf`` allowed). Default 2.
        eps (float): added to the difference, as PyTorch (avoids the norm's kink at 0).
            Default 1e-6.
        keepdim (bool): keep the last dimension as size 1. Default False.

    Raises:
        ArgumentTypeError: not Tensors.
        DTypeError: not floating point.
        ShapeError: shapes that do not broadcast, or 0-d inputs.
    """
    check_float("pairwise_distance", "x1", x1)
    check_float("pairwise_distance", "x2", x2)
    check_number("pairwise_distance", "p", p)
    check_number("pairwise_distance", "eps", eps)
    if max(x1.ndim, x2.ndim) == 0:
        raise ShapeError("pairwise_distance: expected inputs with at least one dimension, got two 0-d tensors")
    _check_shapes("pairwise_distance", x1, x2)
    return norm(add(sub(x1, x2), eps), p, -1, keepdim=bool(keepdim))


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Pairwise p-norm distances between the rows of ``x1`` (B, P, M) and ``x2`` (B, R, M)
    (batch dims broadcast; 2-D inputs have none): a (B, P, R) tensor.

    Args:
        x1, x2 (Tensor): float, at least 2-D, the same last dimension.
        p (float): the norm's degree, ``>= 0`` (``inf`` allowed). Default 2.
        compute_mode (str): accepted for PyTorch compatibility; the distances are always
            computed from the differences.

    Raises:
        ArgumentTypeError / DTypeError: non-float Tensors.
        ShapeError: fewer than 2 dims, or different last dimensions.
        ArgumentError: ``p < 0``.
    """
    op = "cdist"
    check_float(op, "x1", x1)
    check_float(op, "x2", x2)
    check_number(op, "p", p, minimum=0)
    if x1.ndim < 2 or x2.ndim < 2:
        raise ShapeError(f"{op}: x1 and x2 must be at least 2-D, got {tuple(x1.shape)} and {tuple(x2.shape)}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ShapeError(f"{op}: x1 and x2 must have the same number of columns, got {x1.shape[-1]} and "
                         f"{x2.shape[-1]}")
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (..., P, R, M)
    return norm(diff, p, -1)


def pdist(input, p=2):
    """The p-norm distances between every pair of rows ``i < j`` of a (N, M) ``input``, in
    the order of the upper triangle read row by row: a (N (N - 1) / 2,) tensor.

    Args:
        input (Tensor): float (N, M).
        p (float): the norm's degree, ``>= 0`` (``inf`` allowed). Default 2.

    Raises:
        ArgumentTypeError: a non-float input.
        ShapeError: ``input`` is not 2-D.
        ArgumentError: a negative ``p``.
    """
    check_float("pdist", "input", input)
    if input.ndim != 2:
        raise ShapeError(f"pdist: only supports 2-D tensors, got {input.ndim}-D")
    check_number("pdist", "p", p, 0.0)
    rows, cols = numpy.triu_indices(input.shape[0], 1)
    return norm(input[rows] - input[cols], p, dim=1)
