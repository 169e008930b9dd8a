"""PyTorch's legacy typed tensor classes and the Tensor's "what kind of tensor" queries.

``tinynet.FloatTensor``, ``DoubleTensor``, ``HalfTensor``, ``BFloat16Tensor``, ``ByteTensor``,
``CharTensor``, ``ShortTensor``, ``IntTensor``, ``LongTensor`` and ``BoolTensor`` are, as in
PyTorch, legacy constructors and ``isinstance`` checks, not subclasses: ``LongTensor([1, 2])``
is an int64 :class:`~tinynet.Tensor` of that data, ``FloatTensor(2, 3)`` an uninitialised
float32 one of that shape, ``FloatTensor()`` an empty one, ``FloatTensor(t)`` the float32
tensor ``t`` itself; ``isinstance(t, tinynet.LongTensor)`` is true for a CPU int64 tensor.
``t.type(tinynet.DoubleTensor)`` converts (see :func:`tinynet.Tensor.type`).

Also ``set_default_tensor_type`` and ``typename``, and the Tensor's flags for layouts and
kinds tinynet does not have (``is_sparse``, ``is_quantized``, ``is_nested``, ... always
False; ``layout`` is ``tinynet.strided``), which code checks before taking a dense path.
"""
import numbers
import warnings

import numpy

from .. import backend, devices, dtypes
from ..errors import ArgumentTypeError, DeviceError, DTypeError
from ..layouts import strided
from ..size import Size
from ..tensor import Tensor
from .conversion import clone
from .creation import empty, tensor
from .tensor_properties import data_ptr
from .util import check_tensor


class _TensorType(type):
    """The metaclass of the typed tensor classes: calling one builds a Tensor of its dtype,
    ``isinstance`` checks dtype and device, attribute look-ups fall through to the Tensor's
    methods (``tinynet.FloatTensor.add`` is ``Tensor.add``), as PyTorch's ``tensortype``."""

    dtype: numpy.dtype
    is_cuda = False
    is_sparse = False

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.array.dtype == cls.dtype and not obj.is_cuda

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(Tensor, name)

    def __repr__(cls):
        return f"<class 'tinynet.{cls.__name__}'>"

    def __call__(cls, *args, device=None):
        op = cls.__name__
        if device is not None and devices.resolve(device, op).type != "cpu":
            raise DeviceError(f"{op}: legacy constructor expects device type: cpu but device type: "
                              f"{devices.resolve(device, op).type} was passed")
        return legacy_new(op, cls.dtype, devices.CPU, args)


def legacy_new(op, dtype, device, args):
    """PyTorch's legacy constructor forms: no argument (an empty tensor), sizes (uninitialised),
    a ``Size``, one tensor of ``dtype`` on ``device`` (itself), or one sequence of data."""
    if len(args) == 1 and isinstance(args[0], Tensor):
        if args[0].array.dtype != dtype or args[0].device != device:
            raise DTypeError(f"{op}: expected a tensor of dtype {dtype} on {device}, got {args[0].dtype} on "
                             f"{args[0].device}")
        return args[0]
    if not args:
        return empty(0, dtype=dtype, device=device)
    if len(args) == 1 and isinstance(args[0], Size) or all(
            isinstance(a, (numbers.Integral, numpy.integer)) and not isinstance(a, bool) for a in args):
        return empty(*(args[0] if len(args) == 1 and isinstance(args[0], Size) else args), dtype=dtype, device=device)
    if len(args) != 1:
        raise ArgumentTypeError(f"{op}: expected sizes (ints), one sequence of data or one tensor, got "
                                f"{tuple(type(a).__name__ for a in args)}")
    data = args[0]
    if not isinstance(data, (list, tuple, numpy.ndarray)) or isinstance(data, str):
        raise ArgumentTypeError(f"{op}: data must be a sequence (got {type(data).__name__})")
    return tensor(data, dtype=dtype, device=device)


def _typed(name, dtype):
    return _TensorType(name, (), {"dtype": dtype, "__doc__": f"The legacy constructor and ``isinstance`` check of "
                                                              f"CPU {dtype} tensors (``torch.{name}``)."})


FloatTensor = _typed("FloatTensor", dtypes.float32)
DoubleTensor = _typed("DoubleTensor", dtypes.float64)
HalfTensor = _typed("HalfTensor", dtypes.float16)
BFloat16Tensor = _typed("BFloat16Tensor", dtypes.bfloat16)
ByteTensor = _typed("ByteTensor", dtypes.uint8)
CharTensor = _typed("CharTensor", dtypes.int8)
ShortTensor = _typed("ShortTensor", dtypes.int16)
IntTensor = _typed("IntTensor", dtypes.int32)
LongTensor = _typed("LongTensor", dtypes.int64)
BoolTensor = _typed("BoolTensor", dtypes.bool_)
_BY_NAME = {c.__name__: c for c in (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor, CharTensor,
                                    ShortTensor, IntTensor, LongTensor, BoolTensor)}


