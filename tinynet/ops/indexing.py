"""Indexing: ``x[index]``, ``gather``, ``scatter``/``scatter_add``, ``index_select``,
``masked_fill``, ``masked_select``, ``take_along_dim``, ``nonzero``.

Reading by index and adding into zeros at the same index are each other's gradient:
:class:`GetItem` / :class:`IndexAddInto` for ``x[index]``, :class:`Gather` /
:class:`ScatterAddInto` for ``gather`` along a dim. Each backward is the other op, so
both can be differentiated again. Repeated indices accumulate (``add.at``).

Indices are checked against the sizes on the CPU. On the GPU, ``x[idx]`` with a 1-D int32/int64
index tensor (the batch gather of a training loop) is one kernel launch that checks each index
on the device and reports an out-of-range one at the next GPU gather or
``tinynet.cuda.synchronize()`` (``kernels/index_rows.py``: PyTorch's device-side check, as
asynchronous as its report); other GPU indices are not checked (the check would wait for the
device every call) and CuPy wraps an out-of-range value around.

Differences from PyTorch: slices may have negative steps (``x[::-1]``, NumPy's; PyTorch
raises); an index with two Ellipses raises.
"""
import contextlib
import math

import numpy

from ..dtypes import is_floating
from .. import backend, determinism
from ..autograd import Op
from ..autograd.anomaly import STATE as _anomaly
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, IndexOutOfRangeError, ShapeError
from ..kernels import index_rows
from ..tensor import Tensor
from .util import check_int, check_tensor, dim_index, is_graph, unbroadcast


def _add_at(xp, dst, index, values):
    """``dst[index] += values`` with repeated indices accumulating (NumPy's and CuPy's
    ``add.at``). CuPy's accumulates with atomics, in a varying order; under
    ``use_deterministic_algorithms(True)`` a kernel adds in NumPy's order instead."""
    if backend.is_gpu_array(dst) and determinism.are_deterministic_algorithms_enabled():
        from ..kernels import elementwise
        elementwise.add_at_in_order(dst, index, values)
    elif xp is numpy and _rows_add(dst, index, values):
        return
    else:
        xp.add.at(dst, index, values)


def _rows_add(dst, index, values):
    """``dst[index] += values`` for one integer index array on axis 0 of a NumPy ``dst`` with
    rows of at least 16 values (an embedding's gradient), by sorting: the positions of each
    index, in order (a stable sort), summed with ``add.reduceat``, then one store per distinct
    row. NumPy's ``add.at`` handles one element at a time (1.6 ms for a (65, 128) gradient
    from 1,024 positions on the 2-core machine; this, 0.3-0.45 ms). The sums come in another
    association than ``add.at``'s, so under ``use_deterministic_algorithms(True)`` (which
    promises NumPy's order, as the GPU's in-order kernel gives) ``add.at`` runs instead.
    Returns False, doing nothing, for any other case (and for indices out of ``[0, rows)``,
    which ``add.at`` wraps or refuses)."""
    idx = index[0] if type(index) is tuple and len(index) == 1 else index
    if (type(idx) is not numpy.ndarray or idx.dtype.kind not in "iu" or dst.ndim < 2 or idx.size < 64
            or dst.dtype.kind != "f" or not dst.flags.c_contiguous or values.shape != idx.shape + dst.shape[1:]
            or dst.size // max(dst.shape[0], 1) < 16 or determinism.are_deterministic_algorithms_enabled()):
        return False
    flat = idx.reshape(-1)
    if flat.min() < 0 or flat.max() >= dst.shape[0]:
        return False
    order = numpy.argsort(flat, kind="stable")
    ranked = flat[order]
    starts = numpy.flatnonzero(numpy.concatenate(([True], ranked[1:] != ranked[:-1])))
    rows = values.reshape(flat.size, -1)[order]
    out = dst.reshape(dst.shape[0], -1)
    out[ranked[starts]] += numpy.add.reduceat(rows, starts, axis=0)
    return True


def _is_basic(index):
    items = index if isinstance(index, tuple) else (index,)
    return all(i is None or i is Ellipsis or isinstance(i, (int, slice, numpy.integer)) for i in items)


class GetItem(Op):
    name = "getitem"
    complex_ok = True  # moves data only (so does IndexAddInto, its backward)
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, index):
        if type(index) is slice:  # x[a:b], the batch slice of every training step: always a view
            self.is_view = self.bf16_native = True
            self.index = index  # a bare slice: CuPy's fast path, no tuple parsing
            return
        # basic indexing gives a view: bfloat16 stays bfloat16 (a widened copy would not share
        # memory), its backward places the gradient (no arithmetic)
        self.is_view = self.bf16_native = _is_basic(index)
        if self.is_view:  # a trailing Ellipsis makes NumPy return a 0-d view, not a scalar copy
            items = index if isinstance(index, tuple) else (index,)
            index = items if any(i is Ellipsis for i in items) else items + (Ellipsis,)
        self.index = index

    def forward(self, xp, x):
        self.shape = x.shape
        return x[self.index]

    def backward(self, xp, gy):
        return (IndexAddInto(self.shape, self.index).call(xp, gy),)


