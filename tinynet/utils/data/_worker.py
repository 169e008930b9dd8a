"""What runs inside a DataLoader worker process, and ``get_worker_info``.

A worker reads ``(task number, indices)`` from its index queue, fetches and collates the
batch on the host (NumPy arrays in CPU tensors: a worker never touches CUDA, and its
default device is the CPU even when the parent's is a GPU), pickles it itself (so an
unpicklable batch becomes an error message instead of a silently dropped batch) and puts
``(task number, bytes)`` on the shared result queue. Errors travel as
:class:`ExceptionWrapper` (the type and the formatted traceback) and are raised again in
the main process. A worker exits on ``None``, or when its parent process is gone.
"""
import dataclasses
import os
import pickle
import queue
import random
import sys
import traceback

import numpy

from ...errors import WorkerError
from ._fetch import make_fetcher

__all__ = ["WorkerInfo", "get_worker_info"]

CHECK_INTERVAL = 2.0  # seconds between a waiting worker's checks that its parent is alive
_info = None


@dataclasses.dataclass(frozen=True)
class WorkerInfo:
    """What :func:`get_worker_info` returns in a worker (read-only, as PyTorch's).

    Attributes:
        id (int): this worker's number, ``0 .. num_workers - 1``.
        num_workers (int): how many workers the DataLoader runs.
        seed (int): the seed this worker's ``random``, NumPy global and tinynet default
            generators were seeded from (``base_seed + id``; ``base_seed`` is drawn from the
            loader's generator when the workers start).
        dataset: this process's copy of the dataset.
    """

    id: int
    num_workers: int
    seed: int
    dataset: object


def get_worker_info():
    """The :class:`WorkerInfo` of the current DataLoader worker process; ``None`` in the
    main process. Use it in an IterableDataset's ``__iter__`` to give each worker its share,
    or in ``worker_init_fn`` to set each worker up."""
    return _info


@dataclasses.dataclass(frozen=True)
class IterableStop:
    """A worker's iterable dataset is exhausted."""
    worker_id: int


class Resume:
    """Start a new epoch (persistent workers); the worker echoes it back."""


class _KeyErrorMessage(str):
    """KeyError prints ``repr`` of its argument; this keeps the traceback readable."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception raised in a worker: its type and formatted traceback (call inside
    ``except``)."""

    def __init__(self, where):
        exc_type, exc, tb = sys.exc_info()
        self.exc_type, self.type_name = exc_type, exc_type.__name__
        self.text = "".join(traceback.format_exception(exc_type, exc, tb))
        self.where = where

    def reraise(self):
        """Raise the worker's exception type again with the worker's traceback as message
        (a :class:`WorkerError` when that type cannot be rebuilt from a message)."""
        msg = f"Caught {self.type_name} {self.where}.\nOriginal {self.text}"
        if self.exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exc = self.exc_type(msg) if self.exc_type is not None else None
        except Exception:
            exc = None
        if exc is None:
            raise WorkerError(msg) from None
        raise exc from None


def _dumps(data, worker_id):
    try:
        return pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        if not isinstance(data, ExceptionWrapper):
            data = ExceptionWrapper(f"in DataLoader worker process {worker_id} while pickling a batch to send it to "
                                    "the main process")
    try:
        return pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # the exception's type itself is not picklable (a class defined in a function)
        data.exc_type = None
        return pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL)


def _host_only():
    """Make the CPU this process's default device (a forked child must not use CUDA) and
    run tinynet's CPU ops on one thread, as PyTorch's workers do."""
    from ... import backend, parallel
    backend.name, backend.xp = "numpy", numpy
    try:
        parallel.set_num_threads(1)
    except Exception:  # pragma: no cover - best effort
        pass


def _seed(base_seed, worker_id):
    from ...random import manual_seed
    seed = base_seed + worker_id
    random.seed(seed)
    numpy.random.seed(numpy.random.SeedSequence([worker_id, base_seed]).generate_state(4))
    manual_seed(seed)
    return seed


def worker_loop(iterable, dataset, index_queue, result_queue, auto_collation, collate_fn, drop_last, base_seed,
                init_fn, worker_id, num_workers, parent_pid):
    """The body of worker process ``worker_id``."""
    global _info
    try:
        _host_only()
        _info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=_seed(base_seed, worker_id), dataset=dataset)
        where = f"in DataLoader worker process {worker_id}"
        fetcher, init_error = None, None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
        except Exception:
            init_error = ExceptionWrapper(where)
        ended = False
        while True:
            try:
                r = index_queue.get(timeout=CHECK_INTERVAL)
            except queue.Empty:
                if os.getppid() != parent_pid:  # the main process died: do not linger as an orphan
                    break
                continue
            if r is None:
                break
            if isinstance(r, Resume):
                ended = False
                try:
                    fetcher = make_fetcher(iterable, dataset, auto_collation, collate_fn, drop_last)
                except Exception:
                    init_error = ExceptionWrapper(where)
                result_queue.put((r, None))
                continue
            if ended:  # the main process stops asking once it has seen IterableStop
                continue
            idx, index = r
            if init_error is not None:
                data, init_error = init_error, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if not iterable:
                        data = ExceptionWrapper(where)
                    else:
                        data, ended = IterableStop(worker_id), True
                except Exception:
                    data = ExceptionWrapper(where)
            result_queue.put((idx, _dumps(data, worker_id)))
            del data, r, index
    except KeyboardInterrupt:  # the main process gets it too and shuts the workers down
        pass
    result_queue.cancel_join_thread()  # results nobody will read must not keep this process alive
