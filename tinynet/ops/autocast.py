"""The autocast state and the casts it makes at the ops' entry points.

:class:`tinynet.autocast` (in :mod:`tinynet.amp.autocast_mode`) sets, per thread, which
device types autocast and to which dtype. Each public function named in
:mod:`.autocast_lists` is wrapped by :func:`autocast_op`: while an autocast region is open
for the device of its tensors, the wrapper casts the tensor arguments as the op's policy
says (``lower``, ``fp32``, ``promote``) before the function's own checks run, so a float16
activation meeting a float32 weight in ``linear`` is cast, not refused. With no region
open anywhere the wrapper costs one list read.

The casts are ordinary differentiable ``to(dtype)`` ops, so the gradient flows back
through them: a float32 weight used as float16 gets a float32 ``.grad``. Within one
region the float16 copy of a float32 leaf that requires grad (a weight) is made once and
reused (the cache; ``cache_enabled=False`` turns it off), as PyTorch does; the cache is
emptied when the outermost region exits. This module sits below :mod:`tinynet.amp`
because the ops import it.
"""
import contextvars
import functools

from .. import backend, dtypes
from ..autograd.grad_mode import _grad_enabled
from ..errors import AutocastError
from ..tensor import Tensor
from .autocast_lists import TABLES
from .conversion import Cast

DEFAULT_DTYPES = {"cuda": dtypes.float16, "cpu": dtypes.bfloat16}  # torch.get_autocast_dtype's defaults
OPEN = [0]  # autocast regions open in any thread: the wrappers' one test while there are none
_FLOAT32, _FLOAT64, _BFLOAT16 = dtypes.float32, dtypes.float64, dtypes.bfloat16


class _State:
    """One thread's autocast settings: the dtype per enabled device type (``None`` when
    off), the dtypes set per device type, the cache switch, the nesting depth and the cache."""
    __slots__ = ("enabled", "dtype", "cache_enabled", "depth", "cache")

    def __init__(self, enabled, dtype, cache_enabled, depth, cache):
        self.enabled, self.dtype, self.cache_enabled, self.depth, self.cache = \
            enabled, dtype, cache_enabled, depth, cache


_NONE = _State({}, DEFAULT_DTYPES, True, 0, None)
_state = contextvars.ContextVar("tinynet_autocast", default=_NONE)


def current():
    """This thread's (task's) autocast state."""
    return _state.get()


def enter(device_type, dtype, enabled, cache_enabled):
    """Open a region: autocast ``device_type`` to ``dtype`` (or switch it off); returns the
    token :func:`leave` takes. Used by :class:`tinynet.autocast`."""
    s = _state.get()
    on = dict(s.enabled)
    on[device_type] = dtype if enabled else None
    kinds = dict(s.dtype)
    kinds[device_type] = dtype
    cache = s.cache if s.cache is not None else {}
    OPEN[0] += 1
    return _state.set(_State(on, kinds, cache_enabled, s.depth + 1, cache))


def leave(token):
    """Close the region :func:`enter` opened; the outermost one empties the cast cache."""
    s = _state.get()
    if s.depth == 1 and s.cache is not None:
        s.cache.clear()
    _state.reset(token)
    OPEN[0] -= 1


def clear_cache():
    """Drop the cached low-precision copies of weights (``torch.clear_autocast_cache``)."""
    cache = _state.get().cache
    if cache is not None:
        cache.clear()


def _device_type(values):
    """``"cuda"`` or ``"cpu"``: the device of the first tensor among ``values`` (or inside a
    list or tuple among them), None when there is none."""
    gpu_array = backend._CUPY_NDARRAY
    for v in values:
        if isinstance(v, Tensor):
            return "cuda" if isinstance(v.array, gpu_array) else "cpu"
        if isinstance(v, (list, tuple)):
            for t in v:
                if isinstance(t, Tensor):
                    return "cuda" if isinstance(t.array, gpu_array) else "cpu"
    return None