class RowGather(GetItem):
    """``x[idx]`` for a 1-D int32/int64 index array ``idx`` on the first dimension of a GPU
    array, when the result takes part in autograd: the forward is ``index_rows``'s one-launch
    gather (CuPy's ``take`` where it does not apply), the backward :class:`GetItem`'s
    (``IndexAddInto``: repeated indices accumulate)."""

    def __init__(self, index):
        self.is_view = self.bf16_native = False
        self.index = index

    def forward_gpu(self, xp, x):
        self.shape = x.shape
        return index_rows.gather_rows(x, self.index) if index_rows.usable(x, self.index) else x[self.index]


class IndexSelect(GetItem):
    """``index_select``: ``x[(slice(None),) * dim + (idx,)]`` for a 1-D index array. On the GPU,
    where ``index_rows.dim_usable`` holds, one launch of ``index_rows.cu``'s gather along ``dim``
    (which also checks the indices); the backward is :class:`GetItem`'s."""

    def __init__(self, dim, idx):
        self.is_view = self.bf16_native = False
        self.dim, self.idx = dim, idx
        self.index = (slice(None),) * dim + (idx,)

    def forward_gpu(self, xp, x):
        self.shape = x.shape
        if index_rows.dim_usable(x, self.idx, self.dim, False):
            return index_rows.gather_dim(x, self.idx, self.dim, 0, per_element=False)
        return x[self.index]


class IndexAddInto(Op):
    """Zeros of ``shape`` with ``g`` added at ``index`` (the gradient of ``x[index]``).
    ``unique=True`` promises that ``index`` names no element twice (a plain store then
    does, instead of the slower accumulating ``add.at``)."""
    name = "index_add_into"
    complex_ok = True
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, shape, index, unique=False):
        self.shape, self.index, self.unique = shape, index, unique

    def forward(self, xp, g):
        out = xp.zeros(self.shape, dtype=g.dtype)
        if self.unique or _is_basic(self.index):
            out[self.index] = g
        else:
            _add_at(xp, out, self.index, g)
        return out

    def backward(self, xp, gg):
        return (GetItem(self.index).call(xp, gg),)


class IndexPut(Op):
    """``x`` with ``x[index] = v`` (``v`` broadcast): the op behind ``x[index] = v`` on a
    tensor that takes part in autograd. ``dx = g`` zeroed at ``index``, ``dv = g[index]``
    summed to ``v``'s shape."""
    name = "index_put"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, index):
        self.index = index

    def forward(self, xp, x, v):
        y = x.copy()
        y[self.index] = v
        self.v_shape = getattr(v, "shape", None)
        return y

    def backward(self, xp, gy):
        gx = gv = None
        if self.needs_input_grad[0]:  # a constant mask: False where the values were replaced
            arr = gy.array if is_graph(xp) else gy
            mask = backend.array_module(arr).ones(arr.shape, dtype=bool)
            mask[self.index] = False
            gx = gy * (Tensor._wrap(mask) if is_graph(xp) else mask)
        if self.needs_input_grad[1] and self.v_shape is not None:
            gv = unbroadcast(xp, GetItem(self.index).call(xp, gy), self.v_shape)
        return gx, gv


@contextlib.contextmanager
def index_errors(op, where, shape, value_shape):
    """Turn NumPy's/CuPy's errors of an indexed write into tinynet's: IndexError into
    IndexOutOfRangeError, ValueError (values that do not broadcast) into ShapeError, each
    naming ``op``, the index (``where``, e.g. ``"index 5"``) and the shapes."""
    try:
        yield
    except IndexError as exc:
        raise IndexOutOfRangeError(f"{op}: {where} is invalid for a tensor of shape {tuple(shape)} ({exc})") from None
    except ValueError as exc:
        raise ShapeError(f"{op}: cannot assign values of shape {tuple(value_shape)} to {where} of a tensor of shape "
                         f"{tuple(shape)} ({exc})") from None


