"""Reductions into positions: ``scatter_reduce`` (``"sum"``, ``"prod"``, ``"mean"``, ``"amax"``,
``"amin"``), ``index_reduce`` (along one dim, by a 1-D index) and ``put`` (into the flattened
tensor), with their in-place methods.

``scatter_reduce(input, dim, index, src, reduce)``: every element ``src[i]`` (``i`` over
``index``'s shape) is reduced into ``out[i with dim replaced by index[i]]``, ``out`` starting
as ``input``; ``include_self=False`` leaves ``input``'s values out of the positions that
receive something. ``"mean"`` divides by the count of values reduced (floor division for
integers, as PyTorch). Each group's reduction runs through NumPy's ``ufunc.at``; on CuPy, whose
``ufunc.at`` covers few ufuncs, through one pass per rank within a group (a deterministic order).

Gradients (PyTorch's): sum passes ``grad`` to every member; mean ``grad / count``; amax/amin
split ``grad`` evenly among the members equal to the result; prod gives each member the
product of the others (handled without division when a group holds zeros). Where PyTorch 2.13
differs: with ``include_self=False`` it also counts the left-out input value among tied
amax/amin members (so the shares sum to less than ``grad``), and its backward refuses a
``src`` larger than ``index``; tinynet splits among the members only and takes both.
"""
import numpy

from .. import backend, dtypes
from ..autograd import Op
from ..errors import DTypeError, IndexOutOfRangeError, ShapeError
from .index_update import index_put
from .inplace import composed_method
from .util import check_choice, check_flag, check_tensor, dim_index

_IDENTITY = {"sum": 0, "mean": 0, "prod": 1}
_UFUNC = {"sum": "add", "mean": "add", "prod": "multiply", "amax": "maximum", "amin": "minimum"}


def reduce_at(xp, out, ids, vals, ufunc, loop=None):
    """``out[ids[k]] = ufunc(out[ids[k]], vals[k])`` for every k, repeated ids accumulating
    (``numpy.<ufunc>.at``; on CuPy, or with ``loop=True``, a pass per rank within each id's group)."""
    if not (xp is not numpy if loop is None else loop):
        getattr(numpy, ufunc).at(out, ids, vals)
        return
    if ids.size == 0:
        return
    order = xp.argsort(ids, kind="stable")
    sids, svals = ids[order], vals[order]
    first = xp.concatenate([xp.ones(1, dtype=bool), sids[1:] != sids[:-1]])
    group = xp.cumsum(first) - 1
    rank = xp.arange(sids.size) - xp.nonzero(first)[0][group]
    fn = getattr(xp, ufunc)
    for r in range(int(rank.max()) + 1):
        sel = rank == r
        out[sids[sel]] = fn(out[sids[sel]], svals[sel])


def _lowest(dt, highest=False):
    if dt.kind == "f" or dtypes.is_floating(dt):
        return numpy.inf if highest else -numpy.inf
    info = numpy.iinfo(dt) if dt.kind in "iu" else None
    return (info.max if highest else info.min) if info is not None else (highest is True)


