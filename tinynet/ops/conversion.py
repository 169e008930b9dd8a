"""Conversions: dtype casts, moves between devices, ``clone`` and ``contiguous``.

A cast between float dtypes is differentiable (the gradient is cast back); a move
between the CPU and a GPU too (the gradient moves back). Casting to an integer or bool
dtype gives a tensor that does not require grad. Casts, moves and copies take complex
tensors: a real-to-complex cast hands back the real part of its gradient; complex to real
keeps the real part and warns, as PyTorch does.

Differences from PyTorch: ``to`` also takes a dtype name (``x.to("float64")``).
"""
import builtins
import warnings

from ..dtypes import is_floating
from .. import backend, devices, dtypes, layouts as formats
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..kernels import cast as cast_kernels
from ..tensor import Tensor
from .util import check_tensor, is_graph, named


class Cast(Op):
    name = "to_dtype"
    complex_ok = True  # ToDevice and Clone too
    bf16_native = True  # copies bfloat16 as it is
    twice_differentiable = True
    gpu_saves_generic = True
    edges_only = True  # backward reads only in_dtype: the input's array is not kept (autograd.edges)

    def __init__(self, dtype):
        self.dtype = dtype

    def forward(self, xp, x):
        self.in_dtype = x.dtype
        target = xp.dtype(self.dtype)
        if target == dtypes.bfloat16:
            dtypes.BF16_SEEN[0] = True  # from now on Op.apply widens bfloat16 inputs (autograd.node)
        if x.dtype.kind == "c" and target.kind != "c":  # complex to real: the real part (PyTorch, NumPy)
            x = x.real
        if target.kind in "iu" and target.itemsize < 8 and is_floating(x.dtype):
            # float -> narrow integer through int64, so that out-of-range values wrap on the GPU
            # as on the CPU and in PyTorch (a direct GPU conversion saturates: -2.7 -> uint8 gives
            # 0 there, 254 in PyTorch)
            x = x.astype("int64")
        if x.dtype.kind == "c" and target.kind != "c":  # complex to real: the real part (to() warns)
            x = x.real
        return x.astype(target)

    def backward(self, xp, gy):
        if is_graph(xp):
            return (xp.astype(gy, self.in_dtype),)
        if gy.dtype.kind == "c" and self.in_dtype.kind != "c":  # a real input's share: the real part
            gy = gy.real
        return (gy.astype(self.in_dtype),)

    def forward_gpu(self, xp, x):
        """float32 <-> float16/bfloat16 of a contiguous array in one launch (:mod:`tinynet.kernels.cast`)."""
        target = xp.dtype(self.dtype)
        if not cast_kernels.covers(x, target):
            return self.forward(xp, x)
        if target == dtypes.bfloat16:
            dtypes.BF16_SEEN[0] = True
        self.in_dtype = x.dtype
        return cast_kernels.convert(x, target)

    def backward_gpu(self, xp, gy):
        if cast_kernels.covers(gy, self.in_dtype):
            return (cast_kernels.convert(gy, self.in_dtype),)
        return self.backward(xp, gy)


class ToDevice(Op):
    name = "to_device"
    complex_ok = True
    bf16_native = True  # copies bfloat16 as it is
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, device):
        self.device = device

    def forward(self, xp, x):
        self.source = devices.of_array(x)
        return backend.to_device(x, self.device)

    def backward(self, xp, gy):
        return (ToDevice(self.source).call(xp, gy) if is_graph(xp) else backend.to_device(gy, self.source),)


class Clone(Op):
    """A copy: ``order="K"`` keeps the memory layout (PyTorch's ``preserve_format``),
    ``"C"`` makes it C-contiguous; ``axes`` (e.g. ``(0, 2, 3, 1)``) stores it in that axis
    order instead, shape unchanged (channels-last)."""
    name = "clone"
    complex_ok = True
    bf16_native = True  # copies bfloat16 as it is
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, order="K", axes=None):
        self.order, self.axes = order, axes

    def forward(self, xp, x):
        if self.axes is not None:
            return formats.store(xp, x, self.axes)
        return xp.array(x, copy=True, order=self.order)

    def backward(self, xp, gy):
        return (gy,)


