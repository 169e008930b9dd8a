"""Products beside the matrix products of :mod:`.blas` (PyTorch's BLAS family and its
neighbours), composed of :func:`~tinynet.matmul`, reshapes and elementwise products, so
their gradients follow from those ops: ``trace``, ``cross``, ``kron``, ``inner``,
``tensordot``, ``vdot`` and ``addr``.

* ``trace(A) = sum_i A[i, i]``.
* ``cross(a, b) = (a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0)`` along a dim of size 3.
* ``kron(A, B)``: block ``idx`` of the result is ``A[idx] * B``.
* ``inner(a, b)``: sums over the last dims, ``sum_k a[..., k] b[..., k]``.
* ``tensordot(a, b, dims)`` sums ``a``'s last ``dims`` axes against ``b``'s first ``dims``
  axes (or the listed axes of each): both operands are permuted so the summed axes meet,
  reshaped to matrices and multiplied, ``C[i, j] = sum_k A[i, k] B[k, j]``.
* ``vdot(a, b) = sum_k conj(a[k]) b[k]``; ``addr(C, u, v) = beta C + alpha u v^T`` (a rank-1
  ``addmm``).
"""
import numbers
import warnings

from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..tensor import Tensor
from .arith import mul, sub
from .blas import _add_product, _ndim, _same_dtype, _tensors, matmul
from .complex import conj
from .broadcast import broadcast_tensors
from .diagonal import diagonal
from .join import stack
from .reduction import sum as _sum
from .shape import permute, reshape
from .split import unbind
from .util import check_tensor, dim_index


def trace(input):
    """The sum of the main diagonal of a 2-D ``input`` (differentiable).

    Raises:
        ArgumentTypeError: not a Tensor.
        ShapeError: ``input`` is not 2-D.
    """
    check_tensor("trace", "input", input)
    if input.ndim != 2:
        raise ShapeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    return _sum(diagonal(input))


