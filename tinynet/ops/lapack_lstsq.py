"""Least squares and ranks: ``linalg.lstsq``, ``linalg.pinv`` (``torch.pinverse``),
``linalg.matrix_rank``.

Numerics: ``scipy.linalg.lstsq`` (LAPACK ``gelsy``/``gelsd``/``gelss``) and
``scipy.linalg.lapack.?gels`` on the CPU, ``cupyx.lapack.gels`` on the GPU, one matrix at a
time; ``pinv`` and ``matrix_rank`` from the SVD of ``numpy.linalg``/``cupy.linalg`` (the
eigendecomposition with ``hermitian=True``) with PyTorch's ``atol``/``rtol`` cut-off, which
``numpy.linalg.pinv`` lacks.

Gradients: the pseudo-inverse ``P = A^+`` by Golub & Pereyra 1973 ("The differentiation of
pseudo-inverses and nonlinear least squares problems whose variables separate"),
valid where the rank does not change:
``gA = -P^T gP P^T + (I - A P) gP^T P P^T + P^T P gP^T (I - P A)``.
``lstsq``'s solution ``X = A^+ B`` goes through it (``gA`` from ``gP = gX B^T``,
``gB = P^T gX``), as PyTorch's; its residuals ``r_j = ||A x_j - b_j||^2`` have, at the
minimum, ``gB = -2 (A X - B) g_r`` and ``gA = 2 (A X - B) diag(g_r) X^T``.
"""
import collections
import math

import numpy

from .. import backend
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..tensor import Tensor
from .lapack_util import (batch_loop, broadcast_batches, check_float, check_matrix, check_same_dtype, contiguous,
                          host, host_tensor, mT)
from .shape import squeeze, unsqueeze
from .util import check_choice, check_flag, check_number

