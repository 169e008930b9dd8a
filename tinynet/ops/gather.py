"""Gathering and scattering along one dimension: ``gather``, ``scatter``, ``scatter_add``,
``take_along_dim``; and ``take`` (indexing of the flattened input).

For dim 1 of a 3-D tensor: ``gather`` reads ``out[i][j][k] = input[i][index[i][j][k]][k]``,
``scatter`` writes ``out[i][index[i][j][k]][k] = src[i][j][k]``. Gathering and adding
into zeros at the same positions are each other's gradient (:class:`Gather` /
:class:`ScatterAddInto`), so both can be differentiated again; repeated indices
accumulate (``add.at``).

Difference from PyTorch: a ``src`` of another dtype is cast to the input's (PyTorch
requires equal dtypes).
"""
import numpy

from .. import backend
from ..autograd import Op
from ..errors import ArgumentError, DTypeError, IndexOutOfRangeError, ShapeError
from ..kernels import index_rows
from ..tensor import Tensor
from .autocast import autocast_op
from .indexing import _add_at, _check_range, _index_tensor
from .shape import expand, flatten, reshape
from .util import check_number, check_tensor, dim_index


def _along(xp, index, dim):
    """The full advanced index that addresses ``index`` (an array) along ``dim``, with
    every other dim taken as ``arange`` of index's size there."""
    full = []
    for d, n in enumerate(index.shape):
        if d == dim:
            full.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = n
            full.append(xp.arange(n).reshape(shape))
    return tuple(full)


class Gather(Op):
    """``out[..., i, ...] = x[..., index[..., i, ...], ...]`` along ``dim`` (``negative``:
    indices in ``[-size, 0)`` count from the end, as take_along_dim's). On the GPU, where
    ``index_rows.dim_usable`` holds, one launch of ``index_rows.cu``'s gather, which also checks
    the indices (CuPy's fancy indexing, the other path, builds an index array per dimension: a
    (256, 1000) gather along dim 1 took 102-170 us of host time that way, 20-22 with the kernel,
    PyTorch's 8; one H200, two runs, ``benchmarks/results/gather_host_cuda.json`` the second)."""
    name = "gather"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, dim, negative=False):
        self.dim, self.negative = dim, negative

    def forward(self, xp, x, index):
        self.shape = x.shape
        self.save_for_backward(index)
        return x[_along(xp, index, self.dim)]

    def forward_gpu(self, xp, x, index):
        if not index_rows.dim_usable(x, index, self.dim, True):
            return self.forward(xp, x, index)
        self.shape = x.shape
        self.save_for_backward(index)
        return index_rows.gather_dim(x, index, self.dim, -x.shape[self.dim] if self.negative else 0)

    def backward(self, xp, gy):
        (index,) = self.saved
        return ScatterAddInto(self.shape, self.dim).call(xp, gy, index), None


class ScatterAddInto(Op):
    """Zeros of ``shape`` with ``g`` added at ``index`` along ``dim`` (the gradient of gather)."""
    name = "scatter_add_into"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, shape, dim):
        self.shape, self.dim = shape, dim

    def forward(self, xp, g, index):
        self.save_for_backward(index)
        out = xp.zeros(self.shape, dtype=g.dtype)
        _add_at(xp, out, _along(xp, index, self.dim), g)
        return out

    def backward(self, xp, gg):
        (index,) = self.saved
        return Gather(self.dim, negative=True).call(xp, gg, index), None  # (indices checked at the entry)


class Scatter(Op):
    """``x`` with ``src`` written (``add=False``) or added (``add=True``) at ``index`` along ``dim``."""
    name = "scatter"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, dim, add):
        self.dim, self.add = dim, add

    def forward(self, xp, x, index, src):
        self.save_for_backward(index)
        y = x.copy()
        where = _along(xp, index, self.dim)
        if not hasattr(src, "shape"):
            y[where] = src
        else:
            part = src[tuple(slice(0, n) for n in index.shape)]
            part = part.astype(x.dtype, copy=False)
            if self.add:
                _add_at(xp, y, where, part)
            else:
                y[where] = part
        self.src_shape = getattr(src, "shape", None)
        return y

    def backward(self, xp, gy):
        (index,) = self.saved
        gx = gsrc = None
        if self.needs_input_grad[0]:
            if self.add:
                gx = gy
            else:  # written places lose their gradient
                ones = xp.ones_like(gy)
                hit = ScatterAddInto(gy.shape, self.dim).call(xp, Gather(self.dim, negative=True).call(xp, ones, index),
                                                              index)
                gx = xp.where(hit > 0, xp.zeros_like(gy), gy)
        if self.needs_input_grad[2] and self.src_shape is not None:
            part = Gather(self.dim, negative=True).call(xp, gy, index)
            if part.shape != self.src_shape:
                from .join import Pad
                widths = tuple((0, s - p) for s, p in zip(self.src_shape, part.shape))
                part = Pad(widths, "constant", 0).call(xp, part)
            gsrc = part
        return gx, None, gsrc


def gather(input, dim, index, *, sparse_grad=False):
    """Values of ``input`` along ``dim`` at ``index``: for dim 1 of a 3-D input,
    ``out[i][j][k] = input[i][index[i][j][k]][k]``.

    Args:
        input: tensor. dim (int). index: int64 tensor with input's number of dims and
            ``index.size(d) <= input.size(d)`` for ``d != dim``.

    Returns:
        Tensor of ``index``'s shape.

    Raises:
        DTypeError: ``index`` is not an integer tensor. ShapeError: dims or sizes do not fit.
        IndexOutOfRangeError: an index is out of range (a GPU index is checked on the device and the
            error raised at the next GPU gather or ``tinynet.cuda.synchronize()``, as PyTorch's CUDA check).
    """
    return _gather("gather", input, dim, index)


