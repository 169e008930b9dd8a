"""What the LAPACK-backed ops share (``lapack_solve``, ``lapack_det``, ``lapack_decomp``,
``lapack_lstsq``, ``matrix_functions``, ``norms``): the argument checks that raise typed
errors naming ``linalg.<fn>``, the library each backend takes its numerics from
(``numpy.linalg``/``scipy.linalg`` on the CPU, ``cupy.linalg``/``cupyx.scipy.linalg`` on the
GPU), the batch loop for library functions that take one matrix at a time, and LAPACK's
``info`` codes (the order of a failing leading minor, the index of a zero pivot), read on
the host by ``scipy.linalg.lapack``.

Only float32 and float64 reach LAPACK (PyTorch's CPU kernels refuse float16 and bfloat16
too); complex dtypes do not exist in tinynet.
"""
import contextlib
import math

import numpy

from .. import backend
from ..dtypes import float32, float64, is_floating
from ..errors import ArgumentTypeError, DTypeError, LinAlgError, ShapeError
from ..tensor import Tensor
from .shape import expand

LAPACK_DTYPES = (float32, float64)


def check_matrix(op, name, A, square=False, low_precision=False):
    """``A`` when it is a Tensor of at least 2 dims (square ones with ``square``), float32 or
    float64 (any float with ``low_precision``).

    Raises:
        ArgumentTypeError: not a Tensor. ShapeError: fewer than 2 dims, or not square.
        DTypeError: an integer/bool dtype, or float16/bfloat16 where LAPACK is needed.
    """
    if not isinstance(A, Tensor):
        raise ArgumentTypeError(f"{op}: {name} must be a Tensor, got {type(A).__name__}")
    if A.ndim < 2:
        raise ShapeError(f"{op}: The input tensor {name} must have at least 2 dimensions, got shape {tuple(A.shape)}")
    check_float(op, name, A, low_precision)
    if square and A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"{op}: {name} must be batches of square matrices, but they are {A.shape[-2]} by "
                         f"{A.shape[-1]} matrices (shape {tuple(A.shape)})")
    return A


def check_float(op, name, t, low_precision=False):
    """Raise DTypeError unless ``t`` is float32/float64 (any float with ``low_precision``)."""
    dt = t.array.dtype
    if not is_floating(dt):
        raise DTypeError(f"{op}: Expected a floating point tensor as {name}, got {t.dtype} (complex tensors do not "
                         "exist in tinynet)")
    if not low_precision and dt not in LAPACK_DTYPES:
        raise DTypeError(f"{op}: Low precision dtypes not supported: {name} is {t.dtype} (LAPACK takes float32 and "
                         "float64)")
    return t


def check_same_dtype(op, n1, a, n2, b):
    if a.dtype != b.dtype:
        raise DTypeError(f"{op}: Expected {n1} and {n2} to have the same dtype, but found {n1} of type {a.dtype} "
                         f"and {n2} of type {b.dtype} instead")


def broadcast_batches(op, named, cores):
    """The tensors of ``named`` (name -> Tensor) expanded to their common batch shape, each
    keeping its last ``cores[i]`` dims (differentiable: ``expand``'s backward sums)."""
    shapes = [t.shape[:t.ndim - c] for t, c in zip(named.values(), cores)]
    try:
        batch = numpy.broadcast_shapes(*shapes)
    except ValueError:
        listed = " and ".join(f"{n} {tuple(t.shape)}" for n, t in named.items())
        raise ShapeError(f"{op}: the batch dimensions of {listed} do not broadcast") from None
    return tuple(t if tuple(t.shape[:t.ndim - c]) == batch else expand(t, batch + tuple(t.shape[t.ndim - c:]))
                 for t, c in zip(named.values(), cores))


def library(xp):
    """``scipy.linalg`` for NumPy arrays, ``cupyx.scipy.linalg`` for CuPy arrays."""
    if xp is numpy:
        import scipy.linalg
        return scipy.linalg
    import cupyx.scipy.linalg
    return cupyx.scipy.linalg


def raising(xp):
    """A context in which a failed factorisation raises: NumPy always does; CuPy returns NaNs
    unless its ``linalg`` error state is ``raise`` (``cupyx.errstate``)."""
    if xp is numpy:
        return contextlib.nullcontext()
    import cupyx
    return cupyx.errstate(linalg="raise")


def mT(x):
    """The matrix transpose of an array or tensor (the last two axes swapped)."""
    return x.swapaxes(-1, -2)


def contiguous(xp, *arrays):
    """C-contiguous copies where needed (CuPy's batched routines read raw pointers)."""
    out = tuple(a if a.flags.c_contiguous else xp.ascontiguousarray(a) for a in arrays)
    return out if len(out) > 1 else out[0]


