"""Views along one dimension: the pieces of ``chunk``, ``split``, ``tensor_split``,
``unbind`` and NumPy's ``hsplit``/``vsplit``/``dsplit`` (``tensor_split`` along dim 1, 0
and 2), one slice (``narrow``) and sliding windows (``Tensor.unfold``).

The splits return a tuple of *views* of the input (as PyTorch does), made by one multi-output
op, :class:`Split`: its forward slices the array (or, for ``unbind``, indexes it), and its
backward joins the gradients of the pieces again (``concatenate``, or ``stack`` for
``unbind``; the engine gives zeros for pieces that got no gradient). Pieces that overlap
or skip part of the input (possible with ``tensor_split`` and out-of-order indices) are
added into zeros at their place instead. The pieces share the input's version counter, so
an in-place change through one is seen by autograd's checks on the input.

``narrow`` is basic indexing (a view; backward adds into zeros). ``unfold``'s windows are
a strided view of the input; their gradient adds the windows back (:class:`UnfoldInto`),
whose own gradient is the windows again.
"""
import numbers

import numpy

from ..autograd import Op
from ..kernels import grad_buffers
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from .indexing import GetItem, IndexAddInto
from .util import check_int, check_tensor, dim_index


def strided_view(xp, x, shape, strides, writeable=True):
    """A view of ``x``'s memory (from its first element) with the given shape and strides."""
    y = xp.lib.stride_tricks.as_strided(x, shape=shape, strides=strides)
    if not writeable and xp is numpy:  # overlapping windows: one memory location, several entries
        y.flags.writeable = False
    return y


class Split(Op):
    """The pieces ``x[..., lo:hi, ...]`` along ``axis`` for each ``(lo, hi)`` in ``bounds``
    (``0 <= lo <= hi <= size``), or with ``bounds=None`` every ``x[..., i, ...]`` (unbind)."""
    name = "split"
    complex_ok = True  # views
    twice_differentiable = True
    gpu_saves_generic = True
    is_view = True
    bf16_native = True  # views; backward stacks, joins or places the pieces (no arithmetic)

    def __init__(self, axis, bounds, name="split"):
        self.axis, self.bounds, self.name = axis, bounds, name

    def forward(self, xp, x):
        self.in_shape = x.shape
        pre = (slice(None),) * self.axis
        if self.bounds is None:
            return tuple(x[pre + (i,)] for i in range(x.shape[self.axis]))
        return tuple([x[pre + (slice(lo, hi),)] for lo, hi in self.bounds])

    def backward(self, xp, *gys):
        if self.bounds is None:
            return (xp.stack(list(gys), axis=self.axis),)
        edges = [lo for lo, _ in self.bounds] + [self.in_shape[self.axis]]
        if edges[0] == 0 and all(hi == nxt for (_, hi), nxt in zip(self.bounds, edges[1:])):
            return (xp.concatenate(list(gys), axis=self.axis),)  # the pieces tile the input
        return self._place(xp, gys)

    def forward_gpu(self, xp, x):
        return self.forward(xp, x)

    def backward_gpu(self, xp, *gys):
        """As :meth:`backward`; pieces that a backward wrote into one new array shaped like the
        input (:mod:`tinynet.kernels.grad_buffers`: the cuDNN attention backward of q, k, v
        split from one projection) are that array, joined without a copy."""
        if self.bounds is not None:
            whole = grad_buffers.joined(gys, self.axis, self.in_shape)
            if whole is not None:
                return (whole,)
        return self.backward(xp, *gys)

    def _place(self, xp, gys):
        pre = (slice(None),) * self.axis
        total = None
        for (lo, hi), g in zip(self.bounds, gys):
            part = IndexAddInto(self.in_shape, pre + (slice(lo, hi),), unique=True).call(xp, g)
            total = part if total is None else total + part
        return (total,)


class Narrow(GetItem):
    """``x[..., start:start + length, ...]`` along one dim (a view)."""
    name = "narrow"


