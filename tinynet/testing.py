"""``tinynet.testing``: PyTorch's ``torch.testing`` for tests of tinynet code.

* :func:`assert_close`: tensors (or numbers, sequences, mappings of them) equal up to
  per-dtype tolerances, with PyTorch's defaults and the same shape of failure message
  (how many elements mismatch, the greatest absolute and relative differences and where).
* :func:`make_tensor`: a random tensor of a shape and dtype for tests, PyTorch's value
  ranges per dtype, optionally non-contiguous.
* :func:`assert_allclose`: the deprecated older form (``torch.testing.assert_allclose``), kept
  for the code that still calls it: other default tolerances, dtypes not compared, NaN equal.

The closeness test is ``|actual - expected| <= atol + rtol * |expected|`` elementwise
(``numpy.isclose``; infinities equal when of the same sign, NaN equal to NaN only with
``equal_nan``), computed on host copies of the arrays.
"""
import collections.abc
import math
import numbers
import warnings

import numpy

from . import random as _random
from .dtypes import bfloat16, float32, float64, is_floating
from .dtypes import torch_promote_types
from .errors import ArgumentError, ArgumentTypeError
from .ops.creation import tensor as _new_tensor
from .tensor import Tensor

# PyTorch's default (rtol, atol) per dtype; every other dtype compares exactly
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


class _Mismatch(Exception):
    """A failed comparison inside :func:`assert_close`; ``path`` grows as it leaves nested
    containers, ``replaceable`` says whether a string ``msg`` replaces the message."""

    def __init__(self, message, replaceable=True):
        super().__init__(message)
        self.message, self.path, self.replaceable = message, "", replaceable


def _dtype_name(dt):
    return "bfloat16" if dt == bfloat16 else numpy.dtype(dt).name


