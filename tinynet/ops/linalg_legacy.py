"""The torch-level linear-algebra functions outside ``torch.linalg``: ``triangular_solve``,
``cholesky_solve``, ``cholesky_inverse``, ``lu``, ``lu_unpack``, ``lu_solve``, and the
randomized ``svd_lowrank``/``pca_lowrank``.

* ``cholesky_solve(B, L)`` solves ``(L L^T) X = B`` by two triangular solves (``L^T L`` with
  ``upper``); ``cholesky_inverse(L)`` is ``cholesky_solve(I, L)``.
* ``lu(A)`` is LAPACK's ``getrf`` (``scipy.linalg.lu_factor`` / ``cupyx.scipy.linalg.lu_factor``
  per matrix): ``L`` (unit lower, strictly below the diagonal) and ``U`` packed in one matrix,
  and 1-based int32 row pivots. Its gradient, for square matrices, is
  ``P L^{-T} (tril(L^T gL, -1) + triu(gU U^T)) U^{-T}``.
* ``svd_lowrank``/``pca_lowrank``: Halko, Martinsson & Tropp (2011), "Finding structure with
  randomness", Algorithm 4.4 (a basis of the range by ``niter`` subspace iterations from a
  Gaussian sketch, then the SVD of the small projected matrix), composed of tinynet's
  differentiable ``matmul``, ``linalg.qr`` and ``linalg.svd``.

Everything but ``lu`` is a composition of differentiable ops, so gradients come for free.
"""
import collections
import warnings

import numpy

from .. import backend
from ..autograd import Op
from ..errors import ArgumentError, AutogradError, DTypeError, ShapeError
from ..tensor import Tensor
from .blas import matmul
from .creation import eye
from .diagonal import tril, triu
from .lapack_decomp import qr, svd
from .lapack_solve import solve_triangular
from .lapack_util import batch_loop, check_matrix, check_same_dtype, contiguous, library, mT, tri_solve
from .sampling import randn
from .util import check_flag, check_int, check_tensor

TriangularSolveResult = collections.namedtuple("triangular_solve", ["solution", "cloned_coefficient"])  # type: ignore[name-match]
LUUnpackResult = collections.namedtuple("lu_unpack", ["P", "L", "U"])  # type: ignore[name-match]


def triangular_solve(b, A, upper=True, transpose=False, unitriangular=False):
    """The solution ``X`` of ``A X = b`` (``A^T X = b`` with ``transpose``) for triangular ``A``
    (only its upper, or with ``upper=False`` lower, triangle is read), and a copy of ``A``
    (broadcast to the batch), as ``(solution, cloned_coefficient)``; batch dims broadcast.
    Deprecated in PyTorch in favour of :func:`tinynet.linalg.solve_triangular` (with its warning).

    Raises:
        ShapeError, DTypeError: as :func:`tinynet.linalg.solve_triangular`.
    """
    warnings.warn("triangular_solve is deprecated in favor of linalg.solve_triangular", UserWarning, stacklevel=2)
    upper, transpose = check_flag("triangular_solve", "upper", upper), check_flag("triangular_solve", "transpose",
                                                                                    transpose)
    check_matrix("triangular_solve", "A", A, square=True)
    x = solve_triangular(A.mT if transpose else A, b, upper=upper != transpose, unitriangular=unitriangular)
    return TriangularSolveResult(x, A.expand(*x.shape[:-2], *A.shape[-2:]).clone())


def cholesky_solve(B, L, upper=False):
    """The solution of ``A X = B`` for ``A = L L^T`` given its Cholesky factor ``L`` (``A = U^T U``
    with ``upper=True``); ``B`` (*, n, k), ``L`` (*, n, n), batch dims broadcast. Differentiable.

    Raises:
        ShapeError: not batches of matrices, or sizes that differ. DTypeError: dtypes that differ.
    """
    upper = check_flag("cholesky_solve", "upper", upper)
    check_matrix("cholesky_solve", "L", L, square=True)
    check_matrix("cholesky_solve", "B", B)
    check_same_dtype("cholesky_solve", "B", B, "L", L)
    if upper:
        return solve_triangular(L, solve_triangular(L.mT, B, upper=False), upper=True)
    return solve_triangular(L.mT, solve_triangular(L, B, upper=False), upper=True)


def cholesky_inverse(L, upper=False):
    """The inverse of ``A = L L^T`` (``U^T U`` with ``upper``) from its Cholesky factor:
    ``cholesky_solve(I, L)``. Differentiable.

    Raises:
        ShapeError: ``L`` is not a batch of square matrices.
    """
    check_matrix("cholesky_inverse", "L", L, square=True)
    n = L.shape[-1]
    identity = eye(n, dtype=L.dtype, device=L.device).expand(*L.shape)
    return cholesky_solve(identity, L, upper)


