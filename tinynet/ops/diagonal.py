"""Diagonals and triangles: ``tril``, ``triu``, ``diag``, ``diagonal``, ``diag_embed``,
``diagflat`` and ``block_diag``.

``tril``/``triu`` zero one side of the last two dims and are their own gradient's op.
``diagonal`` returns a view, as in PyTorch: it shares the input's memory and version
counter; it and writing into a diagonal (:class:`DiagonalInto`) are each other's gradient,
so both can be differentiated again. ``diag_embed``, ``diagflat`` and ``block_diag`` are
composed of differentiable ops (a product with the identity, padding, concatenation).
"""
import numpy

from .. import dtypes
from ..autograd import Op
from ..errors import ArgumentError, ShapeError
from ..tensor import Tensor
from .arith import mul
from .creation import eye
from .join import cat
from .pad import pad
from .shape import flatten, movedim, reshape, unsqueeze
from .split import strided_view
from .util import check_int, check_tensor, dim_index


class Tril(Op):
    """The lower triangle of the last two dims (``col - row <= diagonal``), the rest zeroed."""
    name = "tril"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, diagonal):
        self.diagonal = diagonal

    def forward(self, xp, x):
        return xp.tril(x, self.diagonal)

    def backward(self, xp, gy):
        return (type(self)(self.diagonal).call(xp, gy),)


class Triu(Tril):
    """The upper triangle of the last two dims (``col - row >= diagonal``), the rest zeroed."""
    name = "triu"

    def forward(self, xp, x):
        return xp.triu(x, self.diagonal)


def _diagonal_view(xp, x, offset, d1, d2):
    """The diagonal ``offset`` of the (``d1``, ``d2``) planes of ``x`` as a writable view,
    the other dims first and the diagonal last (PyTorch's layout)."""
    n1, n2 = x.shape[d1], x.shape[d2]
    s1, s2 = (0, offset) if offset >= 0 else (-offset, 0)
    length = max(0, min(n1 - s1, n2 - s2))
    index = [slice(None)] * x.ndim
    index[d1], index[d2] = slice(s1, s1 + length), slice(s2, s2 + length)
    sub = x[tuple(index)]
    keep = [k for k in range(x.ndim) if k not in (d1, d2)]
    return strided_view(xp, sub, tuple(x.shape[k] for k in keep) + (length,),
                    tuple(x.strides[k] for k in keep) + (x.strides[d1] + x.strides[d2],))


class Diagonal(Op):
    """A diagonal of ``x`` (a view; a copy with ``copy=True``, as ``diag`` returns)."""
    name = "diagonal"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, offset, dim1, dim2, copy=False):
        self.offset, self.dim1, self.dim2, self.copy = offset, dim1, dim2, copy
        self.is_view = not copy
        if copy:
            self.name = "diag"

    def forward(self, xp, x):
        self.in_shape = x.shape
        y = _diagonal_view(xp, x, self.offset, self.dim1, self.dim2)
        return y.copy() if self.copy else y

    def backward(self, xp, gy):
        return (DiagonalInto(self.in_shape, self.offset, self.dim1, self.dim2).call(xp, gy),)


class DiagonalInto(Op):
    """Zeros of ``shape`` with ``g`` written on a diagonal: the gradient of :class:`Diagonal`,
    and ``diag`` of a vector."""
    name = "diagonal_into"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, shape, offset, dim1, dim2, name="diagonal_into"):
        self.shape, self.offset, self.dim1, self.dim2, self.name = shape, offset, dim1, dim2, name

    def forward(self, xp, g):
        out = xp.zeros(self.shape, dtype=g.dtype)
        _diagonal_view(xp, out, self.offset, self.dim1, self.dim2)[...] = g
        return out

    def backward(self, xp, gg):
        return (Diagonal(self.offset, self.dim1, self.dim2, copy=True).call(xp, gg),)


def _triangle(op, input, diagonal, kind):
    check_tensor(op, "input", input)
    k = check_int(op, "diagonal", diagonal)
    if input.ndim < 2:
        raise ShapeError(f"{op}: input tensor must have at least 2 dimensions, got {input.ndim}")
    return kind(k).apply(input)


def tril(input, diagonal=0):
    """The lower triangle of the last two dims (entries with ``col - row <= diagonal``),
    the others zeroed.

    Raises:
        ShapeError: fewer than 2 dims. ArgumentTypeError: a non-int ``diagonal``.
    """
    return _triangle("tril", input, diagonal, Tril)