def _tolerance(dtypes, rtol, atol):
    if (rtol is None) != (atol is None):
        raise ArgumentError(f"assert_close: both 'rtol' and 'atol' must be either specified or omitted, but got "
                            f"no {'atol' if atol is None else 'rtol'}")
    if rtol is not None:
        return rtol, atol
    pairs = [_TOLERANCES.get(_dtype_name(d), (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _is_number(x):
    return isinstance(x, (numbers.Number, numpy.number, numpy.bool_)) and not isinstance(x, Tensor)


def _number_dtype(x):
    if isinstance(x, (bool, numpy.bool_)):
        return numpy.dtype(bool)
    if isinstance(x, (numpy.number,)):
        return x.dtype
    return numpy.dtype(numpy.int64 if isinstance(x, int) else numpy.complex128 if isinstance(x, complex)
                       else numpy.float64)


def _host(t):
    a = t.detach().numpy(force=True) if isinstance(t, Tensor) else numpy.asarray(t)
    return a.astype(float32) if a.dtype == bfloat16 else a


def _fmt_index(flat, shape):
    return str(tuple(int(i) for i in numpy.unravel_index(flat, shape)))


def _worst(values):
    """(value, flat index) of the greatest entry, NaN counting as greatest."""
    flat = values.reshape(-1)
    nans = numpy.flatnonzero(numpy.isnan(flat)) if flat.dtype.kind in "fc" else ()
    k = int(nans[0]) if len(nans) else int(numpy.argmax(flat))
    return flat[k].item(), k


def _scalar_message(a, e, rtol, atol, exact):
    diff = abs(a - e)
    try:
        rel = diff / abs(e)
    except ZeroDivisionError:
        rel = math.inf if diff else math.nan
    tol_a = "" if exact else f" (up to {atol} allowed)"
    tol_r = "" if exact else f" (up to {rtol} allowed)"
    return (f"Scalars are not {'equal' if exact else 'close'}!\n\nExpected {e} but got {a}.\n"
            f"Absolute difference: {diff}{tol_a}\nRelative difference: {rel}{tol_r}")


def _compare_values(a, e, rtol, atol, equal_nan):
    """Compare host arrays of one shape; raise _Mismatch with PyTorch's message shape."""
    exact = rtol == 0 and atol == 0
    with numpy.errstate(all="ignore"):
        if a.dtype.kind == "b" or (exact and a.dtype.kind in "iu"):
            close = a == e
        else:
            close = numpy.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
        if bool(numpy.all(close)):
            return
        if a.ndim == 0:
            raise _Mismatch(_scalar_message(a.item(), e.item(), rtol, atol, exact))
        if a.dtype.kind in "biu":
            abs_diff = numpy.abs(a.astype(numpy.int64) - e.astype(numpy.int64))
            rel_diff = abs_diff.astype(float32) / numpy.abs(e.astype(float32))
        else:
            abs_diff = numpy.abs(a - e)
            rel_diff = abs_diff / numpy.abs(e)
        abs_diff[close] = 0
        rel_diff[close] = 0
    n, total = int(close.size - numpy.count_nonzero(close)), close.size
    worst_a, ia = _worst(abs_diff)
    worst_r, ir = _worst(rel_diff)
    tol_a = "" if exact else f" (up to {atol} allowed)"
    tol_r = "" if exact else f" (up to {rtol} allowed)"
    raise _Mismatch(f"Tensor-likes are not {'equal' if exact else 'close'}!\n\n"
                    f"Mismatched elements: {n} / {total} ({100 * n / total:.1f}%)\n"
                    f"Greatest absolute difference: {worst_a} at index {_fmt_index(ia, a.shape)}{tol_a}\n"
                    f"Greatest relative difference: {worst_r} at index {_fmt_index(ir, a.shape)}{tol_r}")


def _attribute(name, a, e):
    raise _Mismatch(f"The values for attribute '{name}' do not match: {a} != {e}.")


def _compare_tensors(a, e, opts):
    if tuple(a.shape) != tuple(e.shape):
        _attribute("shape", tuple(a.shape), tuple(e.shape))
    if isinstance(a, Tensor):
        if opts["check_device"] and a.device != e.device:
            _attribute("device", a.device, e.device)
        if opts["check_stride"] and a.stride() != e.stride():
            _attribute("stride()", a.stride(), e.stride())
    elif opts["check_stride"] and a.strides != e.strides:
        _attribute("strides", a.strides, e.strides)
    if opts["check_dtype"] and a.dtype != e.dtype:
        _attribute("dtype", f"tinynet.{_dtype_name(a.dtype)}" if isinstance(a, Tensor) else a.dtype,
                   f"tinynet.{_dtype_name(e.dtype)}" if isinstance(e, Tensor) else e.dtype)
    rtol, atol = _tolerance((a.dtype, e.dtype), opts["rtol"], opts["atol"])
    x, y = _host(a), _host(e)
    if x.dtype != y.dtype:
        common = numpy.dtype(torch_promote_types(x.dtype, y.dtype)) if is_floating(x.dtype) or is_floating(
            y.dtype) or x.dtype.kind in "biu" and y.dtype.kind in "biu" else numpy.result_type(x, y)
        x, y = x.astype(common), y.astype(common)
    _compare_values(x, y, rtol, atol, opts["equal_nan"])


def _compare_numbers(a, e, opts):
    if isinstance(a, (bool, numpy.bool_)) and isinstance(e, (bool, numpy.bool_)):
        if bool(a) != bool(e):
            raise _Mismatch(f"Booleans mismatch: {a} is not {e}")
        return
    if opts["check_dtype"] and type(a) is not type(e):
        raise _Mismatch(f"The (d)types do not match: {type(a)} != {type(e)}.")
    rtol, atol = _tolerance((_number_dtype(a), _number_dtype(e)), opts["rtol"], opts["atol"])
    kind = complex if isinstance(a, complex) or isinstance(e, complex) else float
    x, y = numpy.asarray(a), numpy.asarray(e)
    common = numpy.result_type(x, y) if kind is float else numpy.complex128
    _compare_values(x.astype(common), y.astype(common), rtol, atol, opts["equal_nan"])


def _is_sequence(x):
    return isinstance(x, collections.abc.Sequence) and not isinstance(x, (str, bytes))


def _compare(a, e, opts):
    if a is None or e is None:
        if a is not e:
            raise _Mismatch(f"None mismatch: {a} is not {e}")
        return
    tensor_like = (Tensor, numpy.ndarray)
    if isinstance(a, tensor_like) and isinstance(e, tensor_like):
        same_kind = isinstance(a, Tensor) == isinstance(e, Tensor)
        if same_kind and (opts["allow_subclasses"] or type(a) is type(e)):
            return _compare_tensors(a, e, opts)
    elif _is_number(a) and _is_number(e):
        return _compare_numbers(a, e, opts)
    elif _is_sequence(a) and _is_sequence(e):
        if len(a) != len(e):
            raise _Mismatch(f"The length of the sequences mismatch: {len(a)} != {len(e)}", replaceable=False)
        for i, (x, y) in enumerate(zip(a, e)):
            _nested(x, y, opts, f"[{i}]")
        return
    elif isinstance(a, collections.abc.Mapping) and isinstance(e, collections.abc.Mapping):
        if set(a) != set(e):
            missing = sorted(set(e) - set(a), key=repr)
            extra = sorted(set(a) - set(e), key=repr)
            raise _Mismatch(f"The keys of the mappings do not match:\nMissing keys in the actual mapping: {missing}\n"
                            f"Additional keys in the actual mapping: {extra}", replaceable=False)
        for k in e:
            _nested(a[k], e[k], opts, f"[{k!r}]")
        return
    raise ArgumentTypeError(f"assert_close: no comparison pair was able to handle inputs of type {type(a)} and "
                            f"{type(e)}.")


def _nested(a, e, opts, key):
    try:
        _compare(a, e, opts)
    except _Mismatch as m:
        m.path = key + m.path
        raise


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False, check_device=True,
                 check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Assert that ``actual`` and ``expected`` are close (``torch.testing.assert_close``).

    Args:
        actual, expected: Tensors (both), NumPy arrays (both), numbers (``bool``,
            ``int``, ``float``, ``complex``), or sequences / mappings of these, compared
            item by item.
        allow_subclasses (bool): accept tensors of different (sub)classes. Default True.
        rtol, atol (float, optional): the tolerances; both or neither. Default: per dtype,
            the larger of the two inputs' (float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5,
            float32 1.3e-6/1e-5, float64 1e-7/1e-7, complex likewise, others exact).
        equal_nan (bool): NaN equals NaN. Default False.
        check_device (bool): tensors must be on one device. Default True.
        check_dtype (bool): same dtype (numbers: same type); if False, compared in the
            promoted dtype. Default True.
        check_layout (bool): accepted (tinynet tensors are all strided).
        check_stride (bool): same strides. Default False.
        msg (str or callable, optional): replaces the message, or maps it to a new one.

    Raises:
        AssertionError: a mismatch: values (``"Tensor-likes are not close!"`` with the
            mismatched count, the greatest absolute and relative differences and their
            indices), shapes, devices, dtypes, strides, lengths or keys. The item of a
            container that failed is named (``The failure occurred for item [1]``).
        ArgumentTypeError: inputs no comparison handles (a tensor and a list, strings).
        ArgumentError: only one of ``rtol`` and ``atol`` given.
    """
    opts = dict(allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                check_device=check_device, check_dtype=check_dtype, check_stride=check_stride)
    if (rtol is None) != (atol is None):
        _tolerance((), rtol, atol)  # raises
    try:
        _compare(actual, expected, opts)
    except _Mismatch as m:
        text = m.message
        if isinstance(msg, str) and m.replaceable:
            raise AssertionError(msg) from None
        if callable(msg):
            text = msg(text)
        if m.path:
            text += f"\n\nThe failure occurred for item {m.path}"
        raise AssertionError(text) from None


# assert_allclose's default tolerances (rtol, atol) per dtype; other dtypes (bfloat16 included) exact, as PyTorch's
_ALLCLOSE_TOLERANCES = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated (as ``torch.testing.assert_allclose`` since PyTorch 1.12; it warns with a
    FutureWarning): :func:`assert_close` with ``check_dtype=False``, ``equal_nan=True`` and other
    default tolerances, the larger of the two inputs' (float16 1e-3/1e-3, float32 1e-4/1e-5, float64
    1e-5/1e-8, other dtypes exact). Non-tensor inputs become tensors, ``expected`` in
    ``actual``'s dtype.

    Raises:
        AssertionError: not close (``msg``, when given, replaces the message).
        ArgumentError: only one of ``rtol`` and ``atol`` given.
    """
    warnings.warn("tinynet.testing.assert_allclose() is deprecated (as torch.testing.assert_allclose() since "
                  "PyTorch 1.12): use tinynet.testing.assert_close()", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = _new_tensor(actual)
    if not isinstance(expected, Tensor):
        expected = _new_tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        pairs = [_ALLCLOSE_TOLERANCES.get(_dtype_name(t.dtype), (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True, check_dtype=False,
                 check_stride=False, msg=msg or None)


def _bounds(low, high, default, lowest, highest, integral, dtype):
    """``(low, high)`` checked and clamped to what ``dtype`` holds (integers: ceiled)."""
    low = default[0] if low is None else low
    high = default[1] if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ArgumentError(f"make_tensor: low and high cannot be NaN, got low={low} and high={high}")
    if not (low == high and not integral) and low >= high:
        raise ArgumentError(f"make_tensor: low must be less than high, got {low} >= {high}")
    if high < lowest or low >= highest:
        raise ArgumentError(f"make_tensor: the interval [{low}, {high}) is outside what {dtype} holds, "
                            f"[{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    return (math.ceil(low), math.ceil(high)) if integral else (low, high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A tensor of random values for tests (``torch.testing.make_tensor``), drawn from
    tinynet's host generator (so :func:`tinynet.manual_seed` repeats it).

    Args:
        *shape (ints, or one tuple/list): the shape.
        dtype (tinynet dtype): bool (``[0, 2)``), integers (default ``[-9, 10)``, clamped
            to the dtype: ``[0, 10)`` for uint8) drawn uniformly with ``high`` exclusive,
            or floating point (default ``[-9, 9)``, uniform).
        device (str or tinynet.device): where the tensor lives.
        low, high (number, optional): the interval; ``low < high`` (equal allowed for
            floats: every value is ``low``).
        requires_grad (bool): floating-point dtypes only.
        noncontiguous (bool): a non-contiguous view (every other element of a tensor
            twice as wide in the last dimension), when the tensor has 2+ elements.
        exclude_zero (bool): zeros become 1 (bool, integers) or the dtype's smallest
            normal number (floats).
        memory_format (tinynet memory format, optional): the layout (not with
            ``noncontiguous``).

    Raises:
        ArgumentError: NaN, ``low >= high``, an interval the dtype cannot hold,
            ``requires_grad`` for a non-float dtype, ``noncontiguous`` with ``memory_format``.
        ArgumentTypeError: a dtype make_tensor does not support.
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for s in shape:
        if isinstance(s, bool) or not isinstance(s, (int, numpy.integer)):
            raise ArgumentTypeError(f"make_tensor: shape must be ints, got {type(s).__name__}")
        if s < 0:
            raise ArgumentError(f"make_tensor: shape must be non-negative, got {tuple(shape)}")
    shape = tuple(int(s) for s in shape)
    for name, value in (("low", low), ("high", high)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, numbers.Real)):
            raise ArgumentTypeError(f"make_tensor: {name} must be a real number or None, got {type(value).__name__}")
    if noncontiguous and memory_format is not None:
        raise ArgumentError("make_tensor: noncontiguous and memory_format are mutually exclusive, got "
                            f"noncontiguous=True and memory_format={memory_format}")
    if not isinstance(dtype, numpy.dtype) and dtype is not bfloat16:
        raise ArgumentTypeError(f"make_tensor: dtype must be a tinynet dtype, got {type(dtype).__name__}")
    dt = dtype
    floating = is_floating(dt)
    if requires_grad and not floating:
        raise ArgumentError(f"make_tensor: requires_grad=True is not supported for boolean and integral dtypes, got "
                            f"dtype={dt}")
    split = noncontiguous and math.prod(shape) > 1
    draw_shape = shape[:-1] + (2 * shape[-1],) if split else shape
    rng = _random.host_generator()
    if dt.kind == "b":
        lo, hi = _bounds(low, high, (0, 2), 0, 2, True, dt)
        values = rng.integers(lo, hi, draw_shape).astype(bool)
    elif dt.kind in "iu":
        info = numpy.iinfo(dt)
        lo, hi = _bounds(low, high, (-9, 10), int(info.min), int(info.max) + (dt != numpy.int64), True, dt)
        values = rng.integers(lo, hi, draw_shape, dtype=numpy.int64 if dt.kind == "i" else numpy.uint64).astype(dt)
    elif floating:
        info = numpy.finfo(float32 if dt == bfloat16 else dt)
        lo, hi = _bounds(low, high, (-9, 9), float(info.min), float(info.max), False, dt)
        values = rng.uniform(lo / 2, hi / 2, draw_shape) * 2 if hi - lo > float(info.max) else \
            rng.uniform(lo, hi, draw_shape)
        values = values.astype(float64 if dt == bfloat16 else dt)
    else:
        raise ArgumentTypeError(f"make_tensor: the dtype {dt} is not supported")
    if exclude_zero:
        values[values == 0] = 1 if not floating else numpy.finfo(float32 if dt == bfloat16 else dt).tiny
    result = _new_tensor(values, dtype=dt, device=device)
    if split:
        result = result[..., ::2]
    if memory_format is not None:
        result = result.contiguous(memory_format=memory_format)
    if requires_grad:
        result.requires_grad_(True)
    return result
