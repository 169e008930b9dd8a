"""Shape ops: reshape/view, permute/transpose, squeeze/unsqueeze, flatten, ravel, expand
(joining: :mod:`.join`; splitting: :mod:`.split`).

Each backward is the inverse rearrangement of its forward. Views (``view``, ``permute``,
``expand``, ``squeeze``, ...) share memory and the version counter with their input, so an
in-place change through one is seen by autograd's checks on the other.
"""
import math

import numpy

from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from . import util
from .util import check_tensor, dim_index, dims_tuple, is_graph, sizes, unbroadcast


class Reshape(Op):
    """Reshape (a view when the input's layout allows, else one copy). On NumPy, backward
    hands the gradient of a non-C-ordered input back laid out like that input (e.g. a
    batch-last convolution output, an NCHW view of a (C, H, W, N) buffer), so the ops
    before it (pooling, ReLU, dropout) do not mix layouts, which costs NumPy strided
    passes (the reference net's second max-pool backward at batch 200: 0.9 -> 0.35 ms)."""
    name = "reshape"
    complex_ok = True  # moves data only: so do Permute and Expand
    twice_differentiable = True
    gpu_saves_generic = True
    bf16_native = True  # moves data only (a view, or one copy), forward and backward

    def __init__(self, shape):
        self.shape = shape

    def forward(self, xp, x):
        self.in_shape = x.shape
        # the input is kept alive by the tape anyway; it serves as the layout template
        self.layout = x if xp is numpy and not x.flags.c_contiguous else None
        y = x.reshape(self.shape)
        self.is_view = _is_view_of(y, x)
        return y

    def backward(self, xp, gy):
        if self.layout is None or is_graph(xp):
            # (the array's own method outside a create_graph backward: numpy.reshape wraps it in Python)
            return (gy.reshape(self.in_shape) if xp is numpy else xp.reshape(gy, self.in_shape),)
        g = xp.empty_like(self.layout, dtype=gy.dtype)  # order "K": the template's memory order
        g[...] = gy.reshape(self.in_shape)
        return (g,)


def _is_view_of(y, x):
    return y.size == 0 or y.base is x or (x.base is not None and y.base is x.base)


class Permute(Op):
    name = "permute"
    complex_ok = True
    twice_differentiable = True
    gpu_saves_generic = True
    is_view = True
    bf16_native = True  # a view: bfloat16 stays bfloat16 (a widened copy would not share memory)

    def __init__(self, dims):
        self.dims = dims

    def forward(self, xp, x):
        return x.transpose(self.dims)

    def backward(self, xp, gy):
        inverse = [0] * len(self.dims)  # the inverse permutation (what argsort of dims gives)
        for i, d in enumerate(self.dims):
            inverse[d] = i
        return (gy.transpose(inverse) if xp is numpy else xp.transpose(gy, tuple(inverse)),)


class Expand(Op):
    name = "expand"
    complex_ok = True
    twice_differentiable = True
    gpu_saves_generic = True
    is_view = True

    def __init__(self, shape):
        self.shape = shape

    def forward(self, xp, x):
        self.in_shape = x.shape
        return xp.broadcast_to(x, self.shape)

    def backward(self, xp, gy):
        return (unbroadcast(xp, gy, self.in_shape),)


