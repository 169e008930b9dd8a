"""Matrix functions and the small ``linalg`` helpers: ``linalg.matrix_exp`` (``torch.matrix_exp``),
``linalg.matrix_power`` (``torch.matrix_power``), ``linalg.multi_dot``, ``linalg.vander``,
``linalg.vecdot``, ``linalg.cross``, ``linalg.diagonal``.

``matrix_exp``: ``scipy.linalg.expm`` (Al-Mohy & Higham 2009 scaling and squaring, batched)
on the CPU, ``cupyx.scipy.linalg.expm`` per matrix on the GPU. Its gradient is the Frechet
derivative of ``exp`` at ``A^T`` in the direction ``G`` (Mathias 1996, "A chain rule for
matrix functions and applications"; Higham 2008, "Functions of Matrices", chapter 3):
``exp([[A^T, G], [0, A^T]]) = [[exp(A^T), L(A^T, G)], [0, exp(A^T)]]``, one ``expm`` of the
doubled matrix. The others are compositions of tinynet's differentiable ops (``matmul``,
``inv``, ``mul``, ``sum``), so their gradients come from those.
"""
import numbers
import warnings

import numpy

from .. import dtypes
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from .arith import mul
from .creation import eye, ones_like
from .join import stack
from .lapack_solve import inv
from .lapack_util import batch_loop, check_float, check_matrix, contiguous, library, mT
from .blas import matmul
from .blas_products import cross as _cross
from .diagonal import diagonal as _diagonal
from .reduction import sum as _sum
from .select import where
from .shape import expand, squeeze, unsqueeze
from .broadcast import broadcast_tensors
from .util import check_int, check_tensor, dim_index


def expm(xp, a):
    """``exp`` of each matrix of ``a`` by the library (float16 computed in float32)."""
    if a.shape[-1] == 0:
        return a.copy()
    work = a.astype(numpy.float32) if a.dtype == numpy.float16 else a
    if xp is numpy:
        out = library(xp).expm(work)
    else:
        out = batch_loop(xp, library(xp).expm, contiguous(xp, work))
    return xp.asarray(out).astype(a.dtype, copy=False)


class MatrixExp(Op):
    """Twice differentiable: the backward is this op on the doubled matrix."""
    name = "linalg.matrix_exp"
    twice_differentiable = True

    def forward(self, xp, a):
        self.save_for_backward(a)
        return expm(xp, a)

    def backward(self, xp, g):
        (a,) = self.saved
        n = a.shape[-1]
        at = mT(a)
        zero = xp.zeros_like(at)
        block = xp.concatenate([xp.concatenate([at, g], axis=-1), xp.concatenate([zero, at], axis=-1)], axis=-2)
        return (MatrixExp().call(xp, block)[..., :n, n:],)


def matrix_exp(A):
    """The matrix exponential ``sum_k A^k / k!`` of square matrices ``A`` (*, n, n); float16,
    float32 and float64. Differentiable (the Frechet derivative, see the module's notes).

    Raises:
        ArgumentTypeError: not a Tensor.
        ShapeError: fewer than 2 dims, or not square.
        DTypeError: integer or bfloat16 input.
    """
    check_matrix("linalg.matrix_exp", "A", A, square=True, low_precision=True)
    if A.dtype == dtypes.bfloat16:
        raise DTypeError("linalg.matrix_exp: bfloat16 is not supported (float16, float32 and float64 are)")
    return MatrixExp().apply(A)


def matrix_power(A, n):
    """``A`` multiplied by itself ``n`` times (square matrices (*, m, m)); ``n = 0`` gives the
    identity, ``n < 0`` powers of ``inv(A)``. Binary powering with ``matmul`` (and ``inv``):
    differentiable; integer matrices for ``n >= 0``.

    Raises:
        ArgumentTypeError: A not a Tensor, or n not an int.
        ShapeError: fewer than 2 dims, or not square.
        DTypeError: bool input, or integer input with n < 0.
        LinAlgError: n < 0 and A singular.
    """
    op = "linalg.matrix_power"
    check_tensor(op, "A", A)
    if isinstance(n, bool) or not isinstance(n, (numbers.Integral, numpy.integer)):
        raise ArgumentTypeError(f"{op}: n must be an int, got {type(n).__name__}")
    if A.ndim < 2:
        raise ShapeError(f"{op}: The input tensor A must have at least 2 dimensions, got shape {tuple(A.shape)}")
    if A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"{op}: A must be batches of square matrices, but they are {A.shape[-2]} by {A.shape[-1]} "
                         "matrices")
    if A.dtype == dtypes.bool_:
        raise DTypeError(f"{op}: bool matrices are not supported")
    n = int(n)
    if n == 0:  # the identity, in the graph with a zero gradient (no NaN from A)
        ident = expand(eye(A.shape[-1], dtype=A.dtype, device=A.device), tuple(A.shape))
        return where(ones_like(A, dtype=dtypes.bool_), ident, A)
    base = inv(A) if n < 0 else A
    result = None
    k = abs(n)
    while k:
        if k & 1:
            result = base if result is None else matmul(result, base)
        k >>= 1
        if k:
            base = matmul(base, base)
    return result.clone() if result is A else result


