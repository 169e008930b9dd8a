"""Linear systems: ``linalg.solve``, ``linalg.inv`` (and ``inv_ex``, ``torch.inverse``),
``linalg.solve_triangular``.

Numerics: ``numpy.linalg.solve``/``inv`` or ``cupy.linalg`` (LU with partial pivoting,
LAPACK ``gesv``/``getrf``+``getri``); triangular solves by BLAS ``trsm``
(``scipy.linalg.blas`` / ``cupyx.scipy.linalg.solve_triangular``).

Gradients (Giles 2008, "An extended collection of matrix derivative results for forward
and reverse mode algorithmic differentiation"): for ``X = A^{-1} B``,
``gB = A^{-T} gX`` and ``gA = -gB X^T``; for ``Y = A^{-1}``, ``gA = -Y^T gY Y^T``. For a
triangular ``A`` the same formula restricted to the triangle that is read (the strict
triangle with ``unitriangular``), as PyTorch does. ``left=False`` (``X A = B``) is the
transposed system, composed of differentiable transposes.
"""
import collections

import numpy

from ..autograd import Op
from ..errors import ArgumentTypeError, ShapeError
from ..tensor import Tensor
from .lapack_util import (broadcast_batches, check_float, check_matrix, check_same_dtype, contiguous, factor_info,
                          host_tensor, mT, raising, singular_error, tri_solve)
from .shape import squeeze, transpose, unsqueeze
from .util import check_flag

InvExResult = collections.namedtuple("linalg_inv_ex", ["inverse", "info"])  # type: ignore[name-match]  # torch.return_types


class Solve(Op):
    """``X = A^{-1} B`` for one batch shape, ``B`` a batch of matrices. Its backward solves
    with ``A^T`` through this op again, so it is twice differentiable."""
    name = "linalg.solve"
    twice_differentiable = True

    def forward(self, xp, a, b):
        ac, bc = contiguous(xp, a, b)
        if ac.size == 0 or bc.size == 0:  # nothing to solve (CuPy's solve divides by the sizes)
            x = xp.zeros(bc.shape, dtype=bc.dtype)
            self.save_for_backward(a, x)
            return x
        try:
            with raising(xp):
                x = xp.linalg.solve(ac, bc)
        except numpy.linalg.LinAlgError:
            raise singular_error(self.name, "A", ac) from None
        self.save_for_backward(a, x)
        return x

    def backward(self, xp, gx):
        a, x = self.saved
        gb = Solve().call(xp, mT(a), gx)
        ga = -(gb @ mT(x)) if self.needs_input_grad[0] else None
        return ga, gb


class Inv(Op):
    """``Y = A^{-1}`` (twice differentiable: the backward is products of ``Y``)."""
    name = "linalg.inv"
    twice_differentiable = True

    def forward(self, xp, a):
        try:
            with raising(xp):
                y = xp.linalg.inv(contiguous(xp, a))
        except numpy.linalg.LinAlgError:
            raise singular_error(self.name, "A", a) from None
        self.save_for_backward(y)
        return y

    def backward(self, xp, gy):
        (y,) = self.saved
        yt = mT(y)
        return (-(yt @ gy @ yt),)


class InvEx(Inv):
    """``inv_ex``: singular matrices give NaN and a nonzero ``info`` instead of an error."""
    name = "linalg.inv_ex"

    def forward(self, xp, a):
        info = factor_info("getrf", a)
        self.info = info
        bad = xp.asarray(info != 0)[..., None, None]
        eye = xp.eye(a.shape[-1], dtype=a.dtype)
        with numpy.errstate(invalid="ignore", divide="ignore"):
            y = xp.linalg.inv(contiguous(xp, xp.where(bad, eye, a)))
        y = xp.where(bad, xp.asarray(numpy.nan, dtype=a.dtype), y)
        self.save_for_backward(y)
        return y


def solve(A, B, *, left=True):
    """The solution ``X`` of ``A X = B`` (``X A = B`` with ``left=False``) for square ``A``.

    Args:
        A: (*, n, n), float32/float64. B: (*, n, k) -- or (*, n), a batch of vectors, when
            it is 1-D or has ``A``'s shape without the last dim (PyTorch's rule); batch dims
            broadcast. With ``left=False``, B is (*, k, n).
        left (bool): solve ``A X = B`` (default) or ``X A = B``.

    Returns:
        X of B's (broadcast) shape, A's dtype. Differentiable in both (Giles 2008).

    Raises:
        ArgumentTypeError: A or B is not a Tensor.
        ShapeError: A not square, sizes that do not match, batches that do not broadcast.
        DTypeError: integer or low-precision dtypes, or A and B of different dtypes.
        LinAlgError: A singular (LU found a zero pivot), as PyTorch.
    """
    op = "linalg.solve"
    check_matrix(op, "A", A, square=True)
    if not isinstance(B, Tensor):
        raise ArgumentTypeError(f"{op}: B must be a Tensor, got {type(B).__name__}")
    check_float(op, "B", B)
    check_same_dtype(op, "A", A, "B", B)
    left = check_flag(op, "left", left)
    vector = left and (B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1])))
    if B.ndim < 2 and not vector:
        raise ShapeError(f"{op}: The input tensor B must have at least 2 dimensions, got shape {tuple(B.shape)}")
    Bm = unsqueeze(B, -1) if vector else (B if left else transpose(B, -2, -1))
    Am = A if left else transpose(A, -2, -1)
    n = A.shape[-1]
    if Bm.shape[-2] != n:
        eq, shown = ("AX = B", tuple(Bm.shape[-2:])) if left else ("XA = B", tuple(B.shape[-2:]))
        raise ShapeError(f"{op}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                         f"{shown[0]}x{shown[1]}; B has shape {tuple(B.shape)})")
    A0 = Am
    Am, Bm = broadcast_batches(op, {"A": Am, "B": Bm}, (2, 2))
    if not Bm.numel() and A0.numel() and factor_info("getrf", A0.array).any():
        raise singular_error(op, "A", A0.array)  # PyTorch factors A also when B has no elements
    X = Solve().apply(Am, Bm)
    if vector:
        return squeeze(X, -1)
    return X if left else transpose(X, -2, -1)


