"""``tinynet.compile``: a whole training step replayed from a CUDA graph, in one line.

PyTorch's ``torch.compile(step, mode="reduce-overhead")`` traces a function and runs it
from CUDA graphs. tinynet does not trace or fuse: it records the step's kernels as they
are launched (stream capture) and replays them. The name and arguments are PyTorch's so
that scripts read the same; the differences are listed in docs/gpu.md.

How a call runs (per input signature: the shapes, dtypes and devices of the tensor
arguments and the values of the others):

1. the first ``warmup`` calls run eagerly (cuDNN plans, optimizer state, memory); when a
   capture finds state that a first real step makes still missing (a GradScaler skipped
   every warm-up step, so Adam has no moments yet: ``GraphWarmupError``), that call runs
   eagerly too and the next one captures (up to ``MAX_WARMUP`` calls);
2. the next call copies its tensor arguments into static input buffers, captures the
   step into a :class:`~tinynet.cuda.CUDAGraph` (nothing runs while capturing) and replays
   it once: that replay is the step;
3. later calls replay the graph, whose first kernel copies the call's tensor arguments
   into the static buffers (the arguments' addresses reach it through the graph's device
   cells, refilled with its other per-replay numbers in one host-to-device copy: no copy
   launch per argument; an argument that is the static buffer itself is not copied). The
   returned tensors are the graph's static outputs: the next call overwrites them
   (``clone()`` one to keep it). Host code in the step (Python counters, ``print``)
   runs only while capturing, not at replays.

Per replay the host does: one pass over the arguments for the cache key (shapes, dtypes,
devices, ``requires_grad``, the other arguments' values), a dictionary look-up, the
arguments' addresses into the cells, the graph's replay (``CUDAGraph.replay``). Nothing
waits for the device.

A new signature is captured again (at most ``cache_size`` graphs are kept; the least
recently used is dropped). A step that cannot be captured (it calls ``.item()``, prints
a tensor, uses an uncapturable optimizer...) runs eagerly from then on, after one
warning, or raises with ``fullgraph=True``. A replay whose frozen settings changed
(e.g. Adadelta's lr) is captured again. Without a GPU (NumPy backend, or arguments on the
CPU) the step always runs eagerly, with identical results.
"""
import collections
import warnings

from .. import backend, capture
from ..errors import (ArgumentError, ArgumentTypeError, DeviceMismatchError, DTypeError, GraphCaptureError,
                      GraphWarmupError, IndexOutOfRangeError, ShapeError)
from ..kernels import bind_inputs
from ..tensor import Tensor
from .graphs import CUDAGraph, graph

MAX_WARMUP = 32  # eager calls per signature at most, when captures keep finding first-step state missing
# errors of bad input that a step raises eagerly too: a capture that meets one raises it as it is
# (not as a GraphCaptureError, nor by running the step eagerly after a warning)
_BAD_INPUT = (ShapeError, DTypeError, ArgumentError, ArgumentTypeError, IndexOutOfRangeError, DeviceMismatchError)
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="cudagraphs", mode="reduce-overhead",
            options=None, disable=False):
    """Run ``model`` (a function or module: a whole training step, or a forward) from CUDA
    graphs on the GPU; usable as ``tinynet.compile(step)`` or as a decorator.

    Args:
        model (callable): the step. Default None: return a decorator.
        fullgraph (bool): raise :class:`~tinynet.errors.GraphCaptureError` when the step
            cannot be captured, instead of running it eagerly after a warning. Default False.
        dynamic: accepted for PyTorch compatibility; every new signature is captured anew.
        backend (str): ``"cudagraphs"`` (the only one; ``"inductor"`` is accepted and means
            the same). mode (str): PyTorch's modes are accepted; all of them graph the step,
            ``"max-autotune-no-cudagraphs"`` runs it eagerly.
        options (dict): ``{"warmup": 2, "cache_size": 8}``: eager calls per signature
            before the capture (>= 1), graphs kept.
        disable (bool): return ``model`` unchanged. Default False.

    Returns:
        A callable with ``model``'s arguments.

    Raises:
        ArgumentError: an unknown mode/backend/option, or warmup < 1.
        ArgumentTypeError: ``options`` is not a dict.
    """
    if mode not in _MODES:
        raise ArgumentError(f"compile: mode must be one of {_MODES[1:]}, got {mode!r}")
    if backend not in ("cudagraphs", "inductor", "eager"):
        raise ArgumentError(f"compile: backend must be 'cudagraphs' (or 'inductor', 'eager'), got {backend!r}")
    opts = {"warmup": 2, "cache_size": 8}
    if options is not None and not isinstance(options, dict):
        raise ArgumentTypeError(f"compile: options must be a dict or None, got {type(options).__name__}")
    for k, v in (options or {}).items():
        if k not in opts:
            raise ArgumentError(f"compile: unknown option {k!r} (known: {sorted(opts)})")
        opts[k] = v
    if not isinstance(opts["warmup"], int) or opts["warmup"] < 1:
        raise ArgumentError(f"compile: options['warmup'] must be an int >= 1, got {opts['warmup']!r}")
    eager = disable or backend == "eager" or mode == "max-autotune-no-cudagraphs"

    def wrap(fn):
        if eager:
            return fn
        return GraphedStep(fn, fullgraph=fullgraph, warmup=opts["warmup"], cache_size=opts["cache_size"])
    return wrap if model is None else wrap(model)