def _gather(op, input, dim, index, negative=False):
    check_tensor(op, "input", input)
    _index_tensor(op, "index", index)
    backend.common_module(op, (input.array, index.array))  # DeviceMismatchError for a cpu/cuda mix
    d = dim_index(op, dim, input.ndim)
    if index.ndim != input.ndim:
        raise ShapeError(f"{op}: index must have as many dims as input ({input.ndim}), got {index.ndim}")
    for k in range(input.ndim):
        if k != d and index.shape[k] > input.shape[k]:
            raise ShapeError(f"{op}: index size {index.shape[k]} exceeds input size {input.shape[k]} in dim {k}")
    if not index_rows.dim_usable(input.array, index.array, d, True):  # else the gather kernel checks them
        _check_range(op, index, input.shape[d] if input.ndim else 1, d, negative)
    return Gather(d, negative).apply(input, index.array)


def _scatter(op, input, dim, index, src, add):
    check_tensor(op, "input", input)
    _index_tensor(op, "index", index)
    d = dim_index(op, dim, input.ndim)
    if index.ndim != input.ndim:
        raise ShapeError(f"{op}: index must have as many dims as input ({input.ndim}), got {index.ndim}")
    if not isinstance(src, (Tensor, bool)):
        check_number(op, "src", src)  # a number (PyTorch's value=)
    if isinstance(src, Tensor):
        if src.ndim != index.ndim or any(i > s for i, s in zip(index.shape, src.shape)):
            raise ShapeError(f"{op}: src {src.shape} must have index's dims and sizes at least {index.shape}")
    for k in range(input.ndim):
        if k != d and index.shape[k] > input.shape[k]:
            raise ShapeError(f"{op}: index size {index.shape[k]} exceeds input size {input.shape[k]} in dim {k}")
    _check_range(op, index, input.shape[d] if input.ndim else 1, d)
    return Scatter(d, add).apply(input, index.array, src)


def scatter(input, dim, index, src=None, *, value=None):
    """A copy of ``input`` with ``src`` (a tensor, or the number ``value``) written at
    ``index`` along ``dim``: ``out[i][index[i][j]] = src[i][j]`` for dim 1.

    Raises:
        ArgumentError: neither or both of src and value. Others as :func:`gather`.
    """
    if (src is None) == (value is None):
        raise ArgumentError("scatter: give exactly one of src (a tensor or number) and value, got "
                            f"{'both' if src is not None else 'neither'}")
    return _scatter("scatter", input, dim, index, src if src is not None else value, add=False)


@autocast_op
def scatter_add(input, dim, index, src):
    """A copy of ``input`` with ``src`` added at ``index`` along ``dim`` (repeated indices accumulate)."""
    check_tensor("scatter_add", "src", src)
    return _scatter("scatter_add", input, dim, index, src, add=True)


def take_along_dim(input, indices, dim=None):
    """Values of ``input`` at ``indices`` along ``dim`` (NumPy's ``take_along_axis``, with
    broadcasting outside ``dim``; negative indices count from the end); with ``dim=None``
    both are flattened first (and, as in PyTorch, negative indices are out of range).

    Raises:
        As :func:`gather`; ShapeError: the shapes do not broadcast outside ``dim``.
    """
    check_tensor("take_along_dim", "input", input)
    _index_tensor("take_along_dim", "indices", indices)
    if dim is None:
        return _gather("take_along_dim", flatten(input), 0, flatten(indices))  # PyTorch: no negatives here
    d = dim_index("take_along_dim", dim, input.ndim)
    if input.ndim == 0:
        raise IndexOutOfRangeError(f"take_along_dim: dimension specified as {dim} but tensor has no dimensions")
    if indices.ndim != input.ndim:
        raise ShapeError(f"take_along_dim: indices must have input's number of dims ({input.ndim}), "
                         f"got {indices.ndim}")
    try:
        other = numpy.broadcast_shapes(tuple(n for k, n in enumerate(input.shape) if k != d),
                                       tuple(n for k, n in enumerate(indices.shape) if k != d))
    except ValueError:
        raise ShapeError(f"take_along_dim: input {input.shape} and indices {indices.shape} do not broadcast "
                         f"outside dim {dim}") from None
    xs = list(other)
    xs.insert(d, input.shape[d])
    ix = list(other)
    ix.insert(d, indices.shape[d])
    x = input if tuple(xs) == input.shape else expand(input, tuple(xs))
    idx = indices if tuple(ix) == indices.shape else Tensor._wrap(
        backend.array_module(indices.array).broadcast_to(indices.array, tuple(ix)))
    return _gather("take_along_dim", x, d, idx, negative=True)


def take(input, index):
    """The elements of the flattened ``input`` at ``index``, in ``index``'s shape
    (negative indices count from the end).

    Raises:
        ArgumentTypeError: non-Tensors. DTypeError: a non-integer index.
        IndexOutOfRangeError: an index out of range (on the GPU: raised later, as for :func:`gather`).
    """
    check_tensor("take", "input", input)
    check_tensor("take", "index", index)
    if index.array.dtype.kind not in "iu":
        raise DTypeError(f"take: index must be an integer tensor, got {index.dtype}")
    return reshape(flatten(input)[reshape(index, (-1,))], tuple(index.shape))
