"""The Tensor: an n-dimensional array (NumPy or CuPy) with autograd bookkeeping.

A :class:`Tensor` wraps ``data`` (a ``numpy.ndarray`` on the CPU or a ``cupy.ndarray`` on
the GPU) and, when ``requires_grad`` is set, takes part in reverse-mode autodiff
(:mod:`tinynet.autograd`). Operators follow NumPy broadcasting; the method names follow
PyTorch (``sum(dim, keepdim)``, ``permute``, ``unsqueeze``, ...).
"""

import numpy

from . import autograd, backend
from .errors import AutogradError, DTypeError

float16, float32, float64 = numpy.float16, numpy.float32, numpy.float64
int8, int16, int32, int64 = numpy.int8, numpy.int16, numpy.int32, numpy.int64
uint8, bool_ = numpy.uint8, numpy.bool_
_DEFAULT_FLOAT = numpy.dtype(numpy.float32)


def _as_dtype(dtype, op):
    if dtype is None:
        return None
    try:
        return numpy.dtype(dtype)
    except TypeError:
        raise DTypeError(f"{op}: unknown dtype {dtype!r}") from None


class Tensor:
    """An array with an optional gradient.

    Attributes:
        data: the underlying ``numpy.ndarray`` or ``cupy.ndarray``.
        requires_grad (bool): whether ops on this tensor are recorded for autograd.
        grad (Tensor or None): accumulated gradient after :meth:`backward` (leaves only,
            unless :meth:`retain_grad` was called).

    Construct tensors with :func:`tinynet.tensor` and the factory functions.
    """

    __slots__ = ("data", "requires_grad", "grad", "_ctx", "_retains_grad", "__weakref__")
    __array_priority__ = 1000  # make NumPy scalars defer to Tensor's reflected operators

    def __init__(self, data, requires_grad=False):
        t = _creation.tensor(data)
        self.data = t.data
        self.requires_grad = bool(requires_grad)
        self.grad = None
        self._ctx = None
        self._retains_grad = False
        if requires_grad:
            _check_float("Tensor", self.data)

    @classmethod
    def _wrap(cls, data):
        t = object.__new__(Tensor)
        t.data = data
        t.requires_grad = False
        t.grad = None
        t._ctx = None
        t._retains_grad = False
        return t

    # ---- metadata -------------------------------------------------------------------
    @property
    def shape(self):
        """Tuple of dimension sizes."""
        return self.data.shape

    @property
    def dtype(self):
        """The ``numpy.dtype`` of the elements."""
        return self.data.dtype

    @property
    def ndim(self):
        return self.data.ndim

    @property
    def device(self):
        """``"cpu"`` (NumPy) or ``"cuda"`` (CuPy)."""
        return backend.device_of(self.data)

    @property
    def is_leaf(self):
        return self._ctx is None

    @property
    def grad_fn(self):
        """The Function that produced this tensor, or ``None`` for a leaf."""
        return self._ctx

    def size(self, dim=None):
        return self.data.shape if dim is None else self.data.shape[dim]

    def numel(self):
        return int(self.data.size)

    def dim(self):
        return self.data.ndim

    def __len__(self):
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.data.shape[0]

    def __repr__(self):
        body = numpy.array2string(self.numpy(), separator=", ", precision=4, threshold=50)
        extra = f", device='{self.device}'" if self.device != "cpu" else ""
        extra += f", dtype={self.dtype.name}" if self.dtype != _DEFAULT_FLOAT else ""
        if self._ctx is not None:
            extra += f", grad_fn=<{self._ctx.name}>"
        elif self.requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    # ---- conversion -----------------------------------------------------------------
    def numpy(self):
        """A NumPy array with the values (a copy from the GPU; a view on the CPU)."""
        if backend.is_gpu_array(self.data):
            return backend.cupy.asnumpy(self.data)
        return self.data

    def item(self):
        """The single value as a Python number (synchronises with the GPU).

        Raises:
            ValueError: the tensor has more than one element.
        """
        if self.data.size != 1:
            raise ValueError(f"item: only one-element tensors can be converted, got shape {self.shape}")
        return self.data.reshape(()).item()

    def tolist(self):
        return self.numpy().tolist()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        return bool(self.item())

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __dlpack__(self, *args, **kwargs):
        return self.data.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.data.__dlpack_device__()

    def to(self, device=None, dtype=None):
        """Copy to ``device`` (``"cpu"``/``"cuda"``) and/or cast to ``dtype``; differentiable."""
        if isinstance(device, (type, numpy.dtype)):
            device, dtype = None, device
        out = self
        if device is not None:
            dev = backend.normalize_device(device, "Tensor.to")
            if dev != self.device:
                from .nn.functional.math import ToDevice
                out = ToDevice(dev).apply(out)
        if dtype is not None:
            out = out.type(dtype)
        return out

    def cpu(self):
        return self.to("cpu")

    def cuda(self):
        return self.to("cuda")

    def type(self, dtype):
        """Cast to ``dtype`` (differentiable between float dtypes)."""
        dt = _as_dtype(dtype, "Tensor.type")
        if dt == self.dtype:
            return self
        from .nn.functional.math import Cast
        return Cast(dt).apply(self)

    def float(self):
        return self.type(numpy.float32)

    def double(self):
        return self.type(numpy.float64)

    def half(self):
        return self.type(numpy.float16)

    def long(self):
        return self.type(numpy.int64)

    def int(self):
        return self.type(numpy.int32)

    def bool(self):
        return self.type(numpy.bool_)

    # ---- autograd -------------------------------------------------------------------
    def detach(self):
        """A tensor sharing ``data`` but cut from the graph (``requires_grad=False``)."""
        return Tensor._wrap(self.data)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place (leaves of float dtype only); returns self."""
        if requires_grad:
            _check_float("requires_grad_", self.data)
        if not requires_grad and self._ctx is not None:
            raise AutogradError("requires_grad_: cannot unset requires_grad of a non-leaf tensor; "
                                "use detach()")
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self):
        """Keep ``grad`` on this non-leaf tensor after backward."""
        self._retains_grad = True
        return self

    def backward(self, gradient=None, retain_graph=False):
        """Compute gradients of this tensor w.r.t. every leaf that requires grad.

        Args:
            gradient (Tensor or array, optional): same shape as ``self``; required
                unless ``self`` has exactly one element.
            retain_graph (bool): keep the graph's saved arrays for another backward.
                Default ``False``.

        Raises:
            AutogradError: see :func:`tinynet.autograd.backward`.
        """
        autograd.backward(self, gradient, retain_graph)

    def zero_(self):
        self.data[...] = 0
        return self

    # ---- operators (implemented in nn.functional.math / shape) -------------------------
    def __add__(self, o): return _m.add(self, o)
    def __radd__(self, o): return _m.add(o, self)
    def __sub__(self, o): return _m.sub(self, o)
    def __rsub__(self, o): return _m.sub(o, self)
    def __mul__(self, o): return _m.mul(self, o)
    def __rmul__(self, o): return _m.mul(o, self)
    def __truediv__(self, o): return _m.div(self, o)
    def __rtruediv__(self, o): return _m.div(o, self)
    def __pow__(self, o): return _m.pow(self, o)
    def __rpow__(self, o): return _m.pow(o, self)
    def __mod__(self, o): return _m.remainder(self, o)
    def __rmod__(self, o): return _m.remainder(o, self)
    def __floordiv__(self, o): return _m.floor_divide(self, o)
    def __rfloordiv__(self, o): return _m.floor_divide(o, self)
    def __matmul__(self, o): return _m.matmul(self, o)
    def __rmatmul__(self, o): return _m.matmul(o, self)
    def __neg__(self): return _m.neg(self)
    def __pos__(self): return self
    def __abs__(self): return _m.abs(self)
    def __eq__(self, o): return _m.compare("eq", self, o)
    def __ne__(self, o): return _m.compare("ne", self, o)
    def __lt__(self, o): return _m.compare("lt", self, o)
    def __le__(self, o): return _m.compare("le", self, o)
    def __gt__(self, o): return _m.compare("gt", self, o)
    def __ge__(self, o): return _m.compare("ge", self, o)
    __hash__ = object.__hash__

    def __getitem__(self, index): return _s.getitem(self, index)

    def __setitem__(self, index, value):
        if self.requires_grad and autograd.is_grad_enabled():
            raise AutogradError("__setitem__: in-place assignment to a tensor that requires grad "
                                "is not supported; use tinynet.where or wrap in no_grad()")
        self.data[_s.to_index(index)] = value.data if isinstance(value, Tensor) else value

    def exp(self): return _m.exp(self)
    def log(self): return _m.log(self)
    def sqrt(self): return _m.sqrt(self)
    def abs(self): return _m.abs(self)
    def clamp(self, min=None, max=None): return _m.clamp(self, min, max)
    clip = clamp
    def maximum(self, o): return _m.maximum(self, o)
    def minimum(self, o): return _m.minimum(self, o)
    def sum(self, dim=None, keepdim=False): return _r.sum(self, dim, keepdim)
    def mean(self, dim=None, keepdim=False): return _r.mean(self, dim, keepdim)
    def var(self, dim=None, keepdim=False, correction=1): return _r.var(self, dim, keepdim, correction)
    def max(self, dim=None, keepdim=False): return _r.max(self, dim, keepdim)
    def min(self, dim=None, keepdim=False): return _r.min(self, dim, keepdim)
    def argmax(self, dim=None, keepdim=False): return _r.argmax(self, dim, keepdim)
    def argmin(self, dim=None, keepdim=False): return _r.argmin(self, dim, keepdim)
    def eq(self, o): return _m.compare("eq", self, o)
    def matmul(self, o): return _m.matmul(self, o)
    def pow(self, o): return _m.pow(self, o)
    def relu(self): return _act.relu(self)
    def sigmoid(self): return _act.sigmoid(self)
    def tanh(self): return _act.tanh(self)
    def softmax(self, dim): return _act.softmax(self, dim)
    def log_softmax(self, dim): return _act.log_softmax(self, dim)

    def reshape(self, *shape): return _s.reshape(self, *shape)
    view = reshape
    def transpose(self, dim0, dim1): return _s.transpose(self, dim0, dim1)
    def permute(self, *dims): return _s.permute(self, *dims)
    def flatten(self, start_dim=0, end_dim=-1): return _s.flatten(self, start_dim, end_dim)
    def squeeze(self, dim=None): return _s.squeeze(self, dim)
    def unsqueeze(self, dim): return _s.unsqueeze(self, dim)
    def expand(self, *shape): return _s.expand(self, *shape)

    @property
    def T(self):
        """Reversed dimensions (``permute(n-1, ..., 0)``)."""
        return _s.permute(self, *range(self.ndim - 1, -1, -1))


def _check_float(op, data):
    if data.dtype.kind not in "fc":
        raise DTypeError(f"{op}: only floating-point tensors can require gradients, got {data.dtype}")


autograd._Tensor = Tensor
from . import creation as _creation  # noqa: E402
from .nn.functional import math as _m, reduction as _r, shape as _s, activation as _act  # noqa: E402