class _Entry:
    def __init__(self):
        self.calls = 0
        self.graph = None
        self.static = None
        self.out = None
        self.eager = False
        self.bound = False  # the graph copies the arguments itself (bind_inputs.cu), from the addresses in ptrs
        self.ptrs = ()


def _signature(args, kwargs):
    """``(tensor arguments in order, all of them on the GPU, the cache key)`` of a call, in one
    pass (this runs at every replay). The key holds each tensor's shape, dtype, device and
    ``requires_grad``, and every other argument's value (its identity when unhashable)."""
    gpu_array = backend._CUPY_NDARRAY
    tensors, key, on_gpu = [], [], True
    items = args if not kwargs else list(args) + [kwargs[k] for k in sorted(kwargs)]
    for a in items:
        if isinstance(a, Tensor):
            arr = a.array
            tensors.append(a)
            if type(arr) is gpu_array or isinstance(arr, gpu_array):
                key.append(("T", arr.shape, arr.dtype, arr.data.device_id, a.requires_grad))
            else:
                on_gpu = False
                key.append(("T", arr.shape, arr.dtype, -1, a.requires_grad))
        else:
            try:
                hash(a)
                key.append(("v", a))
            except TypeError:
                key.append(("id", id(a)))
    if kwargs:
        key.append(tuple(sorted(kwargs)))
    return tensors, (on_gpu if tensors else backend.name == "cupy"), tuple(key)


class GraphedStep:
    """What :func:`compile` returns: calls ``fn`` eagerly for warm-up, then from graphs."""

    def __init__(self, fn, fullgraph=False, warmup=2, cache_size=8):
        self.fn = fn
        self.fullgraph = fullgraph
        self.warmup = warmup
        self.cache_size = cache_size
        self._cache: collections.OrderedDict = collections.OrderedDict()
        self._warned = False
        self.captures = 0

    def __call__(self, *args, **kwargs):
        tensors, on_gpu, key = _signature(args, kwargs)
        if not on_gpu:
            return self.fn(*args, **kwargs)  # NumPy backend or CPU tensors: eager, same results
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = _Entry()
            while len(self._cache) > self.cache_size:
                _, old = self._cache.popitem(last=False)
                if old.graph is not None:
                    old.graph.reset()
        self._cache.move_to_end(key)
        if entry.eager or entry.calls < self.warmup:
            entry.calls += 1
            return self.fn(*args, **kwargs)
        g = entry.graph
        if g is not None:
            if entry.bound:  # the graph's first kernel copies from these addresses; keep lives past the launch
                entry.ptrs, keep = _sources(entry.static[1], tensors)
            else:
                _copy_in(entry.static[1], tensors)
            try:
                g.replay()
                return entry.out
            except GraphCaptureError:  # a frozen setting changed: capture again below
                if g.released:  # its process group was destroyed: no recapture either
                    raise
                g.reset()
                entry.graph = None
        if entry.static is None:
            entry.static = _static_copies(args, kwargs)
        else:
            _copy_in(entry.static[1], tensors)
        return self._capture(entry, args, kwargs)

    def _capture(self, entry, args, kwargs):
        """Capture the step on the static inputs (which hold this call's tensors) and replay it."""
        s_args, s_kwargs = entry.static[0]
        bind = bind_inputs.plan([s.array for s in entry.static[1]])  # (its kernel loaded before the capture)
        g = CUDAGraph()
        try:
            with graph(g):
                _record_binding(entry, bind)
                out = self.fn(*s_args, **s_kwargs)
        except GraphWarmupError:
            # state a first real step makes is missing (a GradScaler skipped every warm-up
            # step): this call runs eagerly and a later one captures, up to MAX_WARMUP calls
            entry.calls += 1
            if entry.calls >= MAX_WARMUP:
                raise
            return self.fn(*args, **kwargs)
        except GraphCaptureError as e:
            if isinstance(e.__cause__, _BAD_INPUT):  # the step's own error on these inputs, as eagerly
                raise e.__cause__ from None
            if self.fullgraph:
                raise
            if not self._warned:
                warnings.warn(f"tinynet.compile: running {getattr(self.fn, '__name__', 'the step')} eagerly, "
                              f"it cannot be captured into a CUDA graph: {e}", RuntimeWarning, stacklevel=3)
                self._warned = True
            entry.eager = True
            return self.fn(*args, **kwargs)
        self.captures += 1
        entry.graph, entry.out = g, out
        g.replay()
        return out