def _permutation(xp, pivots, m):
    """The row order ``perm`` with ``A[perm] = L U`` from LAPACK's 1-based swaps (batches too)."""
    host = numpy.asarray(pivots.get() if hasattr(pivots, "get") else pivots).astype(numpy.int64) - 1
    perm = numpy.broadcast_to(numpy.arange(m), host.shape[:-1] + (m,)).copy()
    for idx in numpy.ndindex(*host.shape[:-1]):
        row = perm[idx]
        for i, j in enumerate(host[idx]):
            row[i], row[j] = row[j], row[i]
    return xp.asarray(perm)


class LU(Op):
    """LAPACK's getrf per matrix: the packed ``L\\U`` and the 1-based int32 pivots."""
    name = "lu"
    n_outputs = 2

    def forward(self, xp, a):
        m, n = a.shape[-2:]
        if a.size == 0:
            lu, piv = a.copy(), xp.broadcast_to(xp.arange(1, min(m, n) + 1, dtype=numpy.int32),
                                                a.shape[:-2] + (min(m, n),)).copy()
        else:
            lu, piv = batch_loop(xp, lambda x: library(xp).lu_factor(x, check_finite=False), contiguous(xp, a))
            piv = (piv + 1).astype(numpy.int32)
        self.save_for_backward(lu, piv)
        return lu.astype(a.dtype, copy=False), piv

    def backward(self, xp, g, *rest):
        lu, piv = self.saved
        m, n = lu.shape[-2:]
        if m != n:
            raise AutogradError("lu: the gradient is only implemented for square matrices in tinynet")
        low = xp.tril(lu, -1) + xp.eye(n, dtype=lu.dtype)
        up = xp.triu(lu)
        inner = xp.tril(mT(low) @ xp.tril(g, -1), -1) + xp.triu(xp.triu(g) @ mT(up))
        x = tri_solve(xp, low, inner, lower=True, trans=True, unit=True)  # L^{-T} inner
        x = mT(tri_solve(xp, up, mT(x), lower=False, trans=False))  # (...) U^{-T}
        inverse = xp.argsort(_permutation(xp, piv, m), axis=-1)  # gA = P X: row perm[i] of gA is row i of X
        return (xp.take_along_axis(x, xp.broadcast_to(inverse[..., None], x.shape), axis=-2),)