# ---- index conversion --------------------------------------------------------------------
def to_index(index, xp, shape=None, op="getitem"):
    """An index expression with tensors/lists replaced by arrays on ``xp``'s device.

    As PyTorch: a list holding lists, tensors, slices, None or Ellipsis stands for a tuple
    (``x[[0, 1], [2, 0]]`` and ``x[[[0, 1], [2, 0]]]`` are the same), and a uint8 tensor is
    a mask.

    Raises:
        DTypeError: a float tensor used as an index.
    """
    if isinstance(index, list) and any(i is None or i is Ellipsis or isinstance(i, (list, tuple, slice, Tensor))
                                       for i in index):
        index = tuple(index)
    items = index if isinstance(index, tuple) else (index,)
    out = []
    for i in items:
        if isinstance(i, Tensor):
            a = i.array
            if is_floating(a.dtype):
                raise DTypeError(f"{op}: tensors used as indices must be long, int, bool or uint8, got {a.dtype}")
            if a.dtype == numpy.uint8:
                a = a.astype(bool)
            if a.ndim == 0 and a.dtype.kind in "iu":
                i = int(a)
            elif backend.array_module(a) is xp:
                i = a
            else:  # an index on the other device: copied over, as PyTorch allows
                i = xp.asarray(a) if xp is not numpy else backend.cupy.asnumpy(a)
        elif isinstance(i, list):
            i = xp.asarray(numpy.asarray(i))
        elif isinstance(i, numpy.ndarray) and xp is not numpy:
            i = xp.asarray(i)
        elif not (i is None or i is Ellipsis or isinstance(i, (int, slice, tuple, range, numpy.integer, numpy.ndarray))
                  or backend.is_gpu_array(i)):
            raise IndexOutOfRangeError(f"{op}: only integers, slices, None, Ellipsis, and bool or integer "
                                       f"tensors are valid indices, got {type(i).__name__}")
        out.append(i)
    return tuple(out) if isinstance(index, tuple) else out[0]


def getitem(input, index):
    """``input[index]``: ints, slices, None, Ellipsis, bool masks and integer arrays/tensors.
    Basic indexing (ints, slices) gives a view; advanced indexing a copy.

    On the GPU, ``x[idx]`` with a 1-D int32/int64 index tensor on the same GPU and a
    C-contiguous ``x`` is one kernel launch with no host synchronisation
    (``tinynet/kernels/index_rows.py``); its backward adds the gradient rows into zeros at
    ``idx`` (repeated indices accumulate), as for any integer index.

    Raises:
        IndexOutOfRangeError: an index is out of range (names the shape). On the GPU that
            gather checks its indices on the device and raises at the next such gather or at
            ``tinynet.cuda.synchronize()`` (the rows of the bad indices are zeros); other GPU
            indices are not checked.
        DTypeError: a float tensor used as an index.
    """
    if type(index) is slice:  # x[a:b], the batch slice of every training step
        array = input.array
        if not input.requires_grad and array.ndim and not _anomaly[0]:
            # nothing to record: the view made here directly, with the fields Op.apply gives a view
            out = Tensor._wrap(array[index])
            out._vc = input._vc
            out._base = input._base if input._base is not None else input
            return out
        idx = index
    elif type(index) is int:  # x[i]: nothing to convert
        idx = index
    elif (type(index) is Tensor and type(index.array) is backend._CUPY_NDARRAY
          and index_rows.usable(input.array, index.array)):
        # x[idx], the batch gather of a training loop on the GPU: one launch, no host sync
        if not input.requires_grad and not _anomaly[0]:  # nothing to record: the output made directly
            return Tensor._wrap(index_rows.gather_rows(input.array, index.array))
        return RowGather(index.array).apply(input)
    else:
        idx = to_index(index, backend.array_module(input.array))
    try:
        return GetItem(idx).apply(input)
    except IndexError as exc:
        raise IndexOutOfRangeError(f"getitem: index {index!r} is invalid for a tensor of shape "
                                   f"{input.shape} ({exc})") from None


def _index_tensor(op, name, index, integer=True):
    check_tensor(op, name, index)
    if integer and index.array.dtype.kind != "i":
        raise DTypeError(f"{op}: {name} must be an int64 (or int32) tensor, got {index.dtype}")
    return index


