"""Tensor creation: ``tensor``, ``as_tensor``, ``from_numpy``, ``zeros``/``ones``/``empty``/
``full`` and their ``*_like`` forms, ``arange``, ``linspace``, ``logspace``, ``eye``,
``from_dlpack``, and the predicates ``is_tensor``/``numel``.

Defaults follow PyTorch: Python floats give the default float dtype (float32), ints
int64, bools bool; factories make float32 unless told otherwise, ``full`` takes its
dtype from the fill value. Tensors go to the default device (see :mod:`tinynet.backend`)
unless ``device=`` says otherwise. Complex data (Python complex numbers, complex NumPy
arrays) gives complex64 (complex128 from complex128 arrays, as PyTorch); ``zeros``, ``ones``,
``empty``, ``full`` and ``tensor`` take the complex dtypes.

Differences from PyTorch: ``tensor([t1, t2])`` of equal-shaped multi-element tensors stacks
them (PyTorch raises); ``full`` also takes an int size.
"""
import math
import numbers

import numpy

from .. import backend, devices, dtypes
from ..errors import ArgumentError, ArgumentTypeError, DTypeError
from ..tensor import Tensor
from .util import check_tensor, named, sizes


def _leaf_dtype(v):
    """The dtype one element of Python data stands for (PyTorch's rule): a bool, int or
    float its kind's dtype (floats the default float dtype); a tensor, NumPy scalar or
    array its own dtype."""
    if isinstance(v, Tensor):
        return v.array.dtype
    if isinstance(v, (numpy.generic, numpy.ndarray)) and v.dtype.kind in "biufc":
        return v.dtype
    if isinstance(v, (bool, int, float, complex)):
        return dtypes.scalar_dtype(v)
    raise DTypeError(f"tensor: cannot build a tensor from a {type(v).__name__} (bool, integer, float and complex "
                     "data only)")


def _infer_dtype(data):
    """The dtype of (nested) Python data: its elements' dtypes promoted (``[1, 2.5]`` is
    the default float, ``[tensor(1), 2]`` int64, ``[numpy.float64(1.5)]`` float64); an
    empty list gives the default float dtype."""
    if not isinstance(data, (list, tuple)):
        return _leaf_dtype(data)
    out = None
    for kind in {type(v) for v in _flat(data)} - {Tensor, numpy.ndarray}:  # Python numbers: one per type
        if issubclass(kind, (bool, int, float, complex)) and not issubclass(kind, numpy.generic):
            d = dtypes.scalar_dtype(kind(1))
            out = d if out is None else dtypes.promote_types(out, d)
    for v in _flat(data):
        if isinstance(v, (Tensor, numpy.generic, numpy.ndarray)) or not isinstance(v, (bool, int, float, complex)):
            d = _leaf_dtype(v)
            out = d if out is None else dtypes.promote_types(out, d)
    return out if out is not None else dtypes.get_default_dtype()