def _eligible(t):
    """A tensor autocast may cast: a float tensor, not float64 (PyTorch never casts doubles)."""
    dt = t.array.dtype
    return dt != dtypes.float64 and dtypes.is_floating(dt)


def _cast(t, dt, state, lower):
    """``t`` as ``dt`` through the differentiable cast (cached for weights in the lower dtype).
    Anything but a float tensor of another dtype (not float64) comes back as it is."""
    if not isinstance(t, Tensor):
        return t
    have = t.array.dtype
    # (the test of _eligible, written out: this runs for every tensor argument of a cast op)
    if have == dt or not ((have.kind == "f" and have != _FLOAT64) or have == _BFLOAT16):
        return t
    if not (lower and state.cache_enabled and t.requires_grad and t._grad_fn is None and t._base is None
            and have == _FLOAT32):
        return Cast(dt).apply(t)
    key = (id(t), dt, _grad_enabled.get())
    hit = state.cache.get(key)
    if hit is not None and hit[0] is t and hit[1] == t._vc[0]:  # same tensor, not changed in place since
        return hit[2]
    out = Cast(dt).apply(t)
    state.cache[key] = (t, t._vc[0], out)
    return out


def _cast_all(values, dt, state, lower):
    """``values`` with each tensor, and each tensor inside a list or tuple, through :func:`_cast`
    (a list or tuple without tensors comes back as it is)."""
    out = []
    for v in values:
        if isinstance(v, Tensor):
            v = _cast(v, dt, state, lower)
        elif isinstance(v, (list, tuple)) and any(isinstance(t, Tensor) for t in v):
            v = type(v)(_cast(t, dt, state, lower) for t in v)
        out.append(v)
    return out


def _widest(values):
    dt = None
    for v in values:
        for t in (v if isinstance(v, (list, tuple)) else (v,)):
            if isinstance(t, Tensor) and _eligible(t):
                dt = t.array.dtype if dt is None else dtypes.promote_types(dt, t.array.dtype)
    return dt


def cast_arguments(name, args, kwargs, state=None):
    """``args``, ``kwargs`` as op ``name`` gets them under the autocast region now open
    (``state``: this thread's autocast state, read here when not given)."""
    if state is None:
        state = _state.get()
    enabled = state.enabled
    # the device type of the first tensor argument; nothing to do when that device type is not
    # autocast or its table has no entry for this op (e.g. layer_norm under CPU autocast)
    device_type = _device_type(args) if args else None
    if device_type is None and kwargs:
        device_type = _device_type(kwargs.values())
    if device_type is None:
        return args, kwargs
    low = enabled.get(device_type)
    if low is None:
        return args, kwargs
    policy = TABLES[device_type].get(name)
    if policy is None:
        return args, kwargs
    if policy == "banned":
        raise AutocastError(
            f"{name}: unsafe to autocast (float16 saturates its log terms); use binary_cross_entropy_with_logits "
            f"(BCEWithLogitsLoss), which is safe under autocast, or leave the region with "
            f"autocast(device_type={device_type!r}, enabled=False) and pass float32 inputs")
    if policy == "lower":
        dt = low
    elif policy == "fp32":
        dt = dtypes.float32
    else:
        dt = _widest(list(args) + list(kwargs.values()))
        if dt is None:
            return args, kwargs
    lower = policy == "lower"
    cast = tuple(_cast_all(args, dt, state, lower))
    return cast, (dict(zip(kwargs, _cast_all(kwargs.values(), dt, state, lower))) if kwargs else kwargs)


def autocast_op(fn):
    """Wrap public function ``fn`` (named in :mod:`.autocast_lists`) so that it casts its
    tensor arguments under autocast before running."""
    name = fn.__name__

    @functools.wraps(fn)
    def op(*args, **kwargs):
        if OPEN[0]:
            state = _state.get()
            if state.depth:
                args, kwargs = cast_arguments(name, args, kwargs, state)
        return fn(*args, **kwargs)

    op.autocast_name = name  # tests/test_amp.py finds the wrapped functions by it
    return op
