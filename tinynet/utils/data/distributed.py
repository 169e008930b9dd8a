"""``DistributedSampler`` (``torch.utils.data.distributed.DistributedSampler``): each process
of a data-parallel run reads its own share of the dataset.

Its orders are PyTorch's exactly: with ``shuffle=True`` the epoch's permutation is the one
``torch.randperm(len(dataset), generator=torch.Generator().manual_seed(seed + epoch))``
gives. That generator is a 32-bit Mersenne Twister (MT19937) seeded with the low 32 bits of
the seed, and ``randperm`` on the CPU is a Fisher-Yates pass drawing ``random() % (n - i)``
(ATen's ``randperm_cpu``); NumPy's ``MT19937`` bit generator, given the same state, yields
the same 32-bit draws. So a PyTorch run and a tinynet run with the same seed see the same
samples in the same order, and a DistributedSampler replaces PyTorch's in a ported script.
"""
import math
import numbers

import numpy

from ... import distributed
from ...errors import ArgumentError, ArgumentTypeError
from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _mt19937(seed):
    """NumPy's MT19937 in the state ``std::mt19937(seed & 0xffffffff)`` starts in (the
    reference initialisation of Matsumoto and Nishimura, as ``at::mt19937``)."""
    key = numpy.empty(624, dtype=numpy.uint32)
    x = int(seed) & 0xFFFFFFFF
    key[0] = x
    for i in range(1, 624):
        x = (1812433253 * (x ^ (x >> 30)) + i) & 0xFFFFFFFF
        key[i] = x
    bits = numpy.random.MT19937()
    bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 624}}
    return bits


def torch_randperm(n, seed):
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()`` on the CPU,
    for ``n`` below 2**32 / 20 (where ATen keeps this algorithm)."""
    order = list(range(n))
    if n < 2:
        return order
    draws = _mt19937(seed).random_raw(n - 1) % numpy.arange(n, 1, -1, dtype=numpy.uint64)
    for i, z in enumerate(draws.tolist()):
        j = i + z
        order[i], order[j] = order[j], order[i]
    return order


class DistributedSampler(Sampler):
    """Yields this rank's share of the indices of ``dataset``: the (shuffled) index list is
    padded by repeating its start (or, with ``drop_last``, cut) to a multiple of
    ``num_replicas``, and rank ``r`` takes every ``num_replicas``-th index starting at ``r``.
    Call :meth:`set_epoch` before each epoch so that every epoch gets a new order.

    Args:
        dataset (Sized): anything with ``__len__``.
        num_replicas (int, optional): the number of processes; default the process group's
            world size.
        rank (int, optional): this process's rank; default the process group's.
        shuffle (bool): shuffle the indices each epoch (PyTorch's permutation for
            ``seed + epoch``). Default True.
        seed (int): the shuffling seed; must be the same on every rank. Default 0.
        drop_last (bool): drop the tail so that every rank gets the same number of distinct
            samples (``len(dataset) // num_replicas``); without it the tail is padded with
            indices from the start (``ceil(len(dataset) / num_replicas)`` each). Default False.

    Raises:
        ArgumentError: ``rank`` outside ``[0, num_replicas - 1]`` or ``num_replicas`` < 1.
        ArgumentTypeError: a non-int ``num_replicas``, ``rank`` or ``seed``.
        ProcessGroupError: ``num_replicas`` or ``rank`` omitted without a process group.
    """

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        num_replicas = distributed.get_world_size() if num_replicas is None else num_replicas
        rank = distributed.get_rank() if rank is None else rank
        for name, value in (("num_replicas", num_replicas), ("rank", rank), ("seed", seed)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise ArgumentTypeError(f"DistributedSampler: {name} must be an int, got {type(value).__name__}")
        if num_replicas < 1:
            raise ArgumentError(f"DistributedSampler: num_replicas must be at least 1, got {num_replicas}")
        if rank >= num_replicas or rank < 0:
            raise ArgumentError(f"DistributedSampler: Invalid rank {rank}, rank should be in the interval "
                                f"[0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas, self.rank = int(num_replicas), int(rank)
        self.epoch = 0
        self.drop_last = drop_last
        n = len(dataset)
        if self.drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = int(seed)

    def __iter__(self):
        n = len(self.dataset)
        indices = torch_randperm(n, self.seed + self.epoch) if self.shuffle else list(range(n))
        if not self.drop_last:
            padding = self.total_size - len(indices)
            if padding <= len(indices):
                indices += indices[:padding]
            elif indices:
                indices += (indices * math.ceil(padding / len(indices)))[:padding]
        else:
            indices = indices[:self.total_size]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """Use the order of epoch ``epoch`` from now on (shuffle with ``seed + epoch``).

        Args:
            epoch (int): the epoch number; the same on every rank.
        """
        self.epoch = epoch
