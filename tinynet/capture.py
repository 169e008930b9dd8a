"""What a CUDA graph capture in progress asks of the rest of tinynet.

While a graph is captured (``tinynet.cuda.graph``) nothing runs: each kernel launch is
recorded, and every replay runs the recording again. Three things need care, and the ops
ask for them here:

* **Host synchronisation** cannot be recorded (``.item()``, printing a tensor, copies to or
  from host memory, data-dependent shapes): :func:`check_sync` raises
  :class:`~tinynet.errors.GraphCaptureError` naming the op and the line of user code.
* **Numbers that change from step to step** must not be frozen into kernel arguments: the
  dropout generator's offset, an optimizer's learning rate and Adam's bias corrections.
  The kernel reads them from device *cells* (:meth:`Capture.cells`), 8-byte slots that
  every replay rewrites first, from a function run on the host at replay time
  (``fn(first)``; ``first`` is True for the first replay after the capture, which performs
  the step the capture recorded, so host counters that the capture advanced are not
  advanced twice). Settings read as plain arguments are *guarded*
  (:meth:`Capture.guard`): a replay after they changed raises instead of running stale.
* **Host state the capture changed** (gradients, optimizer state, the generator's offset)
  returns to what it was when the capture fails: :meth:`Capture.on_abort` journals it.

This module imports nothing from CuPy itself: the device cells are CuPy arrays made by the
caller's array module (``tinynet.cuda.graphs`` owns the capture and the replay).
"""
import os
import threading
import traceback
import weakref

import numpy

from .errors import GraphCaptureError

CHUNK = 64  # cells per device chunk: one host-to-device copy each before a replay
# callables run before a capture begins: host state that needs a synchronisation to settle
# (the optimizer's step counts after a replayed GradScaler step, tinynet/optim/amp_scaling.py)
before_capture: list = []


class _Local(threading.local):
    capture = None  # the default of every thread: a plain attribute read, no getattr fallback


_local = _Local()
# captures in progress in any thread of the process, and the lock under which other threads
# (the NCCL watchdog) make CUDA calls a capture in global mode forbids (event queries)
_active = [0]
foreign_calls = threading.Lock()
_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def current():
    """The :class:`Capture` in progress in this thread, or None."""
    return _local.capture


def user_line(tb=None):
    """``file:line: code`` of the innermost frame of user code: of the traceback ``tb``, or
    of the current stack. User code is a source file outside tinynet and outside installed
    packages (so neither tinynet's nor CuPy's frames)."""
    frames = traceback.extract_tb(tb) if tb is not None else traceback.extract_stack()[:-1]
    for f in reversed(frames):
        path = os.path.abspath(f.filename)
        if (os.path.isabs(f.filename) and not path.startswith(_PACKAGE + os.sep) and "-packages" not in path
                and "contextlib" not in path):
            return f"{f.filename}:{f.lineno}: {f.line}"
    return "<unknown line>"


def check_sync(op):
    """Raise :class:`GraphCaptureError` when ``op`` (which waits for the GPU or copies
    between host and device) is called while a CUDA graph is being captured."""
    if current() is not None:
        raise GraphCaptureError(
            f"{op}: synchronises the host with the GPU (or copies host memory), which a CUDA graph "
            f"cannot record; called during capture at {user_line()}. Move it out of the captured "
            f"code (e.g. read the loss after the replay).")


