"""``Parameter``: a tensor that a Module registers as learnable (PyTorch's ``torch.nn.Parameter``);
``Buffer``, a tensor that a Module registers as a buffer when assigned as an attribute; and the
lazy modules' placeholders ``UninitializedParameter`` and ``UninitializedBuffer``."""
from ... import backend, devices, dtypes
from ...errors import ArgumentTypeError, LazyModuleError
from ...tensor import Tensor


def _array_of(data, owner):
    """The array behind ``data`` (a Tensor, an array-like, or None for an empty float tensor)."""
    if data is None:
        return backend.xp.empty(0, dtype=dtypes.get_default_dtype())
    if not isinstance(data, Tensor):
        from ...ops.creation import tensor
        try:
            data = tensor(data)
        except TypeError as exc:
            raise ArgumentTypeError(f"{owner}: data must be a Tensor or array-like, got {type(data).__name__}") \
                from exc
    return data.array


class Parameter(Tensor):
    """A tensor that is a learnable parameter of a Module (``requires_grad=True``).

    Assigning one as a Module attribute registers it, so ``parameters()`` and
    ``state_dict()`` find it. ``Parameter(t)`` shares ``t``'s array.

    Args:
        data (Tensor or array): initial values (empty float tensor when None).
        requires_grad (bool): default True.

    Raises:
        DTypeError: ``requires_grad`` on a non-float tensor.
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        self._init(_array_of(data, "Parameter"))
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Buffer(Tensor):
    """A tensor that a Module registers as a buffer (as ``register_buffer`` does) when it is
    assigned as an attribute: ``self.mean = nn.Buffer(tinynet.zeros(3))``. It shares
    ``data``'s memory and keeps its ``requires_grad``.

    Args:
        data (Tensor or array): the values (an empty float tensor when None).
        persistent (bool, keyword-only): whether the buffer is part of ``state_dict``.
            Default True.
    """

    __slots__ = ("persistent",)

    def __init__(self, data=None, *, persistent=True):
        self._init(_array_of(data, "Buffer"))
        self.persistent = bool(persistent)
        if isinstance(data, Tensor) and data.requires_grad:
            self.requires_grad_(True)


class UninitializedTensorMixin:
    """What the placeholders of lazy modules share: a 0-element array that carries the
    device and dtype the real tensor will get (``to()``, ``double()`` ... change them), and
    :meth:`materialize`, which gives it its shape and turns it into ``cls_to_become``."""

    __slots__ = ()
    cls_to_become: type = Tensor

    def materialize(self, shape, device=None, dtype=None):
        """Make this placeholder a real (uninitialised) tensor of ``shape``, on ``device`` and
        of ``dtype`` (default: the placeholder's own), of class ``cls_to_become``.

        Raises:
            ArgumentTypeError: ``shape`` is not a sequence of ints.
        """
        if not isinstance(shape, (tuple, list)) or any(isinstance(s, bool) or not isinstance(s, int) or s < 0
                                                       for s in shape):
            raise ArgumentTypeError(f"materialize: shape must be a tuple of non-negative ints, got {shape!r}")
        dev = devices.resolve(device, "materialize") if device is not None else self.device
        dt = dtypes.as_dtype(dtype, "materialize") if dtype is not None else self.array.dtype
        self.array = backend.to_device(backend.module_for(dev).empty(tuple(shape), dtype=dt), dev)
        self.__class__ = self.cls_to_become

    def share_memory_(self):
        raise LazyModuleError("share_memory_: can't share memory on an uninitialized parameter or buffer; call "
                         "forward to initialize the parameters first")

    def __repr__(self):
        return f"<{type(self).__name__}>"


def _placeholder(device, dtype, owner):
    dev = devices.resolve(device, owner)
    dt = dtypes.as_dtype(dtype, owner) if dtype is not None else dtypes.get_default_dtype()
    return backend.to_device(backend.module_for(dev).empty(0, dtype=dt), dev)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is not known yet (the lazy modules' weights): it holds no
    values until :meth:`materialize` makes it a :class:`Parameter`.

    Args:
        requires_grad (bool): default True.
        device, dtype: where and in which dtype it will be made (default the default
            device and float dtype).
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        self._init(_placeholder(device, dtype, "UninitializedParameter"))
        if requires_grad:
            self.requires_grad_(True)


class UninitializedBuffer(UninitializedTensorMixin, Buffer):
    """A buffer whose shape is not known yet (the lazy norm layers' running statistics): it
    holds no values until :meth:`materialize` makes it a :class:`Buffer`.

    Args:
        requires_grad (bool): default False.
        device, dtype: where and in which dtype it will be made.
        persistent (bool): whether it is part of ``state_dict``. Default True.
    """

    __slots__ = ()
    cls_to_become = Buffer

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        self._init(_placeholder(device, dtype, "UninitializedBuffer"))
        self.persistent = bool(persistent)
        if requires_grad:
            self.requires_grad_(True)


def is_lazy(t):
    """True for a placeholder of a lazy module (not materialised yet)."""
    return isinstance(t, UninitializedTensorMixin)
