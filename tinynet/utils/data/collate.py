"""``default_collate`` and ``default_convert``: PyTorch's rules for turning samples into
batches of tensors.

The DataLoader runs the same rules "on the host": arrays become tensors where they are
(NumPy arrays: CPU tensors), in a worker process too, and the main process then moves the
batch to the loader's device. The public functions put new tensors on tinynet's default
device. Also here: the two halves of tinynet's pre-stacked ``__getitems__`` batches (see
:mod:`tinynet.utils.data.dataset`): converting one as default_collate would convert its
samples, and cutting one into its samples for a custom ``collate_fn``.
"""
import collections.abc
import copy
import re

import numpy

from ...dtypes import is_floating
from ... import backend, devices, dtypes
from ...errors import ArgumentTypeError, DTypeError, IndexOutOfRangeError, ShapeError
from ...ops.join import stack
from ...tensor import Tensor

__all__ = ["default_collate", "default_convert"]

_STR_OBJ = re.compile(r"[SaUO]")
_ERR = "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"


def default_collate(batch):
    """Merge a list of samples into a batch (``torch.utils.data.default_collate``).

    By the type of the first element of ``batch``:

    * Tensor -> the tensors stacked along a new first dim (on their device; autograd
      records the stack when one requires grad)
    * NumPy array -> a Tensor (stacked; dtypes promote by PyTorch's rules)
    * NumPy scalar -> a 1-D Tensor of its dtype
    * float -> a float64 Tensor; int -> int64 (bool -> bool; ints mixed with floats -> the
      default float dtype, as ``torch.tensor`` does)
    * str, bytes -> ``batch`` unchanged (a list, or a tuple inside a sample)
    * Mapping -> the same mapping type, each key collated
    * namedtuple -> the same namedtuple type, each field collated
    * other Sequence -> each position collated; a tuple gives a *list*, as PyTorch's
      ("backwards compatibility"), a list a list, other sequences their own type when it
      can be rebuilt

    New tensors (from arrays and numbers) are made on tinynet's default device.

    Args:
        batch (list): the samples.

    Raises:
        ArgumentTypeError: an element type the rules do not cover, or string/object arrays
            (TypeError in PyTorch). DTypeError: arrays of a dtype tinynet has no tensor for.
        ShapeError: tensors/arrays of different shapes, or sequences of different lengths
            (RuntimeError in PyTorch). IndexOutOfRangeError: an empty batch.
        DeviceMismatchError: tensors on different devices.
    """
    return collate(batch, devices.default_device())


def default_convert(data):
    """Turn NumPy arrays and NumPy scalars in ``data`` into tensors, keeping the structure
    (``torch.utils.data.default_convert``): the DataLoader's collate when ``batch_size=None``.

    Tensors stay; arrays of strings or objects stay arrays; mappings, namedtuples and
    sequences are converted element-wise (a tuple becomes a list, as in PyTorch); anything
    else (Python numbers, strings) is returned unchanged. New tensors are made on
    tinynet's default device.

    Raises:
        DTypeError: arrays of a dtype tinynet has no tensor for.
    """
    return convert(data, devices.default_device())


def host_collate(batch):
    """default_collate that leaves arrays where they are (the DataLoader's and its workers')."""
    return collate(batch, None)


def host_convert(data):
    """default_convert that leaves arrays where they are."""
    return convert(data, None)


def _is_array(x):
    return isinstance(x, numpy.ndarray) or backend.is_gpu_array(x)


def _tensor(array, device):
    if array.dtype.kind not in "biuf":
        raise DTypeError(f"default_collate: arrays of dtype {array.dtype} cannot become tensors "
                         "(bool, integer and float only)")
    if device is not None and devices.of_array(array) != device:
        array = backend.to_device(array, device)
    return Tensor._wrap(array)


def rebuild_mapping(like, values):
    """``values`` (a dict) in the mapping type of ``like`` when that type can be rebuilt."""
    try:
        if isinstance(like, collections.abc.MutableMapping):
            clone = copy.copy(like)
            clone.update(values)
            return clone
        return type(like)(values)
    except TypeError:
        return values


def _rebuild_sequence(like, items):
    try:
        if isinstance(like, collections.abc.MutableSequence):
            clone = copy.copy(like)
            for i, item in enumerate(items):
                clone[i] = item
            return clone
        return type(like)(items)
    except TypeError:
        return items


def _size_error(first, other, i):
    return ShapeError(f"default_collate: stack expects each tensor to be equal size, but got {list(first)} at "
                      f"entry 0 and {list(other)} at entry {i}")


def _stack_tensors(batch):
    shape = batch[0].shape
    for i, t in enumerate(batch):
        if not isinstance(t, Tensor):
            raise ArgumentTypeError(f"default_collate: expected Tensor as element {i} of the batch, like the "
                                    f"first, but got {type(t).__name__}")
        if t.shape != shape:
            raise _size_error(shape, t.shape, i)
    return stack(batch)


