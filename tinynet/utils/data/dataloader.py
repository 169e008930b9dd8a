"""The DataLoader (``torch.utils.data.DataLoader``): samplers pick the indices, fetchers
gather and collate on the host (in this process or in worker processes), and the batches
are moved to the loader's device (``_device.py``)."""
import math
import multiprocessing
import numbers
import os
import warnings

from ... import backend, devices
from ...errors import ArgumentError, ArgumentTypeError
from ...random import Generator, default_generator, host_generator
from . import _device
from ._fetch import make_fetcher
from ._multiprocessing import MultiProcessIter
from ._resume import Resumable
from .collate import default_collate, default_convert, host_collate, host_convert
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler, _InfiniteConstantSampler

__all__ = ["DataLoader"]

_FROZEN = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers")


def _check_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"DataLoader: {name} must be an int, got {type(value).__name__}")
    return int(value)


def _single_process(fetcher, index_iter):
    for index in index_iter:
        try:
            batch = fetcher.fetch(index)
        except StopIteration:
            return
        yield batch


class DataLoader(Resumable):
    """Iterate over a dataset in batches (``torch.utils.data.DataLoader``).

    Args:
        dataset (Dataset or IterableDataset): map-style (``__getitem__``, and ``__len__``
            for the default samplers) or iterable-style.
        batch_size (int or None): samples per batch, default 1; ``None`` turns automatic
            batching off (each sample goes through ``default_convert``).
        shuffle (bool, optional): a new random order every epoch (a :class:`RandomSampler`
            with ``generator``). Default False.
        sampler (Sampler or iterable, optional): the indices to fetch, in order.
        batch_sampler (Sampler or iterable, optional): yields lists of indices, one per
            batch; excludes ``batch_size``, ``shuffle``, ``sampler`` and ``drop_last``.
        num_workers (int): worker processes that load the batches; 0 (default) loads in
            this process. Workers collate on the host, so they never touch the GPU.
        collate_fn (callable, optional): list of samples -> batch; default
            :func:`default_collate` (:func:`default_convert` when ``batch_size`` is None).
        pin_memory (bool): accepted for PyTorch's sake and otherwise ignored: batches for a
            GPU are always staged through pinned memory, batches for the CPU never are.
        drop_last (bool): drop the last batch when it is short. Default False.
        timeout (float): with workers, seconds to wait for a batch before
            :class:`~tinynet.errors.WorkerError`; 0 (default) waits forever.
        worker_init_fn (callable, optional): called as ``worker_init_fn(worker_id)`` in each
            worker after seeding, before loading.
        multiprocessing_context (str or multiprocessing context, optional): how workers
            start (``"fork"``, ``"spawn"``, ``"forkserver"``); default the platform's
            default (fork on Linux with Python < 3.14). With spawn/forkserver the dataset,
            ``collate_fn`` and ``worker_init_fn`` must be picklable.
        generator (tinynet.Generator, optional): the source of the shuffling order and of
            the workers' base seed; default tinynet's default generator (repeatable under
            ``tinynet.manual_seed``).
        prefetch_factor (int, optional, keyword): batches in flight per worker; default 2
            with workers, must stay None without.
        persistent_workers (bool, keyword): keep the workers (and their dataset copies)
            alive across epochs. Default False.

    tinynet extensions (keywords):
        device: where batches land (``"cpu"``, ``"cuda"``, ``"cuda:1"``, a tinynet.device);
            default tinynet's default device (``TINYNET_BACKEND``). On a GPU, batches are
            staged in pinned memory and copied on a side CUDA stream one batch ahead.
        resident (bool, optional): on a GPU, copy the whole dataset to the device once and
            gather every batch there (needs ``num_workers=0``, the default collate and a
            dataset with ``to(device)`` and ``__getitems__``, such as TensorDataset and the
            MNIST loaders). Default (None): when the dataset fits in half of the free GPU
            memory. Ignored on the CPU.
        seed (int, optional): shorthand for ``generator=tinynet.Generator().manual_seed(seed)``.

    Yields:
        what ``collate_fn`` makes of each batch; with the default, the structure of a
        sample with tensors stacked along a new first dim (a tuple sample gives a *list*
        of tensors, as in PyTorch), on ``device``.

    Raises:
        ArgumentError: num_workers < 0; timeout < 0; prefetch_factor without workers or < 1;
            persistent_workers without workers; shuffle or sampler with a batch_sampler or
            with an IterableDataset, shuffle with a sampler, batch_sampler with batch_size
            other than 1 or drop_last; drop_last with batch_size=None; an unknown
            multiprocessing start method; multiprocessing_context without workers; seed
            with generator; resident=True where it cannot apply; setting batch_size,
            batch_sampler, sampler, drop_last, dataset or persistent_workers after
            construction. The samplers' own errors (e.g. batch_size not a positive int).
        ArgumentTypeError: a dataset that is neither map-style nor iterable (or has no
            ``__len__`` for the default samplers), a non-int num_workers, a collate_fn or
            worker_init_fn that is not callable, a generator that is not a
            tinynet.Generator, a bad multiprocessing_context; with spawn/forkserver, a
            dataset, collate_fn or worker_init_fn that cannot be pickled.
        DeviceError: an unknown device, or cuda without a GPU.
        WorkerError: while iterating, when a worker dies or ``timeout`` passes; the error
            a worker raised is re-raised with the worker's traceback (same type, as PyTorch).
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 device=None, resident=None, seed=None):
        num_workers = _check_int("num_workers", num_workers)
        if num_workers < 0:
            raise ArgumentError(f"DataLoader: num_workers option should be non-negative; use num_workers=0 to "
                                f"disable multiprocessing, got {num_workers}")
        if isinstance(timeout, bool) or not isinstance(timeout, numbers.Real):
            raise ArgumentTypeError(f"DataLoader: timeout must be a number, got {type(timeout).__name__}")
        if timeout < 0:
            raise ArgumentError(f"DataLoader: timeout option should be non-negative, got {timeout}")
        if num_workers == 0 and prefetch_factor is not None:
            raise ArgumentError("DataLoader: prefetch_factor option could only be specified in multiprocessing; "
                                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None")
        if num_workers > 0:
            prefetch_factor = 2 if prefetch_factor is None else _check_int("prefetch_factor", prefetch_factor)
            if prefetch_factor < 1:
                raise ArgumentError(f"DataLoader: prefetch_factor must be >= 1, got {prefetch_factor}")
        if persistent_workers and num_workers == 0:
            raise ArgumentError("DataLoader: persistent_workers option needs num_workers > 0")
        for name, fn in (("collate_fn", collate_fn), ("worker_init_fn", worker_init_fn)):
            if fn is not None and not callable(fn):
                raise ArgumentTypeError(f"DataLoader: {name} must be callable, got {type(fn).__name__}")
        if seed is not None:
            if generator is not None:
                raise ArgumentError("DataLoader: give generator or seed, not both")
            generator = Generator().manual_seed(seed)
        if generator is not None and not isinstance(generator, Generator):
            raise ArgumentTypeError(f"DataLoader: generator must be a tinynet.Generator or None, got "
                                    f"{type(generator).__name__}")

        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in (False, None):
                raise ArgumentError(f"DataLoader with IterableDataset: expected unspecified shuffle option, but got "
                                    f"shuffle={shuffle}")
            if sampler is not None:
                raise ArgumentError(f"DataLoader with IterableDataset: expected unspecified sampler option, but got "
                                    f"sampler={sampler}")
            if batch_sampler is not None:
                raise ArgumentError(f"DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                                    f"but got batch_sampler={batch_sampler}")
        else:
            if not hasattr(dataset, "__getitem__"):
                raise ArgumentTypeError(f"DataLoader: dataset must be a map-style dataset (with __getitem__) or an "
                                        f"IterableDataset, got {type(dataset).__name__}")
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ArgumentError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ArgumentError("DataLoader: batch_sampler option is mutually exclusive with batch_size, "
                                    "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ArgumentError("DataLoader: batch_size=None option disables auto-batching and is mutually "
                                "exclusive with drop_last")
        if sampler is None:
            if self._iterable:
                sampler = _InfiniteConstantSampler()
            else:
                if batch_sampler is None and not hasattr(dataset, "__len__"):
                    raise ArgumentTypeError(f"DataLoader: the default samplers need a dataset with __len__, and "
                                            f"{type(dataset).__name__} has none (pass a sampler or batch_sampler)")
                sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.dataset, self.num_workers, self.prefetch_factor = dataset, num_workers, prefetch_factor
        self.pin_memory, self.timeout, self.worker_init_fn = pin_memory, timeout, worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.batch_size, self.drop_last = batch_size, drop_last
        self.sampler, self.batch_sampler, self.generator = sampler, batch_sampler, generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self._host_collate_fn = {default_collate: host_collate, default_convert: host_convert}.get(collate_fn,
                                                                                                   collate_fn)
        self.persistent_workers = persistent_workers
        self.device = devices.resolve(device, "DataLoader")
        self._resident = self._make_resident(resident)
        self._iterator = None
        self._epoch_rng, self._yielded, self._resume, self._base_seed = None, 0, None, None  # state_dict
        self._warn_worker_count()
        self._initialized = True

    # ---- settings -------------------------------------------------------------------------
    def __setattr__(self, name, value):
        if self.__dict__.get("_initialized") and name in _FROZEN:
            raise ArgumentError(f"DataLoader: {name} attribute should not be set after DataLoader is initialized")
        super().__setattr__(name, value)

    @property
    def multiprocessing_context(self):
        return self._mp_ctx

    @multiprocessing_context.setter
    def multiprocessing_context(self, ctx):
        if ctx is not None:
            if self.num_workers == 0:
                raise ArgumentError(f"DataLoader: multiprocessing_context can only be used with multi-process "
                                    f"loading (num_workers > 0), but got num_workers={self.num_workers}")
            if isinstance(ctx, str):
                methods = multiprocessing.get_all_start_methods()
                if ctx not in methods:
                    raise ArgumentError(f"DataLoader: multiprocessing_context option should specify a valid start "
                                        f"method in {methods!r}, but got multiprocessing_context={ctx!r}")
                ctx = multiprocessing.get_context(ctx)
            if not isinstance(ctx, multiprocessing.context.BaseContext):
                raise ArgumentTypeError(f"DataLoader: multiprocessing_context option should be a valid context "
                                        f"object or a string specifying the start method, but got "
                                        f"multiprocessing_context={ctx!r}")
        self._mp_ctx = ctx

    def _mp_context(self):
        return self._mp_ctx if self._mp_ctx is not None else multiprocessing.get_context()

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def _make_resident(self, resident):
        if resident is not None and not isinstance(resident, bool):
            raise ArgumentTypeError(f"DataLoader: resident must be a bool or None, got {type(resident).__name__}")
        if self.device.type != "cuda" or resident is False:
            return None
        why = ("it needs num_workers=0" if self.num_workers else
               "it needs a map-style dataset with to(device) and __getitems__" if self._iterable or not (
                   hasattr(self.dataset, "to") and callable(getattr(self.dataset, "__getitems__", None))) else
               "it needs automatic batching and the default collate_fn"
               if self._host_collate_fn is not host_collate else None)
        if why is not None:
            if resident:
                raise ArgumentError(f"DataLoader: resident=True cannot apply to this loader: {why}")
            return None
        if resident is None:
            size = self.dataset.nbytes() if hasattr(self.dataset, "nbytes") else None
            with backend.cupy.cuda.Device(self.device.index):
                free = backend.cupy.cuda.runtime.memGetInfo()[0]
            if size is None or size > free // 2:
                return None
        return self.dataset.to(self.device)

    def _warn_worker_count(self):
        if not self.num_workers:
            return
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:
            cores = os.cpu_count()
        if cores is not None and self.num_workers > cores:
            warnings.warn(f"This DataLoader will create {self.num_workers} worker processes in total. The suggested "
                          f"max number of workers on this system is {cores}; excessive worker creation might make "
                          "the DataLoader slow or even freeze it.", stacklevel=3)

    # ---- iteration ------------------------------------------------------------------------
    def __len__(self):
        """Batches per epoch: ``len(batch_sampler)`` (or ``len(sampler)`` with
        ``batch_size=None``); for an IterableDataset, from ``len(dataset)`` (an estimate,
        as in PyTorch).

        Raises:
            TypeError: the sampler (or the iterable dataset) has no ``__len__``.
        """
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else math.ceil(n / self.batch_size)
            return n
        return len(self._index_sampler)

    def __iter__(self):
        """A new pass over the dataset (an epoch): a generator of batches."""
        gen = self.generator if self.generator is not None else default_generator
        resume, self._resume = self._resume, None
        reuse = self.num_workers > 0 and self.persistent_workers and self._iterator is not None \
            and not self._iterator.closed
        if resume is None:
            if not reuse:  # the workers' base seed, drawn per iterator as in PyTorch
                self._base_seed = int(host_generator(self.generator).integers(0, 2**63 - 1))
            self._epoch_rng, self._yielded = gen.get_state(), 0
            index_sampler = self._index_sampler
        else:
            index_sampler = self._rewind(gen, resume)
        if reuse:
            self._iterator.reset(index_sampler=index_sampler)
            return self._deliver(self._iterator)
        if self._resident is not None:
            return self._counted(_device.resident(self, index_sampler))
        if self.num_workers == 0:
            fetcher = make_fetcher(self._iterable, self.dataset, self._auto_collation, self._host_collate_fn,
                                   self.drop_last)
            return self._deliver(_single_process(fetcher, iter(index_sampler)))
        source = MultiProcessIter(self, self._base_seed, index_sampler)
        if self.persistent_workers:
            self._iterator = source
        return self._deliver(source)

    def _deliver(self, source):
        try:
            if self.device.type == "cuda":
                yield from self._counted(_device.staged(source, self.device))
            else:
                yield from self._counted(_device.on_device(source, self.device))
        finally:
            if isinstance(source, MultiProcessIter) and not self.persistent_workers:
                source.shutdown()

    def _counted(self, batches):
        """``batches``, counted for :meth:`state_dict`; the epoch is over when they run out."""
        for batch in batches:
            self._yielded += 1
            yield batch
        self._epoch_rng = None  # the epoch is complete: nothing to resume