class ScatterReduce(Op):
    """The reduction of ``src`` (sliced to the index's shape) into a copy of ``input`` at the
    flat positions ``ids`` (a precomputed array)."""
    name = "scatter_reduce"

    def __init__(self, ids, shape, reduce, include_self):
        self.ids, self.index_shape, self.reduce, self.include_self = ids, shape, reduce, include_self

    def _src(self, src):
        return src[tuple(slice(0, n) for n in self.index_shape)].reshape(-1)

    def forward(self, xp, x, src):
        ids, reduce = self.ids, self.reduce
        vals = self._src(src).astype(x.dtype, copy=False)
        out = x.reshape(-1).copy()
        hit = xp.zeros(out.size, dtype=bool)
        hit[ids] = True
        if not self.include_self:
            out[hit] = _IDENTITY.get(reduce, _lowest(x.dtype, reduce == "amin"))
        reduce_at(xp, out, ids, vals, _UFUNC[reduce])
        count = None
        if reduce == "mean":
            count = xp.zeros(out.size, dtype=numpy.int64)
            reduce_at(xp, count, ids, xp.ones(ids.size, dtype=numpy.int64), "add")
            count = count + (1 if self.include_self else 0)
            keep = count == 0  # not scattered and self left out: the input's own value
            count = xp.where(keep, 1, count)
            out = xp.where(keep, x.reshape(-1), out // count.astype(out.dtype) if out.dtype.kind in "iu" else
                           out / count.astype(out.dtype))
        self.src_shape = src.shape
        self.save_for_backward(x, vals, out, hit, count)
        return out.reshape(x.shape)

    def backward(self, xp, gy):
        x, vals, out, hit, count = self.saved
        g, ids, reduce = gy.reshape(-1), self.ids, self.reduce
        self_in = xp.ones_like(hit) if self.include_self else ~hit  # positions whose value x takes part
        xs = x.reshape(-1)
        if reduce in ("sum", "mean"):
            share = g / count.astype(g.dtype) if reduce == "mean" else g
            g_self, g_vals = xp.where(self_in, share, 0), share[ids]
        elif reduce in ("amax", "amin"):
            self_eq = self_in & (xs == out)
            src_eq = vals == out[ids]
            n = self_eq.astype(g.dtype)
            reduce_at(xp, n, ids, src_eq.astype(g.dtype), "add")
            share = g / xp.maximum(n, 1)
            g_self, g_vals = xp.where(self_eq, share, 0), xp.where(src_eq, share[ids], 0)
        else:  # prod: the product of the other members, zeros counted rather than divided by
            zeros = (self_in & (xs == 0)).astype(numpy.int64)
            reduce_at(xp, zeros, ids, (vals == 0).astype(numpy.int64), "add")
            nonzero = xp.where(self_in & (xs != 0), xs, 1).astype(g.dtype)
            reduce_at(xp, nonzero, ids, xp.where(vals == 0, 1, vals).astype(g.dtype), "multiply")

            def others(v, at):
                z = zeros[at]
                return xp.where(z == 0, out[at] / xp.where(v == 0, 1, v), xp.where((z == 1) & (v == 0), nonzero[at], 0))
            g_self = xp.where(self_in, g * others(xs, slice(None)), 0)
            g_vals = g[ids] * others(vals, ids)
        g_src = None
        if self.needs_input_grad[1]:
            g_src = xp.zeros(self.src_shape, dtype=gy.dtype)
            g_src[tuple(slice(0, n) for n in self.index_shape)] = g_vals.reshape(self.index_shape)
        return g_self.reshape(x.shape).astype(gy.dtype, copy=False), g_src


