"""Decompositions: ``linalg.qr``, ``linalg.svd``/``svdvals``, ``linalg.eigh``/``eigvalsh``.

Numerics: ``numpy.linalg.qr``/``svd``/``eigh``/``eigvalsh`` or ``cupy.linalg``'s (LAPACK
``geqrf``+``orgqr``, ``gesdd``, ``syevd``; cuSOLVER on the GPU). Singular vectors and
eigenvectors are unique only up to sign, so the GPU's may differ from the CPU's (and from
PyTorch's) by signs; functions of them that do not depend on the signs agree.

Gradients (real matrices):

* ``qr`` (Walter & Lehmann 2010, "Algorithmic differentiation of linear algebra functions
  with application in optimum experimental design"; the wide case as in Liao et al. 2019,
  "Differentiable programming tensor networks"): for ``m >= n``, with
  ``M = R gR^T - gQ^T Q`` and ``copyltu(M)`` its lower triangle mirrored,
  ``gA = (gQ + Q copyltu(M)) R^{-T}``. For ``m < n``, ``A = Q [X | Y]``: the square part as
  above with ``gQ + Y gY^T`` for ``gQ``, and ``gY_A = Q gY``. Not differentiable for
  ``mode='r'`` or ``mode='complete'`` with ``m > n`` (PyTorch raises the same at backward).
* ``svd`` (Townsend 2016, "Differentiating the singular value decomposition"; Ionescu et al.
  2015, "Matrix backpropagation for deep networks with structured layers"): with
  ``F_ij = 1 / (s_j^2 - s_i^2)`` (0 on the diagonal), ``J = F o (U^T gU - gU^T U)``,
  ``K = F o (V^T gV - gV^T V)``: ``gA = U (J S + diag(gS) + S K) V^T
  + (I - U U^T) gU S^{-1} V^T + U S^{-1} gV^T (I - V V^T)``. Only the first ``min(m, n)``
  singular vectors count (``full_matrices=True`` ignores the gradient of the rest, as PyTorch).
* ``eigh``: ``gA = V (diag(gL) + F o skew(V^T gV)) V^T`` with ``F_ij = 1 / (l_j - l_i)`` and
  ``skew(X) = (X - X^T) / 2`` (the symmetric input's eigenvectors move by rotations).

Caveat (Ionescu et al.; PyTorch's documentation says the same): with repeated singular
values or eigenvalues ``F`` is infinite, and the gradient of the vectors is inf/NaN unless
the loss does not depend on the choice of basis in the degenerate subspace. The gradient of
``S`` or of the eigenvalues alone is always finite: a backward whose vector gradients are all
zero skips ``F``.
"""
import collections

import numpy

from ..autograd import Op
from ..errors import ArgumentError, AutogradError
from ..tensor import Tensor
from .lapack_util import check_matrix, contiguous, mT, nonzero_any, tri_solve
from .util import check_choice, check_flag

QRResult = collections.namedtuple("linalg_qr", ["Q", "R"])  # type: ignore[name-match]  # torch.return_types
SVDResult = collections.namedtuple("linalg_svd", ["U", "S", "Vh"])  # type: ignore[name-match]  # torch.return_types
EighResult = collections.namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])  # type: ignore[name-match]  # torch.return_types


def _copyltu(xp, m):
    """The symmetric matrix with ``m``'s lower triangle (diagonal included) mirrored above."""
    return xp.tril(m) + mT(xp.tril(m, -1))


def _right_rinv_t(xp, b, r):
    """``b R^{-T}`` for upper-triangular ``R``: the transpose of ``R^{-1} b^T``."""
    with numpy.errstate(divide="ignore", invalid="ignore"):
        return mT(tri_solve(xp, r, contiguous(xp, mT(b)), lower=False))


class QR(Op):
    name = "linalg.qr"

    def __init__(self, mode):
        self.mode = mode

    def forward(self, xp, a):
        q, r = xp.linalg.qr(contiguous(xp, a), mode=self.mode)
        self.save_for_backward(a, q, r)
        return q, r

    def backward(self, xp, gq, gr):
        a, q, r = self.saved
        m, n = a.shape[-2:]
        if self.mode == "complete" and m > n:
            raise AutogradError("linalg.qr: The QR decomposition is not differentiable when mode='complete' and "
                                "nrows > ncols")
        if m >= n:
            mm = r @ mT(gr) - mT(gq) @ q
            return (_right_rinv_t(xp, gq + q @ _copyltu(xp, mm), r),)
        x, y = r[..., :m], a[..., m:]
        gx, gy = gr[..., :m], gr[..., m:]
        gq2 = gq + y @ mT(gy)
        mm = x @ mT(gx) - mT(gq2) @ q
        return (xp.concatenate([_right_rinv_t(xp, gq2 + q @ _copyltu(xp, mm), x), q @ gy], axis=-1),)


