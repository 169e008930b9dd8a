"""NumPy-named splits and stacks, and ``tensordot``, composed of :func:`tensor_split`,
:func:`cat`, reshapes and :func:`matmul` (so views, gradients and devices follow from those):
``hsplit``/``vsplit``/``dsplit``, ``column_stack``/``row_stack``/``dstack``.

``tensordot(a, b, dims)`` sums ``a``'s last ``dims`` axes against ``b``'s first ``dims`` axes
(or the listed axes of each): both operands are permuted so the summed axes meet, reshaped to
matrices and multiplied, ``C[i, j] = sum_k A[i, k] B[k, j]``.
"""
import numbers

from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..tensor import Tensor
from .arrange_extras import atleast_3d
from .join import _seq, cat, hstack, vstack
from .linalg import matmul
from .shape import permute, reshape
from .split import tensor_split
from .util import check_tensor, dim_index


def _split(op, input, indices_or_sections, dim, min_ndim):
    check_tensor(op, "input", input)
    if input.ndim < min_ndim:
        raise ShapeError(f"{op}: requires a tensor with at least {min_ndim} dimension(s), but got a tensor with "
                         f"{input.ndim} dimension(s)")
    arg = indices_or_sections
    if isinstance(arg, (numbers.Integral,)) and not isinstance(arg, bool):
        if arg <= 0:
            raise ArgumentError(f"{op}: the number of sections must be positive, got {arg}")
        if input.shape[dim] % arg:
            raise ArgumentError(f"{op}: dimension {dim} of size {input.shape[dim]} is not divisible by the number of "
                                f"sections {arg}")
    elif not isinstance(arg, (list, tuple)):
        raise ArgumentTypeError(f"{op}: indices_or_sections must be an int or a list of ints, got "
                                f"{type(arg).__name__}")
    return tensor_split(input, list(arg) if isinstance(arg, tuple) else arg, dim)


def hsplit(input, indices_or_sections):
    """Split along dim 1 (dim 0 for a 1-D tensor) into equal views (an int, which must
    divide the size) or at the given indices (a list), as ``numpy.hsplit``.

    Raises:
        ShapeError: a 0-d tensor.
        ArgumentError: sections that do not divide the size, or <= 0.
        ArgumentTypeError: not a Tensor, or sections neither an int nor a list.
    """
    check_tensor("hsplit", "input", input)
    return _split("hsplit", input, indices_or_sections, 1 if input.ndim > 1 else 0, 1)


def vsplit(input, indices_or_sections):
    """Split along dim 0 of a tensor with at least two dims (``numpy.vsplit``).

    Raises:
        ShapeError: fewer than 2 dims.
        ArgumentError: as :func:`hsplit`.
    """
    return _split("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    """Split along dim 2 of a tensor with at least three dims (``numpy.dsplit``).

    Raises:
        ShapeError: fewer than 3 dims.
        ArgumentError: as :func:`hsplit`.
    """
    return _split("dsplit", input, indices_or_sections, 2, 3)


def column_stack(tensors):
    """Stack as columns: 0-d and 1-D tensors become (n, 1) columns, then :func:`hstack`.

    Raises:
        ArgumentTypeError: not a sequence of tensors.
        ShapeError: the row counts differ.
    """
    ts = _seq("column_stack", tensors)
    return hstack([reshape(t, (t.numel(), 1)) if t.ndim < 2 else t for t in ts])


def row_stack(tensors):
    """:func:`vstack` under NumPy's older name."""
    return vstack(tensors)


def dstack(tensors):
    """Concatenate along dim 2 after :func:`atleast_3d` ((n,) -> (1, n, 1), (m, n) -> (m, n, 1)).

    Raises:
        ArgumentTypeError: not a sequence of tensors.
        ShapeError: the other dims differ.
    """
    ts = _seq("dstack", tensors)
    return cat([atleast_3d(t) for t in ts], 2)


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


METHODS = {"hsplit": hsplit, "vsplit": vsplit, "dsplit": dsplit}