def _copy_in(static, tensors):
    """Copy the call's tensors into the static inputs on the current stream: one
    ``cudaMemcpyAsync`` for contiguous arrays (a few microseconds of host time, against
    about ten for CuPy's element-wise copy), the element-wise copy otherwise."""
    cp = backend.cupy
    stream = cp.cuda.get_current_stream().ptr
    for s, a in zip(static, tensors):
        dst, src = s.array, a.array
        if src.flags.c_contiguous and dst.flags.c_contiguous and src.dtype == dst.dtype:
            if src.data.ptr != dst.data.ptr:
                cp.cuda.runtime.memcpyAsync(dst.data.ptr, src.data.ptr, src.nbytes,
                                            cp.cuda.runtime.memcpyDeviceToDevice, stream)
        else:
            dst[...] = src


def _record_binding(entry, bind):
    """During the capture: reserve one device cell per tensor argument and record the kernel
    that copies from the addresses they hold into the static buffers (``bind_inputs.cu``), as
    the graph's first kernel. Where that does not apply (``bind`` None: more than 16 tensor
    arguments, kernels off) the arguments are copied by :func:`_copy_in` before each replay."""
    entry.bound = bind is not None
    if bind is None:
        return
    count = bind[2]
    entry.ptrs = [0] * count  # the capture's own replay: the static buffers hold this call's tensors
    cells = capture.current().cells(count, lambda first: entry.ptrs)
    bind_inputs.launch(bind, cells)


def _sources(static, tensors):
    """``(addresses, keep)``: the address of each argument's data for the binding kernel (0
    for an argument that is its static buffer: nothing to copy), a new list at each call (the
    replay compares it with the last one to skip an unchanged upload). A non-contiguous
    argument (a view) is first made contiguous (one copy, on the current stream, where the
    replay runs); ``keep`` holds those copies until the replay is queued."""
    ptrs, keep = [], []
    for s, a in zip(static, tensors):
        src = a.array
        if not src._c_contiguous:  # CuPy's flag, read without making a Flags object
            src = backend.cupy.ascontiguousarray(src)
            keep.append(src)
        p = src.data.ptr
        ptrs.append(0 if p == s.array.data.ptr else p)
    return ptrs, keep


def _static_copies(args, kwargs):
    """((args, kwargs) with each tensor replaced by a detached copy, [the copies in order])."""
    made = []

    def copy(a):
        if isinstance(a, Tensor):
            c = a.detach().clone()
            if a.requires_grad:
                c.requires_grad_(True)
            made.append(c)
            return c
        return a
    s_args = tuple(copy(a) for a in args)
    s_kwargs = {k: copy(kwargs[k]) for k in sorted(kwargs)}
    return (s_args, s_kwargs), made
