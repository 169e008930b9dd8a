"""What every backend provides: the process group (collectives on raw arrays), the handle of
an operation under way (:class:`Work`), the reductions (:class:`ReduceOp`), and the debug
check that all ranks pass matching tensors.

A backend's collectives take NumPy or CuPy arrays (C-contiguous, written in place) and
return a :class:`Work`; the public functions in :mod:`.collectives` wrap tensors around them.
"""
import atexit
import enum
import logging
import os
import sys
import time

import numpy

from ..errors import DistributedError

ABORT_GRACE = 3.0  # seconds a failed rank gives the others to report it before it ends the job


class ReduceOp(enum.Enum):
    """How :func:`~tinynet.distributed.all_reduce` and ``reduce_scatter`` combine the ranks'
    values (``torch.distributed.ReduceOp``): element-wise ``SUM``, ``PRODUCT``, ``MIN``,
    ``MAX``, and ``AVG`` (the sum divided by the world size; floating-point tensors only).
    PyTorch's bitwise ``BAND``/``BOR``/``BXOR`` and ``PREMUL_SUM`` are not provided."""

    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    AVG = "avg"


class Work:
    """An operation under way (``torch.distributed.Work``), returned by the collectives when
    ``async_op=True``.

    ``wait()`` returns once the result may be used: on the CPU (MPI) the values are in the
    tensors; with NCCL the current CUDA stream waits for the communication stream (the host
    does not block, as PyTorch). ``is_completed()`` asks without waiting.
    """

    def __init__(self, group, what, finish=None):
        self._group, self._what, self._finish, self._done = group, what, finish, False
        self._result = None  # the tensors the public collective wrote (get_future's value)

    def _wait(self):  # the backend's wait: raise DistributedError on failure or timeout
        raise NotImplementedError

    def _test(self):
        raise NotImplementedError

    def wait(self, timeout=None):
        """Wait for the operation (``timeout`` is accepted for PyTorch's sake; the process
        group's own timeout applies). Returns True.

        Raises:
            DistributedError: another rank failed or exited, or the group's timeout passed.
        """
        if not self._done:
            self._wait()
            self._done = True
            if self._finish is not None:
                finish, self._finish = self._finish, None
                finish()
        return True

    def is_completed(self):
        """True when :meth:`wait` would return at once."""
        return self._done or self._test()

    def get_future(self):
        """A :class:`tinynet.futures.Future` completed by this operation, whose value is the
        list of tensors it wrote (``[tensor]`` for ``all_reduce`` and ``broadcast``), as
        PyTorch's ``Work.get_future()``. Its callbacks run when it is waited for
        (``tinynet.futures`` says why)."""
        from ..futures import Future
        result = self._result if self._result is not None else []
        return Future._from_work(lambda: (self.wait(), result)[1], self.is_completed)


class DoneWork(Work):
    """An operation that needed no communication (a group of one process)."""

    def _wait(self):
        pass

    def _test(self):
        return True


class ProcessGroup:
    """The processes of one run and how they talk (one per backend).

    Attributes: ``rank``, ``size``, ``timeout`` (seconds), ``local_rank``, ``debug`` (check
    tensors across ranks before each collective), ``error`` (why the group is unusable, once
    a collective failed or timed out).
    """

    backend = ""
    notes = None        # the failure notes to and from the other ranks (post(kind, text))
    destroyed = False

    def __init__(self, rank, size, timeout, local_rank=0):
        self.rank, self.size, self.timeout, self.local_rank = rank, size, timeout, local_rank
        self.debug = debug_enabled()
        self.error = None

    def check(self, op):
        """Raise DistributedError when an earlier failure left the group unusable."""
        if self.error is not None:
            raise group_error(f"{op}: the process group is unusable after an earlier failure ({self.error}); "
                              "call destroy_process_group() and end the run")

    def fail(self, op, message):
        """Mark the group unusable and raise DistributedError naming ``op``."""
        self.error = message
        raise group_error(f"{op}: {message}")

    # collectives on arrays, each returning a Work (subclasses implement them)
    def all_reduce(self, array, op, what="all_reduce"):
        raise NotImplementedError

    def broadcast(self, array, src, what="broadcast"):
        raise NotImplementedError

    def all_gather(self, out, array, what="all_gather"):
        """``out`` (flat, ``size * array.size`` elements) receives every rank's ``array`` in rank order."""
        raise NotImplementedError

    def reduce_scatter(self, out, array, op, what="reduce_scatter"):
        """``array`` (flat, ``size * out.size``): this rank gets the reduction of block ``rank``."""
        raise NotImplementedError

    def barrier(self, what="barrier"):
        raise NotImplementedError

    def destroy(self):
        raise NotImplementedError

    def abort_job(self):
        """End the whole run after an uncaught error (MPI: ``MPI_Abort``); default: nothing,
        the process exits by itself."""


def debug_enabled():
    """``TINYNET_DISTRIBUTED_DEBUG=1`` (or PyTorch's ``TORCH_DISTRIBUTED_DEBUG=DETAIL``)."""
    mine = os.environ.get("TINYNET_DISTRIBUTED_DEBUG", "").strip().lower()
    torch_style = os.environ.get("TORCH_DISTRIBUTED_DEBUG", "").strip().upper()
    return mine in ("1", "true", "yes", "detail") or torch_style == "DETAIL"


_DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool", "bfloat16",
           "uint16", "uint32", "uint64", "complex64", "complex128"]
_KINDS = ["all_reduce", "broadcast", "all_gather", "reduce_scatter", "barrier"]
_OPS = [None] + list(ReduceOp)
_MAX_DIMS = 8


def _fingerprint(what, array, op=None, src=-1):
    """One int64 row describing a collective call: which, reduction, root, dtype and shape."""
    row = numpy.full(5 + _MAX_DIMS, -1, dtype=numpy.int64)
    name = str(array.dtype) if array is not None else "none"
    row[0] = _KINDS.index(what) if what in _KINDS else 99
    row[1] = _OPS.index(op)
    row[2] = src
    row[3] = _DTYPES.index(name) if name in _DTYPES else 99
    shape = tuple(array.shape) if array is not None else ()
    row[4] = len(shape)
    for i, n in enumerate(shape[:_MAX_DIMS]):
        row[5 + i] = n
    return row


def _describe(row):
    kind = _KINDS[row[0]] if row[0] < len(_KINDS) else "?"
    op = _OPS[row[1]]
    dtype = _DTYPES[row[3]] if 0 <= row[3] < len(_DTYPES) else "?"
    shape = tuple(int(n) for n in row[5:5 + min(int(row[4]), _MAX_DIMS)])
    extra = f" op={op.name}" if op is not None else ""
    extra += f" src={int(row[2])}" if row[2] >= 0 else ""
    return f"{kind}{extra} {dtype} {shape}"


def check_same(group, what, array, op=None, src=-1):
    """Debug mode: all-gather each rank's fingerprint of this call and raise DistributedError
    (on every rank alike) when the collective, reduction, root, dtype or shape differ."""
    row = _fingerprint(what, array, op, src)
    rows = numpy.empty(group.size * row.size, dtype=numpy.int64)
    group.all_gather(rows, row, what="debug check").wait()
    rows = rows.reshape(group.size, row.size)
    if (rows == rows[0]).all():
        return
    listing = "; ".join(f"rank {r}: {_describe(rows[r])}" for r in range(group.size))
    raise DistributedError(f"{what}: the ranks called mismatching collectives (TINYNET_DISTRIBUTED_DEBUG): {listing}")


def poll_until(done, group, what, extra_check=None):
    """Wait until ``done()`` is true: spin for a moment, then sleep a little longer each time
    (at most 1 ms), so a waiting rank leaves the CPU to the others. ``extra_check()`` runs on
    each round (it raises on a peer's failure). Raises DistributedError after the group's
    timeout, marking the group unusable."""
    if done():
        return
    start = time.monotonic()
    deadline = start + group.timeout
    while True:
        if done():
            return
        if extra_check is not None:
            extra_check()
        now = time.monotonic()
        if now > deadline:
            group.fail(what, f"no answer from the other ranks within the timeout of {group.timeout:g} s (rank "
                             f"{group.rank} of {group.size}): a rank has probably failed, hangs or skipped this "
                             "collective; set timeout= in init_process_group() to wait longer")
        elapsed = now - start
        if elapsed > 2e-4:
            time.sleep(min(elapsed / 10, 1e-3))


_log = logging.getLogger("tinynet.distributed")


def report(message):
    """A line from this rank (what the excepthook and the watchdog say), through the
    ``tinynet.distributed`` logger at ERROR level: on stderr unless logging is configured."""
    _log.error("tinynet.distributed: %s", message)


# ---- what happens when this rank fails or leaves ---------------------------------------
_hooks = {"group": None, "previous": None}


def group_error(message):
    """A DistributedError that the group itself raises (another rank failed or left, the
    timeout, the transport): the excepthook does not pass it on to the other ranks as this
    rank's own failure, which a DistributedError raised elsewhere (a bad DDP hook, ZeRO's
    parameter check) is."""
    exc = DistributedError(message)
    exc._from_group = True
    return exc


def _excepthook(exc_type, exc, tb):
    """An uncaught error on this rank: print it, tell the other ranks (unless it came from
    them), give them a moment to report it, then end the run."""
    group = _hooks["group"]
    previous = _hooks["previous"] or sys.__excepthook__
    previous(exc_type, exc, tb)
    if group is None or group.destroyed:
        return
    if not getattr(exc, "_from_group", False):  # this rank failed first
        group.notes.post("failed", f"{exc_type.__name__}: {exc}"[:1800])
        report(f"rank {group.rank} failed; ending the run in {ABORT_GRACE:g} s")
        time.sleep(ABORT_GRACE)
    else:
        report(f"rank {group.rank} stops: {exc}")
    group.abort_job()


def _atexit():
    group = _hooks["group"]
    if group is not None and not group.destroyed:
        group.notes.post("exited", f"rank {group.rank}")


def install_failure_hooks(group):
    """Install the excepthook and the exit note for ``group`` (once per process)."""
    if _hooks["previous"] is None and sys.excepthook is not _excepthook:
        _hooks["previous"] = sys.excepthook
        sys.excepthook = _excepthook
        atexit.register(_atexit)
    _hooks["group"] = group


def remove_failure_hooks(group):
    if _hooks["group"] is group:
        _hooks["group"] = None
