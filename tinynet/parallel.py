"""Intra-op parallelism for the NumPy backend: a pool of worker threads that tinynet's
heavy CPU ops (convolution, max pooling, large matrix products) split their work over.

Why tinynet keeps its own pool instead of letting OpenBLAS thread each matrix product:
OpenBLAS splits every product statically between its threads and synchronises them
several times inside it, so when one core is slowed for a moment (another tenant of a
shared host, another process) the whole product waits for it. On the 2-core CI machine
this made the reference convnet's training step at batch 200 swing between 15 and
30 ms, while single-threaded steps stayed at 16-21 ms (``benchmarks/NOTES.md``).
Here an op cuts its work into independent items (blocks of output rows, groups of
channels), and the calling thread and the workers claim items one at a time until none
are left (dynamic scheduling): a slow or busy core just claims fewer. The heavy part of
each item is a NumPy call that releases the GIL (a BLAS product, a copy, a ufunc), so
the threads run in parallel.

While tinynet's pool has more than one thread -- from import on --, the BLAS libraries
NumPy loaded (found through ``threadpoolctl``) are held to one thread each, process-wide, as
``torch.set_num_threads`` sets PyTorch's: the two kinds of threading must not compete
for the cores. Toggling BLAS threading per region measured 1.6x slower at batch 200
(OpenBLAS's idle threads spin for a while after each threaded product and crowd out
tinynet's workers). Holding them from import on, rather than from the first parallel
region, also keeps every product of a run on one code path: OpenBLAS rounds a product
differently with one thread and with several, so a run that began with threaded BLAS
did not repeat bit for bit (and a resumed run would not match an uninterrupted one).
Large products that are not part of a split op go through :func:`matmul`.
``set_num_threads(1)`` gives the BLAS libraries back the thread counts they had, and
tinynet's ops then run their items in order on the calling thread.

The number of threads is ``TINYNET_NUM_THREADS`` (read once at import), else the number
of CPUs this process may run on (``os.sched_getaffinity``, or ``os.cpu_count()``).
"""
import itertools
import os
import queue
import threading

import numpy

from .errors import BackendError

__all__ = ["get_num_threads", "set_num_threads", "parallel_for", "submit", "pieces", "ranges", "matmul"]

ITEM_MIN_BYTES = 3 * 2**20  # an item should touch at least this much memory: see pieces()
ITEM_MIN_MACS = 2**23  # a block of a split product does at least this many multiply-adds: see matmul()
BALANCE_MACS = 2**28  # from this much work per thread on, a split product takes two blocks per thread
COLUMNS_OVER_ROWS = 3  # a product with more than this many output columns per row is cut into column blocks


def _default_threads():
    raw = os.environ.get("TINYNET_NUM_THREADS")
    if raw is not None:
        try:
            n = int(raw)
        except ValueError:
            n = 0
        if n < 1:
            raise BackendError(f"TINYNET_NUM_THREADS: expected a positive integer, got {raw!r}")
        return n
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


_num_threads = _default_threads()
_workers: list = []       # one SimpleQueue per started worker thread
_local = threading.local()
_pool_lock = threading.Lock()
_held = None           # [(threadpoolctl controller of a BLAS library, its own thread count)]


def get_num_threads():
    """Threads tinynet's CPU ops use (int, >= 1), as ``torch.get_num_threads``."""
    return _num_threads


def set_num_threads(num_threads):
    """Set the number of threads tinynet's CPU ops use, as ``torch.set_num_threads``.

    Args:
        num_threads (int): >= 1. With 1, ops run their items in order on the calling
            thread and the BLAS libraries get back the thread counts they had before
            tinynet held them to one.

    Raises:
        TypeError: ``num_threads`` is not an int.
        ValueError: ``num_threads < 1``.
    """
    global _num_threads
    if not isinstance(num_threads, int) or isinstance(num_threads, bool):
        raise TypeError(f"set_num_threads: expected an int, got {type(num_threads).__name__}")
    if num_threads < 1:
        raise ValueError(f"set_num_threads: expected num_threads >= 1, got {num_threads}")
    with _pool_lock:
        _num_threads = num_threads
        if num_threads == 1:
            _release_blas()
        else:
            _hold_blas()


def _hold_blas():
    """Hold every loaded BLAS library to one thread, remembering the counts they had
    (done once, at import or when ``set_num_threads`` raises the count above one)."""
    global _held
    if _held is not None:
        return
    try:
        from threadpoolctl import ThreadpoolController
        libs = ThreadpoolController().select(user_api="blas").lib_controllers
    except Exception:  # threadpoolctl missing or unable to inspect this platform
        libs = []
    _held = [(lib, lib.num_threads) for lib in libs]
    for lib, _ in _held:
        lib.set_num_threads(1)