def triu(input, diagonal=0):
    """The upper triangle of the last two dims (entries with ``col - row >= diagonal``),
    the others zeroed.

    Raises:
        ShapeError: fewer than 2 dims. ArgumentTypeError: a non-int ``diagonal``.
    """
    return _triangle("triu", input, diagonal, Triu)


def diag(input, diagonal=0):
    """A 1-D ``input`` as diagonal ``diagonal`` of a square matrix (of size
    ``n + |diagonal|``), or diagonal ``diagonal`` of a 2-D ``input`` as a 1-D copy
    (``diagonal > 0`` above the main diagonal, ``< 0`` below).

    Raises:
        ShapeError: ``input`` is not 1-D or 2-D. ArgumentTypeError: a non-int ``diagonal``.
    """
    check_tensor("diag", "input", input)
    k = check_int("diag", "diagonal", diagonal)
    if input.ndim == 1:
        m = input.shape[0] + abs(k)
        return DiagonalInto((m, m), k, 0, 1, "diag").apply(input)
    if input.ndim == 2:
        return Diagonal(k, 0, 1, copy=True).apply(input)
    raise ShapeError(f"diag: supports 1-D or 2-D tensors, got {input.ndim}-D")


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal ``offset`` of the planes spanned by ``dim1`` and ``dim2``, as a view
    whose last dim runs along the diagonal (the other dims keep their order). An offset
    past the edge gives an empty diagonal.

    Raises:
        ArgumentError: ``dim1 == dim2``. IndexOutOfRangeError: a dim out of range.
        ArgumentTypeError: a non-int ``offset``.
    """
    check_tensor("diagonal", "input", input)
    k = check_int("diagonal", "offset", offset)
    d1, d2 = dim_index("diagonal", dim1, input.ndim), dim_index("diagonal", dim2, input.ndim)
    if input.ndim < 2:  # a 0-d or 1-d tensor has no second dim
        dim_index("diagonal", 1, input.ndim)
    if d1 == d2:
        raise ArgumentError(f"diagonal: diagonal dimensions cannot be identical, got dim1={dim1}, dim2={dim2}")
    return Diagonal(k, d1, d2).apply(input)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices whose diagonal ``offset`` (dims ``dim1``, ``dim2`` of the output) holds the
    last dim of ``input``; zeros elsewhere. Output: one dim more than ``input``.

    Raises:
        ArgumentTypeError: not a Tensor, or a non-int offset/dim.
        ArgumentError: ``dim1`` and ``dim2`` are the same dim.
        IndexOutOfRangeError: a dim out of range.
    """
    check_tensor("diag_embed", "input", input)
    k = check_int("diag_embed", "offset", offset)
    nd = input.ndim + 1
    d1, d2 = dim_index("diag_embed", dim1, nd), dim_index("diag_embed", dim2, nd)
    if d1 == d2:
        raise ArgumentError(f"diag_embed: diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] if input.ndim else 1
    x = input if input.ndim else input.reshape(1)
    m = mul(unsqueeze(x, -1), eye(n, dtype=x.dtype, device=x.device))
    if k:  # shift the diagonal: columns right (k > 0) or rows down (k < 0)
        m = pad(m, (k, 0, 0, k) if k > 0 else (0, -k, -k, 0))
    return movedim(m, (-2, -1), (d1, d2))


def diagflat(input, offset=0):
    """A 2-D tensor with the flattened ``input`` on its diagonal ``offset``.

    Raises:
        ArgumentTypeError: not a Tensor, or a non-int offset.
    """
    check_tensor("diagflat", "input", input)
    return diag_embed(flatten(input), offset)


def block_diag(*tensors):
    """A block-diagonal matrix of the inputs (0-d, 1-D or 2-D; a 1-D input is one row),
    the promoted dtype of all, zeros elsewhere; differentiable.

    Raises:
        ShapeError: an input with more than 2 dims.
    """
    blocks = []
    for i, t in enumerate(tensors):
        check_tensor("block_diag", f"tensors[{i}]", t)
        if t.ndim > 2:
            raise ShapeError(f"block_diag: Input tensors must have 2 or fewer dimensions. Input {i} has {t.ndim} "
                             "dimensions")
        blocks.append(reshape(t, (1, -1)) if t.ndim < 2 else t)
    if not blocks:
        return Tensor._wrap(numpy.zeros((1, 0), dtype=dtypes.get_default_dtype()))
    dt = dtypes.result_type(*(b.array for b in blocks))
    width = sum(b.shape[1] for b in blocks)
    rows, left = [], 0
    for b in blocks:
        b = b.to(dt) if b.dtype != dt else b
        rows.append(pad(b, (left, width - left - b.shape[1])))
        left += b.shape[1]
    return cat(rows, 0)