# ---- public functions -----------------------------------------------------------------
def _target_shape(op, x, shape):
    shape = sizes(op, shape, "shape")
    n = x.array.size
    if not shape or min(shape) >= 0:  # no -1 to fill in (the common case, one pass)
        if math.prod(shape) != n:
            raise ShapeError(f"{op}: shape {shape} is invalid for input of size {n} (shape {x.shape})")
        return shape
    if shape.count(-1) > 1 or min(shape) < -1:
        raise ShapeError(f"{op}: invalid shape {shape} (at most one -1, other sizes >= 0)")
    known = -math.prod(shape)  # the product of the other sizes (one -1 among them)
    if known == 0 or n % known:
        raise ShapeError(f"{op}: shape {shape} is invalid for input of size {n} (shape {x.shape})")
    return tuple([n // known if s == -1 else s for s in shape])


def reshape(input, *shape):
    """``input`` with a new shape (one entry may be -1): a view when the memory layout
    allows, else a copy.

    Raises:
        ShapeError: the element counts differ.
    """
    check_tensor("reshape", "input", input)
    return Reshape(_target_shape("reshape", input, shape)).apply(input)


def view(input, *shape):
    """``input`` with a new shape, sharing its memory (one entry may be -1).

    Raises:
        ShapeError: the element counts differ, or ``input`` is a strided view (e.g. of a
            transpose) that cannot be seen in the new shape without a copy, where PyTorch
            refuses too; use :func:`reshape` there.
    """
    check_tensor("view", "input", input)
    if len(shape) == 1 and not isinstance(shape[0], (tuple, list, int, numpy.integer)):
        from .conversion import view_dtype
        return view_dtype(input, shape[0])
    target = _target_shape("view", input, shape)
    array = input.array
    if input._base is not None and not array.flags.c_contiguous and not _is_view_of(array.reshape(target), array):
        raise ShapeError(f"view: the size {target} is not compatible with the input's strides (shape "
                         f"{input.shape}, a non-contiguous view); use .reshape(...) instead")
    return Reshape(target).apply(input)


def view_as(input, other):
    """``input.view(other.shape)``."""
    return view(input, check_tensor("view_as", "other", other).shape)


def reshape_as(input, other):
    """``input.reshape(other.shape)``."""
    return reshape(input, check_tensor("reshape_as", "other", other).shape)


def permute(input, *dims):
    """Reorder dimensions: output dim ``i`` is input dim ``dims[i]`` (a view).

    Raises:
        ShapeError: ``dims`` is not a permutation of the input's dimensions.
    """
    check_tensor("permute", "input", input)
    dims = sizes("permute", dims, "dims")
    norm = tuple(dim_index("permute", d, input.ndim) for d in dims) if input.ndim else dims
    if sorted(norm) != list(range(input.ndim)):
        raise ShapeError(f"permute: dims {dims} are not a permutation of {input.ndim} dimensions")
    return Permute(norm).apply(input)


def transpose(input, dim0, dim1):
    """Swap two dimensions (a view)."""
    check_tensor("transpose", "input", input)
    ndim = input.array.ndim
    dims = list(range(ndim))
    if not dims:
        dim_index("transpose", dim0, 0), dim_index("transpose", dim1, 0)
        return Permute(()).apply(input)
    a, b = dim_index("transpose", dim0, ndim), dim_index("transpose", dim1, ndim)
    dims[a], dims[b] = dims[b], dims[a]
    return Permute(tuple(dims)).apply(input)


swapaxes = swapdims = transpose


def t(input):
    """Transpose a tensor of at most 2 dims (0-d and 1-d come back as they are).

    Raises:
        ShapeError: more than 2 dims.
    """
    check_tensor("t", "input", input)
    if input.ndim > 2:
        raise ShapeError(f"t: expects a tensor with <= 2 dimensions, but input is {input.ndim}-D; "
                         "use transpose(dim0, dim1)")
    return transpose(input, 0, 1) if input.ndim == 2 else Permute(tuple(range(input.ndim))).apply(input)


def T(input):
    """All dimensions reversed (``permute(n-1, ..., 0)``)."""
    return Permute(tuple(range(input.ndim - 1, -1, -1))).apply(input)


def mT(input):
    """The last two dimensions swapped (a batch of transposed matrices).

    Raises:
        ShapeError: fewer than 2 dims.
    """
    if input.ndim < 2:
        raise ShapeError(f"mT: expects a tensor with >= 2 dimensions, got {input.ndim}-D")
    return transpose(input, -2, -1)


def _dim_list(op, name, dims):
    """An int or a sequence of ints as a list (ArgumentTypeError for anything else)."""
    if isinstance(dims, (tuple, list)):
        return list(dims)
    if isinstance(dims, bool) or not isinstance(dims, (int, numpy.integer)):
        raise ArgumentTypeError(f"{op}: {name} must be an int or a tuple of ints, got {type(dims).__name__}")
    return [dims]


def movedim(input, source, destination):
    """Move dimension(s) ``source`` to position(s) ``destination`` (a view)."""
    check_tensor("movedim", "input", input)
    src, dst = (_dim_list("movedim", name, d) for name, d in (("source", source), ("destination", destination)))
    if len(src) != len(dst):
        raise ArgumentError(f"movedim: source {source} and destination {destination} differ in length")
    n = input.ndim
    src = [dim_index("movedim", d, n) for d in src]
    dst = [dim_index("movedim", d, n) for d in dst]
    for name, ds in (("source", src), ("destination", dst)):
        if len(set(ds)) != len(ds):
            raise ArgumentError(f"movedim: repeated dim in {name} {ds}")
    if n == 0:  # a 0-d tensor's only dim is 0 (or -1): nothing moves
        return Permute(()).apply(input)
    order = [d for d in range(n) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return Permute(tuple(order)).apply(input)


moveaxis = movedim


def flatten(input, start_dim=0, end_dim=-1):
    """Merge dims ``start_dim..end_dim`` into one."""
    check_tensor("flatten", "input", input)
    if input.ndim == 0:
        return Reshape((1,)).apply(input)
    shp = input.array.shape  # plain tuples and math.prod: this runs once per step of most models
    s, e = dim_index("flatten", start_dim, len(shp)), dim_index("flatten", end_dim, len(shp))
    if s > e:
        raise ShapeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
    shape = shp[:s] + (math.prod(shp[s:e + 1]),) + shp[e + 1:]
    return Reshape(shape).apply(input)


def unflatten(input, dim, sizes):
    """Split dimension ``dim`` into ``sizes`` (one entry may be -1).

    Raises:
        ShapeError: the sizes do not multiply to the dimension's size.
    """
    check_tensor("unflatten", "input", input)
    d = dim_index("unflatten", dim, input.ndim)
    if not isinstance(sizes, (tuple, list)):
        raise ArgumentTypeError(f"unflatten: sizes must be a tuple of ints, got {type(sizes).__name__}")
    inner = util.sizes("unflatten", tuple(sizes), "sizes")
    if not inner or input.ndim == 0:
        raise ShapeError(f"unflatten: needs non-empty sizes and a dimension to split, got sizes {tuple(sizes)} for "
                         f"shape {input.shape}")
    n = input.shape[d]
    known = int(numpy.prod([s for s in inner if s != -1]))
    if inner.count(-1) == 1 and known and n % known == 0:
        inner = tuple(n // known if s == -1 else s for s in inner)
    if -1 in inner or int(numpy.prod(inner)) != n:
        raise ShapeError(f"unflatten: sizes {tuple(sizes)} do not fit dimension {dim} of size {n}")
    return Reshape(input.shape[:d] + inner + input.shape[d + 1:]).apply(input)


def squeeze(input, dim=None):
    """Drop dimensions of size 1 (all, or those of ``dim``, an int or a tuple, that have size 1)."""
    check_tensor("squeeze", "input", input)
    if dim is None:
        shape = tuple(n for n in input.shape if n != 1)
    else:
        drop = set(dims_tuple("squeeze", dim, input.ndim)) if input.ndim else set()
        shape = tuple(n for i, n in enumerate(input.shape) if not (i in drop and n == 1))
    return Reshape(shape).apply(input)


def unsqueeze(input, dim):
    """Insert a dimension of size 1 at ``dim`` (``-input.ndim-1 <= dim <= input.ndim``)."""
    check_tensor("unsqueeze", "input", input)
    d = dim_index("unsqueeze", dim, input.ndim + 1)
    return Reshape(input.shape[:d] + (1,) + input.shape[d:]).apply(input)


def expand(input, *shape):
    """Broadcast ``input`` to ``shape`` without copying (-1 keeps a dimension).

    Raises:
        ShapeError: a non-1 dimension would change size.
    """
    check_tensor("expand", "input", input)
    shape = sizes("expand", shape)
    lead = len(shape) - input.ndim
    if lead < 0:
        raise ShapeError(f"expand: the number of sizes ({len(shape)}) must be >= the number of dims "
                         f"({input.ndim})")
    full = tuple(input.shape[i - lead] if s == -1 and i >= lead else s for i, s in enumerate(shape))
    try:
        if numpy.broadcast_shapes(input.shape, full) != full:
            raise ValueError
    except ValueError:
        raise ShapeError(f"expand: cannot expand shape {input.shape} to {shape}") from None
    return Expand(full).apply(input)


def expand_as(input, other):
    """``input.expand(other.shape)``."""
    return expand(input, check_tensor("expand_as", "other", other).shape)


def broadcast_to(input, shape):
    """``input.expand(shape)``."""
    return expand(input, shape)


def ravel(input):
    """``input`` as one dimension, in C order (a view when the memory allows, else a copy).

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    check_tensor("ravel", "input", input)
    return reshape(input, (-1,))
