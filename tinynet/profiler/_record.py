"""How :mod:`tinynet.profiler` sees the ops: while a profiler records, ``Op.apply`` (and the
``run`` of a :class:`tinynet.autograd.Function`, and each op class's ``backward``, which the
engine calls directly) is replaced by a wrapper that opens an event, runs the op and closes
it; when none records the original methods are put back. The eager
path therefore pays nothing at all without a profiler (not even a flag test: the method
looked up is the original one), and the wrapper's own cost lands only inside profiles.

With ``ProfilerActivity.CUDA`` and an op whose inputs are CuPy arrays, a CUDA event is
recorded on the current stream before and after the op; their elapsed times become the
event's device time when the profiler stops (one synchronisation, then, not per op).
"""
import itertools
import os
import threading
import time
import traceback

from .. import backend, capture
from ..autograd import node
from ..autograd.function import FunctionCtx
from ..errors import ArgumentTypeError, ProfilerError
from ._events import FunctionEvent

_plain_apply = node.Op.apply
_plain_run = FunctionCtx.run
STATE = [None]  # the recording Session, or None
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the tinynet package folder


class Session:
    """One recording: the events in start order, each thread's open events, the settings."""

    def __init__(self, record_shapes=False, profile_memory=False, with_stack=False, cuda=None):
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.events = []
        self.local = threading.local()
        self.ids = itertools.count(1)
        self.start_ns, self.t0 = time.time_ns(), time.perf_counter_ns()
        self.cuda = cuda  # the CuPy module when device times are wanted
        self.pending = []  # (event, start CUDA event, end CUDA event) until the profiler stops
        self.ref = None
        if cuda is not None:
            self.ref = cuda.cuda.Event()
            self.ref.record()

    def now(self):
        return (time.perf_counter_ns() - self.t0) / 1000.0

    def open(self, name, args=(), annotation=False):
        """Start an event named ``name`` on this thread, nested in the thread's open event."""
        open_ = self.local.__dict__.setdefault("open", [])
        shapes = [list(a.shape) if hasattr(a, "shape") and hasattr(a, "ndim") else [] for a in args] \
            if self.record_shapes else ()
        stack = _stack() if self.with_stack else ()  # before the clock is read: not the op's time
        e = FunctionEvent(next(self.ids), name, threading.get_native_id(), self.now(), shapes, stack, annotation)
        if open_:
            e.cpu_parent = parent = open_[-1]
            parent.cpu_children.append(e)
        open_.append(e)
        self.events.append(e)
        return e

    def close(self, e):
        e.time_range.end = self.now()
        open_ = self.local.__dict__.get("open", [])
        if open_ and open_[-1] is e:
            open_.pop()
        elif e in open_:  # closed out of order (a record_function left before an inner one)
            open_.remove(e)

    def clear(self):
        """Drop what was recorded so far (the warm-up steps of a schedule)."""
        self.events, self.pending = [], []
        self.local = threading.local()

    def finish(self):
        """Stop recording: the CUDA events' times become the ops' device times."""
        if self.pending:
            cp = self.cuda
            self.pending[-1][2].synchronize()
            for e, start, end in self.pending:
                e.gpu_span = (cp.cuda.get_elapsed_time(self.ref, start) * 1000.0,
                              cp.cuda.get_elapsed_time(start, end) * 1000.0)
            self.pending = []
        return self.events


def _stack():
    """The Python frames of the caller outside tinynet, innermost first, as ``file(line): function``."""
    frames = traceback.extract_stack()
    return [f"{f.filename}({f.lineno}): {f.name}" for f in reversed(frames)
            if not os.path.abspath(f.filename).startswith(_HERE)]


def _gpu_inputs(args):
    gpu = backend._CUPY_NDARRAY
    return any(type(a) is gpu or type(getattr(a, "array", None)) is gpu for a in args)


def _nbytes(out, e):
    gpu = backend._CUPY_NDARRAY
    for t in out if isinstance(out, (tuple, list)) else (out,):
        a = getattr(t, "array", t)  # a tensor's array, or an array (a backward's gradients)
        if hasattr(a, "nbytes"):
            if type(a) is gpu:
                e.own_device_memory += a.nbytes
                e.device_index = a.device.id
            else:
                e.own_cpu_memory += a.nbytes