def _flat_ids(op, xp, index, shape, d):
    """The flat position in a tensor of ``shape`` that each index element scatters to."""
    idx = index.astype(numpy.int64, copy=False)
    n = shape[d] if shape else 1
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
        raise IndexOutOfRangeError(f"{op}: index {int(idx.min()) if int(idx.min()) < 0 else int(idx.max())} is out "
                                   f"of bounds for dimension {d} with size {n}")
    ids = xp.zeros(idx.shape, dtype=numpy.int64)
    stride = 1
    for k in reversed(range(len(shape))):
        coord = idx if k == d else xp.arange(idx.shape[k]).reshape((-1,) + (1,) * (idx.ndim - k - 1))
        ids = ids + coord * stride
        stride *= shape[k]
    return ids.reshape(-1)


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """``input`` with ``src``'s elements reduced into the positions ``index`` names along ``dim``
    (module doc); differentiable in ``input`` and ``src`` for float tensors.

    Args:
        input (Tensor): any shape. index (int64 Tensor): as many dims as ``input``, each no
            larger than ``src``'s and (but along ``dim``) than ``input``'s. src (Tensor):
            ``input``'s dtype. reduce (str): ``"sum"``, ``"prod"``, ``"mean"``, ``"amax"``,
            ``"amin"``. include_self (bool): reduce ``input``'s values too. Default True.

    Raises:
        ArgumentError: an unknown ``reduce``. DTypeError: ``src``'s dtype differs, or ``index``
            is not int64. ShapeError: ranks or sizes that do not fit. IndexOutOfRangeError: an
            index outside ``input``'s dim.
    """
    op = "scatter_reduce"
    for name, t in (("input", input), ("index", index), ("src", src)):
        check_tensor(op, name, t)
    reduce = check_choice(op, "reduce", reduce, tuple(_UFUNC))
    include_self = check_flag(op, "include_self", include_self)
    if index.array.dtype != numpy.int64:
        raise DTypeError(f"{op}: index must be an int64 tensor, got {index.dtype}")
    if src.dtype != input.dtype:
        raise DTypeError(f"{op}: expected src to have input's dtype {input.dtype}, got {src.dtype}")
    d = dim_index(op, dim, input.ndim)
    if not (index.ndim == src.ndim == max(input.ndim, 1)) and index.numel():
        raise ShapeError(f"{op}: index, src and input must have the same number of dimensions, got "
                         f"{index.ndim}, {src.ndim} and {input.ndim}")
    shape = tuple(input.shape) or (1,)
    if index.numel() and any(index.shape[k] > src.shape[k] or (k != d and index.shape[k] > shape[k])
                             for k in range(index.ndim)):
        raise ShapeError(f"{op}: index of shape {tuple(index.shape)} must be no larger than src "
                         f"{tuple(src.shape)}, nor than input {tuple(input.shape)} apart from dimension {d}")
    xp = backend.common_module(op, [input.array, index.array, src.array])
    ids = _flat_ids(op, xp, index.array, shape, d) if index.numel() else xp.zeros(0, dtype=numpy.int64)
    return ScatterReduce(ids, tuple(index.shape), reduce, include_self).apply(input, src)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """``input`` with each slice ``source.select(dim, k)`` reduced into ``input.select(dim,
    index[k])`` by ``reduce`` (``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``); differentiable.

    Raises:
        ArgumentError: an unknown ``reduce``. ShapeError: ``index`` not 1-D with ``source.shape[dim]``
            entries, or ``source`` and ``input`` differ outside ``dim``. IndexOutOfRangeError: an index
            out of range. DTypeError: dtypes that differ, or an index that is not int64.
    """
    op = "index_reduce"
    for name, t in (("input", input), ("index", index), ("source", source)):
        check_tensor(op, name, t)
    check_choice(op, "reduce", reduce, ("prod", "mean", "amax", "amin"))
    if index.array.dtype.kind not in "iu":
        raise DTypeError(f"{op}: index must be an integer tensor, got {index.dtype}")
    index = index.to(dtypes.int64)
    d = dim_index(op, dim, input.ndim)
    if index.ndim > 1 or source.ndim != input.ndim or index.numel() != (source.shape[d] if source.ndim else 1) or \
            any(source.shape[k] != input.shape[k] for k in range(input.ndim) if k != d):
        raise ShapeError(f"{op}: index {tuple(index.shape)} must be 1-D with source.shape[{d}] entries, and source "
                         f"{tuple(source.shape)} must match input {tuple(input.shape)} outside dimension {d}")
    if input.ndim == 0:
        return scatter_reduce(input, d, index.reshape(()), source, reduce, include_self=include_self)
    view = [1] * input.ndim
    view[d] = -1
    full = index.reshape(view).expand(*source.shape) if index.numel() else index.reshape(view)
    return scatter_reduce(input, d, full, source, reduce, include_self=include_self)


def put(input, index, source, accumulate=False):
    """``input`` flattened, ``source``'s values written (or added, ``accumulate``) at the flat
    positions ``index`` (negative counting from the end), and reshaped back; differentiable.

    Raises:
        ShapeError: ``index`` and ``source`` hold different numbers of elements.
        IndexOutOfRangeError: a position outside ``input``. DTypeError: an index that is not an integer tensor.
    """
    for name, t in (("input", input), ("index", index), ("source", source)):
        check_tensor("put", name, t)
    if index.array.dtype.kind not in "iu":
        raise DTypeError(f"put: index must be an integer tensor, got {index.dtype}")
    if index.numel() != source.numel():
        raise ShapeError(f"put: expected source and index to have the same number of elements, got "
                         f"{source.numel()} and {index.numel()}")
    n = input.numel()
    if index.numel() and (int(index.array.min()) < -n or int(index.array.max()) >= n):
        raise IndexOutOfRangeError(f"put: index out of range for a tensor of {n} elements")
    flat = index_put(input.reshape(-1), (index.reshape(-1).to(dtypes.int64),), source.reshape(-1).to(input.dtype),
                     check_flag("put", "accumulate", accumulate))
    return flat.reshape(input.shape)


METHODS = {"scatter_reduce": scatter_reduce, "index_reduce": index_reduce, "put": put,
           **{f"{f.__name__}_": composed_method(f"{f.__name__}_", f) for f in (scatter_reduce, index_reduce, put)}}
