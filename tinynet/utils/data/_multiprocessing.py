"""The main process's side of multi-process loading (``num_workers > 0``), after
PyTorch's ``_MultiProcessingDataLoaderIter``.

Each worker has its own index queue; all share one result queue. Batch ``k`` goes to
worker ``k mod num_workers`` (skipping workers whose iterable dataset is exhausted), at
most ``prefetch_factor`` batches per worker are in flight, and results that arrive out of
order wait until their turn, so batches come out in the sampler's order. While waiting,
the main process checks every ``POLL`` seconds that the workers are alive, and honours
``timeout``. Workers stop at the end of an epoch (or, with ``persistent_workers``, when
the loader is garbage-collected), when the iterator is closed or collected, and at exit.
"""
import io
import itertools
import os
import pickle
import queue
import threading
import time
import weakref
from multiprocessing.reduction import ForkingPickler

from ...errors import ArgumentTypeError, WorkerError
from . import _worker
from .collate import host_collate

POLL = 0.1          # seconds between liveness checks while waiting for a batch
JOIN_TIMEOUT = 2.0  # seconds a worker gets to finish its batch and exit before it is terminated
_env_lock = threading.Lock()


class _Sink:
    def write(self, data):
        return len(data)


def _check_picklable(name, obj, method):
    """Pickle ``obj`` into nothing (array buffers out of band: no copy), as a worker started
    with ``spawn``/``forkserver`` needs it; raise a typed error naming what failed."""
    pickler = pickle.Pickler(_Sink(), protocol=5, buffer_callback=lambda buf: False)
    pickler.dispatch_table = ForkingPickler(io.BytesIO()).dispatch_table  # copyreg's and multiprocessing's
    try:
        pickler.dump(obj)
    except Exception as exc:
        raise ArgumentTypeError(
            f"DataLoader: the {name} ({type(obj).__name__}) cannot be pickled, but worker processes started with "
            f"{method!r} receive it pickled: {type(exc).__name__}: {exc}. Make it picklable (no lambdas, locks, "
            "open files or local classes in it), or use multiprocessing_context='fork' or num_workers=0") from None


class _Pool:
    """The worker processes and their queues; ``shutdown`` is idempotent."""

    def __init__(self, workers, index_queues, result_queue):
        self.workers, self.index_queues, self.result_queue = workers, index_queues, result_queue
        self.closed = False

    def shutdown(self):
        if self.closed:
            return
        self.closed = True
        for q in self.index_queues:
            try:
                q.put(None)
            except Exception:
                pass
        deadline = time.monotonic() + JOIN_TIMEOUT
        for w in self.workers:
            w.join(max(0.0, deadline - time.monotonic()))
        for w in self.workers:
            if w.is_alive():  # still busy with a batch nobody will read
                w.terminate()
                w.join(JOIN_TIMEOUT)
        for q in self.index_queues + [self.result_queue]:
            q.cancel_join_thread()
            q.close()