def _place(arr, device, dtype=None, copy=True):
    """``arr`` (host or GPU array) on ``device`` as ``dtype``, copied when ``copy``."""
    dev = devices.resolve(device, "tensor")
    arr = backend.to_device(arr, dev)
    xp = backend.array_module(arr)
    if dev.type == "cuda":
        with backend.cupy.cuda.Device(dev.index):
            return xp.array(arr, dtype=dtype, copy=True, order="C") if copy else xp.asarray(arr, dtype=dtype)
    return xp.array(arr, dtype=dtype, copy=True, order="C") if copy else xp.asarray(arr, dtype=dtype)


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """Build a tensor from array-like ``data`` (list, number, NumPy/CuPy array, Tensor).

    Args:
        data: values. Arrays keep their dtype; Python floats become the default float
            dtype, ints int64 (PyTorch's rule).
        dtype: target dtype (``tinynet.float32`` ...). Default: inferred as above.
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"`` or a :class:`tinynet.device`; default
            the default device.
        requires_grad (bool): record ops on this tensor for autograd. Default False.
        pin_memory (bool): accepted for PyTorch's sake; ignored.

    Returns:
        Tensor: a new leaf tensor holding a copy of ``data``.

    Raises:
        DTypeError: unknown dtype, non-numeric data, or ``requires_grad`` on a non-float dtype.
        DeviceError: ``device="cuda"`` without a usable GPU.
    """
    dt = dtypes.as_dtype(dtype, "tensor")
    if isinstance(data, Tensor):
        data = data.array
    elif isinstance(data, range):
        data = list(data)
    if isinstance(data, numpy.generic):
        data = numpy.asarray(data)  # NumPy scalars keep their dtype, as in PyTorch
    if hasattr(data, "dtype") and hasattr(data, "shape") and not isinstance(data, numbers.Number):
        arr = data
        if arr.dtype.kind not in "biufc":
            raise DTypeError(f"tensor: unsupported array dtype {arr.dtype}")
    else:
        kinds = _plain_kinds(data)
        if kinds is not None:  # a flat list of Python numbers: their kinds' dtypes promoted, no walk
            target = dt if dt is not None else _promoted(kinds)
        else:
            target = dt if dt is not None else _infer_dtype(data)
            if isinstance(data, (list, tuple)) and any(isinstance(v, Tensor) for v in _flat(data)):
                data = _nested_values(data)
        try:
            arr = numpy.asarray(data, dtype=target)
        except OverflowError as exc:
            raise ArgumentError(f"tensor: a value does not fit {target} ({exc})") from None
        except (ValueError, TypeError) as exc:
            raise DTypeError(f"tensor: cannot convert {type(data).__name__} to a tensor ({exc})") from None
    if arr.dtype.kind == "c" or (dt is not None and dt.kind == "c"):
        dtypes.note_complex()
    if arr.dtype.kind == "c" and dt is not None and dt.kind != "c":
        raise DTypeError(f"tensor: complex data cannot be converted to {dt}")
    out = Tensor._wrap(_place(arr, device, dt))
    if requires_grad:
        out.requires_grad_(True)
    return out


_PLAIN = frozenset((bool, int, float, complex))


def _plain_kinds(data):
    """The set of element types of a non-empty flat list/tuple of plain Python numbers
    (exactly bool, int, float, complex: not NumPy scalars), else None. One C-level pass:
    the word-language model's corpus builds a tensor from each line's list of ints, and
    walking the elements in Python took ~90 us a list."""
    if type(data) not in (list, tuple) or not data:
        return None
    kinds = set(map(type, data))
    return kinds if kinds <= _PLAIN else None


def _promoted(kinds):
    """The dtype of Python numbers of these types, promoted (as :func:`_infer_dtype`)."""
    out = None
    for kind in kinds:
        d = dtypes.scalar_dtype(kind(1))
        out = d if out is None else dtypes.promote_types(out, d)
    return out


def _flat(data):
    for v in data:
        if isinstance(v, (list, tuple)):
            yield from _flat(v)
        else:
            yield v


def _nested_values(data):
    """Nested lists that hold tensors (of one element each, or of equal shapes) as host values."""
    def conv(v):
        if isinstance(v, Tensor):
            return v.numpy(force=True)
        if isinstance(v, (list, tuple)):
            return [conv(u) for u in v]
        return v
    return numpy.asarray(conv(data))