LstsqResult = collections.namedtuple(  # type: ignore[name-match]  # torch.return_types
    "linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _tolerances(op, A, atol, rtol, batch):
    """PyTorch's ``atol``/``rtol`` as float64 arrays (NumPy, host) broadcast to ``batch``:
    ``rtol`` defaults to ``eps * max(m, n)``, or 0 where an ``atol > 0`` is given."""
    def value(name, v):
        if v is None:
            return None
        if isinstance(v, Tensor):
            check_float(op, name, v, low_precision=True)
            arr = host(v.array).astype(numpy.float64)
            try:
                return numpy.broadcast_to(arr, batch)
            except ValueError:
                raise ShapeError(f"{op}: {name} of shape {tuple(v.shape)} does not broadcast to the batch shape "
                                 f"{batch}") from None
        return numpy.full(batch, check_number(op, name, v), dtype=numpy.float64)
    a, r = value("atol", atol), value("rtol", rtol)
    default = numpy.finfo(A.dtype).eps * max(A.shape[-2:])
    if r is None:
        r = numpy.full(batch, default) if a is None else numpy.where(a > 0, 0.0, default)
    return (numpy.zeros(batch) if a is None else a), r


def _check_spectrum_input(op, A, hermitian):
    """Check ``A`` (matrices, square when ``hermitian``) and the flag (returned as a bool)
    for the functions that read A's spectrum (pinv, matrix_rank)."""
    check_matrix(op, "A", A)
    hermitian = check_flag(op, "hermitian", hermitian)
    if hermitian:
        check_matrix(op, "A", A, square=True)
    return hermitian


def _spectrum(xp, a, hermitian, vectors=True):
    """``(left, values, right)`` with ``a = left diag(values) right``: the reduced SVD, or
    for ``hermitian`` the eigendecomposition ``V diag(w) V^T``."""
    if hermitian:
        if not vectors:
            return None, xp.linalg.eigvalsh(a), None
        w, v = xp.linalg.eigh(a)
        return v, w, mT(v)
    if not vectors:
        return None, xp.linalg.svd(a, compute_uv=False), None
    return xp.linalg.svd(a, full_matrices=False)


def _kept(xp, values, atol, rtol):
    """Which values exceed ``max(atol, rtol * largest |value|)`` (PyTorch's cut-off)."""
    mag = xp.abs(values)
    largest = mag.max(axis=-1, keepdims=True) if mag.shape[-1] else xp.zeros(mag.shape[:-1] + (1,), mag.dtype)
    tol = xp.maximum(xp.asarray(atol)[..., None], xp.asarray(rtol)[..., None] * largest)
    return mag > tol


def pinv_array(xp, a, atol, rtol, hermitian):
    left, values, right = _spectrum(xp, contiguous(xp, a), hermitian)
    keep = _kept(xp, values, atol, rtol)
    with numpy.errstate(divide="ignore", invalid="ignore"):
        inv = xp.where(keep, 1 / xp.where(keep, values, 1), 0).astype(a.dtype)
    return mT(right) @ (inv[..., :, None] * mT(left))


def pinv_backward(xp, a, p, gp):
    """Golub & Pereyra's gradient of ``P = A^+`` (see the module's notes)."""
    pt, gpt = mT(p), mT(gp)
    ppt, ptp = p @ pt, pt @ p
    left = gpt @ ppt
    right = ptp @ gpt
    return -(pt @ gp @ pt) + left - a @ (p @ left) + right - (right @ p) @ a


class Pinv(Op):
    name = "linalg.pinv"

    def __init__(self, atol, rtol, hermitian):
        self.atol, self.rtol, self.hermitian = atol, rtol, hermitian

    def forward(self, xp, a):
        p = pinv_array(xp, a, self.atol, self.rtol, self.hermitian)
        self.save_for_backward(a, p)
        return p

    def backward(self, xp, gp):
        a, p = self.saved
        return (pinv_backward(xp, a, p, gp),)


def pinv(A, *, atol=None, rtol=None, hermitian=False, rcond=None):
    """The Moore-Penrose pseudo-inverse of matrices ``A`` (*, m, n): (*, n, m). Singular values
    (``hermitian=True``: eigenvalue magnitudes, from ``eigh``, reading the lower triangle)
    at or below ``max(atol, rtol * largest)`` count as zero.

    Args:
        atol, rtol: floats or tensors broadcast to the batch shape. Defaults (PyTorch's):
            ``atol = 0``; ``rtol = eps * max(m, n)``, or 0 where ``atol > 0`` is given.
        rcond: the older name of ``rtol`` (``torch.pinverse``'s).

    Returns:
        A's dtype. Differentiable where the rank does not change (Golub & Pereyra 1973).

    Raises:
        ArgumentTypeError: not a Tensor, or a tolerance that is not a number or a tensor.
        ShapeError: fewer than 2 dims; ``hermitian`` with non-square A; a tolerance tensor
            that does not broadcast to the batch shape.
        DTypeError: integer or low-precision input.
        ArgumentError: both rtol and rcond.
    """
    op = "linalg.pinv"
    hermitian = _check_spectrum_input(op, A, hermitian)
    if rcond is not None:
        if rtol is not None:
            raise ArgumentError(f"{op}: give rtol or its older name rcond, not both")
        rtol = rcond
    a, r = _tolerances(op, A, atol, rtol, tuple(A.shape[:-2]))
    return Pinv(a, r, hermitian).apply(A)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, tol=None):
    """The numerical rank of matrices ``A`` (*, m, n): how many singular values
    (``hermitian``: eigenvalue magnitudes) exceed ``max(atol, rtol * largest)``; int64 of
    shape (*). Tolerances as :func:`pinv`; ``tol`` (PyTorch's older form) is ``atol=tol,
    rtol=0``. Not differentiable (an integer).

    Raises:
        ArgumentTypeError: not a Tensor.
        ShapeError: fewer than 2 dims (non-square with ``hermitian``).
        DTypeError: integer or low-precision input.
        ArgumentError: ``tol`` with atol/rtol.
    """
    op = "linalg.matrix_rank"
    hermitian = _check_spectrum_input(op, A, hermitian)
    if tol is not None:
        if atol is not None or rtol is not None:
            raise ArgumentError(f"{op}: give tol or atol/rtol, not both")
        atol, rtol = tol, 0.0
    a, r = _tolerances(op, A, atol, rtol, tuple(A.shape[:-2]))
    arr = A.array
    xp = backend.array_module(arr)
    _, values, _ = _spectrum(xp, contiguous(xp, arr), hermitian, vectors=False)
    return Tensor._wrap(_kept(xp, values, a, r).sum(axis=-1).astype(numpy.int64))