def _chain_order(dims):
    """The cheapest parenthesisation of a matrix chain with shapes ``dims[i] x dims[i+1]``
    (the textbook dynamic programme of Cormen et al., "Introduction to Algorithms"): the split table."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    return split


def multi_dot(tensors):
    """The product of a chain of matrices, in the order that costs the fewest multiplications
    (the result is the same up to rounding). The first may be 1-D (a row vector), the last
    1-D (a column vector); the others are 2-D. Differentiable (``matmul``).

    Raises:
        ArgumentTypeError: not a list or tuple of Tensors.
        ArgumentError: fewer than 2 tensors.
        ShapeError: wrong ranks, or sizes that do not chain.
        DTypeError: mixed dtypes.
    """
    op = "linalg.multi_dot"
    if not isinstance(tensors, (list, tuple)):
        raise ArgumentTypeError(f"{op}: tensors must be a list or tuple of Tensors, got {type(tensors).__name__}")
    if len(tensors) < 2:
        raise ArgumentError(f"{op}: expected at least 2 tensors but got {len(tensors)}")
    for i, t in enumerate(tensors):
        check_tensor(op, f"tensors[{i}]", t)
        edge = i in (0, len(tensors) - 1)
        if not (t.ndim == 2 or (edge and t.ndim == 1)):
            raise ShapeError(f"{op}: tensor {i} must be {'1D or 2D' if edge else '2D'} but got {t.ndim}D")
        if t.dtype != tensors[0].dtype:
            raise DTypeError(f"{op}: all tensors must have the same dtype, but tensor 0 is {tensors[0].dtype} and "
                             f"tensor {i} is {t.dtype}")
    mats = list(tensors)
    first_vec, last_vec = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_vec:
        mats[0] = unsqueeze(mats[0], 0)
    if last_vec:
        mats[-1] = unsqueeze(mats[-1], 1)
    for i in range(len(mats) - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise ShapeError(f"{op}: tensors {i} and {i + 1} with shapes {tuple(tensors[i].shape)} and "
                             f"{tuple(tensors[i + 1].shape)} cannot be multiplied")
    split = _chain_order([mats[0].shape[0]] + [m.shape[1] for m in mats])

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return matmul(product(i, k), product(k + 1, j))
    out = product(0, len(mats) - 1)
    if first_vec:
        out = squeeze(out, 0)
    if last_vec:
        out = squeeze(out, -1)
    return out


def chain_matmul(*matrices):
    """The product of the 2-D ``matrices`` in the cheapest order (:func:`tinynet.linalg.multi_dot`);
    one matrix comes back as a copy. Deprecated in PyTorch, with this warning.

    Raises:
        ArgumentError: no matrices. ShapeError: a tensor that is not 2-D, or sizes that do not chain.
    """
    warnings.warn("chain_matmul is deprecated and will be removed in a future PyTorch release; use "
                  "tinynet.linalg.multi_dot instead, which accepts a list of two or more tensors", UserWarning,
                  stacklevel=2)
    if not matrices:
        raise ArgumentError("chain_matmul: expected one or more matrices")
    for i, m in enumerate(matrices):
        check_tensor("chain_matmul", f"matrices[{i}]", m)
        if m.ndim != 2:
            raise ShapeError(f"chain_matmul: tensor {i} has {m.ndim} dimensions, expected 2")
    return matrices[0].clone() if len(matrices) == 1 else multi_dot(list(matrices))


def vander(x, *, N=None):
    """The Vandermonde matrices of ``x`` (*, n): (*, n, N) with ``x ** j`` in column ``j``,
    increasing powers from 0 (PyTorch's ``linalg.vander``; ``torch.vander`` counts down).
    ``N`` defaults to n; a 0-d ``x`` is one element (a (1, N) result). Floats and integers;
    differentiable (repeated ``mul``).

    Raises:
        ArgumentTypeError: x not a Tensor, N not an int.
        DTypeError: bool input.
        ArgumentError: N < 2 (or n < 2 by default).
    """
    op = "linalg.vander"
    check_tensor(op, "x", x)
    if x.dtype == dtypes.bool_:
        raise DTypeError(f"{op}: supports floating point and integer tensors, but got bool")
    n = check_int(op, "N", N) if N is not None else (x.shape[-1] if x.ndim else 1)
    if n <= 1:
        raise ArgumentError(f"{op}: N must be greater than 1, got {n}")
    if x.ndim == 0:  # one element: a (1, N) matrix, as PyTorch's
        x = x.reshape(1)
    cols = [ones_like(x), x]
    while len(cols) < n:
        cols.append(mul(cols[-1], x))
    return stack(cols, -1)


def vecdot(x, y, *, dim=-1):
    """The dot products ``sum(x * y, dim)`` of the vectors along ``dim``, after broadcasting
    ``x`` and ``y`` (two 1-D inputs must have one size, as PyTorch's); floats only, one
    dtype. Differentiable.

    Raises:
        ArgumentTypeError: x or y not a Tensor.
        DTypeError: integer input, or two dtypes.
        ShapeError: shapes that do not broadcast (1-D inputs of two sizes).
        IndexOutOfRangeError: dim out of range.
    """
    op = "linalg.vecdot"
    check_tensor(op, "x", x)
    check_tensor(op, "y", y)
    check_float(op, "x", x, low_precision=True)
    check_float(op, "y", y, low_precision=True)
    if x.dtype != y.dtype:
        raise DTypeError(f"{op}: Expected x and y to have the same dtype, but found x of type {x.dtype} and y of "
                         f"type {y.dtype} instead")
    if x.ndim == 1 and y.ndim == 1 and x.shape != y.shape:  # PyTorch takes the dot product here: no broadcasting
        raise ShapeError(f"{op}: 1-D x and y must have the same size, got {x.shape[0]} and {y.shape[0]}")
    try:
        shape = numpy.broadcast_shapes(x.shape, y.shape)
    except ValueError:
        raise ShapeError(f"{op}: the shapes of x {tuple(x.shape)} and y {tuple(y.shape)} do not broadcast") from None
    d = dim_index(op, dim, len(shape))
    return _sum(mul(x, y), d if shape else None)


def cross(input, other, *, dim=-1):
    """The cross product of 3-vectors along ``dim`` (default the last), the batch dims
    broadcast; both inputs need the same number of dims and dtype (as PyTorch's
    ``linalg.cross``; ``torch.cross`` defaults to the first dim of size 3). Differentiable.

    Raises:
        ArgumentTypeError: input or other not a Tensor.
        ShapeError: different ranks, ``dim`` not of size 3, batches that do not broadcast.
        DTypeError: two dtypes.
        IndexOutOfRangeError: dim out of range.
    """
    op = "linalg.cross"
    check_tensor(op, "input", input)
    check_tensor(op, "other", other)
    if input.ndim != other.ndim:
        raise ShapeError(f"{op}: inputs must have the same number of dimensions, got shapes {tuple(input.shape)} and "
                         f"{tuple(other.shape)}")
    if input.dtype != other.dtype:
        raise DTypeError(f"{op}: expected input and other of one dtype, got {input.dtype} and {other.dtype}")
    d = dim_index(op, dim, input.ndim)
    if input.ndim == 0 or input.shape[d] != 3 or other.shape[d] != 3:
        got = (input.shape[d], other.shape[d]) if input.ndim else ((), ())
        raise ShapeError(f"{op}: inputs dimension {dim} must have length 3. Got {got[0]} and {got[1]}")
    try:
        a, b = broadcast_tensors(input, other)
    except ValueError:
        raise ShapeError(f"{op}: the shapes {tuple(input.shape)} and {tuple(other.shape)} do not broadcast") from None
    return _cross(a, b, dim=d)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of ``A`` along ``dim1``/``dim2`` (default the last two): ``torch.diagonal``
    with the matrix defaults. A view; differentiable.

    Raises:
        ArgumentTypeError: A not a Tensor.
        IndexOutOfRangeError: a dim out of range.
        ArgumentError: dim1 and dim2 are the same dim.
    """
    check_tensor("linalg.diagonal", "A", A)
    return _diagonal(A, offset, dim1, dim2)