class Unfold(Op):
    """Windows of ``size`` entries every ``step`` along ``dim``, as a new last dim (a view;
    read-only on NumPy when windows overlap, like ``expand``). A 0-d ``x`` gives its one
    entry as a window of ``size`` (0 or 1) entries."""
    name = "unfold"
    twice_differentiable = True
    gpu_saves_generic = True
    is_view = True

    def __init__(self, dim, size, step):
        self.dim, self.size, self.step = dim, size, step

    def forward(self, xp, x):
        self.in_shape = x.shape
        if x.ndim == 0:
            return x.reshape(1)[:self.size]
        d, st = self.dim, x.strides
        count = (x.shape[d] - self.size) // self.step + 1
        shape = x.shape[:d] + (count,) + x.shape[d + 1:] + (self.size,)
        strides = st[:d] + (st[d] * self.step,) + st[d + 1:] + (st[d],)
        return strided_view(xp, x, shape, strides, writeable=self.step >= self.size or count <= 1)

    def backward(self, xp, gy):
        return (UnfoldInto(self.in_shape, self.dim, self.size, self.step).call(xp, gy),)


class UnfoldInto(Op):
    """Zeros of ``shape`` with each window of ``g`` added back at its place (the gradient
    of :class:`Unfold`; overlapping windows add up)."""
    name = "unfold_backward"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, shape, dim, size, step):
        self.shape, self.dim, self.size, self.step = shape, dim, size, step

    def forward(self, xp, g):
        d, size, step = self.dim, self.size, self.step
        out = xp.zeros(self.shape, dtype=g.dtype)
        if not self.shape:  # a 0-d input: its window is g itself
            out[...] = g.sum()
            return out
        count = g.shape[d]
        pre = (slice(None),) * d
        if size <= count:  # one strided add per position inside the window
            for j in range(size):
                out[pre + (slice(j, j + step * (count - 1) + 1, step),)] += g[..., j]
        else:  # one add per window
            for i in range(count):
                out[pre + (slice(i * step, i * step + size),)] += xp.moveaxis(g[pre + (i,)], -1, d)
        return out

    def backward(self, xp, gg):
        return (Unfold(self.dim, self.size, self.step).call(xp, gg),)


def _pieces(op, input, dim):
    check_tensor(op, "input" if op != "split" else "tensor", input)
    ndim = input.array.ndim
    if ndim == 0:
        raise ShapeError(f"{op}: expects at least a 1-dimensional tensor, got a 0-dimensional one")
    return dim_index(op, dim, ndim)


def _by_sizes(op, input, d, sizes):
    bounds, lo = [], 0
    for s in sizes:
        bounds.append((lo, lo + s))
        lo += s
    return Split(d, bounds, op).apply(input)


