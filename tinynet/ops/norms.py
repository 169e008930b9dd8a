"""Vector and matrix norms: ``linalg.vector_norm``, ``linalg.matrix_norm``, ``linalg.norm``.

* ``vector_norm``: ``(sum |x|^ord)^(1/ord)`` over ``dim``; ``inf``/``-inf`` the largest/smallest
  ``|x|``, 0 the count of nonzeros (the reduction op of ``tinynet.norm``, whose gradient is
  ``sign(x) |x|^(ord-1) / ||x||^(ord-1)``).
* ``matrix_norm`` over two dims (Golub & Van Loan, "Matrix Computations", chapter 2): ``"fro"``
  the 2-norm of the entries, ``"nuc"`` the sum of the singular values, ``2``/``-2`` the
  largest/smallest singular value, ``1``/``-1`` the largest/smallest column sum of ``|A|``,
  ``inf``/``-inf`` the largest/smallest row sum. Composed of ``svdvals``, ``abs``, ``sum``
  and ``amax``/``amin`` (ties share the gradient, as PyTorch's), so differentiable.
* ``norm`` picks one of the two from ``ord`` and ``dim``, as PyTorch's ``linalg.norm``.
"""
import math
import numbers

import numpy

from .. import dtypes
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .lapack_decomp import svdvals
from .lapack_util import check_float
from .reduction import amax, amin, sum as _sum
from .shape import movedim, unsqueeze
from .stats import Norm
from .unary import abs as _abs
from .util import check_flag, dim_index, dims_tuple


def _cast(op, x, dtype):
    """``x`` cast to ``dtype`` (a float dtype no narrower than x's, as PyTorch asks)."""
    if dtype is None:
        return x
    dt = dtypes.as_dtype(dtype, op)
    if not dtypes.is_floating(dt):
        raise DTypeError(f"{op}: dtype should be floating point, but got {dt}")
    if numpy.dtype(dt).itemsize < x.dtype.itemsize:
        raise DTypeError(f"{op}: the dtype of the input ({x.dtype}) should be convertible without narrowing to the "
                         f"specified dtype ({dt})")
    return x.to(dt) if dt != x.dtype else x


