"""Samplers, as ``torch.utils.data``'s: which indices a DataLoader fetches, in which order.

Random samplers draw from a :class:`tinynet.Generator` when given one (the same seed
gives the same order), else from tinynet's default generator (repeatable under
``tinynet.manual_seed``). The draws are NumPy's (PCG64), so the orders are not PyTorch's.
"""
import itertools
import numbers

import numpy

from ...errors import ArgumentError, ArgumentTypeError
from ...random import Generator, host_generator
from ...tensor import Tensor

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]


def _check_generator(op, generator):
    if generator is not None and not isinstance(generator, Generator):
        raise ArgumentTypeError(f"{op}: generator must be a tinynet.Generator or None, got {type(generator).__name__}")


def _check_positive(op, name, value):
    """PyTorch raises ValueError for a non-int here as well as for a value <= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
        raise ArgumentError(f"{op}: {name} should be a positive integer value, but got {name}={value!r}")
    return int(value)


class Sampler:
    """Base class of samplers: subclasses define ``__iter__`` (indices, or lists of
    indices for a batch sampler) and usually ``__len__``."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__}: subclasses of Sampler must implement __iter__")


class SequentialSampler(Sampler):
    """Yields ``0, 1, ..., len(data_source) - 1``.

    Args:
        data_source (Sized): anything with ``__len__`` (read at each iteration).
    """

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """Yields the indices of ``data_source`` in a random order: a fresh permutation each
    iteration (``num_samples`` beyond the length continue with further permutations), or
    with ``replacement=True`` ``num_samples`` independent uniform draws.

    Args:
        data_source (Sized): anything with ``__len__``.
        replacement (bool): draw with replacement. Default False.
        num_samples (int, optional): how many indices per iteration; default
            ``len(data_source)`` (read at each use).
        generator (tinynet.Generator, optional): the source of randomness. Default: a
            seed drawn from tinynet's default generator at the start of each iteration.

    Raises:
        ArgumentTypeError: ``replacement`` is not a bool, or ``generator`` is not a
            tinynet.Generator. ArgumentError: ``num_samples`` is not a positive int (also
            when it defaults to the length of an empty ``data_source``).
    """

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(replacement, bool):
            raise ArgumentTypeError(f"RandomSampler: replacement should be a boolean value, but got "
                                    f"replacement={replacement!r}")
        _check_positive("RandomSampler", "num_samples", self.num_samples)
        _check_generator("RandomSampler", generator)

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, m = len(self.data_source), self.num_samples
        if n == 0:
            raise ArgumentError("RandomSampler: cannot draw from an empty data_source")
        if self.generator is None:  # as PyTorch: one seed from the default generator per iteration
            rng = numpy.random.default_rng(int(host_generator().integers(0, 2**63 - 1)))
        else:
            rng = self.generator.numpy
        if self.replacement:
            yield from rng.integers(0, n, size=m).tolist()
            return
        for _ in range(m // n):
            yield from rng.permutation(n).tolist()
        if m % n:
            yield from rng.permutation(n)[:m % n].tolist()

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """Yields the elements of ``indices`` in a random order (a new permutation each
    iteration).

    Args:
        indices (sequence): the indices to sample from.
        generator (tinynet.Generator, optional): default tinynet's default generator.

    Raises:
        ArgumentTypeError: ``generator`` is not a tinynet.Generator.
    """

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator
        _check_generator("SubsetRandomSampler", generator)

    def __iter__(self):
        for i in host_generator(self.generator).permutation(len(self.indices)).tolist():
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """Yields ``num_samples`` indices in ``[0, len(weights))``, index ``i`` with probability
    proportional to ``weights[i]``.

    Args:
        weights (sequence of float or Tensor): non-negative, not all zero; need not sum to 1.
        num_samples (int): how many indices per iteration.
        replacement (bool): draw with replacement (default True); without it each index
            comes at most once.
        generator (tinynet.Generator, optional): default tinynet's default generator.

    Attributes:
        weights (Tensor): float64, 1-D.

    Raises:
        ArgumentError: ``num_samples`` not a positive int, ``replacement`` not a bool (both
            ValueError in PyTorch), weights that are not 1-D; and (where PyTorch fails only
            while iterating, with RuntimeError) weights that are negative, infinite, NaN or
            all zero, or ``num_samples`` above the number of non-zero weights without
            replacement. ArgumentTypeError: weights that are not numbers, or a generator
            that is not a tinynet.Generator.
    """

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        op = "WeightedRandomSampler"
        num_samples = _check_positive(op, "num_samples", num_samples)
        if not isinstance(replacement, bool):
            raise ArgumentError(f"{op}: replacement should be a boolean value, but got replacement={replacement!r}")
        _check_generator(op, generator)
        try:
            w = numpy.asarray(weights.numpy(force=True) if isinstance(weights, Tensor) else weights,
                              dtype=numpy.float64)
        except (TypeError, ValueError) as exc:
            raise ArgumentTypeError(f"{op}: weights must be a sequence of numbers ({exc})") from None
        if w.ndim != 1:
            raise ArgumentError(f"{op}: weights should be a 1d sequence but given weights have shape {w.shape}")
        if not numpy.isfinite(w).all() or (w < 0).any():
            raise ArgumentError(f"{op}: weights must be finite and non-negative, got {w.tolist()[:8]}...")
        nonzero = int(numpy.count_nonzero(w))
        if nonzero == 0:
            raise ArgumentError(f"{op}: the weights sum to 0; at least one must be positive")
        if not replacement and num_samples > nonzero:
            raise ArgumentError(f"{op}: cannot draw num_samples={num_samples} without replacement from "
                                f"{nonzero} non-zero weights")
        self.weights = Tensor._wrap(w)
        self.num_samples = num_samples
        self.replacement = replacement
        self.generator = generator

    def __iter__(self):
        w = self.weights.array
        idx = host_generator(self.generator).choice(len(w), size=self.num_samples, replace=self.replacement,
                                                    p=w / w.sum())
        yield from idx.tolist()

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups the indices of another sampler into lists of ``batch_size``.

    Args:
        sampler (Sampler or iterable): yields indices.
        batch_size (int): indices per batch.
        drop_last (bool): drop a last batch shorter than ``batch_size``.

    Yields:
        list of indices.

    Raises:
        ArgumentError: ``batch_size`` not a positive int, or ``drop_last`` not a bool (both
            ValueError, as PyTorch).
    """

    def __init__(self, sampler, batch_size, drop_last):
        self.batch_size = _check_positive("BatchSampler", "batch_size", batch_size)
        if not isinstance(drop_last, bool):
            raise ArgumentError(f"BatchSampler: drop_last should be a boolean value, but got drop_last={drop_last!r}")
        self.sampler = sampler
        self.drop_last = drop_last

    def __iter__(self):
        it = iter(self.sampler)
        if self.drop_last:
            for batch in zip(*([it] * self.batch_size)):
                yield list(batch)
            return
        batch = list(itertools.islice(it, self.batch_size))
        while batch:
            yield batch
            batch = list(itertools.islice(it, self.batch_size))

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size


class _InfiniteConstantSampler(Sampler):
    """The index source of an IterableDataset: ``None`` forever (the dataset decides)."""

    def __iter__(self):
        while True:
            yield None
