"""The ``torch.*`` spellings of the linear-algebra functions, and their Tensor methods:
``det``, ``logdet``, ``slogdet``, ``inverse``, ``cholesky`` (deprecated in PyTorch, present),
``pinverse``, ``matrix_exp``, ``matrix_power``, ``svd`` (``some``/``compute_uv``, returning
``V`` rather than ``Vh``) and ``qr`` (``some``). Each is the ``linalg`` function under
PyTorch's older argument names; the math, gradients and errors are those of
:mod:`.lapack_solve`, :mod:`.lapack_det`, :mod:`.lapack_decomp`, :mod:`.lapack_lstsq` and
:mod:`.matrix_functions`.
"""
import collections
import warnings

from .. import backend
from ..tensor import Tensor
from . import lapack_det, matrix_functions
from .lapack_decomp import QR, SVD, SVDVals
from .lapack_det import cholesky as _cholesky
from .lapack_lstsq import pinv
from .lapack_solve import inv
from .lapack_util import check_matrix
from .select import where
from .shape import transpose
from .util import check_flag

SVDResult = collections.namedtuple("svd", ["U", "S", "V"])  # type: ignore[name-match]  # torch.return_types
QRResult = collections.namedtuple("qr", ["Q", "R"])  # type: ignore[name-match]  # torch.return_types
SlogdetResult = collections.namedtuple("slogdet", ["sign", "logabsdet"])  # type: ignore[name-match]  # torch.return_types


def det(input):
    """``torch.det``: :func:`tinynet.linalg.det` (errors name ``linalg.det``, as PyTorch's)."""
    return lapack_det.det(input)


def slogdet(input):
    """``torch.slogdet``: :func:`tinynet.linalg.slogdet`, fields ``(sign, logabsdet)``."""
    return SlogdetResult(*lapack_det.slogdet(input))


def logdet(input):
    """``torch.logdet``: ``log(det(input))`` of square matrices (*, n, n): NaN where the
    determinant is negative, -inf where it is 0. Differentiable through ``logabsdet``
    (``g A^{-T}``).

    Raises:
        As :func:`tinynet.linalg.det` (messages name ``linalg.slogdet``).
    """
    sign, logabsdet = lapack_det.slogdet(input)
    return logabsdet + where(sign < 0, float("nan"), 0.0)


def inverse(input):
    """``torch.inverse``: :func:`tinynet.linalg.inv` (errors name ``linalg.inv``)."""
    return inv(input)


def cholesky(input, upper=False):
    """``torch.cholesky`` (deprecated in PyTorch, which warns, as here):
    :func:`tinynet.linalg.cholesky` with ``upper`` positional; ``upper=True`` reads the upper
    triangle and returns ``U`` with ``A = U^T U``."""
    warnings.warn("torch.cholesky is deprecated in favor of torch.linalg.cholesky; U = torch.cholesky(A, upper=True) "
                  "is torch.linalg.cholesky(A).mH", UserWarning, stacklevel=2)
    return _cholesky(input, upper=upper)


def pinverse(input, rcond=1e-15):
    """``torch.pinverse``: :func:`tinynet.linalg.pinv` with ``rtol=rcond`` (default 1e-15)."""
    return pinv(input, rtol=rcond)


def matrix_exp(A):
    """``torch.matrix_exp``: :func:`tinynet.linalg.matrix_exp`."""
    return matrix_functions.matrix_exp(A)


def matrix_power(input, n):
    """``torch.matrix_power``: :func:`tinynet.linalg.matrix_power`."""
    return matrix_functions.matrix_power(input, n)


def svd(input, some=True, compute_uv=True):
    """``torch.svd``: ``(U, S, V)`` with ``input = U diag(S) V^T`` -- ``V``, not
    ``linalg.svd``'s ``Vh``. ``some=True`` (default) gives the reduced U (*, m, k) and
    V (*, n, k), ``some=False`` the square ones. With ``compute_uv=False`` only S is computed
    and U, V are zero matrices (*, m, m) and (*, n, n), as PyTorch's. Differentiable as
    :func:`tinynet.linalg.svd` (S alone as ``svdvals``).

    Raises:
        As :func:`tinynet.linalg.svd` (messages name ``svd``).
    """
    check_matrix("svd", "input", input)
    some, compute_uv = check_flag("svd", "some", some), check_flag("svd", "compute_uv", compute_uv)
    if not compute_uv:
        m, n = input.shape[-2:]
        zeros = backend.array_module(input.array).zeros
        batch = tuple(input.shape[:-2])
        return SVDResult(Tensor._wrap(zeros(batch + (m, m), dtype=input.dtype)), SVDVals().apply(input),
                         Tensor._wrap(zeros(batch + (n, n), dtype=input.dtype)))
    U, S, Vh = SVD(not some).apply(input)
    return SVDResult(U, S, transpose(Vh, -2, -1))


def qr(input, some=True):
    """``torch.qr`` (deprecated in PyTorch, which warns, as here): :func:`tinynet.linalg.qr`
    with mode ``"reduced"`` (``some=True``) or ``"complete"``."""
    some = check_flag("qr", "some", some)
    warnings.warn("torch.qr is deprecated in favor of torch.linalg.qr: Q, R = torch.qr(A, some) is "
                  "torch.linalg.qr(A, 'reduced' if some else 'complete')", UserWarning, stacklevel=2)
    check_matrix("qr", "input", input)
    return QRResult(*QR("reduced" if some else "complete").apply(input))


# Tensor methods (x.det(), x.svd(), ...): the functions above, ``self`` as ``input``
METHODS = {"det": det, "logdet": logdet, "slogdet": slogdet, "inverse": inverse, "cholesky": cholesky,
           "pinverse": pinverse, "matrix_exp": matrix_exp, "matrix_power": matrix_power, "svd": svd, "qr": qr}
