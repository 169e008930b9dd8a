"""Determinants and the Cholesky factor: ``linalg.det`` (``torch.det``), ``linalg.slogdet``
(``torch.slogdet``), ``torch.logdet``, ``linalg.cholesky`` (``torch.cholesky``) and
``linalg.cholesky_ex``.

Numerics: ``numpy.linalg.det``/``slogdet``/``cholesky`` or their ``cupy.linalg``
counterparts (LAPACK ``getrf`` and ``potrf``).

Gradients:

* ``det``: ``d det(A) = det(A) tr(A^{-1} dA)`` (Giles 2008, "An extended collection of
  matrix derivative results"), so ``gA = g adj(A)^T``, the cofactor matrix. It is
  formed from the SVD ``A = U S V^T`` as ``det(U) det(V) U diag(prod_{j != i} s_j) V^T``,
  which stays finite for singular ``A`` (where ``det(A) A^{-T}`` does not exist).
* ``slogdet``: ``g_logabsdet A^{-T}`` (the sign has no gradient).
* ``cholesky``: Murray 2016, "Differentiation of the Cholesky decomposition", with
  ``Phi(M)`` the lower triangle of ``M`` with its diagonal halved:
  ``gA = L^{-T} Phi(L^T gL) L^{-1}``, symmetrised (the input is taken to be symmetric, so
  the gradient is too, as PyTorch's).
"""
import collections

import numpy

from ..autograd import Op
from ..tensor import Tensor
from .lapack_util import (check_matrix, contiguous, factor_info, host_tensor, mT, not_pd_error, raising,
                          symmetric_from, tri_solve)
from .lapack_solve import Inv
from .shape import transpose
from .util import check_flag, is_graph

SlogdetResult = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"])  # type: ignore[name-match]  # torch.return_types
CholeskyExResult = collections.namedtuple("linalg_cholesky_ex", ["L", "info"])  # type: ignore[name-match]  # torch.return_types


def cofactor(xp, a):
    """``adj(A)^T`` (``det(A) A^{-T}`` where A is invertible) through the SVD, for any ``A``."""
    u, s, vh = xp.linalg.svd(contiguous(xp, a))
    n = s.shape[-1]
    ones = xp.ones(s.shape[:-1] + (1,), dtype=s.dtype)
    before = xp.cumprod(xp.concatenate([ones, s[..., :n - 1]], axis=-1), axis=-1)  # prod_{j < i} s_j
    after = xp.flip(xp.cumprod(xp.concatenate([ones, xp.flip(s, -1)[..., :n - 1]], axis=-1), axis=-1), -1)
    sign = xp.linalg.det(u) * xp.linalg.det(vh)
    return (u * (before * after)[..., None, :]) @ vh * sign[..., None, None]


def inverse_t(xp, a):
    """``A^{-T}``; inf/NaN (no error) for singular ``A``, through the SVD."""
    try:
        return mT(xp.linalg.inv(contiguous(xp, a)))
    except numpy.linalg.LinAlgError:  # NumPy refuses singular matrices
        u, s, vh = xp.linalg.svd(contiguous(xp, a))
        with numpy.errstate(divide="ignore", invalid="ignore"):
            return (u / s[..., None, :]) @ vh


class Det(Op):
    name = "linalg.det"

    def forward(self, xp, a):
        self.save_for_backward(a)
        return xp.asarray(xp.linalg.det(contiguous(xp, a)))

    def backward(self, xp, gy):
        (a,) = self.saved
        if a.shape[-1] == 0:
            return (xp.zeros(a.shape, dtype=a.dtype),)
        return (gy[..., None, None] * cofactor(xp, a),)


class LogAbsDet(Op):
    """``slogdet``'s ``logabsdet`` as the output; the sign is kept in ``self.sign``. Twice
    differentiable (the backward's inverse is :class:`Inv` in a create_graph backward)."""
    name = "linalg.slogdet"
    twice_differentiable = True

    def forward(self, xp, a):
        sign, logabs = xp.linalg.slogdet(contiguous(xp, a))
        self.sign = xp.asarray(sign)
        self.save_for_backward(a)
        return xp.asarray(logabs)

    def backward(self, xp, gy):
        (a,) = self.saved
        if a.shape[-1] == 0:
            return (xp.zeros_like(a),)
        if is_graph(xp):  # tensors: the inverse as a recorded op
            return (gy[..., None, None] * mT(Inv().call(xp, a)),)
        return (gy[..., None, None] * inverse_t(xp, a),)


