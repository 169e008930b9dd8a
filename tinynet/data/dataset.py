"""Datasets and the DataLoader (PyTorch's ``torch.utils.data`` names).

A dataset is anything with ``__len__`` and ``__getitem__``; one that also has
``__getitems__(indices)`` (as :class:`TensorDataset` and the MNIST loaders do) hands the
DataLoader a whole batch in one vectorised gather instead of one item at a time.
"""
import numbers

import numpy

from .. import backend
from ..random import host_generator
from ..tensor import Tensor


class Dataset:
    """Base class: subclasses define ``__len__`` and ``__getitem__(i)``."""

    def __len__(self):
        raise NotImplementedError

    def __getitem__(self, index):
        raise NotImplementedError


def _as_array(a):
    return a.data if isinstance(a, Tensor) else numpy.asarray(a) if not hasattr(a, "shape") else a


class TensorDataset(Dataset):
    """Samples are the rows of equally long arrays/tensors: item ``i`` is
    ``(a[i], b[i], ...)``.

    Raises:
        ValueError: no arrays, or their first dimensions differ.
    """

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset: expected at least one array")
        self.tensors = tuple(_as_array(t) for t in tensors)
        n = len(self.tensors[0])
        for t in self.tensors:
            if len(t) != n:
                raise ValueError(f"TensorDataset: all arrays need the same length, got "
                                 f"{[len(t) for t in self.tensors]}")

    def __len__(self):
        return len(self.tensors[0])

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __getitems__(self, indices):
        return tuple(t[indices] for t in self.tensors)


class DataLoader:
    """Iterate over a dataset in batches of tensors on the active backend's device.

    Args:
        dataset: a :class:`Dataset` (or anything with ``__len__``/``__getitem__``).
        batch_size (int): samples per batch, default 1.
        shuffle (bool): reshuffle every epoch, default False.
        drop_last (bool): drop a last incomplete batch, default False.
        generator (numpy.random.Generator, optional): source of the shuffling order;
            default tinynet's host generator (repeatable under ``tinynet.manual_seed``).
        seed (int, optional): shorthand for ``generator=numpy.random.default_rng(seed)``.
        device: ``"cpu"`` or ``"cuda"``; default the active backend's.

    Yields:
        tuple of Tensors (one per field of a sample), stacked along a new first dim.

    Raises:
        ValueError: ``batch_size`` < 1. TypeError: a dataset without ``__len__``.
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, generator=None,
                 seed=None, device=None):
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be a positive int, got {batch_size!r}")
        if not hasattr(dataset, "__len__") or not hasattr(dataset, "__getitem__"):
            raise TypeError(f"DataLoader: dataset must define __len__ and __getitem__, got "
                            f"{type(dataset).__name__}")
        self.dataset, self.batch_size = dataset, int(batch_size)
        self.shuffle, self.drop_last = shuffle, drop_last
        self.generator = generator if generator is not None else (
            numpy.random.default_rng(seed) if seed is not None else None)
        self.device = backend.normalize_device(device, "DataLoader")

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self):
        n = len(self.dataset)
        if not self.shuffle:
            return numpy.arange(n)
        return (self.generator or host_generator()).permutation(n)

    def _fetch(self, idx):
        ds = self.dataset
        if hasattr(ds, "__getitems__"):
            batch = ds.__getitems__(idx)
        else:
            items = [ds[int(i)] for i in idx]
            if not isinstance(items[0], tuple):
                items = [(it,) for it in items]
            batch = tuple(numpy.stack([_as_array(it[k]) if not isinstance(it[k], Tensor)
                                       else it[k].numpy() for it in items]) for k in range(len(items[0])))
        if not isinstance(batch, tuple):
            batch = (batch,)
        return tuple(Tensor._wrap(backend.to_device(_as_array(b), self.device)) for b in batch)

    def __iter__(self):
        order = self._order()
        stop = len(self) * self.batch_size
        for start in range(0, min(stop, len(order)), self.batch_size):
            yield self._fetch(order[start:start + self.batch_size])
