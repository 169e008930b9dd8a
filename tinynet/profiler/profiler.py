""":class:`profile` (PyTorch's ``torch.profiler.profile``), its step :func:`schedule` and
:func:`tensorboard_trace_handler`.

A profile records every tinynet op applied while it is active (``Op.apply``, named
``tinynet::<op>``), each op's backward run by the engine (``autograd::engine::evaluate_function:
<Op>Backward``) and every :class:`record_function` span, with host times
from ``time.perf_counter_ns`` and, for ops on CuPy arrays with ``ProfilerActivity.CUDA``,
device times from CUDA events (see :mod:`._record`).
"""
import enum
import gzip
import os
import socket
import time
import warnings

from .. import backend
from ..errors import ArgumentError, ArgumentTypeError, PathNotWritableError, ProfilerError
from ..ops.util import check_flag
from . import _record
from ._events import EventList, check_path, check_str


class ProfilerActivity(enum.Enum):
    """What to profile: ``CPU`` (host times of every op) and ``CUDA`` (device times of the ops
    on CuPy arrays, from CUDA events). PyTorch's other devices are named but not supported."""
    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """What a :func:`schedule` says a step does."""
    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities():
    """The activities this machine can profile: CPU, and CUDA where a GPU and CuPy are present."""
    out = {ProfilerActivity.CPU}
    if backend.load_cupy() is not None:
        out.add(ProfilerActivity.CUDA)
    return out


def kineto_available():
    """False: tinynet's profiler is its own, not PyTorch's Kineto."""
    return False


def _count(fn, name, value, least):
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{fn}: {name} must be an int, got {type(value).__name__}")
    if value < least:
        raise ArgumentError(f"{fn}: {name} must be >= {least}, got {value}")


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """The profiler's step plan: after ``skip_first`` steps, cycles of ``wait`` idle steps,
    ``warmup`` steps recorded and dropped, and ``active`` recorded steps (the last one
    ``RECORD_AND_SAVE``: the trace goes to ``on_trace_ready``); ``repeat`` cycles (0: until the
    profiler stops). A non-zero ``skip_first_wait`` leaves out the first cycle's wait.

    Returns a function of the step number giving a :class:`ProfilerAction`.

    Raises:
        ArgumentTypeError: a non-int count. ArgumentError: a negative count or ``active`` < 1.
    """
    for name, value, least in (("wait", wait, 0), ("warmup", warmup, 0), ("active", active, 1),
                               ("repeat", repeat, 0), ("skip_first", skip_first, 0)):
        _count("schedule", name, value, least)
    if warmup == 0:
        warnings.warn("schedule: no warmup steps; the first recorded step may be slower", stacklevel=2)
    cycle = wait + warmup + active

    def plan(step):
        if step < skip_first:
            return ProfilerAction.NONE
        k = step - skip_first + (wait if skip_first_wait else 0)
        if repeat and k // cycle >= repeat:
            return ProfilerAction.NONE
        k %= cycle
        if k < wait:
            return ProfilerAction.NONE
        if k < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if k < cycle - 1 else ProfilerAction.RECORD_AND_SAVE
    return plan