class QRWithoutQ(Op):
    """``mode='r'``: R alone, not differentiable (it depends on Q, not computed)."""
    name = "linalg.qr"

    def forward(self, xp, a):
        return xp.linalg.qr(contiguous(xp, a), mode="r")

    def backward(self, xp, gr):
        raise AutogradError("linalg.qr: The derivative of linalg.qr depends on Q, which is not computed when "
                            "mode='r'. Use linalg.qr(A, mode='reduced') to differentiate through linalg.qr")


def qr(A, mode="reduced"):
    """The QR decomposition ``A = Q R`` of matrices ``A`` (*, m, n), ``k = min(m, n)``.

    Args:
        mode: ``"reduced"`` (Q (*, m, k), R (*, k, n)), ``"complete"`` (Q (*, m, m),
            R (*, m, n)) or ``"r"`` (R (*, k, n) and an empty Q).

    Returns:
        ``(Q, R)`` (PyTorch's field names), LAPACK's signs (R's diagonal may be negative).
        Differentiable except for ``mode="r"`` and ``mode="complete"`` with ``m > n``
        (backward raises AutogradError there, as PyTorch's).

    Raises:
        ArgumentTypeError: not a Tensor.
        ShapeError: fewer than 2 dims.
        DTypeError: integer or low-precision input.
        ArgumentError: an unknown mode.
    """
    check_matrix("linalg.qr", "A", A)
    mode = check_choice("linalg.qr", "mode", mode, ("reduced", "complete", "r"))
    if mode == "r":
        R = QRWithoutQ().apply(A)
        return QRResult(Tensor._wrap(R.array.reshape(-1)[:0].copy()), R)
    return QRResult(*QR(mode).apply(A))


class SVD(Op):
    name = "linalg.svd"

    def __init__(self, full_matrices):
        self.full = full_matrices

    def forward(self, xp, a):
        u, s, vh = xp.linalg.svd(contiguous(xp, a), full_matrices=self.full)
        self.save_for_backward(u, s, vh)
        return u, s, vh

    def backward(self, xp, gu, gs, gvh):
        u, s, vh = self.saved
        k = s.shape[-1]
        return (svd_backward(xp, u[..., :k], s, vh[..., :k, :], gu[..., :k], gs, gvh[..., :k, :]),)


def svd_backward(xp, u, s, vh, gu, gs, gvh):
    """Townsend's gradient of the reduced SVD (see the module's notes)."""
    m, n = u.shape[-2], vh.shape[-1]
    if not nonzero_any(xp, gu, gvh):
        return (u * gs[..., None, :]) @ vh
    v, gv = mT(vh), mT(gvh)
    s2 = s * s
    with numpy.errstate(divide="ignore", invalid="ignore"):
        f = 1.0 / (s2[..., None, :] - s2[..., :, None])
        k = s.shape[-1]
        f[..., xp.arange(k), xp.arange(k)] = 0
        utgu, vtgv = mT(u) @ gu, mT(v) @ gv
        j = f * (utgu - mT(utgu))
        kk = f * (vtgv - mT(vtgv))
        inner = j * s[..., None, :] + s[..., :, None] * kk
        inner[..., xp.arange(k), xp.arange(k)] += gs
        ga = u @ inner @ vh
        if m > k:
            ga = ga + ((gu - u @ utgu) / s[..., None, :]) @ vh
        if n > k:
            ga = ga + (u / s[..., None, :]) @ mT(gv - v @ vtgv)
    return ga


class SVDVals(Op):
    """The singular values alone; the vectors are computed only when a gradient is needed."""
    name = "linalg.svdvals"

    def forward(self, xp, a):
        a = contiguous(xp, a)
        if not self.needs_input_grad[0]:
            return xp.linalg.svd(a, compute_uv=False)
        u, s, vh = xp.linalg.svd(a, full_matrices=False)
        self.save_for_backward(u, vh)
        return s

    def backward(self, xp, gs):
        u, vh = self.saved
        return ((u * gs[..., None, :]) @ vh,)