def _stack_arrays(batch):
    arrays = [b if _is_array(b) else numpy.asarray(b) for b in batch]
    shape, dt = arrays[0].shape, arrays[0].dtype
    for i, a in enumerate(arrays):
        if a.shape != shape:
            raise _size_error(shape, a.shape, i)
        if a.dtype != dt:
            dt = dtypes.promote_types(dt, a.dtype)
    xp = backend.common_module("default_collate", arrays)
    out = xp.stack(arrays)
    return out if out.dtype == dt else out.astype(dt)


def collate(batch, device):
    """default_collate with new tensors on ``device`` (``None``: where the arrays are)."""
    if len(batch) == 0:
        raise IndexOutOfRangeError("default_collate: the batch is empty")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack_tensors(batch)
    if _is_array(elem):
        if _STR_OBJ.search(elem.dtype.str):
            raise ArgumentTypeError(_ERR.format(elem.dtype))
        return _tensor(_stack_arrays(batch), device)
    if isinstance(elem, (numpy.bool_, numpy.number, numpy.object_)):
        return _tensor(numpy.asarray(batch), device)
    if isinstance(elem, float):
        return _tensor(numpy.asarray(batch, dtype=numpy.float64), device)
    if isinstance(elem, int):
        a = numpy.asarray(batch)  # all bools -> bool; a float among the ints -> a float
        if is_floating(a.dtype):
            a = a.astype(dtypes.get_default_dtype())
        elif a.dtype.kind in "iu":
            a = a.astype(numpy.int64)
        return _tensor(a, device)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return rebuild_mapping(elem, {key: collate([d[key] for d in batch], device) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(collate(samples, device) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(e) != size for e in batch):
            raise ShapeError(f"default_collate: each element in list of batch should be of equal size, got "
                             f"lengths {[len(e) for e in batch]}")
        columns = [collate(samples, device) for samples in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuild_sequence(elem, columns)
    raise ArgumentTypeError(_ERR.format(type(elem)))


def convert(data, device):
    """default_convert with new tensors on ``device`` (``None``: where the arrays are)."""
    if isinstance(data, Tensor):
        return data
    if _is_array(data):
        return data if _STR_OBJ.search(data.dtype.str) else _tensor(data, device)
    if isinstance(data, (numpy.bool_, numpy.number)):
        return _tensor(numpy.asarray(data), device)
    if isinstance(data, collections.abc.Mapping):
        return rebuild_mapping(data, {key: convert(data[key], device) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(convert(d, device) for d in data))
    if isinstance(data, tuple):
        return [convert(d, device) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [convert(d, device) for d in data])
    return data


# ---- pre-stacked batches (a __getitems__ that returns the batch, not a list of samples) ------
class Unstackable(Exception):
    """A pre-stacked batch with a part default_collate's fast path does not cover."""


def _check_length(data, n, where):
    size = data.shape[0] if data.ndim else None
    if size != n:
        raise ShapeError(f"{where}: __getitems__ returned a batch whose first dimension is {size} for {n} indices")


def stacked(data, n, where):
    """What default_collate would make of the samples of the pre-stacked batch ``data``
    (``n`` samples), without cutting it up: tensors stay, numeric arrays become tensors,
    tuples become lists. Raises :class:`Unstackable` for any other part."""
    if isinstance(data, Tensor) or _is_array(data):
        _check_length(data, n, where)
        if isinstance(data, Tensor):
            return data
        if data.dtype.kind not in "biuf":
            raise Unstackable
        return Tensor._wrap(data)
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(stacked(d, n, where) for d in data))
    if isinstance(data, tuple):
        return [stacked(d, n, where) for d in data]
    if isinstance(data, collections.abc.Mapping):
        return rebuild_mapping(data, {key: stacked(data[key], n, where) for key in data})
    raise Unstackable


def rows(data, n, where):
    """The ``n`` samples of the pre-stacked batch ``data``, as ``dataset[i]`` would give them."""
    if isinstance(data, Tensor):
        _check_length(data, n, where)
        if data.requires_grad:
            return [data[i] for i in range(n)]
        return [Tensor._wrap(data.array[i, ...]) for i in range(n)]
    if _is_array(data):
        _check_length(data, n, where)
        return [data[i] for i in range(n)]
    if isinstance(data, tuple):
        columns = [rows(d, n, where) for d in data]
        make = (lambda r: type(data)(*r)) if hasattr(data, "_fields") else tuple
        return [make(r) for r in zip(*columns)] if columns else [() for _ in range(n)]
    if isinstance(data, collections.abc.Mapping):
        columns = {key: rows(data[key], n, where) for key in data}
        return [rebuild_mapping(data, {key: columns[key][i] for key in columns}) for i in range(n)]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)) and len(data) == n:
        return list(data)
    raise ArgumentTypeError(f"{where}: __getitems__ returned a {type(data).__name__}, which cannot be cut into "
                            f"{n} samples (return a list of samples, or arrays/tensors with the batch first)")