def _lstsq_one(xp, driver, rcond):
    """``(solution (n, k), raw residuals (k,) or None, rank, singular values or None)`` of
    one system by the library (see the module's notes)."""
    if xp is not numpy:
        import cupyx.lapack

        def gpu(a, b):
            x = cupyx.lapack.gels(a.copy(), b.copy())
            r = ((a @ x - b) ** 2).sum(axis=0)
            return x, r
        return gpu
    import scipy.linalg

    def cpu(a, b):
        m, n = a.shape
        if driver == "gels":
            routine = scipy.linalg.lapack.get_lapack_funcs("gels", (a, b))
            rows = max(m, n)
            padded = numpy.zeros((rows, b.shape[1]), dtype=b.dtype)
            padded[:m] = b
            _, x, _ = routine(a, padded)
            return x[:n], (x[n:] ** 2).sum(axis=0), numpy.int64(-1), numpy.zeros(0, a.dtype)
        x, res, rank, sv = scipy.linalg.lstsq(a, b, cond=rcond, lapack_driver=driver, check_finite=False)
        res = numpy.asarray(res, dtype=a.dtype)
        sv = numpy.zeros(0, a.dtype) if sv is None else sv.astype(a.dtype)
        return x.astype(a.dtype), (res if res.size else numpy.zeros(b.shape[1], a.dtype)), numpy.int64(rank), sv
    return cpu


class Lstsq(Op):
    """The solution and the residuals (both differentiable); rank and singular values are
    kept in ``self.rank`` / ``self.singular_values`` (host or device arrays)."""
    name = "linalg.lstsq"

    def __init__(self, driver, rcond):
        self.driver, self.rcond = driver, rcond

    def forward(self, xp, a, b):
        m, n = a.shape[-2:]
        k = b.shape[-1]
        batch = a.shape[:-2]
        residuals = m > n and self.driver != "gelsy"
        if min(m, n, k) == 0:  # nothing to solve: zeros, rank 0
            x = xp.zeros(batch + (n, k), dtype=a.dtype)
            raw, rank = (b * b).sum(axis=-2), numpy.zeros(batch, numpy.int64)
            sv = xp.zeros(batch + (min(m, n),), dtype=a.dtype)
        elif xp is not numpy:
            x, raw = batch_loop(xp, _lstsq_one(xp, "gels", None), contiguous(xp, a), contiguous(xp, b))
            rank, sv = None, None
        else:
            x, raw, rank, sv = batch_loop(xp, _lstsq_one(xp, self.driver, self.rcond), a, b)
        if self.driver == "gels":
            rank = numpy.zeros(0, numpy.int64)
            sv = xp.zeros(0, dtype=a.dtype)
        elif self.driver == "gelsy":
            sv = xp.zeros(0, dtype=a.dtype)
        if residuals and self.driver != "gels" and not bool((numpy.asarray(rank) == n).all()):
            residuals = False  # PyTorch gives them only when every matrix has full rank
        self.rank, self.singular_values = rank, sv
        r = raw.astype(a.dtype) if residuals else xp.zeros(0, dtype=a.dtype)
        self.save_for_backward(a, b, x)
        return x, r

    def backward(self, xp, gx, gr):
        a, b, x = self.saved
        p = pinv_array(xp, a, numpy.zeros(a.shape[:-2]), numpy.full(a.shape[:-2], _default_rtol(a)), False)
        ga = pinv_backward(xp, a, p, gx @ mT(b)) if self.needs_input_grad[0] else None
        gb = mT(p) @ gx
        if gr.size:
            res = (a @ x - b) * gr[..., None, :]
            gb = gb - 2 * res
            if ga is not None:
                ga = ga + 2 * res @ mT(x)
        return ga, gb