class Cholesky(Op):
    """The lower factor ``L`` of the symmetric matrix read from ``A``'s lower (upper) triangle."""
    name = "linalg.cholesky"

    def __init__(self, upper, name=None, report=False):
        self.upper, self.report = upper, report
        if name:
            self.name = name

    def forward(self, xp, a):
        s = contiguous(xp, symmetric_from(xp, a, self.upper))
        if self.report:  # cholesky_ex: NaN and a nonzero info instead of an error
            self.info = info = factor_info("potrf", s)
            bad = xp.asarray(info != 0)[..., None, None]
            l = xp.linalg.cholesky(xp.where(bad, xp.eye(a.shape[-1], dtype=a.dtype), s))
            l = xp.where(bad, xp.asarray(numpy.nan, dtype=a.dtype), l)
        else:
            try:
                with raising(xp):
                    l = xp.linalg.cholesky(s)
            except numpy.linalg.LinAlgError:
                raise not_pd_error(self.name, "A", s) from None
        self.save_for_backward(l)
        return l

    def backward(self, xp, gl):
        (l,) = self.saved
        if l.shape[-1] == 0:
            return (xp.zeros(l.shape, dtype=l.dtype),)
        m = xp.tril(mT(l) @ gl)
        s = 0.5 * (m + mT(xp.tril(m, -1)))  # Phi(L^T gL), symmetrised
        with numpy.errstate(divide="ignore", invalid="ignore"):
            y = tri_solve(xp, l, s, lower=True, trans=True)  # L^{-T} S
            g = mT(tri_solve(xp, l, contiguous(xp, mT(y)), lower=True, trans=True))  # (L^{-T} Y^T)^T = Y L^{-1}
        return (g,)


def det(A):
    """The determinant of square matrices ``A`` (*, n, n): a tensor of shape (*), 0 for a
    singular matrix, 1 for 0 x 0 matrices. Differentiable, also at singular matrices (the
    cofactor matrix through the SVD, see the module's notes).

    Raises:
        ArgumentTypeError: not a Tensor.
        ShapeError: fewer than 2 dims, or not square.
        DTypeError: integer, float16 or bfloat16 input (as PyTorch's CPU).
    """
    check_matrix("linalg.det", "A", A, square=True)
    return Det().apply(A)


def slogdet(A):
    """``(sign, logabsdet)`` of square matrices ``A`` (*, n, n): ``det = sign * exp(logabsdet)``
    without overflow; a singular matrix gives ``(0, -inf)``. Only ``logabsdet`` is
    differentiable (``g A^{-T}``). Returns PyTorch's named tuple fields.

    Raises:
        As :func:`det`.
    """
    check_matrix("linalg.slogdet", "A", A, square=True)
    f = LogAbsDet()
    logabsdet = f.apply(A)
    return SlogdetResult(Tensor._wrap(f.sign), logabsdet)


def cholesky(A, *, upper=False):
    """The Cholesky factor of symmetric positive-definite matrices ``A`` (*, n, n): lower
    ``L`` with ``A = L L^T`` (with ``upper=True``, ``U = L^T`` with ``A = U^T U``). Only the
    lower (``upper=True``: upper) triangle of ``A`` is read, as in PyTorch and LAPACK.
    Differentiable (Murray 2016; the gradient is symmetric).

    Raises:
        ArgumentTypeError: not a Tensor.
        ShapeError: fewer than 2 dims, or not square.
        DTypeError: integer or low-precision input.
        LinAlgError: not positive-definite (the message names the batch element and the
            order of the failing leading minor, as PyTorch's).
    """
    check_matrix("linalg.cholesky", "A", A, square=True)
    upper = check_flag("linalg.cholesky", "upper", upper)
    L = Cholesky(upper).apply(A)
    return transpose(L, -2, -1) if upper else L


def cholesky_ex(A, *, upper=False, check_errors=False):
    """:func:`cholesky` that reports failures in ``info`` instead of raising.

    Returns:
        ``(L, info)`` (PyTorch's field names): ``info`` an int32 tensor of the batch shape, 0
        where the factor exists, else the order of the first leading minor that is not
        positive-definite (LAPACK ``potrf``, read on the host: a GPU input is copied there
        once). Where ``info > 0``, ``L`` is NaN (PyTorch leaves it unspecified).

    Raises:
        As :func:`cholesky`; LinAlgError only with ``check_errors=True``.
    """
    op = "linalg.cholesky_ex"
    check_matrix(op, "A", A, square=True)
    upper = check_flag(op, "upper", upper)
    if check_flag(op, "check_errors", check_errors):
        L = Cholesky(upper, op).apply(A)
        info = host_tensor(A, numpy.zeros(A.shape[:-2], dtype=numpy.int32))
    else:
        f = Cholesky(upper, op, report=True)
        L = f.apply(A)
        info = host_tensor(A, f.info)
    return CholeskyExResult(transpose(L, -2, -1) if upper else L, info)