def _ord(op, ord):
    if isinstance(ord, Tensor) and ord.numel() == 1:
        ord = ord.item()
    if isinstance(ord, bool) or not isinstance(ord, (numbers.Real, numpy.floating, numpy.integer)):
        raise ArgumentTypeError(f"{op}: ord must be a number, got {type(ord).__name__}")
    return float(ord)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The vector ``ord``-norm of ``x`` over ``dim`` (an int, a tuple; None or () for all).

    Args:
        ord: any real number, ``inf``, ``-inf``; 0 counts nonzeros. Default 2.
        keepdim (bool). dtype: compute in (and return) this float dtype, no narrower than x's.

    Returns:
        x's dtype (or ``dtype``). Differentiable (0 gradient for ord 0).

    Raises:
        ArgumentTypeError: x not a Tensor, ord not a number.
        DTypeError: integer input (as PyTorch), or a narrowing or non-float ``dtype``.
        IndexOutOfRangeError: a dim out of range.
        ArgumentError: ``inf`` or a negative ord over an empty dim (no identity).
    """
    op = "linalg.vector_norm"
    if not isinstance(x, Tensor):
        raise ArgumentTypeError(f"{op}: x must be a Tensor, got {type(x).__name__}")
    check_float(op, "x", x, low_precision=True)
    p = _ord(op, ord)
    keepdim = check_flag(op, "keepdim", keepdim)
    x = _cast(op, x, dtype)
    axes = dims_tuple(op, None if isinstance(dim, (tuple, list)) and len(dim) == 0 else dim, x.ndim)
    if (p < 0 or p == math.inf) and any(x.shape[a] == 0 for a in axes):
        raise ArgumentError(f"{op}: cannot compute the {ord} norm over an empty dimension, because the operation has "
                            f"no identity (shape {tuple(x.shape)}, dim {dim})")
    return Norm(axes, keepdim, p).apply(x)


MATRIX_ORDS = ("fro", "nuc", math.inf, -math.inf, 1, -1, 2, -2)


def _matrix_dims(op, A, dim):
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise ArgumentError(f"{op}: dim must be a 2-tuple, got {dim!r}")
    d0, d1 = dim_index(op, dim[0], A.ndim), dim_index(op, dim[1], A.ndim)
    if d0 == d1:
        raise ArgumentError(f"{op}: dims must be different, got {tuple(dim)}")
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The matrix ``ord``-norm of ``A`` over the two dims ``dim`` (see the module's table).

    Args:
        ord: ``"fro"`` (default), ``"nuc"``, ``inf``, ``-inf``, 1, -1, 2, -2.
        dim: two different dims (default the last two). keepdim (bool). dtype: as
            :func:`vector_norm`.

    Returns:
        A's dtype (or ``dtype``), the two dims removed (kept as size 1 with keepdim); 0 for
        empty matrices. Differentiable. ``"nuc"``, 2 and -2 need float32/float64 (the SVD).

    Raises:
        ArgumentTypeError: A not a Tensor.
        ShapeError: fewer than 2 dims.
        DTypeError: integer input, or low precision with an SVD order.
        ArgumentError: an unknown ord, or dim not two different dims.
        IndexOutOfRangeError: a dim out of range, or a negative ord of an empty matrix
            (PyTorch's amin refuses it too).
    """
    op = "linalg.matrix_norm"
    if not isinstance(A, Tensor):
        raise ArgumentTypeError(f"{op}: A must be a Tensor, got {type(A).__name__}")
    if A.ndim < 2:
        raise ShapeError(f"{op}: The input tensor A must have at least 2 dimensions, got shape {tuple(A.shape)}")
    check_float(op, "A", A, low_precision=True)
    ord = ord if isinstance(ord, str) else _ord(op, ord)
    if ord not in MATRIX_ORDS:
        raise ArgumentError(f"{op}: Order {ord} not supported (one of {list(MATRIX_ORDS)})")
    keepdim = check_flag(op, "keepdim", keepdim)
    d0, d1 = _matrix_dims(op, A, dim)
    A = _cast(op, A, dtype)
    if ord in ("nuc", 2, -2):
        check_float(op, "A", A)
    empty = A.shape[d0] == 0 or A.shape[d1] == 0
    if ord == "fro" or (empty and (ord == "nuc" or ord > 0)):  # 0 for empty matrices (negative ords: amin refuses)
        return Norm(tuple(sorted((d0, d1))), keepdim, 2.0).apply(A)
    x = movedim(A, (d0, d1), (-2, -1))
    if ord == "nuc":
        out = _sum(svdvals(x), -1)
    elif ord in (2, -2):
        out = (amax if ord == 2 else amin)(svdvals(x), -1)
    elif ord in (1, -1):
        out = (amax if ord == 1 else amin)(_sum(_abs(x), -2), -1)
    else:
        out = (amax if ord > 0 else amin)(_sum(_abs(x), -1), -1)
    if keepdim:
        for d in sorted((d0, d1)):
            out = unsqueeze(out, d)
    return out


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """A vector or a matrix norm, as PyTorch's ``linalg.norm`` chooses: a str ``ord`` or a
    2-tuple ``dim`` (or, with ``dim=None``, a number ``ord`` on a 2-D input) gives
    :func:`matrix_norm`; an int or 1-tuple ``dim`` (or a 1-D input) gives :func:`vector_norm`;
    ``ord=None`` with ``dim=None`` is the 2-norm of all entries, whatever the rank.

    Raises:
        ShapeError: a number or str ``ord`` with ``dim=None`` on an input that is not 1-D
            or 2-D (and the errors of the two norms).
        ArgumentError: ``dim`` of length other than 1 or 2.
    """
    op = "linalg.norm"
    if not isinstance(A, Tensor):
        raise ArgumentTypeError(f"{op}: A must be a Tensor, got {type(A).__name__}")
    if isinstance(dim, (numbers.Integral, numpy.integer)) and not isinstance(dim, bool):
        dim = (int(dim),)
    if dim is not None:
        if not isinstance(dim, (tuple, list)) or len(dim) not in (1, 2):
            raise ArgumentError(f"{op}: If dim is specified, it must be of length 1 or 2. Got {dim!r}")
        if len(dim) == 2 or isinstance(ord, str):
            return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if ord is None:
        return vector_norm(A, 2, None, keepdim, dtype=dtype)
    if A.ndim not in (1, 2):
        raise ShapeError(f"{op}: If dim is not specified but ord is, the input must be 1D or 2D. Got {A.ndim}D")
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype)
    if isinstance(ord, str):
        raise ShapeError(f"{op}: ord={ord!r} is a matrix norm, but the input is 1-D")
    return vector_norm(A, ord, None, keepdim, dtype=dtype)
