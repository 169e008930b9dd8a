"""``tinynet.futures``: the result of work that finishes later (``torch.futures``'s names).

A :class:`Future` holds a value that is set once -- by :meth:`Future.set_result`, or by the
operation behind it (a collective started with ``async_op=True``: ``Work.get_future()``).
:meth:`Future.then` chains a callback and returns the Future of its result; the
communication hooks of ``DistributedDataParallel`` return such chains
(``tinynet.distributed.algorithms.ddp_comm_hooks``).

One difference from PyTorch: tinynet's collectives finish by being waited for (MPI
requests are polled by the waiting thread; NCCL work makes the current CUDA stream wait),
not on a background thread, so the callbacks of a Future backed by a collective run when
someone asks for the result -- :meth:`~Future.wait`, :meth:`~Future.value` after it, or
:meth:`~Future.done` once the operation has finished -- rather than the moment it ends.
The values and the order of the callbacks are PyTorch's.
"""
import threading

from .errors import FutureError

__all__ = ["Future", "collect_all", "wait_all"]


class Future:
    """A value available later (``torch.futures.Future``).

    Args:
        devices (list, optional): accepted for PyTorch's sake (the CUDA devices whose streams
            the value lives on); tinynet keeps no per-device events here. Default None.

    A Future made by ``Future()`` is completed by :meth:`set_result` or
    :meth:`set_exception`; one returned by ``Work.get_future()`` or :meth:`then` completes
    when the work behind it is waited for.
    """

    def __init__(self, *, devices=None):
        self._done = False
        self._value = None
        self._error = None
        self._callbacks = []
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._source = None   # (wait, ready): finish the work behind this Future and return its value

    @classmethod
    def _from_work(cls, wait, ready):
        """A Future whose value is ``wait()``'s (called once), ready when ``ready()`` is."""
        fut = cls()
        fut._source = (wait, ready)
        return fut

    # ---- asking ----------------------------------------------------------------------------
    def done(self):
        """True when the value (or an error) is there: set, or the work behind it finished.
        Does not block."""
        if not self._done and self._source is not None and self._source[1]():
            self._resolve()
        return self._done

    def wait(self):
        """Block until the value is there and return it.

        Raises:
            the exception the Future was completed with (a failed collective's
            DistributedError, or what a :meth:`then` callback raised).
        """
        if not self._done:
            if self._source is not None:
                self._resolve()
            else:
                self._event.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        """The value of a completed Future (after :meth:`wait`, or in a :meth:`then`
        callback); re-raises the exception it was completed with.

        Raises:
            FutureError: the Future is not completed yet.
        """
        if not self.done():
            raise FutureError("Future.value: the Future is not completed yet; call wait() first, or read it in a "
                              "then() callback")
        if self._error is not None:
            raise self._error
        return self._value

    # ---- chaining --------------------------------------------------------------------------
    def then(self, callback):
        """A new Future holding ``callback(self)``'s result once this one completes; an
        exception raised by ``callback`` completes the new Future with that exception.

        Raises:
            FutureError: ``callback`` is not callable.
        """
        if not callable(callback):
            raise FutureError(f"Future.then: callback must be callable, got {type(callback).__name__}")

        def wait():
            try:
                self.wait()
            except Exception:  # the callback sees the failed Future, as in PyTorch
                pass
            return callback(self)
        return Future._from_work(wait, self.done)

    def add_done_callback(self, callback):
        """Run ``callback(self)`` once this Future completes (at once when it already has);
        its result is dropped, and what it raises is dropped too (PyTorch logs it)."""
        if not callable(callback):
            raise FutureError(f"Future.add_done_callback: callback must be callable, got {type(callback).__name__}")
        with self._lock:
            if not self._done:
                self._callbacks.append(callback)
                return
        _run_quietly(callback, self)

    # ---- completing ------------------------------------------------------------------------
    def set_result(self, result):
        """Complete the Future with ``result``.

        Raises:
            FutureError: it was completed already.
        """
        self._complete(result, None, "set_result")

    def set_exception(self, result):
        """Complete the Future with the exception ``result`` (raised by :meth:`wait`).

        Raises:
            FutureError: ``result`` is not an exception, or the Future was completed already.
        """
        if not isinstance(result, BaseException):
            raise FutureError(f"Future.set_exception: expected an exception, got {type(result).__name__}")
        self._complete(None, result, "set_exception")

    def _resolve(self):
        wait, _ = self._source
        self._source = None
        try:
            value, error = wait(), None
        except Exception as exc:
            value, error = None, exc
        self._complete(value, error, None)

    def _complete(self, value, error, op):
        with self._lock:
            if self._done or (op is not None and self._source is not None):
                raise FutureError(f"Future.{op}: the Future can only be marked completed once")
            self._value, self._error, self._done = value, error, True
            callbacks, self._callbacks = self._callbacks, []
        self._event.set()
        for cb in callbacks:
            _run_quietly(cb, self)

    def __repr__(self):
        return f"<tinynet.futures.Future {'done' if self._done else 'pending'}>"


def _run_quietly(callback, fut):
    try:
        callback(fut)
    except Exception:  # noqa: S110  (add_done_callback's errors do not propagate, as in PyTorch)
        pass


def collect_all(futures):
    """A Future of the list ``futures`` itself, completed when every one of them is.

    Raises:
        FutureError: ``futures`` is not a list of Futures.
    """
    futures = _futures("collect_all", futures)

    def wait():
        for f in futures:
            try:
                f.wait()
            except Exception:
                pass
        return futures
    return Future._from_work(wait, lambda: all(f.done() for f in futures))


def wait_all(futures):
    """Wait for every Future in ``futures`` and return their values, in order.

    Raises:
        the first exception among them; FutureError: not a list of Futures.
    """
    return [f.wait() for f in _futures("wait_all", futures)]


def _futures(op, futures):
    if not isinstance(futures, (list, tuple)) or not all(isinstance(f, Future) for f in futures):
        raise FutureError(f"{op}: expected a list of tinynet.futures.Future, got {futures!r:.80}")
    return list(futures)