def _release_blas():
    """Give the BLAS libraries back the thread counts they had before :func:`_hold_blas`."""
    global _held
    for lib, n in _held or ():
        lib.set_num_threads(n)
    _held = None


class _Job:
    """One ``parallel_for`` call: items are claimed from a shared counter until none are
    left; the caller waits only for items another thread has claimed."""
    __slots__ = ("fn", "count", "claims", "results", "left", "done", "error")

    def __init__(self, fn, count):
        self.fn, self.count = fn, count
        self.claims = itertools.count()  # next() is atomic under the GIL
        self.results = [None] * count
        self.left = count
        self.done = threading.Condition(threading.Lock())
        self.error = None

    def work(self):
        _local.busy = True
        try:
            while True:
                i = next(self.claims)
                if i >= self.count:
                    return
                try:
                    self.results[i] = self.fn(i)
                except BaseException as e:  # handed to the caller, which re-raises it
                    self.error = self.error or e
                with self.done:
                    self.left -= 1
                    if not self.left:
                        self.done.notify_all()
        finally:
            _local.busy = False

    def wait(self):
        with self.done:
            while self.left:
                self.done.wait()


class _Task:
    """One :func:`submit` call: ``fn()`` run once, on a worker or (one thread) on the caller."""
    __slots__ = ("fn", "result", "error", "done")

    def __init__(self, fn):
        self.fn, self.result, self.error = fn, None, None
        self.done = threading.Event()

    def work(self):
        _local.busy = True  # a parallel_for inside runs its items in order here
        try:
            self.result = self.fn()
        except BaseException as e:  # handed to whoever waits, which re-raises it
            self.error = e
        finally:
            _local.busy = False
            self.done.set()

    def wait(self):
        """Block until the task has run; return its result (or raise its error)."""
        self.done.wait()
        if self.error is not None:
            raise self.error
        return self.result


def submit(fn):
    """Run ``fn()`` on the pool's first worker while the caller goes on; returns a task whose
    ``wait()`` gives the result. Tasks submitted one after another run in that order (one
    worker takes them all), so a chain of tasks adding into one array adds in a fixed order.
    With one thread, or from inside an item or a task, ``fn`` runs at once on the caller.

    For work off the caller's critical path: an LSTM layer's backward hands the weight
    gradient of each block of steps to it while it walks the remaining steps.
    """
    task = _Task(fn)
    if _num_threads == 1 or getattr(_local, "busy", False):
        task.work()
        return task
    with _pool_lock:
        _start_workers()
        first = _workers[0]
    first.put(task)
    return task


def _start_workers():
    """Hold BLAS to one thread and start the workers not started yet (under ``_pool_lock``)."""
    _hold_blas()
    while len(_workers) < _num_threads - 1:
        inbox = queue.SimpleQueue()
        threading.Thread(target=_worker, args=(inbox,), daemon=True, name="tinynet-worker").start()
        _workers.append(inbox)


def _worker(inbox):
    while True:
        inbox.get().work()