def batch_loop(xp, fn, *arrays, core=2):
    """``fn`` on each matrix of ``arrays`` (one batch shape, the last ``core`` dims each
    item's), for library functions that take one matrix; the results are stacked back to
    the batch shape (``fn`` may return a tuple). An empty batch probes ``fn`` with zeros
    for the result shapes."""
    batch = arrays[0].shape[:arrays[0].ndim - core]
    if math.prod(batch) == 0:
        probe = fn(*(xp.zeros(a.shape[a.ndim - core:], dtype=a.dtype) for a in arrays))
        several = isinstance(probe, tuple)
        empty = tuple(xp.zeros(batch + p.shape, dtype=p.dtype) for p in (probe if several else (probe,)))
        return empty if several else empty[0]
    results = [fn(*(a[idx] for a in arrays)) for idx in numpy.ndindex(*batch)]
    several = isinstance(results[0], tuple)
    columns = list(zip(*results)) if several else [results]
    out = tuple(xp.stack([xp.asarray(r) for r in col]).reshape(batch + xp.asarray(col[0]).shape) for col in columns)
    return out if several else out[0]


def host(a):
    """``a`` as a NumPy array (a copy from the GPU for CuPy arrays)."""
    return a.get() if isinstance(a, backend._CUPY_NDARRAY) else numpy.asarray(a)


def factor_info(kind, a):
    """LAPACK's ``info`` of each matrix of ``a``, an int32 NumPy array of the batch shape:
    for ``"potrf"`` (Cholesky of the lower triangle) the order of the first leading minor
    that is not positive-definite, for ``"getrf"`` (LU) the 1-based index of the first zero
    pivot; 0 where the factorisation succeeds. Computed on the host by ``scipy.linalg.lapack``."""
    from scipy.linalg import lapack
    a = host(a)
    routine = lapack.get_lapack_funcs(kind, (a,))
    info = numpy.zeros(a.shape[:-2], dtype=numpy.int32)
    if a.shape[-1] == 0:
        return info
    for idx in numpy.ndindex(*info.shape):
        out = routine(a[idx], lower=1) if kind == "potrf" else routine(a[idx])
        info[idx] = out[-1]
    return info


def batch_label(info):
    """``"(Batch element i): "`` for the first failing matrix of a batch, PyTorch's prefix."""
    if info.ndim == 0:
        return ""
    return f"(Batch element {int(numpy.flatnonzero(info.reshape(-1))[0])}): "


def singular_error(op, name, a):
    """The LinAlgError of a singular ``a`` (LU found a zero pivot), with PyTorch's details."""
    info = factor_info("getrf", a)
    if not info.any():  # the library refused for another reason (NaN input): say what it is
        return LinAlgError(f"{op}: the factorization of {name} failed (does it hold NaN or inf?)")
    k = int(info.reshape(-1)[numpy.flatnonzero(info.reshape(-1))[0]])
    return LinAlgError(f"{op}: {batch_label(info)}The diagonal element {k} of the LU factorization of {name} is "
                       "zero: the input matrix is singular")


def not_pd_error(op, name, a):
    """The LinAlgError of an ``a`` that is not positive-definite, with the failing minor."""
    info = factor_info("potrf", a)
    if not info.any():
        return LinAlgError(f"{op}: the factorization of {name} failed (does it hold NaN or inf?)")
    k = int(info.reshape(-1)[numpy.flatnonzero(info.reshape(-1))[0]])
    return LinAlgError(f"{op}: {batch_label(info)}The factorization could not be completed because {name} is not "
                       f"positive-definite (the leading minor of order {k} is not positive-definite)")


def symmetric_from(xp, a, upper):
    """The symmetric matrix whose lower (upper) triangle is ``a``'s: what LAPACK reads of
    a symmetric input, made explicit so NumPy and CuPy read the same half."""
    if upper:
        return xp.triu(a) + mT(xp.triu(a, 1))
    return xp.tril(a) + mT(xp.tril(a, -1))


def tri_solve(xp, a, b, lower, trans=False, unit=False):
    """``op(a)^{-1} b`` for triangular ``a`` (batches of one shape, ``op`` the transpose with
    ``trans``), by BLAS ``trsm``: a zero on the diagonal gives inf/NaN, as in PyTorch (LAPACK's
    ``trtrs``, which ``scipy.linalg.solve_triangular`` calls, refuses it instead).
    NumPy: ``scipy.linalg.blas`` per matrix; CuPy: ``cupyx.scipy.linalg.solve_triangular``
    (cuBLAS ``trsm``, batched)."""
    if a.shape[-1] == 0 or b.size == 0:
        return xp.zeros(b.shape, dtype=b.dtype)
    if xp is not numpy:
        a, b = contiguous(xp, a, b)
        return library(xp).solve_triangular(a, b, trans=1 if trans else 0, lower=lower, unit_diagonal=unit,
                                            check_finite=False)
    from scipy.linalg import blas
    trsm = blas.get_blas_funcs("trsm", (a, b))

    def one(am, bm):
        return trsm(1.0, am, bm, side=0, lower=int(lower), trans_a=int(trans), diag=int(unit))
    return batch_loop(xp, one, a, b).astype(b.dtype, copy=False)


def nonzero_any(xp, *arrays):
    """True when some array holds a nonzero (a gradient the engine filled with zeros is not
    used); one host read."""
    return any(a is not None and bool(xp.any(a != 0)) for a in arrays)


def host_tensor(like, a):
    """A tensor (no gradient) of the NumPy array ``a``, on the device of tensor ``like``."""
    return Tensor._wrap(backend.to_device(numpy.asarray(a), like.device))