def inv(A):
    """The inverse of square matrices ``A`` (*, n, n), float32/float64; differentiable
    (``gA = -A^{-T} gY A^{-T}``, Giles 2008).

    Raises:
        ArgumentTypeError: not a Tensor.
        ShapeError: fewer than 2 dims, or not square.
        DTypeError: integer or low-precision input.
        LinAlgError: a singular matrix (the message names the batch element and the pivot).
    """
    check_matrix("linalg.inv", "A", A, square=True)
    return Inv().apply(A)


def inv_ex(A, *, check_errors=False):
    """:func:`inv` that reports singular matrices in ``info`` instead of raising.

    Returns:
        ``(inverse, info)`` (PyTorch's field names): ``info`` an int32 tensor of the batch
        shape, 0 where the inverse exists, else the 1-based index of LU's first zero pivot
        (LAPACK ``getrf``, read on the host: a GPU input is copied there once). Where
        ``info > 0`` the inverse is NaN (PyTorch leaves it unspecified).

    Raises:
        As :func:`inv`; LinAlgError only with ``check_errors=True``.
    """
    op = "linalg.inv_ex"
    check_matrix(op, "A", A, square=True)
    if check_flag(op, "check_errors", check_errors):
        f = Inv()
        f.name = op
        return InvExResult(f.apply(A), host_tensor(A, numpy.zeros(A.shape[:-2], dtype=numpy.int32)))
    f = InvEx()
    y = f.apply(A)
    return InvExResult(y, host_tensor(A, f.info))


class SolveTriangular(Op):
    """``X = A^{-1} B`` for triangular ``A`` (one batch shape)."""
    name = "linalg.solve_triangular"

    def __init__(self, upper, unitriangular):
        self.upper, self.unit = upper, unitriangular

    def forward(self, xp, a, b):
        with numpy.errstate(divide="ignore", invalid="ignore"):
            x = tri_solve(xp, a, b, lower=not self.upper, unit=self.unit)
        self.save_for_backward(a, x)
        return x

    def backward(self, xp, gx):
        a, x = self.saved
        with numpy.errstate(divide="ignore", invalid="ignore"):
            gb = tri_solve(xp, a, gx, lower=not self.upper, trans=True, unit=self.unit)
        ga = None
        if self.needs_input_grad[0]:
            g = -(gb @ mT(x))
            k = int(self.unit)
            ga = xp.triu(g, k) if self.upper else xp.tril(g, -k)
        return ga, gb


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """The solution of ``A X = B`` (``X A = B`` with ``left=False``) for triangular ``A``:
    only the upper (``upper=True``) or lower triangle of ``A`` is read, and with
    ``unitriangular`` its diagonal is taken as ones. No singularity check: a zero on the
    diagonal gives inf/NaN, as in PyTorch (BLAS ``trsm``).

    Args:
        A: (*, n, n). B: (*, n, k) (``left=False``: (*, k, n)); batch dims broadcast.
            float32/float64, one dtype. upper (bool, keyword, required), left, unitriangular.

    Returns:
        X of B's (broadcast) shape; differentiable in both (the gradient of ``A`` lies in the
        triangle read).

    Raises:
        ArgumentTypeError: A or B is not a Tensor, or a flag is not a bool.
        ShapeError: B not a batch of matrices, sizes that do not match, A not square.
        DTypeError: integer or low-precision dtypes, or two dtypes.
    """
    op = "linalg.solve_triangular"
    check_matrix(op, "A", A, square=True)
    if not isinstance(B, Tensor):
        raise ArgumentTypeError(f"{op}: B must be a Tensor, got {type(B).__name__}")
    if B.ndim < 2:
        raise ShapeError(f"{op}: The input tensor B must have at least 2 dimensions, got shape {tuple(B.shape)}")
    check_float(op, "B", B)
    check_same_dtype(op, "A", A, "B", B)
    upper, left = check_flag(op, "upper", upper), check_flag(op, "left", left)
    unitriangular = check_flag(op, "unitriangular", unitriangular)
    n = A.shape[-1]
    rows = B.shape[-2] if left else B.shape[-1]
    if rows != n:
        eq = "AX = B" if left else "XA = B"
        raise ShapeError(f"{op}: Incompatible shapes of A and B for the equation {eq} ({n}x{n} and "
                         f"{B.shape[-2]}x{B.shape[-1]})")
    if left:
        Am, Bm = broadcast_batches(op, {"A": A, "B": B}, (2, 2))
        return SolveTriangular(upper, unitriangular).apply(Am, Bm)
    # X A = B  <=>  A^T X^T = B^T, with the other triangle of A^T read
    Am, Bm = broadcast_batches(op, {"A": transpose(A, -2, -1), "B": transpose(B, -2, -1)}, (2, 2))
    return transpose(SolveTriangular(not upper, unitriangular).apply(Am, Bm), -2, -1)