def lu(A, pivot=True, get_infos=False):
    """The LU factorisation with partial pivoting of matrices ``A`` (*, m, n): ``(A_LU, pivots)``
    (``(A_LU, pivots, infos)`` with ``get_infos``), ``A_LU`` packing unit-lower ``L`` and upper
    ``U``, ``pivots`` the 1-based int32 row swaps, ``infos`` the int32 LAPACK info per matrix (the
    index of a zero pivot, 0 when none). Without ``get_infos`` a singular matrix does not raise
    (PyTorch's check_errors only covers invalid arguments). Deprecated in PyTorch in favour of
    ``torch.linalg.lu_factor``, with its warning.

    Raises:
        ArgumentError: ``pivot=False`` (PyTorch implements it on CUDA only). ShapeError, DTypeError:
            as the other LAPACK functions.
    """
    warnings.warn("lu is deprecated in favor of linalg.lu_factor / linalg.lu_factor_ex", UserWarning, stacklevel=2)
    check_matrix("lu", "A", A)
    if not check_flag("lu", "pivot", pivot):
        raise ArgumentError("lu: LU without pivoting is not implemented (as on PyTorch's CPU)")
    packed, pivots = LU().apply(A)
    if not check_flag("lu", "get_infos", get_infos):
        return packed, pivots
    from .lapack_util import factor_info
    info = factor_info("getrf", A.array) if A.numel() else numpy.zeros(A.shape[:-2], dtype=numpy.int32)
    return packed, pivots, Tensor._wrap(backend.to_device(info.astype(numpy.int32), A.device))


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` from :func:`lu`'s packed factors: the permutation matrix ``P`` (``A = P L U``),
    unit-lower ``L`` (*, m, k) and upper ``U`` (*, k, n), ``k = min(m, n)``; with
    ``unpack_data=False`` ``L`` and ``U`` are empty, with ``unpack_pivots=False`` ``P`` is.
    Differentiable in ``LU_data``.

    Raises:
        ShapeError: pivots of the wrong shape. DTypeError: pivots that are not int32.
    """
    check_matrix("lu_unpack", "LU_data", LU_data)
    check_tensor("lu_unpack", "LU_pivots", LU_pivots)
    m, n = LU_data.shape[-2:]
    k = min(m, n)
    if LU_pivots.array.dtype != numpy.int32:
        raise DTypeError(f"lu_unpack: LU_pivots must be int32, got {LU_pivots.dtype}")
    if tuple(LU_pivots.shape) != tuple(LU_data.shape[:-2]) + (k,):
        raise ShapeError(f"lu_unpack: LU_pivots must have shape {tuple(LU_data.shape[:-2]) + (k,)}, got "
                         f"{tuple(LU_pivots.shape)}")
    xp = backend.array_module(LU_data.array)
    empty = Tensor._wrap(xp.zeros(0, dtype=LU_data.dtype))
    if check_flag("lu_unpack", "unpack_data", unpack_data):
        ident = eye(m, k, dtype=LU_data.dtype, device=LU_data.device)
        L = tril(LU_data[..., :, :k], -1) + ident
        U = triu(LU_data[..., :k, :])
    else:
        L = U = empty
    if check_flag("lu_unpack", "unpack_pivots", unpack_pivots):
        if LU_pivots.numel() and (int(LU_pivots.array.min()) < 1 or int(LU_pivots.array.max()) > m):
            raise ArgumentError(f"lu_unpack: pivots must be in [1, {m}]")
        perm = _permutation(xp, LU_pivots.array, m)  # row perm[i] of A is row i of L U: P[perm[i], i] = 1
        P = Tensor._wrap((xp.arange(m).reshape(-1, 1) == perm[..., None, :]).astype(LU_data.dtype))
    else:
        P = empty
    return LUUnpackResult(P, L, U)


def lu_solve(b, LU_data, LU_pivots):
    """The solution of ``A X = b`` from :func:`lu`'s factors of square ``A``: ``U^{-1} L^{-1} P^T b``;
    batch dims broadcast. Differentiable in ``b`` and ``LU_data``.

    Raises:
        ShapeError: non-square factors, or sizes that do not match.
    """
    check_matrix("lu_solve", "LU_data", LU_data, square=True)
    check_matrix("lu_solve", "b", b)
    check_same_dtype("lu_solve", "b", b, "LU_data", LU_data)
    P, L, U = lu_unpack(LU_data, LU_pivots)
    y = solve_triangular(L, matmul(P.mT, b), upper=False, unitriangular=True)
    return solve_triangular(U, y, upper=True)


def _basis(A, q, niter, M):
    """An orthonormal (m, q) basis of the range of ``A - M`` (Halko et al. 2011, Algorithm 4.4)."""
    def product(X):
        return matmul(A, X) if M is None else matmul(A, X) - matmul(M, X)

    def product_t(X):
        return matmul(A.mT, X) if M is None else matmul(A.mT, X) - matmul(M.mT, X)
    R = randn(*A.shape[:-2], A.shape[-1], q, dtype=A.dtype, device=A.device)
    Q = qr(product(R)).Q
    for _ in range(niter):
        Q = qr(product(qr(product_t(Q)).Q)).Q
    return Q


def svd_lowrank(A, q=6, niter=2, M=None):
    """An approximate SVD ``(U, S, V)`` of rank ``q`` of ``A - M`` (*, m, n) by randomized range
    finding: ``U`` (*, m, q), ``S`` (*, q), ``V`` (*, n, q) (``V``, not ``V^T``, as PyTorch).
    ``niter`` subspace iterations sharpen the basis. Random draws come from tinynet's generator.

    Raises:
        ArgumentError: ``q`` outside [1, min(m, n)] or ``niter`` < 0.
    """
    check_matrix("svd_lowrank", "A", A)
    m, n = A.shape[-2:]
    q = check_int("svd_lowrank", "q", 6 if q is None else q, 1)
    if q > min(m, n):
        raise ArgumentError(f"svd_lowrank: q must be at most min(m, n) = {min(m, n)}, got {q}")
    niter = check_int("svd_lowrank", "niter", niter, 0)
    if M is not None:
        check_tensor("svd_lowrank", "M", M)
        M = M.expand(*A.shape)
    Q = _basis(A, q, niter, M)
    B = matmul(Q.mT, A) if M is None else matmul(Q.mT, A) - matmul(Q.mT, M)
    u, s, vh = svd(B, full_matrices=False)
    return matmul(Q, u), s, vh.mT


def pca_lowrank(A, q=None, center=True, niter=2):
    """A rank-``q`` principal component analysis of the rows of ``A`` (*, m, n): :func:`svd_lowrank`
    of ``A`` minus its column means (``center``); ``q`` defaults to ``min(6, m, n)``. Returns
    ``(U, S, V)``, the principal directions the columns of ``V``.

    Raises:
        ArgumentError: ``q`` outside [1, min(m, n)].
    """
    check_matrix("pca_lowrank", "A", A)
    m, n = A.shape[-2:]
    q = min(6, m, n) if q is None else check_int("pca_lowrank", "q", q, 1)
    if q > min(m, n):
        raise ArgumentError(f"pca_lowrank: q must be at most min(m, n) = {min(m, n)}, got {q}")
    if not check_flag("pca_lowrank", "center", center):
        return svd_lowrank(A, q, niter)
    return svd_lowrank(A, q, niter, A.mean(-2, keepdim=True))