def as_tensor(data, dtype=None, device=None):
    """Like :func:`tensor`, but shares memory when ``data`` already is a tensor or array of
    the right dtype and device."""
    dt = dtypes.as_dtype(dtype, "as_tensor")
    if isinstance(data, Tensor):
        dev = devices.resolve(device, "as_tensor") if device is not None else data.device
        from .conversion import to
        return to(data, dev, dtype=dt)
    if isinstance(data, (numpy.ndarray, backend._CUPY_NDARRAY)) and data.dtype.kind in "biufc":
        dev = devices.resolve(device, "as_tensor")
        if devices.of_array(data) == dev and (dt is None or data.dtype == dt):
            return Tensor._wrap(data)
    return tensor(data, dtype=dt, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    """A CPU tensor sharing ``ndarray``'s memory (changes show in both).

    Raises:
        ArgumentTypeError: not a NumPy array. DTypeError: an unsupported dtype.
    """
    if not isinstance(ndarray, numpy.ndarray):
        raise ArgumentTypeError(f"from_numpy: expected a numpy.ndarray, got {type(ndarray).__name__}")
    if ndarray.dtype.kind not in "biufc" or ndarray.dtype.itemsize > 16:
        raise DTypeError(f"from_numpy: unsupported dtype {ndarray.dtype} (bool, integer, float and complex only)")
    if ndarray.dtype.kind == "c":
        dtypes.note_complex()
    return Tensor._wrap(ndarray)


def _make(op, fill, size, dtype, device, requires_grad):
    shape = sizes(op, size)
    if any(s < 0 for s in shape):
        raise ArgumentError(f"{op}: sizes must be non-negative, got {shape}")
    dev = devices.resolve(device, op)
    dt = dtypes.as_dtype(dtype, op) or dtypes.get_default_dtype()
    xp = backend.module_for(dev)
    if dev.type == "cuda":
        with backend.cupy.cuda.Device(dev.index):
            out = Tensor._wrap(fill(xp, shape, dt))
    else:
        out = Tensor._wrap(fill(xp, shape, dt))
    return out.requires_grad_() if requires_grad else out


def zeros(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of zeros of shape ``size`` (ints, or one sequence); float32 by default.

    Raises:
        ArgumentError: a negative size. ArgumentTypeError: a non-integer size.
    """
    return _make("zeros", lambda xp, s, d: xp.zeros(s, d), size, dtype, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    """A tensor of ones of shape ``size``; float32 by default."""
    return _make("ones", lambda xp, s, d: xp.ones(s, d), size, dtype, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor of shape ``size``; float32 by default."""
    return _make("empty", lambda xp, s, d: xp.empty(s, d), size, dtype, device, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """A tensor of shape ``size`` filled with ``fill_value``; the dtype follows the value
    (bool, int64, or the default float) unless given."""
    value = fill_value.item() if isinstance(fill_value, Tensor) and fill_value.array.size == 1 else fill_value
    if not isinstance(value, (numbers.Number, numpy.bool_, numpy.number)):
        raise ArgumentTypeError(f"full: fill_value must be a number or a bool, got {type(fill_value).__name__}")
    if isinstance(value, numpy.complexfloating):
        value = complex(value)
    if dtype is None:
        dtype = dtypes.scalar_dtype(value)
    if isinstance(value, complex) and dtypes.as_dtype(dtype, "full").kind != "c":
        raise DTypeError(f"full: a complex fill_value ({value}) cannot be converted to "
                         f"{dtypes.as_dtype(dtype, 'full')}")
    return _make("full", lambda xp, s, d: xp.full(s, value, dtype=d), (size,), dtype, device, requires_grad)


def _like(name, maker, check_dtype=None):
    """The ``*_like`` function ``name`` of factory ``maker`` (``sampling.py``'s too; ``check_dtype(name,
    dtype)`` refuses the dtypes the factory cannot make)."""
    def like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
        check_tensor(name, "input", input)
        dtype = input.dtype if dtype is None else dtype
        if check_dtype is not None:
            check_dtype(name, dtype)
        return maker(*input.shape, dtype=dtype, device=input.device if device is None else device,
                     requires_grad=requires_grad)
    like.__module__ = maker.__module__  # where the factory is (rand_like: sampling.py)
    return named(like, name, f"Like :func:`{name[:-5]}` with the shape (and, by default, dtype and device) of "
                             "``input``.")


zeros_like = _like("zeros_like", zeros)
ones_like = _like("ones_like", ones)
empty_like = _like("empty_like", empty)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """``full(input.shape, fill_value)`` with ``input``'s dtype and device by default."""
    check_tensor("full_like", "input", input)
    return full(input.shape, fill_value, dtype=input.dtype if dtype is None else dtype,
                device=input.device if device is None else device, requires_grad=requires_grad)


def _number(op, name, v):
    if type(v) is int or type(v) is float:  # (plain numbers skip the abstract-class check)
        return v
    if isinstance(v, Tensor):
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ArgumentTypeError(f"{op}: {name} must be a number, got {type(v).__name__}")
    return v


def arange(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    """Values ``start, start + step, ...`` up to (not including) ``end``: ``ceil((end - start) / step)``
    of them; int64 when all three are ints, else the default float dtype.

    Raises:
        ArgumentError: ``step`` is 0, or its sign points away from ``end``.
    """
    if end is None:
        start, end = 0, start
    start, end, step = (_number("arange", n, v) for n, v in (("start", start), ("end", end), ("step", step)))
    if step == 0:
        raise ArgumentError("arange: step must be nonzero")
    if not all(math.isfinite(v) for v in (start, end, step)):
        raise ArgumentError(f"arange: unsupported range: {start} -> {end} with step {step} (finite numbers only)")
    if (end - start) * step < 0:
        raise ArgumentError(f"arange: the bounds are inconsistent with the step's sign (start {start}, "
                            f"end {end}, step {step})")
    ints = (type(start) is int and type(end) is int and type(step) is int
            or all(isinstance(v, (numbers.Integral, numpy.integer)) for v in (start, end, step)))
    dt = dtypes.as_dtype(dtype, "arange") or (dtypes.int64 if ints else dtypes.get_default_dtype())
    n = max(0, math.ceil((end - start) / step))
    return _make("arange", lambda xp, s, d: (start + step * xp.arange(n, dtype=numpy.float64)).astype(d)
                 if not ints else xp.arange(start, start + n * step, step, dtype=numpy.int64).astype(d),
                 (n,), dt, device, requires_grad)


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    """``steps`` evenly spaced values from ``start`` to ``end`` inclusive (default float dtype).

    Raises:
        ArgumentError: ``steps`` is negative.
    """
    from .util import check_int
    start, end = _number("linspace", "start", start), _number("linspace", "end", end)
    steps = check_int("linspace", "steps", steps, 0)
    dt = dtypes.as_dtype(dtype, "linspace") or dtypes.get_default_dtype()
    return _make("linspace", lambda xp, s, d: xp.linspace(start, end, steps, dtype=numpy.float64).astype(d),
                 (steps,), dt, device, requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """``steps`` values ``base ** linspace(start, end, steps)`` (default float dtype)."""
    from .util import check_int
    start, end = _number("logspace", "start", start), _number("logspace", "end", end)
    steps = check_int("logspace", "steps", steps, 0)
    base = _number("logspace", "base", base)
    dt = dtypes.as_dtype(dtype, "logspace") or dtypes.get_default_dtype()
    return _make("logspace", lambda xp, s, d: (base ** xp.linspace(start, end, steps, dtype=numpy.float64)).astype(d),
                 (steps,), dt, device, requires_grad)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    """The ``n x m`` identity matrix (``m`` defaults to ``n``).

    Raises:
        ArgumentError: a negative size.
    """
    from .util import check_int
    n = check_int("eye", "n", n, 0)
    m = n if m is None else check_int("eye", "m", m, 0)
    return _make("eye", lambda xp, s, d: xp.eye(n, m, dtype=d), (n, m), dtype, device, requires_grad)


def from_dlpack(ext_tensor):
    """Wrap an object exporting ``__dlpack__`` (NumPy, CuPy, PyTorch, ...) without copying.

    Raises:
        ArgumentTypeError: ``ext_tensor`` does not export ``__dlpack__``.
    """
    if not hasattr(ext_tensor, "__dlpack__"):
        raise ArgumentTypeError(f"from_dlpack: expected an object with __dlpack__, got {type(ext_tensor).__name__}")
    if hasattr(ext_tensor, "__dlpack_device__") and ext_tensor.__dlpack_device__()[0] == 2:  # kDLCUDA
        return Tensor._wrap(backend.require_cupy("from_dlpack").from_dlpack(ext_tensor))
    return Tensor._wrap(numpy.from_dlpack(ext_tensor))