def _by_size(op, input, d, size):
    """Pieces of ``size`` along dim ``d`` (the last one smaller): PyTorch's split(int)."""
    n = input.array.shape[d]
    if size < 0:
        raise ArgumentError(f"{op}: split_size must be non-negative, got {size}")
    if size == 0 and n != 0:
        raise ArgumentError(f"{op}: split_size can only be 0 if the dimension's size is 0, but dimension {d} "
                            f"has size {n}")
    count = max((n + size - 1) // size, 1) if size else 1
    return _by_sizes(op, input, d, [size] * (count - 1) + [n - size * (count - 1)])


def chunk(input, chunks, dim=0):
    """Split ``input`` into at most ``chunks`` views along ``dim``.

    PyTorch's rule: each piece has ``ceil(size / chunks)`` entries and the last one the
    rest, so there may be fewer than ``chunks`` pieces (6 entries in 4 chunks give 3
    pieces of 2). A dimension of size 0 gives ``chunks`` empty pieces.

    Returns:
        tuple of Tensors, views of ``input`` (they share its memory and version counter).

    Raises:
        ArgumentTypeError: ``chunks`` is not an int. ArgumentError: ``chunks <= 0``.
        ShapeError: ``input`` is 0-dimensional. IndexOutOfRangeError: ``dim`` out of range.
    """
    check_tensor("chunk", "input", input)
    chunks = check_int("chunk", "chunks", chunks)
    if chunks <= 0:
        raise ArgumentError(f"chunk: chunks must be greater than 0, got {chunks}")
    d = _pieces("chunk", input, dim)
    n = input.shape[d]
    size = (n + chunks - 1) // chunks
    if n == 0:
        return _by_sizes("chunk", input, d, [0] * chunks)
    return _by_size("chunk", input, d, size)


def split(tensor, split_size_or_sections, dim=0):
    """Split ``tensor`` into views along ``dim``: pieces of ``split_size_or_sections``
    entries (an int; the last piece may be smaller), or of the sizes in the list.

    Returns:
        tuple of Tensors, views of ``tensor``.

    Raises:
        ArgumentTypeError: the size is neither an int nor a sequence of ints.
        ArgumentError: a negative size, or 0 for a dimension that is not empty.
        ShapeError: the sizes do not sum to the dimension's size, or ``tensor`` is 0-d.
        IndexOutOfRangeError: ``dim`` out of range.
    """
    d = _pieces("split", tensor, dim)
    arg = split_size_or_sections
    if not isinstance(arg, (list, tuple)):
        return _by_size("split", tensor, d, check_int("split", "split_size_or_sections", arg))
    sizes = [check_int("split", "split_size_or_sections", s) for s in arg]
    if any(s < 0 for s in sizes):
        raise ArgumentError(f"split: split sizes must be non-negative, got {list(arg)}")
    if sum(sizes) != tensor.shape[d]:
        raise ShapeError(f"split: split sizes must sum exactly to {tensor.shape[d]} (the size of dimension {d}), "
                         f"got {list(arg)} (sum {sum(sizes)})")
    return _by_sizes("split", tensor, d, sizes)


def tensor_split(input, indices_or_sections, dim=0):
    """Split ``input`` into views along ``dim`` (NumPy's ``array_split``).

    ``indices_or_sections``: an int ``n`` (or a 0-d int tensor) gives ``n`` pieces, the
    first ``size % n`` of them one entry longer; a list of indices (or a 1-D int tensor)
    ``[i0, i1, ...]`` gives ``input[:i0], input[i0:i1], ..., input[ik:]`` along ``dim``,
    with Python's slicing rules (negative indices count from the end, out-of-range ones
    are clipped, a decreasing pair gives an empty piece).

    Raises:
        ArgumentError: ``n <= 0``. DTypeError: a non-integer tensor.
        ShapeError: a tensor with more than one dimension, or a 0-d ``input``.
        ArgumentTypeError: anything else than an int, a sequence of ints or a tensor.
        IndexOutOfRangeError: ``dim`` out of range.
    """
    check_tensor("tensor_split", "input", input)
    arg = indices_or_sections
    if isinstance(arg, Tensor):
        if arg.array.dtype.kind not in "iu":
            raise DTypeError(f"tensor_split: indices_or_sections must be an integer (int64) tensor, got {arg.dtype}")
        if arg.ndim > 1:
            raise ShapeError(f"tensor_split: indices_or_sections must be a 0-d or 1-d tensor, got {arg.ndim} dims")
        arg = int(arg.item()) if arg.ndim == 0 else [int(i) for i in arg.array.tolist()]
    d = _pieces("tensor_split", input, dim)
    n = input.shape[d]
    if isinstance(arg, (list, tuple)):
        idx = [check_int("tensor_split", "indices_or_sections", i) for i in arg]
        edges = [0] + idx + [n]
        bounds = []
        for a, b in zip(edges, edges[1:]):
            lo, hi, _ = slice(a, b).indices(n)
            bounds.append((lo, max(lo, hi)))
        return Split(d, bounds, "tensor_split").apply(input)
    if isinstance(arg, bool) or not isinstance(arg, (numbers.Integral, numpy.integer)):
        raise ArgumentTypeError(f"tensor_split: indices_or_sections must be an int, a sequence of ints or an "
                                f"integer tensor, got {type(arg).__name__}")
    sections = int(arg)
    if sections <= 0:
        raise ArgumentError(f"tensor_split: the number of sections must be greater than 0, got {sections}")
    base, extra = divmod(n, sections)
    return _by_sizes("tensor_split", input, d, [base + 1] * extra + [base] * (sections - extra))


def unbind(input, dim=0):
    """The slices ``input.select(dim, i)`` for every ``i``: a tuple of views, one
    dimension fewer each.

    Raises:
        IndexOutOfRangeError: ``dim`` out of range, or ``input`` is 0-dimensional.
    """
    check_tensor("unbind", "input", input)
    if input.ndim == 0:
        raise IndexOutOfRangeError(f"unbind: dimension specified as {dim} but the tensor has no dimensions")
    return Split(dim_index("unbind", dim, input.ndim), None, "unbind").apply(input)


def narrow(input, dim, start, length):
    """``input`` restricted to ``start <= i < start + length`` along ``dim`` (a view).
    ``start`` may be negative (counted from the end) or a 0-d int tensor.

    Raises:
        ShapeError: ``input`` is 0-d. IndexOutOfRangeError: ``dim`` or ``start`` out of range.
        ArgumentError: a negative ``length``, or ``start + length`` past the end.
        ArgumentTypeError: non-int arguments.
    """
    check_tensor("narrow", "input", input)
    if isinstance(start, Tensor) and (start.ndim != 0 or start.array.dtype.kind not in "iu"):
        raise ArgumentTypeError(f"narrow: start must be an int or a 0-dim integer tensor, got a tensor of shape "
                                f"{start.shape} and dtype {start.dtype}")
    start, length = check_int("narrow", "start", start), check_int("narrow", "length", length)
    if input.ndim == 0:
        raise ShapeError("narrow: cannot be applied to a 0-dim tensor")
    d = dim_index("narrow", dim, input.ndim)
    n = input.shape[d]
    if not -n <= start <= n:
        raise IndexOutOfRangeError(f"narrow: start out of range (expected to be in range of [{-n}, {n}], "
                                   f"but got {start})")
    if length < 0:
        raise ArgumentError(f"narrow: length must be non-negative, got {length}")
    if start < 0:
        start += n
    if start + length > n:
        raise ArgumentError(f"narrow: start ({start}) + length ({length}) exceeds dimension size ({n})")
    return Narrow((slice(None),) * d + (slice(start, start + length),)).apply(input)


def unfold(input, dimension, size, step):
    """Sliding windows: every slice of ``size`` entries along ``dimension``, ``step``
    apart, as a new last dim of length ``size`` (PyTorch's ``Tensor.unfold``, a view;
    ``torch.nn.functional.unfold`` is a different op, im2col). Dimension ``dimension``
    becomes the window count ``(n - size) // step + 1``.

    Raises:
        ShapeError: ``size`` larger than the dimension. ArgumentError: ``size < 0`` or
        ``step <= 0``. IndexOutOfRangeError: ``dimension`` out of range.
    """
    check_tensor("unfold", "input", input)
    d = dim_index("unfold", dimension, input.ndim)
    size, step = check_int("unfold", "size", size), check_int("unfold", "step", step)
    if size < 0:
        raise ArgumentError(f"unfold: size is {size} but must be >= 0")
    if step <= 0:
        raise ArgumentError(f"unfold: step is {step} but must be > 0")
    n = input.shape[d] if input.ndim else 1
    if size > n:
        raise ShapeError(f"unfold: maximum size for tensor at dimension {d} is {n} but size is {size}")
    return Unfold(d, size, step).apply(input)


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