def set_default_tensor_type(t):
    """Set the default float dtype from a floating-point tensor type (``torch.set_default_tensor_type``,
    deprecated in PyTorch in favour of :func:`tinynet.set_default_dtype`): a typed class such
    as ``tinynet.DoubleTensor``, or its name (``"torch.DoubleTensor"``, ``"tinynet.DoubleTensor"``;
    a ``".cuda."`` name such as ``"torch.cuda.FloatTensor"`` also makes CUDA the default device).

    Warns:
        UserWarning: deprecated, as PyTorch's.

    Raises:
        ArgumentTypeError: ``t`` is neither a tensor type nor a str.
        DTypeError: an unknown type name, or a type that is not floating-point.
    """
    warnings.warn("set_default_tensor_type() is deprecated as of PyTorch 2.1, please use set_default_dtype() and "
                  "set_default_device() as alternatives.", UserWarning, stacklevel=2)
    if isinstance(t, str):
        cuda = ".cuda." in t
        cls = _BY_NAME.get(t.rsplit(".", 1)[-1]) if t.startswith(("torch.", "tinynet.")) else None
        if cls is None:
            raise DTypeError(f"set_default_tensor_type: invalid type: {t!r}")
    elif isinstance(t, _TensorType):
        cls, cuda = t, False
    else:
        raise ArgumentTypeError(f"set_default_tensor_type: expected a tensor type or its name, got "
                                f"{type(t).__name__}")
    if not dtypes.is_floating(cls.dtype) or cls.dtype == dtypes.bfloat16:
        raise DTypeError(f"set_default_tensor_type: only floating-point types are supported as the default type, "
                         f"got {cls.__name__}")
    if cuda:
        devices.set_default_device("cuda")
    dtypes.set_default_dtype(cls.dtype)


def typename(obj):
    """The type of ``obj`` as a string: a tensor's type name (``"tinynet.FloatTensor"``, as
    :meth:`Tensor.type`), else the class's module and qualified name (``"tinynet.nn.modules.linear.Linear"``),
    or the bare name for a built-in type (``"int"``)."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    module = getattr(cls, "__module__", "")
    return cls.__qualname__ if module in ("builtins", "__builtin__", None, "") else f"{module}.{cls.__qualname__}"


# ---- the Tensor's layout and kind flags ------------------------------------------------------
def _layout(self):
    """``tinynet.strided``: every tinynet tensor is a dense strided array."""
    return strided


def _false(self):
    """False: tinynet has no sparse, quantized, nested, MKL-DNN, Vulkan, XLA, IPU, MTIA or MAIA tensors."""
    return False


def is_pinned(self, device=None):
    """True when this CPU tensor's memory is page-locked for fast copies to the GPU (made by
    :meth:`pin_memory`); always False without CuPy and for GPU tensors."""
    check_tensor("is_pinned", "self", self)
    return backend.is_pinned(self.array)


def pin_memory(self, device=None):
    """A copy of this CPU tensor in page-locked (pinned) host memory, from which copies to the
    GPU are faster (CuPy's pinned memory pool); the tensor itself when it is pinned already.

    Raises:
        DeviceError: a GPU tensor, or no CUDA (CuPy) is available (as PyTorch).
    """
    check_tensor("pin_memory", "self", self)
    if self.is_cuda:
        raise DeviceError(f"pin_memory: cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if backend.is_pinned(self.array):
        return self
    out = clone(self)  # differentiable, as PyTorch's pin_memory: the gradient passes through
    out.array = backend.pinned_copy(out.array, "pin_memory")
    return out


def is_set_to(self, tensor):
    """True when both tensors view the same memory with the same shape and strides (the
    same start, sizes and steps), as PyTorch's ``is_set_to``."""
    check_tensor("is_set_to", "tensor", tensor)
    a, b = self.array, tensor.array
    return (type(a) is type(b) and a.dtype == b.dtype and a.shape == b.shape and a.strides == b.strides
            and data_ptr(self) == data_ptr(tensor))


def dense_dim(self):
    """The number of dense dimensions: all of them (tinynet tensors are dense)."""
    return self.ndim


def sparse_dim(self):
    """The number of sparse dimensions: 0 (tinynet tensors are dense)."""
    return 0


def to_dense(self, dtype=None, *, masked_grad=None):
    """The tensor itself (already dense), or cast to ``dtype``."""
    return self if dtype is None else self.to(dtype)


def dim_order(self, *, ambiguity_check=False):
    """The dims from the outermost in memory to the innermost (by decreasing stride; ties keep
    the dims' order), e.g. ``(0, 2, 3, 1)`` for a channels-last 4-D tensor."""
    steps = [abs(s) for s in self.array.strides]
    return tuple(sorted(range(self.ndim), key=lambda d: -steps[d]))


def is_distributed(self):
    """False: a tinynet tensor lives whole on one device."""
    return False


def new(self, *args, device=None):
    """PyTorch's legacy ``Tensor.new``: a tensor of this one's dtype (and device, unless ``device``
    says otherwise) from sizes (uninitialised), from a sequence of data, or empty without
    arguments; a tensor argument must already have this dtype and device (it is returned).

    Raises:
        ArgumentTypeError: arguments of another form. DTypeError: a tensor of another dtype.
    """
    check_tensor("new", "self", self)
    return legacy_new("new", self.dtype, self.device if device is None else devices.resolve(device, "new"), args)


def is_nonzero(self):
    """True when the one-element tensor is nonzero (``bool(self)``).

    Raises:
        ArgumentError: not exactly one element (as PyTorch).
    """
    return self.__bool__()


def cfloat(self, memory_format=None):
    """``self.to(tinynet.complex64)``."""
    return self.to(dtypes.complex64)


def cdouble(self, memory_format=None):
    """``self.to(tinynet.complex128)``."""
    return self.to(dtypes.complex128)


METHODS = {"new": new, "is_nonzero": is_nonzero, "cfloat": cfloat, "cdouble": cdouble,
           "is_pinned": is_pinned, "pin_memory": pin_memory, "is_set_to": is_set_to, "dense_dim": dense_dim,
           "sparse_dim": sparse_dim, "to_dense": to_dense, "dim_order": dim_order, "is_distributed": is_distributed,
           "const_data_ptr": data_ptr}
PROPERTIES = {"layout": _layout, **{n: _false for n in ("is_sparse", "is_sparse_csr", "is_quantized", "is_nested",
                                                         "is_mkldnn", "is_vulkan", "is_xla", "is_ipu", "is_mtia",
                                                         "is_maia")}}