def svd(A, full_matrices=True, *, driver=None):
    """The singular value decomposition ``A = U diag(S) Vh`` of matrices ``A`` (*, m, n),
    ``k = min(m, n)``: U (*, m, m) (``full_matrices=False``: (*, m, k)), S (*, k)
    descending, Vh (*, n, n) (or (*, k, n)).

    Returns:
        ``(U, S, Vh)`` (PyTorch's field names). Differentiable (Townsend 2016); see the
        module's caveat on repeated singular values. ``driver`` is accepted only as None: as
        on PyTorch's CPU, the library chooses the algorithm (GPU: cuSOLVER's).

    Raises:
        ArgumentTypeError: not a Tensor.
        ShapeError: fewer than 2 dims.
        DTypeError: integer or low-precision input.
        ArgumentError: a driver given.
    """
    check_matrix("linalg.svd", "A", A)
    full = check_flag("linalg.svd", "full_matrices", full_matrices)
    _no_driver("linalg.svd", driver)
    return SVDResult(*SVD(full).apply(A))


def _no_driver(op, driver):
    if driver is not None:
        raise ArgumentError(f"{op}: keyword argument `driver=` is only supported on CUDA inputs with cuSOLVER in "
                            f"PyTorch; tinynet lets the library choose (got {driver!r})")


def svdvals(A, *, driver=None):
    """The singular values of matrices ``A`` (*, m, n): (*, min(m, n)), descending.
    Differentiable (``gA = U diag(gS) V^T``, always finite).

    Raises:
        As :func:`svd`.
    """
    check_matrix("linalg.svdvals", "A", A)
    _no_driver("linalg.svdvals", driver)
    return SVDVals().apply(A)


class Eigh(Op):
    name = "linalg.eigh"

    def __init__(self, uplo):
        self.uplo = uplo

    def forward(self, xp, a):
        w, v = xp.linalg.eigh(contiguous(xp, a), UPLO=self.uplo)
        self.save_for_backward(w, v)
        return w, v

    def backward(self, xp, gw, gv):
        w, v = self.saved
        inner = xp.zeros(v.shape, dtype=v.dtype)
        if nonzero_any(xp, gv):
            x = mT(v) @ gv
            with numpy.errstate(divide="ignore", invalid="ignore"):
                f = 1.0 / (w[..., None, :] - w[..., :, None])
                inner = f * (0.5 * (x - mT(x)))
            n = w.shape[-1]
            inner[..., xp.arange(n), xp.arange(n)] = 0
        n = w.shape[-1]
        inner[..., xp.arange(n), xp.arange(n)] += gw
        return (v @ inner @ mT(v),)


class EigvalsH(Op):
    name = "linalg.eigvalsh"

    def __init__(self, uplo):
        self.uplo = uplo

    def forward(self, xp, a):
        a = contiguous(xp, a)
        if not self.needs_input_grad[0]:
            return xp.linalg.eigvalsh(a, UPLO=self.uplo)
        w, v = xp.linalg.eigh(a, UPLO=self.uplo)
        self.save_for_backward(v)
        return w

    def backward(self, xp, gw):
        (v,) = self.saved
        return ((v * gw[..., None, :]) @ mT(v),)


def _uplo(op, UPLO):
    if not isinstance(UPLO, str) or UPLO.upper() not in ("L", "U"):
        raise ArgumentError(f"{op}: Expected UPLO argument to be 'L' or 'U', but got {UPLO!r}")
    return UPLO.upper()


def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric matrices ``A``
    (*, n, n), reading only the lower (``UPLO="L"``) or upper (``"U"``) triangle.

    Returns:
        ``(eigenvalues, eigenvectors)`` (PyTorch's field names): (*, n) and (*, n, n), the
        vectors in the columns (signs as the library gives them). Differentiable; the
        gradient is symmetric (see the module's notes and caveat).

    Raises:
        ArgumentTypeError: not a Tensor.
        ShapeError: fewer than 2 dims, or not square.
        DTypeError: integer or low-precision input.
        ArgumentError: UPLO not 'L' or 'U' (lower case is accepted, as PyTorch).
    """
    check_matrix("linalg.eigh", "A", A, square=True)
    return EighResult(*Eigh(_uplo("linalg.eigh", UPLO)).apply(A))


def eigvalsh(A, UPLO="L"):
    """The eigenvalues (ascending) of symmetric matrices ``A`` (*, n, n): (*, n).
    Differentiable (``gA = V diag(gL) V^T``).

    Raises:
        As :func:`eigh`.
    """
    check_matrix("linalg.eigvalsh", "A", A, square=True)
    return EigvalsH(_uplo("linalg.eigvalsh", UPLO)).apply(A)