def _recorded(s, name, args, run):
    """Run ``run()`` (the op) inside an event; CUDA events around it for GPU inputs."""
    e = s.open(name, args)
    # no CUDA events inside a CUDA graph capture (their times could not be read back)
    cuda = s.cuda if s.cuda is not None and _gpu_inputs(args) and capture.current() is None else None
    if cuda is not None:
        start = cuda.cuda.Event()
        start.record()
    try:
        out = run()
    finally:
        if cuda is not None:
            end = cuda.cuda.Event()
            end.record()
            e.device_index = cuda.cuda.Device().id
            s.pending.append((e, start, end))
        s.close(e)
    if s.profile_memory:
        _nbytes(out, e)
    return out


def _profiled_apply(self, *args):
    s = STATE[0]
    if s is None:
        return _plain_apply(self, *args)
    return _recorded(s, "tinynet::" + self.name, args, lambda: _plain_apply(self, *args))


def _profiled_run(self, args):
    s = STATE[0]
    if s is None:
        return _plain_run(self, args)
    return _recorded(s, self.name, args, lambda: _plain_run(self, args))


def _backward_wrapper(fn):
    def backward(self, xp, *grads):
        s = STATE[0]
        if s is None:
            return fn(self, xp, *grads)
        return _recorded(s, f"autograd::engine::evaluate_function: {type(self).__name__}Backward", grads,
                         lambda: fn(self, xp, *grads))
    backward.profiled = fn
    return backward


_WRAPPED: list = []  # (class, method name, original) while a profile records


def _wrap_backwards():
    """Put a recording wrapper on each op class's own ``backward``/``backward_gpu`` (the engine
    calls them directly; the generic ``backward_gpu`` of a forward_gpu-only op is left, since
    the ``backward`` it calls is recorded)."""
    todo, seen = [node.Op], set()
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub not in seen:
                seen.add(sub)
                todo.append(sub)
        for attr in ("backward", "backward_gpu"):
            fn = cls.__dict__.get(attr)
            if callable(fn) and fn is not node._generic_backward and not hasattr(fn, "profiled"):
                setattr(cls, attr, _backward_wrapper(fn))
                _WRAPPED.append((cls, attr, fn))


def _unwrap_backwards():
    while _WRAPPED:
        cls, attr, fn = _WRAPPED.pop()
        setattr(cls, attr, fn)


def begin(session):
    """Make ``session`` the recording one and put the wrappers in place.

    Raises:
        ProfilerError: another profiler is recording.
    """
    if STATE[0] is not None:
        raise ProfilerError("profile: another profiler is already recording; stop it first (one at a time, "
                            "as PyTorch)")
    STATE[0] = session
    node.Op.apply = _profiled_apply
    FunctionCtx.run = _profiled_run
    _wrap_backwards()


def end(session):
    """Stop ``session`` (if it is the recording one): the original methods come back."""
    if STATE[0] is session:
        node.Op.apply = _plain_apply
        FunctionCtx.run = _plain_run
        _unwrap_backwards()
        STATE[0] = None
    return session.finish()


class record_function:
    """A named span in the profile: a context manager (``with record_function("name"):``)
    or a decorator (``@record_function("name")``). Ops run inside it are its children;
    without a recording profiler it does nothing.

    Args:
        name (str): the span's name in the table and the trace.
        args (str or None): extra text (kept as ``args``; PyTorch's argument).

    Raises:
        ArgumentTypeError: ``name`` is not a string, or ``args`` neither a string nor None.
    """

    def __init__(self, name, args=None):
        if not isinstance(name, str):
            raise ArgumentTypeError(f"record_function: name must be a str, got {type(name).__name__}")
        if args is not None and not isinstance(args, str):
            raise ArgumentTypeError(f"record_function: args must be a str or None, got {type(args).__name__}")
        self.name, self.args = name, args
        self._spans = []

    def __enter__(self):
        s = STATE[0]
        self._spans.append((s, s.open(self.name, (), True) if s is not None else None))
        return self

    def __exit__(self, *exc):
        s, e = self._spans.pop()
        if e is not None:
            s.close(e)
        return False

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return fn(*args, **kwargs)
        return wrapped
