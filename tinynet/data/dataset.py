"""Datasets and the DataLoader (PyTorch's ``torch.utils.data`` names).

A dataset is anything with ``__len__`` and ``__getitem__``; one that also has
``__getitems__(indices)`` (as :class:`TensorDataset` and the MNIST loaders do) hands the
DataLoader a whole batch in one vectorised gather instead of one item at a time.
"""
import numbers

import numpy

from .. import backend, devices
from ..random import host_generator
from ..tensor import Tensor


class Dataset:
    """Base class: subclasses define ``__len__`` and ``__getitem__(i)``."""

    def __len__(self):
        raise NotImplementedError

    def __getitem__(self, index):
        raise NotImplementedError


def _as_array(a):
    return a.array if isinstance(a, Tensor) else numpy.asarray(a) if not hasattr(a, "shape") else a


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

    def to(self, device):
        """A TensorDataset with every array moved to ``device``."""
        return TensorDataset(*(backend.to_device(t, devices.resolve(device, "TensorDataset.to"))
                               for t in self.tensors))

    def nbytes(self):
        return sum(int(t.nbytes) for t in self.tensors)


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
        resident (bool, optional): on ``"cuda"``, copy the whole dataset to the GPU once
            and gather every batch there (needs a dataset with ``to(device)``, such as
            TensorDataset and the MNIST loaders). Default: when it takes at most half of
            the free GPU memory. Otherwise batches are gathered on the host, staged in
            pinned memory and copied on a side CUDA stream while the previous batch
            computes (double buffering, ordered with CUDA events).

    Yields:
        tuple of Tensors (one per field of a sample), stacked along a new first dim.

    Raises:
        ValueError: ``batch_size`` < 1. TypeError: a dataset without ``__len__``.
    """

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, generator=None,
                 seed=None, device=None, resident=None):
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be a positive int, got {batch_size!r}")
        if not hasattr(dataset, "__len__") or not hasattr(dataset, "__getitem__"):
            raise TypeError(f"DataLoader: dataset must define __len__ and __getitem__, got "
                            f"{type(dataset).__name__}")
        self.dataset, self.batch_size = dataset, int(batch_size)
        self.shuffle, self.drop_last = shuffle, drop_last
        self.generator = generator if generator is not None else (
            numpy.random.default_rng(seed) if seed is not None else None)
        self.device = devices.resolve(device, "DataLoader")
        self._resident = None
        if self.device.type == "cuda" and resident is not False and hasattr(dataset, "to"):
            size = dataset.nbytes() if hasattr(dataset, "nbytes") else None
            free = backend.cupy.cuda.runtime.memGetInfo()[0]
            if resident or (size is not None and size <= free // 2):
                self._resident = dataset.to(self.device)

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self):
        n = len(self.dataset)
        if not self.shuffle:
            return numpy.arange(n)
        return (self.generator or host_generator()).permutation(n)

    def _fetch_host(self, idx):
        """One batch as a tuple of arrays, gathered from the (host) dataset."""
        ds = self.dataset
        if hasattr(ds, "__getitems__"):
            batch = ds.__getitems__(idx)
        else:
            items = [ds[int(i)] for i in idx]
            if not isinstance(items[0], tuple):
                items = [(it,) for it in items]
            batch = tuple(numpy.stack([_as_array(it[k]) if not isinstance(it[k], Tensor)
                                       else it[k].numpy(force=True) for it in items]) for k in range(len(items[0])))
        return batch if isinstance(batch, tuple) else (batch,)

    def _starts(self):
        return range(0, min(len(self) * self.batch_size, len(self.dataset)), self.batch_size)

    def __iter__(self):
        order = self._order()
        if self._resident is not None:
            yield from self._iter_resident(order)
        elif self.device.type == "cuda":
            yield from self._iter_staged(order)
        else:
            for start in self._starts():
                batch = self._fetch_host(order[start:start + self.batch_size])
                yield tuple(Tensor._wrap(_as_array(b)) for b in batch)

    def _iter_resident(self, order):
        """Gather batches on the GPU from the resident copy: one index upload per epoch."""
        dev_order = backend.cupy.asarray(order)
        for start in self._starts():
            batch = self._resident.__getitems__(dev_order[start:start + self.batch_size])
            batch = batch if isinstance(batch, tuple) else (batch,)
            yield tuple(Tensor._wrap(b) for b in batch)

    def _iter_staged(self, order):
        """Host gather -> pinned buffer -> async copy on a side stream, one batch ahead."""
        import cupyx
        cp = backend.cupy
        main, side = cp.cuda.get_current_stream(), cp.cuda.Stream(non_blocking=True)
        pinned, copied = [{}, {}], [None, None]

        def stage(k, idx):
            host = [numpy.ascontiguousarray(_as_array(a)) for a in self._fetch_host(idx)]
            slot = k % 2
            if copied[slot] is not None:
                copied[slot].synchronize()  # the copy that last read this pinned buffer is done
            side.wait_event(main.record())  # device memory handed back by earlier steps is idle
            out = []
            for i, a in enumerate(host):
                buf = pinned[slot].get((i, a.shape, a.dtype.str))
                if buf is None:
                    buf = pinned[slot][(i, a.shape, a.dtype.str)] = cupyx.empty_pinned(a.shape, a.dtype)
                buf[...] = a
                d = cp.empty(a.shape, a.dtype)
                d.set(buf, stream=side)
                out.append(d)
            copied[slot] = side.record()
            return out, copied[slot]

        starts = list(self._starts())
        nxt = stage(0, order[0:self.batch_size]) if starts else None
        for k, start in enumerate(starts):
            arrays, ready = nxt
            if k + 1 < len(starts):
                nxt = stage(k + 1, order[starts[k + 1]:starts[k + 1] + self.batch_size])
            main.wait_event(ready)
            yield tuple(Tensor._wrap(a) for a in arrays)