class Capture:
    """Bookkeeping of one capture: device cells rewritten before each replay, guards on
    frozen settings, the undo journal, and per-capture shared records."""

    def __init__(self, xp, alloc=None):
        self.xp = xp
        # chunks must not come from the graph's pool: a block that a temporary of the captured
        # step used and freed would be handed out again, and at a replay the temporary's
        # kernels (which run after the cells are filled) would overwrite the cells.
        self.alloc = alloc or (lambda: xp.empty(CHUNK, dtype=numpy.uint64))
        self.chunks = []      # device arrays of CHUNK uint64 cells
        self.slots = []       # (chunk index, start, count, fn)
        self.used = CHUNK     # cells used in the last chunk (full: a new one on demand)
        self.guards = []      # (what, fn, value at capture)
        self.undo = []
        self.shared = {}      # per-capture records keyed by their owner (the dropout generator)
        self.replay_hooks = {}  # owner key -> fn(stream, launched), run around each replay
        self.held = set()       # keys of outside resources the graph keeps alive (see hold)
        self._rows = None       # the host copy of every chunk's cells, as last uploaded
        self._last = []         # each slot's values at the last upload

    def cells(self, count, fn):
        """Reserve ``count`` (<= 64) device cells; returns the uint64 CuPy array holding them.

        Before each replay ``fn(first)`` runs on the host and returns ``count`` numbers;
        Python floats are stored as float64 bits (kernels read ``const double*``), ints
        as uint64. The array is made without a kernel (no zeroing recorded into the graph)
        and outside the graph's memory pool (see ``__init__``).
        """
        if count > CHUNK:
            raise ValueError(f"capture.cells: at most {CHUNK} cells per slot, asked for {count}")
        if count == 0:  # a replay hook only (e.g. advancing the optimizer's step counters)
            self.slots.append((None, 0, 0, fn))
            return None
        if self.used + count > CHUNK:
            self.chunks.append(self.alloc())
            self.used = 0
        start = self.used
        self.used += count
        self.slots.append((len(self.chunks) - 1, start, count, fn))
        return self.chunks[-1][start:start + count]

    def guard(self, what, fn):
        """Freeze the value of ``fn()`` now; :meth:`check_guards` raises when it changed."""
        self.guards.append((what, fn, fn()))

    def around_replay(self, key, fn):
        """Call ``fn(stream, launched)`` at each replay, once per ``key``: with
        ``launched=False`` before the graph is launched (it may raise to refuse the replay)
        and with ``launched=True`` right after (e.g. to record an event the NCCL watchdog
        waits on)."""
        self.replay_hooks.setdefault(key, fn)

    def hold(self, key):
        """Mark that the graph of this capture keeps an outside resource alive (an NCCL
        communicator counts every graph that captured one of its collectives and waits, on
        destruction, until each such graph is destroyed): :func:`release_graphs` drops it."""
        self.held.add(key)

    def on_abort(self, fn):
        """Run ``fn()`` when the capture fails (journal entries run newest first)."""
        self.undo.append(fn)

    def abort(self):
        for fn in reversed(self.undo):
            fn()
        self.undo.clear()

    # ---- replay side ---------------------------------------------------------------------
    def check_guards(self):
        for what, fn, value in self.guards:
            now = fn()
            if now != value:
                raise GraphCaptureError(
                    f"CUDAGraph.replay: {what} changed since the capture (captured {value!r}, now {now!r}); "
                    f"the graph froze it, so capture again (tinynet.compile does this by itself)")

    def cell_values(self, first):
        """The cells' new contents, one uint64 array of CHUNK values per chunk."""
        return [row for _, row in self.cell_updates(first, all_chunks=True)]

    def cell_updates(self, first, all_chunks=False):
        """``[(chunk index, uint64 row)]`` of the chunks whose contents changed since the
        last call (every chunk on the first replay, or with ``all_chunks``). Every slot's
        ``fn(first)`` runs (its host side effects, e.g. the optimizer's step counters, are
        part of the replay); only a slot whose values differ from last time is written, and
        only a chunk holding one is uploaded: a step whose learning rate did not change
        uploads just the dropout offsets."""
        rows = self._rows
        if rows is None or len(rows) != len(self.chunks):
            rows = self._rows = [numpy.zeros(CHUNK, dtype=numpy.uint64) for _ in self.chunks]
            self._last = [None] * len(self.slots)
            all_chunks = True
        last, changed = self._last, set()
        for i, (chunk, start, count, fn) in enumerate(self.slots):
            values = fn(first)
            if chunk is None or (values == last[i] and not all_chunks):
                continue
            last[i] = values
            row = rows[chunk]
            for k, v in enumerate(values):
                if isinstance(v, (float, numpy.floating)):
                    row[start + k] = numpy.float64(v).view(numpy.uint64)
                else:
                    row[start + k] = numpy.uint64(int(v) % 2**64)
            changed.add(chunk)
        if all_chunks:
            changed = set(range(len(rows)))
        return [(c, rows[c]) for c in sorted(changed)]


class capturing:
    """Make ``cap`` the capture in progress for this thread inside the block."""

    def __init__(self, cap):
        self.cap = cap

    def __enter__(self):
        if current() is not None:
            raise GraphCaptureError("tinynet.cuda.graph: a capture is already in progress in this thread "
                                    "(captures do not nest)")
        with foreign_calls:
            _active[0] += 1
        _local.capture = self.cap
        return self.cap

    def __exit__(self, *exc):
        _local.capture = None
        with foreign_calls:
            _active[0] -= 1
        return False


def any_active():
    """True while some thread of this process captures a CUDA graph (read it holding
    :data:`foreign_calls`, so that no capture starts before the caller's CUDA calls end)."""
    return _active[0] > 0


def grad_journal(leaf):
    """Journal ``leaf.grad`` before a backward pass or ``zero_grad`` replaces it during a capture."""
    cap = current()
    if cap is not None:
        old = leaf.grad
        cap.on_abort(lambda: setattr(leaf, "grad", old))


def concatenate(xp, arrays, axis=0):
    """``xp.concatenate(arrays, axis)`` that a CUDA graph capture can record: outside a
    capture the library's own call; during one, each array copied into its slice of a new
    output (CuPy's one-kernel concatenation of many arrays first copies a table of their
    addresses from host memory, which a capture cannot record). The arrays must share a
    dtype; the result is the same either way."""
    if _local.capture is None or len(arrays) < 2:
        return xp.concatenate(arrays, axis=axis)
    axis = axis % arrays[0].ndim
    shape = list(arrays[0].shape)
    shape[axis] = sum(a.shape[axis] for a in arrays)
    out = xp.empty(shape, dtype=arrays[0].dtype)
    index = [slice(None)] * len(shape)
    lo = 0
    for a in arrays:
        index[axis] = slice(lo, lo + a.shape[axis])
        out[tuple(index)] = a
        lo += a.shape[axis]
    return out


_holders: "weakref.WeakSet" = weakref.WeakSet()  # graphs whose capture holds an outside resource


def track(graph, cap):
    """Remember ``graph`` (an object with ``release(reason)``) when its finished capture
    ``cap`` holds an outside resource (:meth:`Capture.hold`)."""
    if cap.held:
        _holders.add(graph)


def release_graphs(key, reason):
    """Drop every live graph whose capture holds ``key`` (its replays then raise
    ``GraphCaptureError`` with ``reason``); returns how many were dropped. The NCCL group
    calls it before destroying its communicator, which would otherwise wait for ever on the
    graphs a user still holds (a ``tinynet.compile`` step alive at ``destroy_process_group``)."""
    dropped = [g for g in list(_holders) if key in g.held_keys()]
    for g in dropped:
        g.release(reason)
        _holders.discard(g)
    return len(dropped)
