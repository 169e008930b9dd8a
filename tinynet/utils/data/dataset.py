"""Datasets, as ``torch.utils.data``'s: the map-style and iterable base classes,
TensorDataset, ConcatDataset, ChainDataset, Subset and random_split.

A map-style dataset has ``__getitem__(index)`` and (for the default samplers) ``__len__``.
One that also has ``__getitems__(indices)`` is gathered a batch at a time by the
DataLoader. As in PyTorch, ``__getitems__`` may return a *list* of samples, which goes to
``collate_fn``. tinynet extension: it may instead return the batch *already stacked*: an
array or Tensor, or a tuple / namedtuple / dict of them, each with the batch along its
first dimension (``TensorDataset`` and the MNIST/CIFAR loaders of :mod:`tinynet.data` do
this: one fancy-indexing gather per field instead of a Python loop over samples). The
default collate then only wraps the arrays into tensors; a custom ``collate_fn`` receives
the list of samples cut from it, exactly as if ``dataset[i]`` had been called per index.
"""
import bisect
import itertools
import math
import numbers
import warnings

import numpy

from ... import backend, devices
from ...errors import ArgumentError, ArgumentTypeError, IndexOutOfRangeError, ShapeError
from ...random import default_generator, host_generator
from ...tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split"]


class Dataset:
    """Base class of map-style datasets (``torch.utils.data.Dataset``).

    Subclasses define ``__getitem__(index)`` (a sample for a key, usually an int in
    ``[0, len)``) and, for the default samplers of :class:`DataLoader`, ``__len__``; they
    may define ``__getitems__(indices)`` to fetch a whole batch at once (see the module
    doc). ``a + b`` is ``ConcatDataset([a, b])``.

    Raises:
        NotImplementedError: ``__getitem__`` was not overridden.
    """

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__}: subclasses of Dataset must implement __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Base class of iterable-style datasets (``torch.utils.data.IterableDataset``):
    subclasses define ``__iter__``, yielding samples.

    With ``num_workers > 0`` each worker process iterates its own copy of the dataset, so
    without care every worker yields every sample; split the work in ``__iter__`` with
    :func:`get_worker_info` (``id``, ``num_workers``). ``a + b`` is ``ChainDataset([a, b])``.
    """

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__}: subclasses of IterableDataset must implement __iter__")

    def __add__(self, other):
        return ChainDataset([self, other])


def _as_tensor(t, i):
    if isinstance(t, Tensor):
        return t
    if isinstance(t, numpy.ndarray) or backend.is_gpu_array(t):
        if t.dtype.kind not in "biuf":
            raise ArgumentTypeError(f"TensorDataset: tensor {i} has dtype {t.dtype}; expected bool, integer "
                                    "or float")
        return Tensor._wrap(t)
    raise ArgumentTypeError(f"TensorDataset: argument {i} must be a Tensor (or a NumPy/CuPy array), got "
                            f"{type(t).__name__}")


def _take(t, indices):
    """Rows ``indices`` of tensor ``t``, gathered on its own array (no autograd record
    unless ``t`` requires grad)."""
    if t.requires_grad:
        return t[indices]
    return Tensor._wrap(t.array[indices])


class TensorDataset(Dataset):
    """Samples are the rows of equally long tensors: ``ds[i] == (t0[i], t1[i], ...)``.

    Args:
        *tensors (Tensor): tensors with the same size of the first dimension. tinynet also
            accepts NumPy (or CuPy) arrays and wraps them without a copy.

    Attributes:
        tensors (tuple of Tensor): the wrapped tensors.

    ``__getitems__(indices)`` returns the stacked batch (a tuple of tensors, one gather
    each); tinynet extensions ``to(device)`` (a copy with every tensor on ``device``: what
    ``DataLoader(resident=True)`` uses) and ``nbytes()``.

    Raises:
        ArgumentError: no tensors, or their first dimensions differ.
        ShapeError: a 0-d tensor. ArgumentTypeError: an argument that is not a tensor/array.
    """

    def __init__(self, *tensors):
        if not tensors:
            raise ArgumentError("TensorDataset: expected at least one tensor")
        self.tensors = tuple(_as_tensor(t, i) for i, t in enumerate(tensors))
        for i, t in enumerate(self.tensors):
            if t.ndim == 0:
                raise ShapeError(f"TensorDataset: tensor {i} is 0-d; every tensor needs a first dimension")
        sizes = [t.shape[0] for t in self.tensors]
        if any(s != sizes[0] for s in sizes):
            raise ArgumentError(f"TensorDataset: size mismatch between tensors: all need the same first "
                                f"dimension (the same length), got {sizes}")

    def __len__(self):
        return self.tensors[0].shape[0]

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __getitems__(self, indices):
        return tuple(_take(t, indices) for t in self.tensors)

    def to(self, device):
        """A TensorDataset with every tensor's array on ``device`` (tinynet extension).

        Raises:
            DeviceError: an unknown device or ``cuda`` without a GPU.
        """
        dev = devices.resolve(device, "TensorDataset.to")
        return TensorDataset(*(Tensor._wrap(backend.to_device(t.array, dev)) for t in self.tensors))

    def nbytes(self):
        """Bytes held by the tensors (tinynet extension)."""
        return sum(int(t.array.nbytes) for t in self.tensors)


class ConcatDataset(Dataset):
    """The concatenation of map-style datasets: indices run through ``datasets[0]``, then
    ``datasets[1]``, ...; negative indices count from the end.

    Args:
        datasets (iterable of Dataset): at least one; no IterableDataset.

    Attributes:
        datasets (list), cumulative_sizes (list of int): the running total of lengths.

    Raises:
        ArgumentError: no datasets (PyTorch: AssertionError); a negative index beyond the
            length (PyTorch's ValueError). ArgumentTypeError: an IterableDataset among them
            (PyTorch: AssertionError), or a non-integer index.
        IndexOutOfRangeError: an index ``>= len``.
    """

    @staticmethod
    def cumsum(sequence):
        out, total = [], 0
        for d in sequence:
            total += len(d)
            out.append(total)
        return out

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ArgumentError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise ArgumentTypeError(f"ConcatDataset does not support IterableDataset (got "
                                        f"{type(d).__name__}); use ChainDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if isinstance(idx, bool) or not isinstance(idx, numbers.Integral):
            raise ArgumentTypeError(f"ConcatDataset: index must be an int, got {type(idx).__name__}")
        n = len(self)
        if idx < 0:
            if -idx > n:
                raise ArgumentError(f"ConcatDataset: absolute value of index should not exceed dataset length, "
                                    f"got index {idx} for length {n}")
            idx += n
        if idx >= n:
            raise IndexOutOfRangeError(f"ConcatDataset: index {idx} is out of range for length {n}")
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        return self.datasets[d][idx - (self.cumulative_sizes[d - 1] if d else 0)]


class ChainDataset(IterableDataset):
    """The chain of iterable datasets: iterates ``datasets[0]``, then ``datasets[1]``, ...

    Args:
        datasets (iterable of IterableDataset): the datasets to chain.

    Raises (while iterating or in ``len``):
        ArgumentTypeError: a member that is not an IterableDataset (PyTorch: AssertionError).
    """

    def __init__(self, datasets):
        self.datasets = datasets

    @staticmethod
    def _check(d):
        if not isinstance(d, IterableDataset):
            raise ArgumentTypeError(f"ChainDataset only supports IterableDataset, got {type(d).__name__}")

    def __iter__(self):
        for d in self.datasets:
            self._check(d)
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            self._check(d)
            total += len(d)
        return total


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``: ``Subset(ds, idx)[i] == ds[idx[i]]``.

    Args:
        dataset (Dataset): the whole dataset.
        indices (sequence of int): the positions in ``dataset`` that form the subset.

    ``__getitems__`` forwards to the dataset's own ``__getitems__`` when it has one (so a
    Subset of a TensorDataset or of MNIST keeps the one-gather batches), else returns the
    list of samples. A subclass that overrides ``__getitem__`` only has its ``__getitem__``
    used per index (PyTorch 2.13 raises NotImplementedError for such a subclass).
    """

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices):
        if type(self).__getitem__ is not Subset.__getitem__:
            return [self[i] for i in indices]
        inner = getattr(self.dataset, "__getitems__", None)
        if callable(inner):
            return inner([self.indices[i] for i in indices])
        return [self.dataset[self.indices[i]] for i in indices]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=default_generator):
    """Split ``dataset`` at random into non-overlapping :class:`Subset` s of the given lengths.

    Args:
        dataset (Dataset): with ``__len__``.
        lengths (sequence of int or float): the subset lengths, summing to ``len(dataset)``;
            or fractions summing to 1: each subset gets ``floor(len * frac)`` samples and
            the remainder is handed out one at a time, round-robin from the first (a
            warning names a subset that ends up empty).
        generator (tinynet.Generator): the source of the permutation; default tinynet's
            default generator (repeatable under ``tinynet.manual_seed``).

    Returns:
        list of Subset, in the order of ``lengths``.

    Raises:
        ArgumentError: a fraction outside [0, 1], a negative length, or lengths that are
            neither ints summing to the dataset's length nor fractions summing to 1.
            ArgumentTypeError: a length that is not a number, or a generator that is not a
            tinynet.Generator.
    """
    lengths = list(lengths)
    for i, v in enumerate(lengths):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise ArgumentTypeError(f"random_split: lengths[{i}] must be an int or a fraction, got {type(v).__name__}")
    n = len(dataset)
    total = sum(lengths)
    if math.isclose(total, 1) and total <= 1:
        sizes = []
        for i, frac in enumerate(lengths):
            if frac < 0 or frac > 1:
                raise ArgumentError(f"random_split: fraction at index {i} is not between 0 and 1, got {frac}")
            sizes.append(math.floor(n * frac))
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
        for i, size in enumerate(lengths):
            if size == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                              stacklevel=2)
    for i, v in enumerate(lengths):
        if not isinstance(v, numbers.Integral) and not float(v).is_integer():
            raise ArgumentError(f"random_split: lengths must be ints summing to the dataset's length ({n}) or "
                                f"fractions summing to 1, got {lengths}")
        if v < 0:
            raise ArgumentError(f"random_split: lengths must be non-negative, got lengths[{i}] = {v}")
    lengths = [int(v) for v in lengths]
    if sum(lengths) != n:
        raise ArgumentError(f"random_split: sum of input lengths does not equal the length of the input "
                            f"dataset! (lengths {lengths} sum to {sum(lengths)}, the dataset has {n})")
    perm = host_generator(generator).permutation(n).tolist()
    return [Subset(dataset, perm[end - size:end]) for end, size in zip(itertools.accumulate(lengths), lengths)]
