"""Creation ops that say how memory is laid out or where it comes from: ``empty_strided``,
``empty_permuted``, ``frombuffer`` (sharing a Python buffer), ``from_file`` (read or
memory-mapped), ``to_dlpack``; and the small factories ``scalar_tensor``, ``range`` (the
deprecated inclusive form of ``arange``) and ``fill`` (a tensor like ``input`` holding one value).

Strides and offsets count elements, as in PyTorch (NumPy's count bytes).
"""
import builtins
import math
import numbers
import os
import warnings

import numpy

from .. import backend, devices, dtypes
from ..errors import ArgumentError, ArgumentTypeError, DeviceError, DTypeError, ShapeError
from ..layouts import layout as _layout, strided
from ..tensor import Tensor
from .creation import _make, empty, tensor
from .shape import expand, permute
from .util import check_int, check_tensor, sizes


def _check_layout(op, layout):
    if layout is not None and layout is not strided:
        kind = layout if isinstance(layout, _layout) else type(layout).__name__
        raise ArgumentError(f"{op}: only the strided layout is supported (tinynet.strided), got {kind}")


def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    """A 0-d tensor holding the number ``s``, of the default float dtype unless ``dtype`` says
    otherwise (whatever the number's type, as PyTorch).

    Raises:
        ArgumentTypeError: ``s`` is not a number (or a one-element tensor).
    """
    _check_layout("scalar_tensor", layout)
    if isinstance(s, Tensor) and s.array.size == 1:
        s = s.item()
    if not isinstance(s, (numbers.Number, numpy.number, numpy.bool_)):
        raise ArgumentTypeError(f"scalar_tensor: s must be a number, got {type(s).__name__}")
    return tensor(s, dtype=dtype if dtype is not None else (dtypes.complex_for(dtypes.get_default_dtype())
                                                            if isinstance(s, complex) else dtypes.get_default_dtype()),
                  device=device, requires_grad=requires_grad)


def range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None, requires_grad=False):  # noqa: A001
    """``start, start + step, ...`` up to and *including* ``end`` (required, as PyTorch's):
    ``floor((end - start) / step) + 1`` values, of the default float dtype unless ``dtype`` is
    given. Deprecated in PyTorch (use :func:`tinynet.arange`, whose end is excluded), with the
    same warning.

    Raises:
        ArgumentError: ``step`` is 0, or its sign points away from ``end``; non-finite bounds.
        ArgumentTypeError: a bound that is not a number.
    """
    warnings.warn("range is deprecated and will be removed in a future release because its behavior is inconsistent "
                  "with Python's range builtin. Instead, use arange, which produces values in [start, end).",
                  UserWarning, stacklevel=2)
    _check_layout("range", layout)
    if end is None:
        raise ArgumentTypeError("range: missing the required argument end (range(start, end, step) includes end)")
    for name, v in (("start", start), ("end", end), ("step", step)):
        if isinstance(v, bool) or not isinstance(v, (numbers.Real, numpy.number)):
            raise ArgumentTypeError(f"range: {name} must be a number, got {type(v).__name__}")
        if not math.isfinite(v):
            raise ArgumentError(f"range: unsupported range: {start} -> {end} (finite numbers only)")
    if step == 0:
        raise ArgumentError("range: step must be nonzero")
    if (end - start) * step < 0:
        raise ArgumentError("range: upper bound and lower bound inconsistent with step sign")
    n = int(math.floor((end - start) / step)) + 1
    dt = dtypes.as_dtype(dtype, "range") or dtypes.get_default_dtype()
    return _make("range", lambda xp, s, d: (start + step * xp.arange(n, dtype=numpy.float64)).astype(d), (n,), dt,
                 device, requires_grad)


def fill(input, value):
    """A new tensor of ``input``'s shape, dtype and device holding ``value`` everywhere (a
    number or a 0-d tensor; with a tensor the result is differentiable with respect to it).

    Raises:
        ArgumentTypeError: ``input`` is not a Tensor or ``value`` not a number. ShapeError: a
            ``value`` tensor that is not 0-d.
    """
    check_tensor("fill", "input", input)
    if isinstance(value, Tensor):
        if value.ndim:
            raise ShapeError(f"fill: only supports a 0-dimension value tensor, got one with {value.ndim} dimensions")
        if value.device != input.device:
            from .conversion import to
            value = to(value, input.device)
        return expand(value.to(input.dtype), input.shape).clone()
    if not isinstance(value, (numbers.Number, numpy.number, numpy.bool_)):
        raise ArgumentTypeError(f"fill: value must be a number or a 0-d Tensor, got {type(value).__name__}")
    if isinstance(value, complex) and input.array.dtype.kind != "c":
        raise DTypeError(f"fill: a complex value cannot be written into a {input.dtype} tensor")
    xp = backend.array_module(input.array)
    return Tensor._wrap(xp.full(input.shape, value, dtype=input.array.dtype))


