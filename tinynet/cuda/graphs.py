"""CUDA graphs with ``torch.cuda``'s names: :class:`CUDAGraph`, :class:`graph`,
:func:`graph_pool_handle`, :func:`is_current_stream_capturing`.

A CUDA graph records the kernels that a block of code launches on a stream (stream
capture) and launches them all again with one call (``cudaGraphLaunch``), so a step that
takes a millisecond of Python takes a few microseconds of host time per replay. Nothing
runs while capturing; :meth:`CUDAGraph.replay` runs the recorded work.

What tinynet adds to CuPy's capture (``cupy.cuda.Stream.begin_capture``):

* a **private memory pool** per graph (or shared through ``pool=``): every array made
  during the capture comes from it, so nothing allocated outside can take the graph's
  buffers; the pool's free blocks go back to the GPU when the graph is reset or dropped;
* **device cells** for numbers that change between replays (``tinynet/capture.py``):
  dropout masks differ at every replay and equal the eager run's for one seed; the
  learning rate, momentum and Adam's bias corrections follow the scheduler;
* **guards** on settings a replay cannot change (e.g. Adadelta's ``lr``): a replay after
  they changed raises :class:`~tinynet.errors.GraphCaptureError`;
* **clear errors**: a host synchronisation during capture (``.item()``, printing, a copy
  from host memory, a data-dependent shape) raises ``GraphCaptureError`` naming the op
  and the user's line; the gradients, optimizer state and random generator return to
  what they were, and the private pool is emptied.

As in PyTorch, run the code a few times eagerly first (warm-up: cuDNN plans, optimizer
state); inputs and outputs of a graph are static tensors: copy new data into the inputs
before :meth:`~CUDAGraph.replay`, read the outputs after it.
"""
from .. import backend, capture
from ..errors import GraphCaptureError


def _cp(op):
    return backend.require_cupy(f"cuda.{op}")


class _Pool:
    """A graph memory pool (what :func:`graph_pool_handle` and :meth:`CUDAGraph.pool` return)."""

    def __init__(self, cp):
        self.pool = cp.cuda.MemoryPool()
        self.users = 0

    def __repr__(self):
        return f"<tinynet.cuda graph pool: {self.pool.used_bytes()} bytes used, {self.pool.total_bytes()} held>"


def graph_pool_handle():
    """A new memory pool that several graphs may share (``pool=`` of :class:`graph`)."""
    return _Pool(_cp("graph_pool_handle"))


def is_current_stream_capturing():
    """True while a CUDA graph is being captured in this thread."""
    return capture.current() is not None


_side_streams: dict = {}


def _side_stream(cp):
    dev = cp.cuda.runtime.getDevice()
    s = _side_streams.get(dev)
    if s is None:
        s = _side_streams[dev] = cp.cuda.Stream(non_blocking=True)
    return s


def _own_cells(cp):
    """A chunk of device cells in an allocation of its own (``cudaMalloc``, no pool):
    never shared with a temporary of any captured step (``tinynet/capture.py``)."""
    mem = cp.cuda.Memory(capture.CHUNK * 8)
    return cp.ndarray((capture.CHUNK,), dtype="uint64", memptr=cp.cuda.MemoryPointer(mem, 0))


