"""Tensor creation: ``tensor``, ``as_tensor``, ``zeros``/``ones``/``full``/``empty``,
``arange``, ``rand``/``randn``, their ``*_like`` forms and ``from_dlpack``.

Defaults follow PyTorch: float32 for floating data and factories, int64 for integer data,
the active backend's device. Random factories draw from tinynet's host generator, so
:func:`tinynet.manual_seed` makes them repeatable on the CPU and the GPU alike.
"""
import numbers

import numpy

from . import backend, random as _random
from .errors import DTypeError
from .tensor import _DEFAULT_FLOAT, Tensor, _as_dtype


def _infer_dtype(data):
    """PyTorch's rule for Python data: floats -> float32, ints -> int64, bools -> bool."""
    arr = numpy.asarray(data)
    if arr.dtype.kind == "f":
        return _DEFAULT_FLOAT
    if arr.dtype.kind in "iu":
        return numpy.dtype(numpy.int64)
    if arr.dtype.kind == "b":
        return numpy.dtype(numpy.bool_)
    raise DTypeError(f"tensor: cannot build a tensor from data of dtype {arr.dtype}")


def tensor(data, dtype=None, device=None, requires_grad=False):
    """Build a tensor from array-like ``data`` (list, scalar, NumPy/CuPy array, Tensor).

    Args:
        data: values. Arrays keep their dtype; Python floats become float32, ints
            int64 (PyTorch's rule).
        dtype: target dtype (``tinynet.float32`` ...). Default: inferred as above.
        device: ``"cpu"`` or ``"cuda"``; default the active backend's device.
        requires_grad (bool): record ops on this tensor for autograd. Default False.

    Returns:
        Tensor: a new leaf tensor holding a copy of ``data``.

    Raises:
        DTypeError: unknown dtype, non-numeric data, or ``requires_grad`` on a non-float dtype.
        BackendError: ``device="cuda"`` without the CuPy backend.
    """
    dt = _as_dtype(dtype, "tensor")
    dev = backend.normalize_device(device, "tensor")
    if isinstance(data, Tensor):
        data = data.data
    if isinstance(data, numpy.generic):
        data = numpy.asarray(data)  # NumPy scalars keep their dtype, as in PyTorch
    if hasattr(data, "dtype") and hasattr(data, "shape") and not isinstance(data, numbers.Number):
        arr = data
        if dt is None and arr.dtype.kind not in "biuf":
            raise DTypeError(f"tensor: unsupported array dtype {arr.dtype}")
    else:
        try:
            arr = numpy.asarray(data, dtype=dt if dt is not None else _infer_dtype(data))
        except (ValueError, TypeError) as exc:
            raise DTypeError(f"tensor: cannot convert {type(data).__name__} to a tensor ({exc})") from None
    arr = backend.to_device(arr, dev)
    xp = backend.array_module(arr)
    arr = xp.array(arr, dtype=dt, copy=True)
    out = Tensor._wrap(arr)
    if requires_grad:
        out.requires_grad_(True)
    return out


def as_tensor(data, dtype=None, device=None):
    """Like :func:`tensor` but returns ``data`` itself when it already fits."""
    if isinstance(data, Tensor) and dtype is None and device is None:
        return data
    return tensor(data, dtype=dtype, device=device)


def _shape_arg(op, shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (int, numpy.integer)) or s < 0:
            raise ValueError(f"{op}: sizes must be non-negative ints, got {shape}")
    return tuple(int(s) for s in shape)


def _factory(op, fill):
    def make(*size, dtype=None, device=None, requires_grad=False):
        shape = _shape_arg(op, size)
        xp = backend.cupy if backend.normalize_device(device, op) == "cuda" else numpy
        dt = _as_dtype(dtype, op) or _DEFAULT_FLOAT
        out = Tensor._wrap(fill(xp, shape, dt))
        return out.requires_grad_() if requires_grad else out
    make.__name__ = op
    make.__doc__ = (f"A new tensor of shape ``size`` ({op}); dtype float32 and the backend's "
                    "device by default.\n\n    Raises:\n        ValueError: a negative or "
                    "non-integer size.\n")
    return make


zeros = _factory("zeros", lambda xp, s, d: xp.zeros(s, d))
ones = _factory("ones", lambda xp, s, d: xp.ones(s, d))
empty = _factory("empty", lambda xp, s, d: xp.empty(s, d))
rand = _factory("rand", lambda xp, s, d: xp.asarray(
    _random.host_generator().random(s, dtype=numpy.float64).astype(d)))
randn = _factory("randn", lambda xp, s, d: xp.asarray(
    _random.host_generator().standard_normal(s).astype(d)))


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    """A tensor of shape ``size`` filled with ``fill_value`` (float32 by default)."""
    out = zeros(*_shape_arg("full", (size,) if isinstance(size, int) else tuple(size)),
                dtype=dtype, device=device)
    out.data[...] = fill_value
    return out.requires_grad_() if requires_grad else out


def arange(start, end=None, step=1, dtype=None, device=None):
    """Values ``start, start+step, ...`` below ``end`` (int64 for ints, float32 otherwise)."""
    if end is None:
        start, end = 0, start
    xp = backend.cupy if backend.normalize_device(device, "arange") == "cuda" else numpy
    ints = all(isinstance(v, (int, numpy.integer)) for v in (start, end, step))
    dt = _as_dtype(dtype, "arange") or (numpy.dtype(numpy.int64) if ints else _DEFAULT_FLOAT)
    return Tensor._wrap(xp.arange(start, end, step).astype(dt))


def _like(name, maker):
    def like(t, dtype=None, requires_grad=False):
        dev = t.device
        return maker(*t.shape, dtype=dtype or t.dtype, device=dev, requires_grad=requires_grad)
    like.__name__ = name
    like.__doc__ = f"Like :func:`{name[:-5]}` with the shape, dtype and device of ``t``."
    return like


zeros_like = _like("zeros_like", zeros)
ones_like = _like("ones_like", ones)
empty_like = _like("empty_like", empty)
rand_like = _like("rand_like", rand)
randn_like = _like("randn_like", randn)


def full_like(t, fill_value, dtype=None):
    return full(t.shape, fill_value, dtype=dtype or t.dtype, device=t.device)


def from_dlpack(obj):
    """Wrap an object exporting ``__dlpack__`` (NumPy, CuPy, PyTorch, ...) without copying."""
    if hasattr(obj, "__dlpack_device__") and obj.__dlpack_device__()[0] == 2:  # kDLCUDA
        if backend.cupy is None:
            raise backend.BackendError("from_dlpack: a CUDA array needs the CuPy backend")
        return Tensor._wrap(backend.cupy.from_dlpack(obj))
    return Tensor._wrap(numpy.from_dlpack(obj))