class MultiProcessIter:
    """Host batches from worker processes, in order (see the module doc)."""

    def __init__(self, loader, base_seed, index_sampler=None):
        ctx = loader._mp_context()
        method = ctx.get_start_method()
        self._iterable = loader._iterable
        self._num_workers, self._timeout = loader.num_workers, loader.timeout
        self._prefetch, self._persistent = loader.prefetch_factor, loader.persistent_workers
        self._index_sampler = loader._index_sampler
        collate_fn = loader._host_collate_fn
        if method != "fork":
            _check_picklable("dataset", loader.dataset, method)
            if collate_fn is not host_collate:
                _check_picklable("collate_fn", collate_fn, method)
            if loader.worker_init_fn is not None:
                _check_picklable("worker_init_fn", loader.worker_init_fn, method)
        result_queue = ctx.Queue()
        workers, index_queues = [], []
        self._pool = _Pool(workers, index_queues, result_queue)
        self._finalizer = weakref.finalize(self, self._pool.shutdown)
        for i in range(self._num_workers):
            q = ctx.Queue()
            q.cancel_join_thread()
            w = ctx.Process(target=_worker.worker_loop, daemon=True,
                            args=(self._iterable, loader.dataset, q, result_queue, loader._auto_collation,
                                  collate_fn, loader.drop_last, base_seed, loader.worker_init_fn, i,
                                  self._num_workers, os.getpid()))
            self._start(w, method)
            workers.append(w)
            index_queues.append(q)
        self.reset(first=True, index_sampler=index_sampler)

    @staticmethod
    def _start(w, method):
        if method == "fork":
            w.start()
            return
        with _env_lock:  # a spawned worker imports tinynet: keep it off the GPU
            old = os.environ.get("TINYNET_BACKEND")
            os.environ["TINYNET_BACKEND"] = "numpy"
            try:
                w.start()
            finally:
                if old is None:
                    del os.environ["TINYNET_BACKEND"]
                else:
                    os.environ["TINYNET_BACKEND"] = old

    @property
    def closed(self):
        """True once the workers were stopped (after a dead worker, or ``shutdown``)."""
        return self._pool.closed

    @property
    def workers(self):
        """The worker processes (``multiprocessing.Process``)."""
        return list(self._pool.workers)

    def reset(self, first=False, index_sampler=None):
        """Start an epoch: a fresh pass over the index sampler (or over ``index_sampler``
        for this epoch only: a resumed one); persistent workers are told to start over, and
        whatever they still send from an abandoned epoch is dropped."""
        self._sampler_iter = iter(self._index_sampler if index_sampler is None else index_sampler)
        self._send_idx = self._rcvd_idx = self._outstanding = 0
        self._task_info = {}
        self._active = [True] * self._num_workers
        self._cycle = itertools.cycle(range(self._num_workers))
        if not first:
            for q in self._pool.index_queues:
                q.put(_worker.Resume())
            left = self._num_workers
            while left:
                idx, _ = self._get()
                if isinstance(idx, _worker.Resume):
                    left -= 1
        for _ in range(self._prefetch * self._num_workers):
            self._try_put()

    def shutdown(self):
        """Stop the workers (idempotent)."""
        self._finalizer()

    def __iter__(self):
        return self

    def _get(self):
        """The next ``(task number, payload)`` from any worker."""
        deadline = time.monotonic() + self._timeout if self._timeout > 0 else None
        while True:
            wait = POLL if deadline is None else max(0.0, min(POLL, deadline - time.monotonic()))
            try:
                return self._pool.result_queue.get(timeout=wait)
            except queue.Empty:
                pass
            dead = [w for i, w in enumerate(self._pool.workers) if self._active[i] and not w.is_alive()]
            if dead:
                self.shutdown()
                raise WorkerError("DataLoader worker (pid(s) " + ", ".join(str(w.pid) for w in dead) +
                                  ") exited unexpectedly (exit code(s) " +
                                  ", ".join(str(w.exitcode) for w in dead) + ")")
            if deadline is not None and time.monotonic() >= deadline:
                raise WorkerError(f"DataLoader timed out after {self._timeout} seconds")

    def _receive(self):
        idx, payload = self._get()
        try:
            return idx, pickle.loads(payload)
        except Exception as exc:
            raise WorkerError(f"DataLoader: a batch from a worker could not be unpickled in the main process: "
                              f"{type(exc).__name__}: {exc}") from exc

    def _try_put(self):
        if self._outstanding >= self._prefetch * self._num_workers:
            return
        try:
            index = next(self._sampler_iter)
        except StopIteration:
            return
        for _ in range(self._num_workers):
            w = next(self._cycle)
            if self._active[w]:
                break
        else:
            return
        self._pool.index_queues[w].put((self._send_idx, index))
        self._task_info[self._send_idx] = (w,)
        self._outstanding += 1
        self._send_idx += 1

    def _process(self, data):
        self._try_put()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return data

    def __next__(self):
        while True:
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._active[info[0]]:  # has its data, or will get it
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent:
                    self.shutdown()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._process(info[1])
            idx, data = self._receive()
            self._outstanding -= 1
            if isinstance(data, _worker.IterableStop):
                self._active[data.worker_id] = False
                self._try_put()
                continue
            if idx != self._rcvd_idx:
                self._task_info[idx] += (data,)
                continue
            del self._task_info[idx]
            self._rcvd_idx += 1
            return self._process(data)