class CUDAGraph:
    """One captured CUDA graph (``torch.cuda.CUDAGraph``).

    Use it with the :class:`graph` context manager; :meth:`replay` runs the recorded work
    on the current stream, :meth:`reset` frees it, :meth:`pool` is its memory pool.
    ``keep_graph`` is accepted for PyTorch's signature: CuPy instantiates the graph when the
    capture ends, so there is no separate ``instantiate`` step.

    Raises:
        DeviceError: no CuPy or no GPU.
    """

    def __init__(self, keep_graph=False):
        self._cp = _cp("CUDAGraph")
        self._exec = None
        self._capture = None
        self._pool = None
        self._first = True
        self._stream = None
        self.released = None  # why the graph was dropped by release(), if it was

    # ---- capture --------------------------------------------------------------------------
    def capture_begin(self, pool=None, capture_error_mode="global"):
        """Start recording the current stream (it must not be the legacy default stream)."""
        cp = self._cp
        if self._exec is not None:
            raise GraphCaptureError("CUDAGraph.capture_begin: this graph already holds a capture; reset() it first")
        if capture_error_mode not in ("global", "thread_local", "relaxed"):
            raise GraphCaptureError(f"CUDAGraph.capture_begin: capture_error_mode must be 'global', "
                                    f"'thread_local' or 'relaxed', got {capture_error_mode!r}")
        for settle in capture.before_capture:  # reads the GPU: not allowed once the capture runs
            settle()
        stream = cp.cuda.get_current_stream()
        if stream.ptr == 0:
            raise GraphCaptureError("CUDAGraph.capture_begin: the default stream cannot be captured; use "
                                    "`with tinynet.cuda.graph(g):`, which captures on a side stream")
        if pool is not None and not isinstance(pool, _Pool):
            raise GraphCaptureError(f"CUDAGraph.capture_begin: pool must come from graph_pool_handle() or "
                                    f"CUDAGraph.pool(), got {type(pool).__name__}")
        self._pool = pool if pool is not None else _Pool(cp)
        self._pool.users += 1
        self._stream = stream
        self._capture = capture.Capture(cp, alloc=lambda: _own_cells(cp))
        self._allocator = cp.cuda.using_allocator(self._pool.pool.malloc)
        self._allocator.__enter__()
        self._capturing = capture.capturing(self._capture)
        self._capturing.__enter__()
        stream.begin_capture()

    def capture_end(self):
        """Stop recording and instantiate the graph."""
        try:
            g = self._stream.end_capture()
        finally:
            self._capturing.__exit__(None, None, None)
            self._allocator.__exit__(None, None, None)
        self._exec = g
        self._first = True
        self.released = None
        capture.track(self, self._capture)

    def _capture_failed(self):
        """End a capture that raised: discard it and undo what it changed on the host."""
        try:
            self._stream.end_capture()
        except Exception:  # an invalidated capture cannot end cleanly; the stream is usable again
            pass
        finally:
            self._capturing.__exit__(None, None, None)
            self._allocator.__exit__(None, None, None)
        self._capture.abort()
        self._capture = None
        self._release_pool()

    # ---- replay ---------------------------------------------------------------------------
    def replay(self):
        """Run the recorded work on the current stream: first refill the device cells
        (dropout offsets, learning rate, bias corrections; one host-to-device copy per 64
        cells, from pageable memory, so the host buffer can be reused as soon as the call
        returns), then launch the graph.

        Raises:
            GraphCaptureError: nothing captured, or a guarded setting changed.
        """
        if self._exec is None:
            if self.released:
                raise GraphCaptureError(f"CUDAGraph.replay: {self.released}")
            raise GraphCaptureError("CUDAGraph.replay: nothing captured (capture with `tinynet.cuda.graph(g)`)")
        cap = self._capture
        cap.check_guards()
        stream = self._cp.cuda.get_current_stream()
        for hook in cap.replay_hooks.values():
            hook(stream, False)
        for c, values in cap.cell_updates(self._first):  # only the chunks whose values changed
            cap.chunks[c].set(values, stream=stream)  # ordered before the launch; the host buffer is free on return
        self._exec.launch(stream)
        self._first = False
        for hook in cap.replay_hooks.values():
            hook(stream, True)

    def reset(self):
        """Drop the graph and give its pool's free memory back (arrays still referenced keep theirs)."""
        self._exec = None
        self._capture = None
        self._release_pool()

    def held_keys(self):
        """The outside resources this graph keeps alive (``capture.Capture.hold``)."""
        return self._capture.held if self._capture is not None else set()

    def release(self, reason):
        """Drop the graph because a resource it holds goes away (see ``capture.release_graphs``);
        a later :meth:`replay` raises ``GraphCaptureError`` with ``reason``."""
        self.reset()
        self.released = reason

    def _release_pool(self):
        if self._pool is not None:
            self._pool.users -= 1
            if self._pool.users <= 0:
                self._pool.pool.free_all_blocks()
            self._pool = None

    def pool(self):
        """This graph's memory pool, to share with another graph (``graph(g2, pool=g1.pool())``)."""
        if self._pool is None:
            raise GraphCaptureError("CUDAGraph.pool: the graph has no pool (not captured, or reset)")
        return self._pool

    def __del__(self):
        try:
            self.reset()
        except Exception:  # interpreter shutdown: CuPy may be gone
            pass


class graph:
    """Capture the block into ``cuda_graph`` (``torch.cuda.graph``).

    Args:
        cuda_graph (CUDAGraph): the graph to fill.
        pool: a pool from :func:`graph_pool_handle` or another graph's ``pool()`` to share;
            default: a private one.
        stream: the CuPy stream to capture on; default: tinynet's side stream of the GPU.
        capture_error_mode (str): accepted for PyTorch compatibility ("global").

    The side stream first waits for the work queued on the current stream. A failure in the
    block ends the capture, restores the host state it changed and raises
    :class:`~tinynet.errors.GraphCaptureError` (the original error is its ``__cause__``).
    """

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global"):
        if not isinstance(cuda_graph, CUDAGraph):
            raise GraphCaptureError(f"cuda.graph: expected a tinynet.cuda.CUDAGraph, got {type(cuda_graph).__name__}")
        self.g, self.pool, self.stream, self.mode = cuda_graph, pool, stream, capture_error_mode

    def __enter__(self):
        cp = self.g._cp
        self._outer = cp.cuda.get_current_stream()
        side = self.stream if self.stream is not None else _side_stream(cp)
        side.wait_event(self._outer.record())
        self._use = side
        side.__enter__()
        try:
            self.g.capture_begin(self.pool, self.mode)
        except BaseException:
            side.__exit__(None, None, None)
            raise
        return self.g

    def __exit__(self, exc_type, exc, tb):
        side = self._use
        try:
            if exc_type is None:
                self.g.capture_end()
            else:
                self.g._capture_failed()
        finally:
            side.__exit__(None, None, None)
            self._outer.wait_event(side.record())
        if exc_type is None or issubclass(exc_type, GraphCaptureError):
            return False
        if issubclass(exc_type, (KeyboardInterrupt, SystemExit)):
            return False
        where = capture.user_line(tb)
        raise GraphCaptureError(f"cuda.graph: {exc_type.__name__} during capture at {where}: {exc}. "
                                f"Host synchronisation, copies from host memory, data-dependent shapes and "
                                f"CuPy's own cuBLAS calls cannot be recorded") from exc