def _always_record(step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """An ``on_trace_ready`` that writes each trace to ``dir_name`` as
    ``<worker_name>.<time_ns>.pt.trace.json`` (``.gz`` with ``use_gzip``), the files
    TensorBoard's profiler plugin reads; ``worker_name`` defaults to ``<host>_<pid>``.

    Raises:
        ArgumentTypeError: ``dir_name`` is not a path or ``worker_name`` not a str.
        PathNotWritableError: ``dir_name`` cannot be created (when a trace is written).
    """
    dir_name = check_path("tensorboard_trace_handler", dir_name)
    check_str("tensorboard_trace_handler", "worker_name", worker_name)

    def handler(prof):
        try:
            os.makedirs(dir_name, exist_ok=True)
        except OSError as exc:
            raise PathNotWritableError(f"tensorboard_trace_handler: cannot create {dir_name!r}: {exc}") from None
        worker = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        name = f"{worker}.{time.time_ns()}.pt.trace.json" + (".gz" if use_gzip else "")
        prof.export_chrome_trace(os.path.join(dir_name, name))
    return handler


_RECORDING = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
_IGNORED = ("with_flops", "with_modules", "experimental_config", "execution_trace_observer")


class profile:
    """Record tinynet's ops and :class:`record_function` spans (``with profile(...) as prof:``).

    Args (keyword-only, PyTorch's):
        activities: :class:`ProfilerActivity` values (default CPU, and CUDA where available).
        schedule: a :func:`schedule` (default: record every step); ``prof.step()`` advances it.
        on_trace_ready: called with the profiler at the end of each active cycle (and at exit
            while recording), e.g. :func:`tensorboard_trace_handler`.
        record_shapes (bool): keep each op's input shapes (``key_averages(group_by_input_shape=True)``).
        profile_memory (bool): count the bytes of each op's outputs (CPU and device memory columns).
        with_stack (bool): keep the Python frames outside tinynet that called each op
            (``key_averages(group_by_stack_n=N)``).
        with_flops, with_modules, experimental_config, execution_trace_observer: accepted
            and not recorded (a warning says so).

    Raises:
        ArgumentError: an activity other than CPU/CUDA. ArgumentTypeError: ``activities`` not
        a collection, a flag that is not a bool, ``schedule`` or ``on_trace_ready`` not
        callable, or a ``schedule`` whose answer is not a :class:`ProfilerAction`.
        ProfilerError: another profiler is recording.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, with_stack=False, with_flops=False, with_modules=False,
                 experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None):
        try:
            acts = list(supported_activities() if activities is None else activities)
        except TypeError:
            acts = None
        if acts is None or isinstance(activities, (str, bytes)):
            raise ArgumentTypeError(f"profile: activities must be a list or set of ProfilerActivity, got "
                                    f"{type(activities).__name__}")
        for a in acts:
            if a is not ProfilerActivity.CPU and a is not ProfilerActivity.CUDA:
                raise ArgumentError(f"profile: activities may hold ProfilerActivity.CPU and .CUDA, got {a!r}")
        acts = set(acts)
        record_shapes, profile_memory, with_stack = (check_flag("profile", n, v) for n, v in (
            ("record_shapes", record_shapes), ("profile_memory", profile_memory), ("with_stack", with_stack)))
        if use_cuda is not None and check_flag("profile", "use_cuda", use_cuda):
            acts.add(ProfilerActivity.CUDA)
        for name, fn in (("schedule", schedule), ("on_trace_ready", on_trace_ready)):
            if fn is not None and not callable(fn):
                raise ArgumentTypeError(f"profile: {name} must be callable or None, got {type(fn).__name__}")
        given = dict(with_flops=with_flops, with_modules=with_modules, experimental_config=experimental_config,
                     execution_trace_observer=execution_trace_observer)
        for name in _IGNORED:
            if given[name] is not None and given[name] is not False:
                warnings.warn(f"profile: {name} is not supported by tinynet's profiler and is ignored", stacklevel=2)
        self.activities = acts
        self.record_shapes, self.profile_memory, self.with_stack = record_shapes, profile_memory, with_stack
        self.schedule = schedule or _always_record
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.custom_trace_id_callback = custom_trace_id_callback
        self.step_num = 0
        self.current_action = self._action(0)
        self._session = None
        self._events = EventList()
        self._step_span = None
        self._running = False
        self._has_results = False

    # ---- the session ----------------------------------------------------------------------
    def _action(self, step):
        action = self.schedule(step)
        if not isinstance(action, ProfilerAction):
            raise ArgumentTypeError(f"profile: schedule({step}) must return a ProfilerAction, got "
                                    f"{type(action).__name__}")
        return action

    def _begin(self):
        cuda = backend.load_cupy() if ProfilerActivity.CUDA in self.activities else None
        session = _record.Session(self.record_shapes, self.profile_memory, self.with_stack, cuda)
        _record.begin(session)
        self._session = session

    def _finish(self, keep=True):
        session, self._session = self._session, None
        if session is None:
            return
        events = _record.end(session)
        if keep:
            self._events = EventList(events, "CUDA", session.start_ns)
            self._has_results = True

    def _transit(self, prev, cur):
        if prev in _RECORDING and (cur is None or prev is ProfilerAction.RECORD_AND_SAVE
                                   or cur not in _RECORDING):
            self._finish()
            if self.on_trace_ready is not None:
                self.on_trace_ready(self)
        elif prev is ProfilerAction.WARMUP and cur not in _RECORDING and cur is not ProfilerAction.WARMUP:
            if self._session is not None:  # warm-up events are never shown
                self._session.clear()
            self._finish(keep=cur is None)
        elif prev is ProfilerAction.WARMUP and cur in _RECORDING and self._session is not None:
            self._session.clear()
        if cur in _RECORDING + (ProfilerAction.WARMUP,) and self._session is None:
            self._begin()

    def _open_step(self):
        if self.record_steps and self._session is not None:
            self._step_span = _record.record_function(f"ProfilerStep#{self.step_num}")
            self._step_span.__enter__()

    def _close_step(self):
        if self._step_span is not None:
            self._step_span.__exit__(None, None, None)
            self._step_span = None

    def start(self):
        """Start profiling (what ``__enter__`` does)."""
        if self._running:
            raise ProfilerError("profile.start: this profiler is already running")
        self._running = True
        try:
            self._transit(ProfilerAction.NONE, self.current_action)
            self._open_step()
        except BaseException:  # nothing left recording
            self._running, self._step_span = False, None
            self._finish(keep=False)
            raise

    def stop(self):
        """Stop profiling (what ``__exit__`` does): the events become readable."""
        if not self._running:
            return
        self._close_step()
        self._running = False
        self._transit(self.current_action, None)

    def step(self):
        """Mark the end of a training step: the :func:`schedule` moves to the next step."""
        self._close_step()
        self.step_num += 1
        prev, self.current_action = self.current_action, self._action(self.step_num)
        if self._running:
            self._transit(prev, self.current_action)
            self._open_step()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    # ---- the results ----------------------------------------------------------------------
    def _results(self, fn):
        if not self._has_results and self._session is not None:
            raise ProfilerError(f"profile.{fn}: the profiler is still recording; read the results after it stops")
        return self._events

    def events(self):
        """The recorded :class:`~tinynet.profiler.FunctionEvent` list of the last recorded
        cycle, in start order (empty before any cycle finished).

        Raises:
            ProfilerError: the profiler is still recording."""
        return self._results("events")

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False):
        """The events averaged by name (and input shapes / stack lines when asked): an
        :class:`EventList` of :class:`~tinynet.profiler.FunctionEventAvg` whose ``table()``
        prints PyTorch's plain-text table."""
        return self._results("key_averages").key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace JSON file (gzip-compressed when ``path`` ends in
        ``.gz``); see :meth:`EventList.export_chrome_trace`.

        Raises:
            PathNotWritableError: the file cannot be written."""
        events = self._results("export_chrome_trace")
        path = check_path("export_chrome_trace", path)
        if not path.endswith(".gz"):
            events.export_chrome_trace(path)  # (PathNotWritableError when it cannot be written)
            return
        raw = path[:-3] + f".{os.getpid()}.tmp"
        try:
            events.export_chrome_trace(raw)
            with open(raw, "rb") as src, gzip.open(path, "wb") as dst:
                dst.write(src.read())
        except PathNotWritableError:
            raise
        except OSError as exc:
            raise PathNotWritableError(f"export_chrome_trace: cannot write {path!r}: {exc}") from None
        finally:
            if os.path.isfile(raw):
                os.remove(raw)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Write one ``frame;frame;...;op value`` line per event with a stack (``with_stack``),
        outermost frame first: the input of flame-graph tools.

        Raises:
            ArgumentError: ``metric`` is not ``self_cpu_time_total`` or ``self_cuda_time_total``.
            ArgumentTypeError: ``path`` is not a path. PathNotWritableError: it cannot be written."""
        path = check_path("export_stacks", path)
        if not isinstance(metric, str) or metric not in ("self_cpu_time_total", "self_cuda_time_total",
                                                         "self_device_time_total"):
            raise ArgumentError(f"export_stacks: metric must be 'self_cpu_time_total' or 'self_cuda_time_total', "
                                f"got {metric!r}")
        events = self._results("export_stacks")
        try:
            with open(path, "w") as f:
                for e in events:
                    if e.stack:
                        f.write(";".join(list(reversed(e.stack)) + [e.name]) + f" {int(getattr(e, metric))}\n")
        except OSError as exc:
            raise PathNotWritableError(f"export_stacks: cannot write {path!r}: {exc}") from None