def _after_fork_in_child():
    """A forked child (e.g. a DataLoader worker) has none of the parent's threads: start
    its own pool when it first needs one."""
    global _workers, _pool_lock
    _workers, _pool_lock = [], threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def pieces(count, nbytes):
    """How many items to cut ``count`` units (rows, channels, samples) touching ``nbytes``
    bytes in all into: about two per thread, so a slow core takes fewer, but none under
    ``ITEM_MIN_BYTES``. Each item has a fixed cost (its NumPy calls, a hand-off between
    threads: 10-40 us on the 2-core CI machine), and below that size OpenBLAS's own
    threads inside one product did better: on the reference convnet at batch 64, whose
    passes touch 1.5-4 MB, splitting them (1 MiB items) made the training step 1.1x
    slower than leaving them whole, while at batch 200 (4-13 MB) splitting made it
    1.2-1.3x faster. Returns an int in [1, count] (1 for count 0).
    """
    if _num_threads == 1:
        return 1
    return max(1, min(count, 2 * _num_threads, nbytes // ITEM_MIN_BYTES))


def ranges(count, nbytes, xp=numpy):
    """``range(count)`` cut into :func:`pieces` near-equal ``(lo, hi)`` ranges, one per
    item; a single range when ``xp`` is not NumPy (CuPy ops are not split: the current
    device and stream are per thread)."""
    parts = pieces(count, nbytes) if xp is numpy else 1
    return [(count * i // parts, count * (i + 1) // parts) for i in range(parts)]


def parallel_for(count, fn, xp=numpy):
    """Call ``fn(i)`` for every ``i`` in ``range(count)``, spread over the pool's threads;
    return the results as a list in index order.

    Items must be independent (no two may write the same memory). The calling thread
    claims items too. Called from inside an item, with one thread, for a single item, or
    with ``xp`` other than NumPy (work on CuPy arrays), it runs the items in order on the
    calling thread.

    Raises:
        Whatever ``fn`` raised (the first error), after every claimed item has finished.
    """
    if count <= 1 or _num_threads == 1 or xp is not numpy or getattr(_local, "busy", False):
        return [fn(i) for i in range(count)]
    with _pool_lock:
        _start_workers()
        helpers = _workers[:min(_num_threads, count) - 1]
    job = _Job(fn, count)
    for inbox in helpers:
        inbox.put(job)
    job.work()
    job.wait()
    if job.error is not None:
        raise job.error
    return job.results


def matmul(a, b, out=None, bias=None):
    """``a @ b`` (``+ bias``), with a 2-D NumPy product of at least two items' work split over the pool's threads.

    The output's rows (its columns when there are more than ``COLUMNS_OVER_ROWS`` times as
    many) are cut into one block per thread, two per thread from ``BALANCE_MACS`` per thread
    on (so that a slow core takes fewer), each block of at least ``ITEM_MIN_MACS`` multiply-adds
    (~140 us on one core of the 2-core machine, where handing an item to a sleeping worker costs
    50-60 us, more while other processes share the cores: at 2^22 the MLP's batch-64 (64, 784) x
    (784, 256) products went in 3 blocks and its CPU step took 1.02 ms against 0.81 ms whole);
    each block is one BLAS call writing its slice of the result. Every block packs the whole
    other operand again, and a column block writes strided rows: on the idle 2-core machine
    a (700, 200) x (200, 600) product took 0.56 ms in two row blocks, 0.61 ms in the four
    column blocks of the earlier longer-axis rule and 0.85 ms whole; a (350, 200) x (200, 7141)
    one 2.9 ms in two column blocks against 3.5 ms in two row blocks. A product is
    compute-bound, so its work, not its bytes, decides
    (a GPT's (1024, 128) x (128, 384) layer moves 2.3 MB but takes 0.6 ms on one core; an
    LSTM step's (20, 200) x (200, 800) takes 55 us, and split in two took 115 us). Everything
    else (CuPy arrays, batched or 1-D operands, mixed dtypes, products too small to split,
    one thread) is a plain ``a @ b``.

    Args:
        a: (M, K) array. b: (K, N) array.
        out: optional C-contiguous (M, N) NumPy array of their dtype to write into.
        bias: optional (N,) array added to every row in place after the product (``y += bias``,
            the same sums), by each block to its own part while that is still in cache: a
            linear layer's (700, 7141) output took 1.2 ms to add its bias to on one thread.

    Returns:
        (M, N) array (C-ordered when split; ``out`` when given).

    Raises:
        ValueError: from ``@`` when the inner dimensions differ.
    """
    if (_num_threads == 1 or type(a) is not numpy.ndarray or type(b) is not numpy.ndarray
            or a.ndim != 2 or b.ndim != 2):
        return _plus(a @ b if out is None else numpy.matmul(a, b, out=out), bias)
    (m, k), n = a.shape, b.shape[1]
    work = m * k * n
    parts = 1
    if work >= 2 * ITEM_MIN_MACS and a.dtype == b.dtype and a.dtype.kind in "fc" and k == b.shape[0]:
        along_rows = n <= COLUMNS_OVER_ROWS * m
        count = m if along_rows else n
        per_thread = 2 if work >= BALANCE_MACS * _num_threads else 1
        parts = max(1, min(count, per_thread * _num_threads, work // ITEM_MIN_MACS))
    if parts == 1:
        return _plus(a @ b if out is None else numpy.matmul(a, b, out=out), bias)
    blocks = [(count * i // parts, count * (i + 1) // parts) for i in range(parts)]
    out = numpy.empty((m, n), dtype=a.dtype) if out is None else out

    def block(i):
        lo, hi = blocks[i]
        if along_rows:
            _plus(numpy.matmul(a[lo:hi], b, out=out[lo:hi]), bias)
        else:
            _plus(numpy.matmul(a, b[:, lo:hi], out=out[:, lo:hi]), None if bias is None else bias[lo:hi])

    parallel_for(parts, block)
    return out


def _plus(y, bias):
    if bias is not None:
        y += bias
    return y


def pair_worth(g, w):
    """True when a linear layer's two backward products, ``g @ w`` and ``g^T x`` (each
    ``rows x out x in`` multiply-adds), are worth running side by side, one per thread: NumPy
    arrays, more than one thread, each product at least ``ITEM_MIN_MACS``."""
    return (_num_threads > 1 and type(g) is numpy.ndarray and type(w) is numpy.ndarray and g.ndim == 2
            and g.shape[0] * w.shape[0] * w.shape[1] >= ITEM_MIN_MACS)


if _num_threads > 1:  # one BLAS code path for the whole run (see the module docstring)
    _hold_blas()