def _check_range(op, index, size, dim, negative=False):
    """Raise IndexOutOfRangeError for an index outside ``[0, size)`` (``[-size, size)`` with
    ``negative``). CPU tensors are checked here; GPU tensors on the device, without a wait
    (``kernels/index_rows.py``: raised at the next GPU gather or check, or at
    ``tinynet.cuda.synchronize()``)."""
    a = index.array
    if size == 0 and a.size:  # nothing to pick from: known without reading the indices
        raise IndexOutOfRangeError(f"{op}: index out of bounds for dimension {dim} with size 0")
    low = -size if negative else 0
    if not isinstance(a, numpy.ndarray):
        index_rows.check_range(op, a, low, size, dim)
    elif a.size:
        lo, hi = int(a.min()), int(a.max())
        if lo < low or hi >= size:
            bad = lo if lo < low else hi
            raise IndexOutOfRangeError(f"{op}: index {bad} is out of bounds for dimension {dim} with size {size}")


def index_select(input, dim, index):
    """The entries of ``input`` at the 1-D ``index`` along ``dim``.

    Raises:
        ShapeError: ``index`` is not 1-D. DTypeError / IndexOutOfRangeError: as :func:`gather`.
    """
    check_tensor("index_select", "input", input)
    _index_tensor("index_select", "index", index)
    if index.ndim > 1:
        raise ShapeError(f"index_select: index must be 0-D or 1-D, got shape {index.shape}")
    d = dim_index("index_select", dim, input.ndim)
    idx = index.array.reshape(-1)
    if not index_rows.dim_usable(input.array, idx, d, False):  # else the gather kernel checks them
        _check_range("index_select", index, input.shape[d] if input.ndim else 1, d)
    if input.ndim == 0:  # PyTorch: one index (0 or -1) into a scalar, which comes back
        if index.array.size != 1:
            raise ShapeError(f"index_select: index into a 0-d tensor must have exactly 1 value, got {index.array.size}")
        return GetItem((idx,)).apply(input.reshape(1)).reshape(())
    return IndexSelect(d, idx).apply(input)


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements: an int64 (count, ndim) tensor, or with
    ``as_tuple=True`` one 1-D tensor per dimension (not differentiable)."""
    check_tensor("nonzero", "input", input)
    a = input.array
    xp = backend.array_module(a)
    if as_tuple:
        parts = xp.nonzero(a) if a.ndim else xp.nonzero(a.reshape(1))
        return tuple(Tensor._wrap(p.astype(numpy.int64, copy=False)) for p in parts)
    return Tensor._wrap(xp.argwhere(a).astype(numpy.int64, copy=False))


def nonzero_static(input, *, size=None, fill_value=-1):
    """:func:`nonzero` with a fixed number of rows: the first ``size`` positions of nonzero
    elements, rows of ``fill_value`` after the last; an int64 (size, ndim) tensor.

    Raises:
        ArgumentError: a negative ``size``. ArgumentTypeError: ``size`` (required, keyword-only, as
            in PyTorch) or ``fill_value`` not an int.
    """
    check_tensor("nonzero_static", "input", input)
    if size is None:
        raise ArgumentTypeError("nonzero_static: the keyword argument size is required")
    size = check_int("nonzero_static", "size", size, 0)
    fill = check_int("nonzero_static", "fill_value", fill_value)
    found = nonzero(input).array
    xp = backend.array_module(found)
    out = xp.full((size, max(input.ndim, 0)), fill, dtype=numpy.int64)
    k = min(size, found.shape[0])
    out[:k] = found[:k]
    return Tensor._wrap(out)


def argwhere(input):
    """``nonzero(input)``: an int64 (count, ndim) tensor of the nonzero positions."""
    return nonzero(input)


def put_index(op, input, index, value):
    """Checked pieces of ``input[index] = value``: the converted index and value."""
    xp = backend.array_module(input.array)
    idx = to_index(index, xp, op=op)
    if isinstance(value, Tensor):
        if value.is_cuda != input.is_cuda:
            from ..errors import DeviceMismatchError
            raise DeviceMismatchError(f"{op}: value is on {value.device} but the tensor on {input.device}")
    elif isinstance(value, (int, float, numpy.number)) and input.array.dtype.kind in "iu":
        info = numpy.iinfo(input.array.dtype)
        if not (math.isfinite(value) and info.min <= value <= info.max):
            raise ArgumentError(f"{op}: value {value} cannot be converted to {input.dtype} without overflow")
    elif not isinstance(value, (int, float, bool, numpy.number, numpy.bool_)):
        try:
            value = Tensor._wrap(xp.asarray(value, dtype=input.array.dtype))
        except (TypeError, ValueError):
            raise DTypeError(f"{op}: cannot assign a {type(value).__name__} to a {input.dtype} tensor (numbers, "
                             f"tensors and array-likes of numbers only)") from None
    return idx, value
