"""The Cholesky factor and triangular solves, differentiable: what
``tinynet.distributions.MultivariateNormal`` needs (its log-density, entropy and the
precision-matrix parameterisation). The values come from ``xp.linalg`` (NumPy's LAPACK or
CuPy's cuSOLVER); the gradients are the standard matrix-calculus results:

* ``cholesky``: A = L L^T. With Phi(X) the lower triangle of X with its diagonal halved,
  dA = L^-T Phi(L^T dL) L^-1, symmetrised (Murray, "Differentiation of the Cholesky
  decomposition", arXiv:1602.07527, 2016, eq. 10 in its notation).
* ``solve_triangular``: X = A^-1 B with A triangular (only its triangle is read).
  dB = A^-T dX and dA = -dB X^T, restricted to A's triangle.

Batch dimensions broadcast, as ``torch.linalg.cholesky`` and ``torch.linalg.solve_triangular``.
These are kept to what the distributions need (no ``upper`` Cholesky, no ``left=False``);
``tinynet.linalg`` may supersede them.
"""
import numpy

from ..dtypes import is_floating
from .. import backend
from ..autograd import Op
from ..autograd.order import recorded_inputs
from ..errors import ArgumentError, DTypeError, ShapeError
from .util import check_flag, check_tensor, unbroadcast


def _mT(a):
    return a.swapaxes(-1, -2)


def _solve(xp, a, b):
    """``a^-1 b`` for (..., n, n) ``a`` and (..., n, k) ``b`` whose batch dims broadcast."""
    batch = numpy.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return xp.linalg.solve(xp.broadcast_to(a, batch + a.shape[-2:]), xp.broadcast_to(b, batch + b.shape[-2:]))


def _tri(xp, a, upper):
    return xp.triu(a) if upper else xp.tril(a)


class Cholesky(Op):
    """Lower Cholesky factor of a batch of symmetric positive-definite matrices."""
    name = "cholesky"

    def forward(self, xp, a):
        with numpy.errstate(invalid="ignore"):
            try:
                lower = xp.linalg.cholesky(a)
            except numpy.linalg.LinAlgError:
                lower = None
        if lower is None or not bool(xp.all(xp.isfinite(lower))):
            raise ArgumentError("cholesky: the input is not positive-definite (the factorization failed)")
        if self.needs_input_grad[0]:
            self.save_for_backward(lower)
        return lower

    def backward(self, xp, gl):
        lower = self.saved[0]
        phi = xp.tril(_mT(lower) @ xp.tril(gl))
        n = phi.shape[-1]
        idx = xp.arange(n)
        phi[..., idx, idx] *= 0.5
        lt = _mT(lower)
        x = _solve(xp, lt, phi)                  # L^-T Phi
        ga = _mT(_solve(xp, lt, _mT(x)))         # (L^-T (L^-T Phi)^T)^T = L^-T Phi L^-1
        return (0.5 * (ga + _mT(ga)),)


class SolveTriangular(Op):
    """X = A^-1 B with A (..., n, n) triangular and B (..., n, k)."""
    name = "solve_triangular"

    def __init__(self, upper):
        self.upper = upper

    def forward(self, xp, a, b):
        x = _solve(xp, _tri(xp, a, self.upper), b)
        if any(self.needs_input_grad):
            self.save_for_backward(a, x)
        return x

    def backward(self, xp, gx):
        a, x = self.saved
        a = _tri(xp, a, self.upper)
        gb = _solve(xp, _mT(a), gx)
        ga = _tri(xp, -(gb @ _mT(x)), self.upper) if self.needs_input_grad[0] else None
        return (unbroadcast(xp, ga, a.shape) if ga is not None else None,
                unbroadcast(xp, gb, recorded_inputs(self)[1].shape) if self.needs_input_grad[1] else None)


def _matrices(op, name, t):
    check_tensor(op, name, t)
    if not is_floating(t.array.dtype):
        raise DTypeError(f"{op}: {name} must be a floating-point tensor, got {t.dtype}")
    if t.ndim < 2:
        raise ShapeError(f"{op}: {name} must have at least 2 dimensions, got shape {tuple(t.shape)}")
    return t


def cholesky(input):
    """The lower Cholesky factor L of ``input`` (..., n, n), symmetric positive-definite:
    ``input = L @ L.mT`` (as ``torch.linalg.cholesky``; only the lower triangle is read).
    Differentiable (Murray 2016).

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: not floating point.
        ShapeError: not a batch of square matrices. ArgumentError: not positive-definite.
    """
    a = _matrices("cholesky", "input", input)
    if a.shape[-1] != a.shape[-2]:
        raise ShapeError(f"cholesky: input must be a batch of square matrices, got shape {tuple(a.shape)}")
    return Cholesky().apply(a)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with ``A @ X = B`` for triangular ``A`` (..., n, n) (its lower triangle, or upper with
    ``upper=True``) and ``B`` (..., n, k); the batch dimensions broadcast (as
    ``torch.linalg.solve_triangular`` with ``left=True``). Differentiable in both.

    Raises:
        ArgumentTypeError: not Tensors. DTypeError: not floating point or mixed dtypes.
        ShapeError: ``A`` not square, ``B``'s rows not ``n`` or batches that do not broadcast.
        ArgumentError: ``left=False`` or ``unitriangular=True`` (not supported here).
    """
    op = "solve_triangular"
    a, b = _matrices(op, "A", A), _matrices(op, "B", B)
    upper = check_flag(op, "upper", upper)
    if not check_flag(op, "left", left) or check_flag(op, "unitriangular", unitriangular):
        raise ArgumentError(f"{op}: only left=True and unitriangular=False are supported")
    if a.dtype != b.dtype:
        raise DTypeError(f"{op}: A and B must have the same dtype, got {a.dtype} and {b.dtype}")
    if a.shape[-1] != a.shape[-2] or b.shape[-2] != a.shape[-1]:
        raise ShapeError(f"{op}: expected A (..., n, n) and B (..., n, k), got {tuple(a.shape)} and {tuple(b.shape)}")
    try:
        numpy.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
    except ValueError:
        raise ShapeError(f"{op}: batch shapes {tuple(a.shape[:-2])} and {tuple(b.shape[:-2])} do not "
                         "broadcast") from None
    backend.common_module(op, (a.array, b.array))
    return SolveTriangular(upper).apply(a, b)


__all__ = ["cholesky", "solve_triangular"]