def _strided(op, size, stride):
    shape = sizes(op, (size,), "size")
    steps = sizes(op, (stride,), "stride")
    if len(shape) != len(steps):
        raise ShapeError(f"{op}: mismatch in length of strides and shape ({len(steps)} strides, {len(shape)} sizes)")
    if any(s < 0 for s in shape) or any(s < 0 for s in steps):
        raise ArgumentError(f"{op}: sizes and strides must be non-negative, got size {shape}, stride {steps}")
    return shape, steps


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    """An uninitialised tensor of shape ``size`` whose elements are ``stride`` elements apart in
    each dim (its storage holds ``1 + sum((size - 1) * stride)`` elements, or none when a size is 0).

    Raises:
        ShapeError: ``size`` and ``stride`` differ in length. ArgumentError: negative sizes or strides.
    """
    _check_layout("empty_strided", layout)
    shape, steps = _strided("empty_strided", size, stride)
    extent = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, steps))
    flat = empty(extent, dtype=dtype, device=device)
    xp = backend.array_module(flat.array)
    item = flat.array.itemsize
    view = xp.lib.stride_tricks.as_strided(flat.array, shape, tuple(s * item for s in steps)) if extent else \
        xp.empty(shape, flat.array.dtype)
    out = Tensor._wrap(view)
    return out.requires_grad_() if requires_grad else out


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None, requires_grad=False,
                   pin_memory=False):
    """An uninitialised tensor of shape ``size`` whose dims lie in memory in the order
    ``physical_layout`` (outermost first): ``empty_permuted((N, C, H, W), (0, 2, 3, 1))`` is
    channels-last.

    Raises:
        ArgumentError: ``physical_layout`` is not a permutation of the dims.
    """
    _check_layout("empty_permuted", layout)
    shape = sizes("empty_permuted", (size,), "size")
    order = sizes("empty_permuted", (physical_layout,), "physical_layout")
    if sorted(order) != list(builtins.range(len(shape))):
        raise ArgumentError(f"empty_permuted: physical_layout must be a permutation of the {len(shape)} dims, "
                            f"got {order}")
    base = empty(*[shape[d] for d in order], dtype=dtype, device=device)
    inverse = [order.index(d) for d in builtins.range(len(shape))]
    out = permute(base, inverse)
    out._base = None  # a fresh tensor (the permuted view is the whole of its memory)
    return out.requires_grad_() if requires_grad else out


def frombuffer(buffer, *, dtype=None, count=-1, offset=0, requires_grad=False):
    """A 1-D CPU tensor viewing the memory of a Python buffer (``bytes``, ``bytearray``,
    ``memoryview``, ``array.array``, ...) without copying: ``count`` elements of ``dtype``
    (-1: all that fit) from byte ``offset``. A read-only buffer (``bytes``) gives a tensor
    that refuses in-place changes.

    Raises:
        ArgumentTypeError: ``buffer`` does not support the buffer protocol, or no ``dtype``
            (required, as in PyTorch).
        ArgumentError: an offset past the end, a length that is not a multiple of the element
            size, or no elements.
    """
    if dtype is None:
        raise ArgumentTypeError("frombuffer: the keyword argument dtype is required")
    dt = dtypes.as_dtype(dtype, "frombuffer")
    count = check_int("frombuffer", "count", count, -1)
    offset = check_int("frombuffer", "offset", offset, 0)
    try:
        raw = memoryview(buffer).cast("B")
    except TypeError:
        raise ArgumentTypeError(f"frombuffer: expected an object supporting the buffer protocol, got "
                                f"{type(buffer).__name__}") from None
    length = raw.nbytes
    if count == 0 or length == 0:
        raise ArgumentError(f"frombuffer: both buffer length ({length}) and count ({count}) must not be 0")
    if offset >= length:
        raise ArgumentError(f"frombuffer: offset ({offset} bytes) must be non-negative and no greater than buffer "
                            f"length ({length} bytes) minus 1")
    if count < 0 and (length - offset) % dt.itemsize:
        raise ArgumentError(f"frombuffer: buffer length ({length - offset} bytes) after offset ({offset} bytes) must "
                            f"be a multiple of element size ({dt.itemsize})")
    if count > 0 and offset + count * dt.itemsize > length:
        raise ArgumentError(f"frombuffer: requested buffer length ({count} * {dt.itemsize} bytes) after offset "
                            f"({offset} bytes) must not be greater than actual buffer length ({length} bytes)")
    out = Tensor._wrap(numpy.frombuffer(raw, dtype=dt, count=count, offset=offset))
    return out.requires_grad_() if requires_grad else out


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None, pin_memory=False,
              requires_grad=False):
    """A 1-D tensor of ``size`` elements of ``dtype`` (default float) read from the start of the
    file ``filename``. With ``shared=True`` the tensor maps the file: changes are written to it;
    otherwise it is a private copy. ``device`` may move it to the GPU (a copy).

    Raises:
        ArgumentError: no such file, or it is smaller than ``size`` elements.
        ArgumentTypeError: a filename that is not a str or path.
    """
    _check_layout("from_file", layout)
    if not isinstance(filename, (str, os.PathLike)):
        raise ArgumentTypeError(f"from_file: filename must be a str or a path, got {type(filename).__name__}")
    size = check_int("from_file", "size", size, 0)
    if not os.path.isfile(filename):
        raise ArgumentError(f"from_file: no such file: {os.fspath(filename)!r}")
    dt = dtypes.as_dtype(dtype, "from_file") or dtypes.get_default_dtype()
    need, have = size * dt.itemsize, os.path.getsize(filename)
    if need > have:
        raise ArgumentError(f"from_file: file <{filename}> size <{have}> is smaller than the required mapping size "
                            f"<{need}>")
    if shared and size:
        arr = numpy.memmap(filename, dtype=dt, mode="r+", shape=(size,))
    else:
        arr = numpy.fromfile(filename, dtype=dt, count=size)
    dev = devices.resolve(device, "from_file") if device is not None else devices.CPU
    if dev.type != "cpu":
        if shared:
            raise DeviceError("from_file: a shared (memory-mapped) tensor must stay on the CPU")
        arr = backend.to_device(arr, dev)
    out = Tensor._wrap(arr)
    return out.requires_grad_() if requires_grad else out


def to_dlpack(tensor):
    """A DLPack capsule of ``tensor``'s memory (no copy), for ``from_dlpack`` of another library.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    check_tensor("to_dlpack", "tensor", tensor)
    return tensor.array.__dlpack__()