def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (the two broadcast). ``dim=None`` takes
    the first dim of size 3, with PyTorch's deprecation warning.

    Raises:
        ArgumentTypeError: an argument is not a Tensor.
        ShapeError: the shapes do not broadcast, or ``dim`` is not of size 3.
        IndexOutOfRangeError: ``dim`` out of range.
    """
    check_tensor("cross", "input", input)
    check_tensor("cross", "other", other)
    a, b = broadcast_tensors(input, other)
    if dim is None:
        sizes = [i for i, s in enumerate(a.shape) if s == 3]
        if not sizes:
            raise ShapeError(f"cross: no dimension of size 3 in input of shape {tuple(a.shape)}")
        warnings.warn("cross: using the first dimension of size 3 because dim is not given (PyTorch's deprecated "
                      "default); pass dim explicitly", UserWarning, stacklevel=2)
        d = sizes[0]
    else:
        d = dim_index("cross", dim, a.ndim)
        if a.shape[d] != 3:
            raise ShapeError(f"cross: dimension {dim} does not have size 3, got shape {tuple(a.shape)}")
    a0, a1, a2 = unbind(a, d)
    b0, b1, b2 = unbind(b, d)
    return stack([sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2)), sub(mul(a0, b1), mul(a1, b0))], d)


def kron(input, other):
    """Kronecker product: for shapes ``a`` and ``b`` (the shorter padded with leading 1s),
    the result has shape ``a[i] * b[i]`` and block ``idx`` of it is ``input[idx] * other``.

    Raises:
        ArgumentTypeError: an argument is not a Tensor.
    """
    check_tensor("kron", "input", input)
    check_tensor("kron", "other", other)
    n = max(input.ndim, other.ndim)
    a = (1,) * (n - input.ndim) + tuple(input.shape)
    b = (1,) * (n - other.ndim) + tuple(other.shape)
    # interleave: input as (a0, 1, a1, 1, ...), other as (1, b0, 1, b1, ...); their product's
    # pairs of dims merge into a0*b0, a1*b1, ...
    x = reshape(input, tuple(v for s in a for v in (s, 1)))
    y = reshape(other, tuple(v for s in b for v in (1, s)))
    return reshape(mul(x, y), tuple(p * q for p, q in zip(a, b)))


def inner(input, other):
    """Inner product over the last dim: shape ``input.shape[:-1] + other.shape[:-1]``; with a
    0-d argument, the elementwise product.

    Raises:
        ArgumentTypeError: an argument is not a Tensor.
        ShapeError: the last dims differ.
    """
    check_tensor("inner", "input", input)
    check_tensor("inner", "other", other)
    if input.ndim == 0 or other.ndim == 0:
        return mul(input, other)
    k = input.shape[-1]
    if other.shape[-1] != k:
        raise ShapeError(f"inner: the last dims must match, got shapes {tuple(input.shape)} and "
                         f"{tuple(other.shape)}")
    rows = matmul(reshape(input, (-1, k)), reshape(other, (-1, k)).t())
    return reshape(rows, tuple(input.shape[:-1]) + tuple(other.shape[:-1]))


def _dims_lists(a, b, dims):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, numbers.Integral) and not isinstance(dims, bool):
        if dims < 0:
            raise ArgumentError(f"tensordot: dims must be a non-negative integer, got {dims}")
        if dims > min(a.ndim, b.ndim):
            raise ShapeError(f"tensordot: dims={dims} exceeds the dims of the operands ({a.ndim} and {b.ndim})")
        return list(range(a.ndim - dims, a.ndim)), list(range(dims))
    if isinstance(dims, (list, tuple)) and len(dims) == 2:
        da, db = ([d] if isinstance(d, numbers.Integral) else list(d) for d in dims)
        if len(da) != len(db):
            raise ShapeError(f"tensordot: both dimension lists must have the same length, got {da} and {db}")
        return ([dim_index("tensordot", d, a.ndim) for d in da], [dim_index("tensordot", d, b.ndim) for d in db])
    raise ArgumentTypeError(f"tensordot: dims must be an int or a pair of lists of ints, got {dims!r}")


def tensordot(a, b, dims=2):
    """Sum products over the paired axes: ``dims`` an int ``k`` (``a``'s last ``k`` axes with
    ``b``'s first ``k``) or a pair of lists ``([axes of a], [axes of b])``. The result has
    ``a``'s free axes then ``b``'s, in order.

    Raises:
        ArgumentTypeError: not tensors, or a malformed ``dims``.
        ShapeError: paired axes of different sizes, lists of different lengths, or ``k``
            above an operand's rank.
        IndexOutOfRangeError: an axis out of range.
    """
    check_tensor("tensordot", "a", a)
    check_tensor("tensordot", "b", b)
    da, db = _dims_lists(a, b, dims)
    for i, j in zip(da, db):
        if a.shape[i] != b.shape[j]:
            raise ShapeError(f"tensordot: contracted dimensions must match, got size {a.shape[i]} (dim {i} of a) and "
                             f"{b.shape[j]} (dim {j} of b)")
    free_a = [i for i in range(a.ndim) if i not in da]
    free_b = [j for j in range(b.ndim) if j not in db]
    k = 1
    for i in da:
        k *= a.shape[i]
    m = 1
    for i in free_a:
        m *= a.shape[i]
    n = 1
    for j in free_b:
        n *= b.shape[j]
    am = reshape(permute(a, free_a + da), (m, k))
    bm = reshape(permute(b, db + free_b), (k, n))
    return reshape(matmul(am, bm), tuple(a.shape[i] for i in free_a) + tuple(b.shape[j] for j in free_b))


def vdot(input, other):
    """``sum_k conj(input[k]) * other[k]`` of two 1-D tensors of one length and one dtype (the
    first conjugated: for real tensors ``dot``); a 0-d tensor.

    Raises:
        ArgumentTypeError: a non-Tensor. ShapeError: not 1-D, or lengths differ. DTypeError: dtypes differ.
    """
    a, b = _tensors("vdot", input=input, other=other)
    _ndim("vdot", "input", a, 1)
    _ndim("vdot", "other", b, 1)
    if a.shape[0] != b.shape[0]:
        raise ShapeError(f"vdot: expected 1D tensors of the same length, got shapes {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")
    _same_dtype("vdot", input=a, other=b)
    return _sum(mul(conj(a), b)) if a.array.dtype.kind == "c" else _sum(mul(a, b))


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)`` for 1-D ``vec1`` (n,) and ``vec2`` (m,),
    ``input`` broadcast to (n, m); ``beta == 0`` ignores ``input`` (NaN included). Integer
    tensors truncate float ``alpha``/``beta`` (as :func:`tinynet.addmm`).

    Raises:
        ArgumentTypeError: a non-Tensor, or ``beta``/``alpha`` not a number. ShapeError: vectors
            not 1-D, or ``input`` does not broadcast to (n, m). DTypeError: the dtypes differ.
    """
    a, b = _tensors("addr", vec1=vec1, vec2=vec2)
    _ndim("addr", "vec1", a, 1)
    _ndim("addr", "vec2", b, 1)
    return _add_product("addr", input, reshape(a, (-1, 1)), reshape(b, (1, -1)), beta, alpha, ("vec1", "vec2"),
                        (a.shape[0], b.shape[0]))
