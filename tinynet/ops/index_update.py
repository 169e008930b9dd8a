"""Index-based updates (PyTorch's mutating ops, here returning a new tensor; their in-place
methods are in :mod:`.inplace_methods`), composed of :func:`~tinynet.scatter`,
:func:`~tinynet.scatter_add` and indexing (so their gradients are those ops'):
``index_add``, ``index_copy``, ``index_fill``, ``index_put`` and ``masked_scatter``.

``index_add(input, dim, index, source)`` adds slice ``k`` of ``source`` along ``dim`` to
slice ``index[k]`` of ``input`` (repeated indices accumulate); ``index_copy`` writes it
instead (with a repeated index, one of the writes wins, as in PyTorch); ``index_fill`` writes
a number into the slices at ``index``. ``masked_scatter`` writes ``source``'s leading
elements, in order, where ``mask`` is true; ``index_put`` is ``input[indices] = values`` on a copy.
"""
import numbers

from .. import backend
from ..errors import ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .arith import mul
from .gather import scatter, scatter_add
from .shape import broadcast_to, flatten, reshape
from .util import check_tensor, dim_index


def _index(op, index):
    check_tensor(op, "index", index)
    if index.array.dtype.kind not in "iu":
        raise DTypeError(f"{op}: index must be an integer tensor, got {index.dtype}")
    if index.ndim > 1:
        raise ShapeError(f"{op}: index must be 0-D or 1-D, got shape {tuple(index.shape)}")
    return reshape(index, (-1,))


def _spread(index, d, shape):
    """``index`` (1-D) placed along dim ``d`` and expanded to ``shape`` (scatter's index form)."""
    return broadcast_to(reshape(index, tuple(-1 if k == d else 1 for k in range(len(shape)))), shape)


def _slices(op, input, dim, index, source):
    check_tensor(op, "input", input)
    check_tensor(op, "source", source)
    d = dim_index(op, dim, max(input.ndim, 1))
    idx = _index(op, index)
    want = tuple(idx.shape[0] if k == d else s for k, s in enumerate(input.shape))
    if input.ndim and tuple(source.shape) != want:
        raise ShapeError(f"{op}: source must have shape {want} (input's with index's length along dim {dim}), got "
                         f"{tuple(source.shape)}")
    if source.dtype != input.dtype:
        raise DTypeError(f"{op}: source and input must have the same dtype, got {source.dtype} and {input.dtype}")
    return d, idx


def index_add(input, dim, index, source, *, alpha=1):
    """A copy of ``input`` with ``alpha * source`` added at ``index`` along ``dim``.

    Raises:
        ArgumentTypeError: non-Tensors. DTypeError: a non-integer index or mixed dtypes.
        ShapeError: index not 1-D, or source of the wrong shape.
        IndexOutOfRangeError: ``dim`` or an index out of range (on the GPU: raised later, as for
            :func:`tinynet.gather`).
    """
    d, idx = _slices("index_add", input, dim, index, source)
    if input.ndim == 0:
        return scatter_add(reshape(input, (1,)), 0, idx, reshape(mul(source, alpha), (-1,))).reshape(())
    return scatter_add(input, d, _spread(idx, d, tuple(source.shape)), source if alpha == 1 else mul(source, alpha))


def index_copy(input, dim, index, source):
    """A copy of ``input`` with the slices of ``source`` written at ``index`` along ``dim``.

    Raises:
        As :func:`index_add`.
    """
    d, idx = _slices("index_copy", input, dim, index, source)
    if input.ndim == 0:
        return scatter(reshape(input, (1,)), 0, idx, reshape(source, (-1,))).reshape(())
    return scatter(input, d, _spread(idx, d, tuple(source.shape)), source)


