"""``as_strided``: a view of a tensor's storage with any sizes, strides and offset (in
elements), and its forms ``as_strided_copy``, ``as_strided_scatter`` and ``Tensor.new_empty_strided``.

The storage of a tensor is the memory of the tensor it views (``x[2:]``'s is ``x``'s) or its
own, and ``storage_offset`` defaults to the tensor's own offset in it, as in PyTorch. The
gradient of ``as_strided`` adds each output element's gradient to the storage position it
reads (positions read twice get both) and hands the input the sums at its own positions.
"""
import numpy

from .. import backend
from ..autograd import Op
from ..errors import ArgumentError, ShapeError
from ..tensor import Tensor
from .conversion import clone
from .creation_memory import empty_strided
from .index_update import index_put
from .indexing import _add_at
from .tensor_properties import storage_offset as _offset_of
from .util import check_int, check_tensor, sizes


def _positions(xp, shape, steps, offset):
    """The storage index of every element of a (shape, strides, offset) view, as an array of ``shape``."""
    idx = xp.full(tuple(shape), offset, dtype=numpy.int64)
    for d, (n, s) in enumerate(zip(shape, steps)):
        idx = idx + (xp.arange(n, dtype=numpy.int64) * s).reshape((n,) + (1,) * (len(shape) - d - 1))
    return idx


class AsStrided(Op):
    """A (size, stride, offset) view of ``storage`` (a flat array the input lies in)."""
    name = "as_strided"
    is_view = True
    bf16_native = True

    def __init__(self, storage, shape, steps, offset, in_geometry):
        self.storage, self.shape, self.steps, self.offset = storage, shape, steps, offset
        self.in_geometry = in_geometry  # the input's (shape, strides, offset) in the storage

    def forward(self, xp, x):
        item = self.storage.itemsize
        return xp.lib.stride_tricks.as_strided(self.storage[self.offset:], self.shape,
                                               tuple(s * item for s in self.steps))

    def backward(self, xp, g):
        flat = xp.zeros(self.storage.size, dtype=g.dtype)
        _add_at(xp, flat, _positions(xp, self.shape, self.steps, self.offset).reshape(-1), g.reshape(-1))
        return (flat[_positions(xp, *self.in_geometry)],)


def _storage(t):
    """``t``'s storage as a flat array, ``t``'s offset and strides in it, and whether it is
    ``t``'s memory (else a row-major copy of ``t``'s elements: ``t`` is strided memory of its own)."""
    base = t._base if t._base is not None else t
    a = base.array
    if a.flags.c_contiguous and a.dtype == t.array.dtype:
        steps = tuple(s // a.itemsize for s in t.array.strides)
        return a.reshape(-1), (_offset_of(t) if base is not t else 0), steps, True
    c = backend.array_module(t.array).ascontiguousarray(t.array)
    return c.reshape(-1), 0, tuple(s // c.itemsize for s in c.strides), False


def _view_args(op, size, stride, storage_offset, default_offset, extent):
    """The checked (shape, strides, offset) of a view into a storage of ``extent`` elements."""
    shape = sizes(op, (size,), "size")
    steps = sizes(op, (stride,), "stride")
    if len(shape) != len(steps):
        raise ShapeError(f"{op}: mismatch in length of strides and shape ({len(steps)} strides, {len(shape)} sizes)")
    if any(n < 0 for n in shape) or any(s < 0 for s in steps):
        raise ArgumentError(f"{op}: negative sizes or strides are not supported, got size {shape}, stride {steps}")
    offset = default_offset if storage_offset is None else check_int(op, "storage_offset", storage_offset, 0)
    need = 0 if 0 in shape else offset + 1 + sum((n - 1) * s for n, s in zip(shape, steps))
    if need > extent:
        raise ArgumentError(f"{op}: sizes {list(shape)}, strides {list(steps)}, storage offset {offset} need a "
                            f"storage of {need} elements, out of bounds for a storage of {extent}")
    return shape, steps, offset


def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage of shape ``size`` whose elements are ``stride`` elements
    apart per dim, starting ``storage_offset`` elements in (default: where ``input`` starts).
    Elements may overlap; writing through such a view writes shared memory. Differentiable.

    Raises:
        ShapeError: ``size`` and ``stride`` differ in length. ArgumentError: negative sizes or
            strides, or a view reaching past the end of the storage.
    """
    check_tensor("as_strided", "input", input)
    flat, own, in_steps, shared = _storage(input)
    shape, steps, offset = _view_args("as_strided", size, stride, storage_offset, own, flat.size)
    out = AsStrided(flat, shape, steps, offset, (tuple(input.shape), in_steps, own)).apply(input)
    if not shared:  # a copy was the storage: the result views that copy, not the input
        out._base, out._vc = None, [0, 0]
    return out


def as_strided_copy(input, size, stride, storage_offset=None):
    """A copy of :func:`as_strided`."""
    return clone(as_strided(input, size, stride, storage_offset))


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` with ``src`` written into the elements ``input.as_strided(size,
    stride, storage_offset)`` views, the storage being ``input``'s elements in row-major order
    (as for a contiguous ``input``). Differentiable in ``input`` (1 where kept, 0 where
    overwritten) and ``src`` (PyTorch 2.13 hands ``input`` the gradient of the overwritten
    positions instead, which finite differences do not confirm).

    Raises:
        ShapeError: ``src``'s shape is not ``size``; as :func:`as_strided` otherwise.
    """
    check_tensor("as_strided_scatter", "input", input)
    check_tensor("as_strided_scatter", "src", src)
    shape, steps, offset = _view_args("as_strided_scatter", size, stride, storage_offset, 0, input.numel())
    if tuple(src.shape) != tuple(shape):
        raise ShapeError(f"as_strided_scatter: expected src to have the shape {tuple(shape)} of the strided view, "
                         f"got {tuple(src.shape)}")
    flat = input.reshape(-1)
    positions = Tensor._wrap(_positions(backend.array_module(flat.array), shape, steps, offset).reshape(-1))
    return index_put(flat, (positions,), src.reshape(-1).to(flat.dtype)).reshape(input.shape)


def new_empty_strided(self, size, stride, *, dtype=None, device=None, requires_grad=False, layout=None,
                      pin_memory=False):
    """:func:`tinynet.empty_strided` with this tensor's dtype and device by default."""
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                         device=self.device if device is None else device, requires_grad=requires_grad)


METHODS = {"as_strided": as_strided, "as_strided_scatter": as_strided_scatter,
           "new_empty_strided": new_empty_strided}