# ---- public functions -----------------------------------------------------------------
def _parse_to(args, kwargs):
    """(device, dtype, copy) from the three call forms of ``Tensor.to``."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    if not isinstance(copy, builtins.bool):
        raise ArgumentTypeError(f"to: copy must be a bool, got {builtins.type(copy).__name__}")
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise ArgumentTypeError(f"to: unexpected keyword arguments {sorted(kwargs)}")
    args = list(args)
    if args and isinstance(args[0], Tensor):  # to(other): other's device and dtype
        other = args.pop(0)
        device, dtype = other.device, other.dtype
    while args:
        a = args.pop(0)
        if isinstance(a, builtins.bool):  # to(dtype, non_blocking, copy) positional flags
            if args:
                copy = args.pop(0)
                if not isinstance(copy, builtins.bool):
                    raise ArgumentTypeError(f"to: copy must be a bool, got {builtins.type(copy).__name__}")
            continue
        if isinstance(a, str) and device is None and not _is_device_string(a):
            dtype = a  # tinynet also takes dtype names such as "float64"
        elif isinstance(a, (str, devices.device, builtins.int)) and device is None:
            device = a
        elif dtype is None:
            dtype = a
        else:
            raise ArgumentTypeError(f"to: could not understand the argument {a!r}")
    return device, dtype, copy


def _is_device_string(s):
    try:
        devices.device(s)
        return True
    except Exception:
        return False


def to(input, *args, **kwargs):
    """``input`` on another device and/or dtype; ``input`` itself when nothing changes.

    Call forms (PyTorch's): ``to(dtype)``, ``to(device, dtype=None)``, ``to(other)`` (take
    ``other``'s device and dtype); keywords ``device``, ``dtype``, ``non_blocking``
    (accepted; copies are synchronous), ``copy`` (always copy), ``memory_format``
    (:mod:`tinynet.memory_format`; default ``preserve_format``).

    Raises:
        DeviceError: an unknown device, or cuda without a GPU. DTypeError: an unknown dtype.
        ShapeError: ``channels_last`` for a tensor that is not 4-D.
    """
    check_tensor("to", "input", input)
    kwargs = dict(kwargs)
    fmt = formats.check("to", kwargs.pop("memory_format", None), formats.preserve_format)
    device, dtype, copy = _parse_to(args, kwargs)
    out = input
    if device is not None:
        dev = devices.resolve(device, "to")
        if dev != input.device:
            out = ToDevice(dev).apply(out)
    if dtype is not None:
        dt = dtypes.as_dtype(dtype, "to")
        if dt == dtypes.bfloat16 and out.is_cuda:
            backend.check_bfloat16("to")
        if dt != out.dtype:
            if out.dtype.kind == "c" and dt.kind != "c":
                warnings.warn(f"to: casting complex values to {dt} discards the imaginary part", UserWarning,
                              stacklevel=2)
            out = Cast(dt).apply(out)
    if fmt is not formats.preserve_format:
        laid_out = contiguous(out, memory_format=fmt)
        copy = copy and laid_out is out
        out = laid_out
    if copy and out is input:
        out = Clone("K").apply(input)
    return out


_TYPE_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "int64": "Long", "int32": "Int",
               "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
               "bfloat16": "BFloat16", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def type(input, dtype=None, non_blocking=False):
    """Cast to ``dtype`` (a dtype, or a type name such as ``"torch.DoubleTensor"``, also
    spelled ``tinynet.``); without one, the type name (``"tinynet.FloatTensor"``).

    Raises:
        DTypeError: an unknown dtype or type name.
    """
    check_tensor("type", "input", input)
    if dtype is None:
        return f"tinynet.{'cuda.' if input.is_cuda else ''}{_TYPE_NAMES[input.dtype.name]}Tensor"
    if isinstance(dtype, str) and dtype.endswith("Tensor"):
        kind = dtype.rsplit(".", 1)[-1][:-len("Tensor")]
        names = {v: k for k, v in _TYPE_NAMES.items()}
        if kind not in names:
            from ..errors import DTypeError
            raise DTypeError(f"type: unknown tensor type {dtype!r}")
        out = to(input, dtype=names[kind])
        return to(out, "cuda") if ".cuda." in dtype else out
    return to(input, dtype=dtype)


def type_as(input, other):
    """``input`` cast to ``other``'s dtype."""
    return to(input, dtype=check_tensor("type_as", "other", other).dtype)


def _caster(name, dt):
    def cast(input, memory_format=None):
        return to(input, dtype=dt, memory_format=memory_format)
    return named(cast, name, f"``input.to({dt.name})``.")


float = _caster("float", dtypes.float32)
double = _caster("double", dtypes.float64)
half = _caster("half", dtypes.float16)
bfloat16 = _caster("bfloat16", dtypes.bfloat16)
long = _caster("long", dtypes.int64)
int = _caster("int", dtypes.int32)
short = _caster("short", dtypes.int16)
char = _caster("char", dtypes.int8)
byte = _caster("byte", dtypes.uint8)
bool = _caster("bool", dtypes.bool_)


def cpu(input, memory_format=None):
    """``input`` on the CPU (itself if it is there)."""
    return to(input, "cpu", memory_format=memory_format)


def cuda(input, device=None, non_blocking=False, memory_format=None):
    """``input`` on GPU ``device`` (default the current one).

    Raises:
        DeviceError: no GPU is usable.
    """
    if device is None:
        device = "cuda"
    elif isinstance(device, builtins.int) and not isinstance(device, builtins.bool):
        device = devices.device("cuda", device)
    return to(input, device, memory_format=memory_format)


def clone(input, *, memory_format=None):
    """A copy with its own memory, laid out like ``input`` (PyTorch's default
    ``preserve_format``), or as ``memory_format`` says (``tinynet.contiguous_format``: C
    order; ``tinynet.channels_last``: NHWC storage of a 4-D tensor); differentiable (the
    gradient passes through).

    Raises:
        ShapeError: ``channels_last`` for a tensor that is not 4-D.
    """
    check_tensor("clone", "input", input)
    fmt = formats.check("clone", memory_format, formats.preserve_format)
    if fmt is formats.preserve_format:
        return Clone("K").apply(input)
    return Clone("C", formats.axes("clone", fmt, input.ndim)).apply(input)


def contiguous(input, memory_format=None):
    """``input`` itself when its memory is laid out as ``memory_format`` says (default
    ``tinynet.contiguous_format``, C order; ``tinynet.channels_last``: NHWC storage of a
    4-D tensor), else a copy laid out so; differentiable.

    Raises:
        ShapeError: ``channels_last`` for a tensor that is not 4-D.
    """
    check_tensor("contiguous", "input", input)
    fmt = formats.check("contiguous", memory_format)
    if fmt is formats.preserve_format:
        return input
    order = formats.axes("contiguous", fmt, input.ndim)
    if formats.is_laid_out(input.array, fmt):
        return input
    return Clone("C", order).apply(input)


def view_dtype(input, dtype):
    """The same bytes read as ``dtype`` (``x.view(tinynet.int32)``); not differentiable.

    Raises:
        ArgumentError: the last dimension's byte size does not divide into ``dtype``'s.
    """
    dt = dtypes.as_dtype(dtype, "view")
    if dt is None:
        raise ArgumentTypeError("view: expected a dtype or a shape, got None")
    a = input.array
    if dt.itemsize != a.dtype.itemsize and (a.ndim == 0 or (a.shape[-1] * a.dtype.itemsize) % dt.itemsize):
        raise ArgumentError(f"view: cannot view {a.dtype} of shape {input.shape} as {dt}")
    try:
        viewed = a.view(dt)
    except ValueError:  # another element size needs the last dim contiguous (PyTorch: stride 1)
        raise ShapeError(f"view: the last dimension must be contiguous to view {a.dtype} as {dt}, got a "
                         f"strided tensor of shape {input.shape}") from None
    out = Tensor._wrap(viewed)
    out._vc = input._vc
    return out