def index_fill(input, dim, index, value):
    """A copy of ``input`` with ``value`` (a number or a 0-d tensor) in the slices at ``index``
    along ``dim``.

    Raises:
        ArgumentTypeError: a non-Tensor input or a value that is not a number.
        DTypeError / ShapeError / IndexOutOfRangeError: as :func:`index_add`.
    """
    check_tensor("index_fill", "input", input)
    if isinstance(value, Tensor) and value.ndim == 0:
        value = value.item()
    if not isinstance(value, numbers.Number):
        raise ArgumentTypeError(f"index_fill: value must be a number or a 0-d tensor, got {type(value).__name__}")
    d = dim_index("index_fill", dim, max(input.ndim, 1))
    idx = _index("index_fill", index)
    if input.ndim == 0:
        return scatter(reshape(input, (1,)), 0, idx, value=value).reshape(())
    shape = tuple(idx.shape[0] if k == d else s for k, s in enumerate(input.shape))
    return scatter(input, d, _spread(idx, d, shape), value=value)


def masked_scatter(input, mask, source):
    """A copy of ``input`` with ``source``'s first elements (in C order) written, in order,
    where the bool ``mask`` (broadcast to ``input``'s shape) is true.

    Raises:
        ArgumentTypeError: non-Tensors. DTypeError: a non-bool mask or mixed dtypes.
        ShapeError: the mask does not broadcast, or ``source`` has too few elements.
    """
    for name, t in (("input", input), ("mask", mask), ("source", source)):
        check_tensor("masked_scatter", name, t)
    if mask.array.dtype.kind != "b":
        raise DTypeError(f"masked_scatter: mask must be a bool tensor, got {mask.dtype}")
    if source.dtype != input.dtype:
        raise DTypeError(f"masked_scatter: source and input must have the same dtype, got {source.dtype} and "
                         f"{input.dtype}")
    flat_mask = flatten(broadcast_to(mask, tuple(input.shape))).array
    xp = backend.array_module(flat_mask)
    where = Tensor._wrap(xp.nonzero(flat_mask)[0])
    count = where.shape[0]
    if source.numel() < count:
        raise ShapeError(f"masked_scatter: the mask selects {count} elements but source has only {source.numel()}")
    written = flatten(source)[:count]
    return reshape(scatter(flatten(input), 0, where, written), tuple(input.shape))


def index_put(input, indices, values, accumulate=False):
    """``input`` with ``values`` written (or, with ``accumulate``, added) at ``indices``: a
    tuple of index tensors (integer, or bool masks) for the leading dims, as in
    ``input[indices] = values``. ``values`` broadcasts to ``input[indices]``'s shape. With
    ``accumulate`` repeated indices add up (``numpy.add.at``); without it the result at a
    repeated index is one of the values (PyTorch: undefined which). Gradients: to ``input``
    everywhere but the written places (all of it with ``accumulate``), to ``values`` the
    gradient at the indices.

    Raises:
        ArgumentTypeError: not tensors, or ``indices`` not a tuple or list of tensors.
        DTypeError: float index tensors, or values that cannot be cast to the input's dtype.
        ShapeError: values that do not broadcast to the indexed shape.
        IndexOutOfRangeError: an index out of range.
    """
    from .arith import add
    from .indexing import IndexAddInto, IndexPut, index_errors, put_index
    check_tensor("index_put", "input", input)
    check_tensor("index_put", "values", values)
    if not isinstance(indices, (tuple, list)) or not all(isinstance(i, Tensor) for i in indices):
        raise ArgumentTypeError(f"index_put: indices must be a tuple of tensors, got {type(indices).__name__}")
    idx, values = put_index("index_put", input, tuple(indices), values)
    with index_errors("index_put", "the indices", input.shape, values.shape):
        if not accumulate:
            return IndexPut(idx).apply(input, values.to(input.dtype))
        # the indexed shape, for the values to broadcast to (a bool array costs no float copy)
        target = backend.array_module(input.array).empty(input.shape, dtype=bool)[idx].shape
        v = broadcast_to(values.to(input.dtype), target)
        return add(input, IndexAddInto(tuple(input.shape), idx).apply(v))