def _default_rtol(a):
    return numpy.finfo(a.dtype).eps * max(a.shape[-2:])


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution of ``A X = B`` for matrices ``A`` (*, m, n) and ``B``
    (*, m, k) -- or (*, m), vectors, when B is 1-D or has A's shape without the last dim;
    batch dims broadcast.

    Args:
        rcond: singular values below ``rcond * largest`` count as zero (the rank-revealing
            drivers); default ``eps * max(m, n)`` of A's dtype.
        driver: LAPACK's routine, as PyTorch: ``"gelsy"`` (CPU default; QR with column
            pivoting, rank-revealing), ``"gelsd"`` (SVD, divide and conquer), ``"gelss"``
            (SVD), ``"gels"`` (QR; A must have full rank). On a GPU only ``"gels"`` (the
            default there), and only for ``m >= n``, as PyTorch's CUDA.

    Returns:
        PyTorch's named tuple: ``solution`` (*, n, k) (or (*, n)); ``residuals`` (*, k), the
        squared residual norms ``||A x_j - b_j||^2`` of each column, only for ``m > n``, a
        driver other than gelsy, and (except gels) every matrix of full rank, else empty;
        ``rank`` (*) int64 (empty for gels); ``singular_values`` (*, min(m, n)) for gelsd and
        gelss, else empty. ``solution`` and ``residuals`` are differentiable (through the
        pseudo-inverse, Golub & Pereyra 1973).

    Raises:
        ArgumentTypeError: A or B is not a Tensor, rcond not a number.
        ShapeError: A not a matrix, rows that differ, batches that do not broadcast.
        DTypeError: integer or low-precision dtypes, or two dtypes.
        ArgumentError: an unknown driver, a driver other than gels on the GPU, a GPU system
            with m < n.
    """
    op = "linalg.lstsq"
    check_matrix(op, "A", A)
    if not isinstance(B, Tensor):
        raise ArgumentTypeError(f"{op}: B must be a Tensor, got {type(B).__name__}")
    check_float(op, "B", B)
    check_same_dtype(op, "A", A, "B", B)
    on_gpu = A.device.type != "cpu"
    if driver is None:
        driver = "gels" if on_gpu else "gelsy"
    driver = check_choice(op, "driver", driver, DRIVERS)
    m, n = A.shape[-2:]
    if on_gpu and driver != "gels":
        raise ArgumentError(f"{op}: `driver` other than `gels` is not supported on CUDA, got {driver!r}")
    if on_gpu and m < n:
        raise ArgumentError(f"{op}: only overdetermined systems (m >= n) are allowed on CUDA, got A of shape "
                            f"{tuple(A.shape)}")
    rcond = _default_rtol(A.array) if rcond is None else check_number(op, "rcond", rcond)
    if not math.isfinite(rcond):
        raise ArgumentError(f"{op}: rcond must be finite, got {rcond}")
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if B.ndim < 1 or (not vector and B.ndim < 2):
        raise ShapeError(f"{op}: B must have at least 1 dimension, got shape {tuple(B.shape)}")
    Bm = unsqueeze(B, -1) if vector else B
    if Bm.shape[-2] != m:
        raise ShapeError(f"{op}: A and B must have the same number of rows, got A of shape {tuple(A.shape)} and B of "
                         f"shape {tuple(B.shape)} ({m} != {Bm.shape[-2]})")
    Am, Bm = broadcast_batches(op, {"A": A, "B": Bm}, (2, 2))
    f = Lstsq(driver, rcond)
    X, residuals = f.apply(Am, Bm)
    rank = f.rank if f.rank is not None else numpy.zeros(0, numpy.int64)
    sv = f.singular_values if f.singular_values is not None else X.array[..., :0, 0].reshape(0)
    return LstsqResult(squeeze(X, -1) if vector else X, residuals, host_tensor(A, rank),
                       sv if isinstance(sv, Tensor) else Tensor._wrap(sv))
