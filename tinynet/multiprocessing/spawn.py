"""``spawn`` / ``start_processes``: run ``fn(i, *args)`` in ``nprocs`` new processes, as
``torch.multiprocessing.spawn`` (the usual way to start one process per device).

Each child runs the function; an exception is caught there and its traceback sent back on an
error queue. :meth:`ProcessContext.join` waits for the children; when one fails it stops the
others and raises :class:`ProcessRaisedException` (the child raised: its traceback is in the
message) or :class:`ProcessExitedException` (it died, e.g. by a signal, or exited non-zero).
"""
import multiprocessing
import multiprocessing.connection
import signal
import time
import traceback

from ..errors import ArgumentError, ArgumentTypeError, WorkerError

__all__ = ["spawn", "start_processes", "ProcessContext", "ProcessRaisedException", "ProcessExitedException"]


class ProcessException(WorkerError):
    """A child of :func:`spawn` failed (PyTorch's ``ProcessException``)."""

    def __init__(self, msg, error_index, error_pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, error_pid


class ProcessRaisedException(ProcessException):
    """The child raised an exception; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """The child exited with a non-zero code or was killed by a signal."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name


def _wrap(fn, i, args, error_queue):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        error_queue.put(traceback.format_exc())
        raise SystemExit(1)


class ProcessContext:
    """The started children: ``processes``, ``pids()``, ``join(timeout)``."""

    def __init__(self, processes, error_queues):
        self.processes, self.error_queues = processes, error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Wait for the children (at most ``timeout`` seconds); True when all have finished.

        Raises:
            ProcessRaisedException, ProcessExitedException: a child failed (the others are
                terminated first). ArgumentTypeError: ``timeout`` is not a number.
        """
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))):
            raise ArgumentTypeError(f"ProcessContext.join: timeout must be a number or None, got "
                                    f"{type(timeout).__name__}")
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            alive = [p for p in self.processes if p.exitcode is None]
            failed = [i for i, p in enumerate(self.processes) if p.exitcode not in (None, 0)]
            if failed:
                self._stop()
                self._raise(failed[0])
            if not alive:
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            multiprocessing.connection.wait([p.sentinel for p in alive], timeout=0.1)

    def _stop(self):
        for p in self.processes:
            if p.exitcode is None:
                p.terminate()
        for p in self.processes:
            p.join(5)

    def _raise(self, i):
        p = self.processes[i]
        if not self.error_queues[i].empty():
            tb = self.error_queues[i].get()
            raise ProcessRaisedException(f"\n\n-- Process {i} terminated with the following error:\n{tb}", i, p.pid)
        code = p.exitcode
        if code < 0:
            name = signal.Signals(-code).name
            raise ProcessExitedException(f"process {i} terminated with signal {name}", i, p.pid, code, name)
        raise ProcessExitedException(f"process {i} terminated with exit code {code}", i, p.pid, code)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start ``nprocs`` processes running ``fn(i, *args)`` with the ``start_method``
    (``spawn``, ``fork``, ``forkserver``); wait for them when ``join``, else return the
    :class:`ProcessContext`.

    Raises:
        ArgumentError: ``nprocs`` below 1 or an unknown start method. ArgumentTypeError: ``fn``
            not callable, ``args`` not a tuple, ``nprocs`` not an int.
        ProcessRaisedException, ProcessExitedException: with ``join``, a child failed.
    """
    if not callable(fn):
        raise ArgumentTypeError(f"spawn: fn must be callable, got {type(fn).__name__}")
    if not isinstance(args, (tuple, list)):
        raise ArgumentTypeError(f"spawn: args must be a tuple, got {type(args).__name__}")
    if isinstance(nprocs, bool) or not isinstance(nprocs, int):
        raise ArgumentTypeError(f"spawn: nprocs must be an int, got {type(nprocs).__name__}")
    if nprocs < 1:
        raise ArgumentError(f"spawn: nprocs must be an int >= 1, got {nprocs!r}")
    if not isinstance(start_method, str) or start_method not in multiprocessing.get_all_start_methods():
        raise ArgumentError(f"spawn: start_method must be one of {multiprocessing.get_all_start_methods()}, "
                            f"got {start_method!r}")
    ctx = multiprocessing.get_context(start_method)
    processes, queues = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        processes.append(p)
        queues.append(q)
    context = ProcessContext(processes, queues)
    if not join:
        return context
    context.join()
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """:func:`start_processes` with PyTorch's ``spawn`` defaults (``start_method="spawn"``)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
