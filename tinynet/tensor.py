"""The Tensor: an n-dimensional array (NumPy or CuPy) with autograd bookkeeping.

A :class:`Tensor` holds ``array`` (a ``numpy.ndarray`` on the CPU or a ``cupy.ndarray`` on
a GPU) and, when ``requires_grad`` is set, takes part in reverse-mode autodiff
(:mod:`tinynet.autograd`). This module defines storage, metadata, conversion and the
autograd attributes only; the math methods (``x + y``, ``x.sum()``, ``x.view(...)``, ...)
are the functions of :mod:`tinynet.ops`, attached to the class once by
:mod:`tinynet.ops.methods`, so the ops need not be imported here.
"""
import copy as _copy

import numpy

from .dtypes import is_floating
from . import backend, capture, devices, dtypes, layouts as _formats, printoptions
from .autograd import engine, node, post_hooks
from .errors import ArgumentError, ArgumentTypeError, AutogradError, DTypeError, IndexOutOfRangeError
from .size import Size


class Tensor:
    """An array with an optional gradient.

    Attributes:
        array: the underlying ``numpy.ndarray`` or ``cupy.ndarray`` (tinynet's own; PyTorch
            has no equivalent). ``data`` is, as in PyTorch, a Tensor sharing it.
        requires_grad (bool): whether ops on this tensor are recorded for autograd.
        grad (Tensor or None): accumulated gradient after :meth:`backward` (leaves only,
            unless :meth:`retain_grad` was called).

    Construct tensors with :func:`tinynet.tensor` and the factory functions.
    ``Tensor(data)`` builds a float tensor of the default dtype from data, and
    ``Tensor(2, 3)`` an uninitialised one of that shape, as PyTorch's legacy constructor.
    """

    __slots__ = ("array", "requires_grad", "grad", "_grad_fn", "_output_nr", "_vc", "_base",
                 "_retains_grad", "_hooks", "__weakref__")
    __array_priority__ = 1000  # make NumPy scalars defer to Tensor's reflected operators

    def __init__(self, *data, requires_grad=False):
        dt = dtypes.get_default_dtype()
        xp = backend.module_for(devices.default_device())
        if len(data) == 1 and not isinstance(data[0], (int, numpy.integer)):
            src = data[0].array if isinstance(data[0], Tensor) else data[0]
            if hasattr(src, "__cuda_array_interface__") and not isinstance(src, numpy.ndarray):
                xp = backend.require_cupy("Tensor")
            try:
                arr = xp.array(src, dtype=dt)
            except (TypeError, ValueError) as exc:
                raise DTypeError(f"Tensor: cannot build a float tensor from {type(src).__name__} ({exc})") from None
        else:
            sizes = data[0] if len(data) == 1 and isinstance(data[0], (tuple, list)) else data
            if any(isinstance(s, bool) or not isinstance(s, (int, numpy.integer)) or s < 0 for s in sizes):
                raise ArgumentError(f"Tensor: sizes must be non-negative ints, got {tuple(sizes)}")
            arr = xp.empty(tuple(int(s) for s in sizes), dtype=dt)
        self._init(arr)
        if requires_grad:
            self.requires_grad_(True)

    def _init(self, array):
        self.array = array
        self.requires_grad = False
        self.grad = None
        self._grad_fn = None
        self._output_nr = 0
        self._vc = [0, 0]  # [in-place changes, time of the last one]: see autograd.node.bump_version
        self._base = None
        self._retains_grad = False
        self._hooks = None

    @staticmethod
    def _wrap(array):
        """A new leaf tensor around ``array`` (no copy, no checks): the ops' way to build outputs.
        ``Op.apply`` builds its outputs inline with the same fields: a new field goes in both."""
        t = object.__new__(Tensor)
        t.array = array
        t.requires_grad = False
        t.grad = None
        t._grad_fn = None
        t._output_nr = 0
        t._vc = [0, 0]
        t._base = None
        t._retains_grad = False
        t._hooks = None
        return t

    # ---- metadata -------------------------------------------------------------------
    @property
    def shape(self):
        """The dimension sizes, a :class:`tinynet.Size` (a tuple)."""
        return tuple.__new__(Size, self.array.shape)

    @property
    def dtype(self):
        """The element type (a ``numpy.dtype``; ``tinynet.float32`` and friends)."""
        return self.array.dtype

    @property
    def ndim(self):
        return self.array.ndim

    @property
    def device(self):
        """The :class:`tinynet.device` holding the array (``cpu`` or ``cuda:<n>``)."""
        return devices.of_array(self.array)

    @property
    def is_cuda(self):
        return isinstance(self.array, backend._CUPY_NDARRAY)

    @property
    def is_leaf(self):
        """True for tensors not made by a recorded op (user-made, or made without grad)."""
        return self._grad_fn is None

    @property
    def grad_fn(self):
        """The op that produced this tensor, or ``None`` for a leaf."""
        return self._grad_fn

    @property
    def _version(self):
        """How many in-place changes this tensor's storage has seen."""
        return self._vc[0]

    @property
    def data(self):
        """A tensor sharing this one's array, cut from the graph (PyTorch's ``.data``):
        changes through it are not seen by autograd's in-place checks."""
        return Tensor._wrap(self.array)

    @data.setter
    def data(self, value):
        self.array = value.array if isinstance(value, Tensor) else value

    def size(self, dim=None):
        """The shape, or the size of dimension ``dim``."""
        if dim is None:
            return tuple.__new__(Size, self.array.shape)
        n = max(self.array.ndim, 1)
        if isinstance(dim, bool) or not isinstance(dim, (int, numpy.integer)) or not -n <= dim < n:
            raise IndexOutOfRangeError(f"size: dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                                       f"but got {dim})")
        return self.array.shape[dim] if self.array.ndim else 1

    def numel(self):
        """Number of elements."""
        return int(self.array.size)

    nelement = numel

    def dim(self):
        """Number of dimensions."""
        return self.array.ndim

    ndimension = dim

    def element_size(self):
        """Bytes per element."""
        return self.array.dtype.itemsize

    @property
    def itemsize(self):
        return self.array.dtype.itemsize

    @property
    def nbytes(self):
        return int(self.array.nbytes)

    def is_floating_point(self):
        return is_floating(self.array.dtype)

    def is_contiguous(self, memory_format=None):
        """True when the elements are laid out in ``memory_format`` without gaps (default
        C order; ``tinynet.channels_last``: NHWC storage of a 4-D tensor, False for other
        ranks, as PyTorch)."""
        return _formats.is_laid_out(self.array, _formats.check("is_contiguous", memory_format))

    def get_device(self):
        """The GPU index, or -1 for a CPU tensor (PyTorch's convention)."""
        return self.array.device.id if self.is_cuda else -1

    def __len__(self):
        if self.array.ndim == 0:
            raise ArgumentTypeError("len() of a 0-d tensor")  # a TypeError, as PyTorch
        return self.array.shape[0]

    def __repr__(self):
        body = numpy.array2string(self.numpy(force=True), separator=", ", **printoptions.array2string_kwargs())
        extra = f", device='{self.device}'" if self.is_cuda else ""
        if self.dtype != dtypes.get_default_dtype() and self.dtype not in (dtypes.int64, dtypes.bool_):
            extra += f", dtype=tinynet.{self.dtype.name}"
        if self._grad_fn is not None:
            extra += f", grad_fn={self._grad_fn!r}"
        elif self.requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({body}{extra})"

    def __format__(self, format_spec):
        """A 0-d Tensor formats as its number (``f"{loss:.4f}"``); any other tensor (and, as in
        PyTorch, a 0-d subclass such as Parameter) only with an empty spec (its ``str``), else
        TypeError: unsupported format string."""
        if self.array.ndim == 0 and type(self) is Tensor:
            return self.detach().item().__format__(format_spec)
        return object.__format__(self, format_spec)

    # ---- conversion -----------------------------------------------------------------
    def numpy(self, force=False):
        """A NumPy array with the values (a copy from the GPU; a view on the CPU).

        Args:
            force (bool): allow it on a tensor that requires grad (as ``detach().numpy()``).

        Raises:
            AutogradError: the tensor requires grad (call ``detach()`` first), unless ``force``.
        """
        if self.requires_grad and not force:
            raise AutogradError("numpy: can't call numpy() on a tensor that requires grad; use "
                                "t.detach().numpy()")
        if isinstance(self.array, backend._CUPY_NDARRAY):
            capture.check_sync("numpy")
            return backend.cupy.asnumpy(self.array)
        return self.array

    def item(self):
        """The single value as a Python number (synchronises with the GPU).

        Raises:
            ArgumentError: the tensor has more than one element.
        """
        if self.array.size != 1:
            raise ArgumentError(f"item: only one-element tensors can be converted to Python scalars, "
                                f"got shape {self.shape}")
        if isinstance(self.array, backend._CUPY_NDARRAY):
            capture.check_sync("item")
        return self.array.reshape(()).item()

    def tolist(self):
        """The values as (nested) Python lists of numbers."""
        return self.numpy(force=True).tolist()

    def __float__(self):
        return float(self._real_item("float"))

    def __int__(self):
        return int(self._real_item("int"))

    def _real_item(self, op):
        v = self.item()
        if isinstance(v, complex):
            raise DTypeError(f"{op}: a complex value ({v}) cannot be converted to a real number; use .real or .abs()")
        return v

    def __index__(self):
        if self.array.dtype.kind not in "iu" or self.array.size != 1:
            raise DTypeError(f"__index__: only one-element integer tensors can be used as an index, got "
                             f"{self.dtype} of shape {self.shape}")
        return int(self.item())

    def __bool__(self):
        if self.array.size != 1:
            raise ArgumentError(f"bool: a tensor with {self.array.size} elements is ambiguous; use "
                                ".any() or .all()")
        return bool(self.item())

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a if dtype is None else a.astype(dtype)

    def __dlpack__(self, *args, **kwargs):
        return self.array.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    @property
    def __cuda_array_interface__(self):
        """CuPy's array interface, so ``cupy.asarray(t)`` shares a GPU tensor's memory."""
        if not self.is_cuda:
            raise AttributeError("__cuda_array_interface__: a CPU tensor has none")
        return self.array.__cuda_array_interface__

    def __reduce_ex__(self, protocol):
        # pickling (DataLoader workers, multiprocessing, tinynet.save) carries the values, dtype,
        # device and the class (a Parameter stays one)
        args = (self.numpy(force=True), str(self.device), self.requires_grad and self.is_leaf)
        return (_rebuild, args if type(self) is Tensor else args + (type(self),))

    def __deepcopy__(self, memo):
        if self._grad_fn is not None:
            raise AutogradError("deepcopy: only leaf tensors (made by the user, not by a recorded op) "
                                "can be deep-copied; detach() first")
        out = object.__new__(type(self))
        Tensor._init(out, self.array.copy())
        out.requires_grad = self.requires_grad
        memo[id(self)] = out
        if self.grad is not None:
            out.grad = _copy.deepcopy(self.grad, memo)
        return out

    # ---- autograd -------------------------------------------------------------------
    def detach(self):
        """A tensor sharing ``array`` (and the version counter) but cut from the graph."""
        t = Tensor._wrap(self.array)
        t._vc = self._vc
        return t

    def detach_(self):
        """Cut this tensor from the graph, in place; returns self."""
        self._grad_fn = None
        self.requires_grad = False
        return self

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` in place (float and complex leaves only); returns self.

        Raises:
            DTypeError: asked for an integer or bool tensor.
            AutogradError: unset on a non-leaf tensor.
        """
        if requires_grad and not is_floating(self.array.dtype) and self.array.dtype.kind != "c":
            raise DTypeError(f"requires_grad_: only floating-point and complex tensors can require gradients, "
                             f"got {self.dtype}")
        if not requires_grad and self._grad_fn is not None:
            raise AutogradError("requires_grad_: cannot unset requires_grad of a non-leaf tensor; "
                                "use detach()")
        self.requires_grad = bool(requires_grad)
        return self

    def retain_grad(self):
        """Keep ``grad`` on this non-leaf tensor after backward."""
        if not self.requires_grad:
            raise AutogradError("retain_grad: can't retain the gradient of a tensor that does not require grad")
        self._retains_grad = True
        if self._grad_fn is not None:
            self._grad_fn.retain(self._output_nr, self)
        return self

    @property
    def retains_grad(self):
        return self._retains_grad

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor
        replaces the gradient. Returns a handle whose ``remove()`` unregisters it.

        Raises:
            AutogradError: the tensor does not require grad.
        """
        if not self.requires_grad:
            raise AutogradError("register_hook: can't register a hook on a tensor that does not require grad")
        if self._grad_fn is not None:  # a non-leaf: the hook sits on the op that will produce its gradient
            return _HookHandle(self._grad_fn.add_hook(self._output_nr, hook), hook)
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return _HookHandle(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Call ``hook(self)`` each time backward has added this leaf's gradient to ``.grad``
        (during the walk, as soon as no op can add more; not in :func:`tinynet.autograd.grad`).
        The hook must return None. Returns a handle whose ``remove()`` unregisters it.

        Raises:
            AutogradError: the tensor does not require grad, or is not a leaf.
            ArgumentTypeError: ``hook`` is not callable.
        """
        if not callable(hook):
            raise ArgumentTypeError(f"register_post_accumulate_grad_hook: hook must be callable, got "
                                    f"{type(hook).__name__}")
        if not self.requires_grad:
            raise AutogradError("register_post_accumulate_grad_hook: cannot register a hook on a tensor that "
                                "doesn't require gradient")
        if self._grad_fn is not None:
            raise AutogradError("register_post_accumulate_grad_hook: post accumulate grad hooks cannot be "
                                "registered on non-leaf tensors")
        return post_hooks.register(self, hook)

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Compute gradients of this tensor w.r.t. every leaf that requires grad.

        Args:
            gradient (Tensor or array, optional): same shape as ``self``; required
                unless ``self`` has exactly one element.
            retain_graph (bool, optional): keep the graph's saved arrays for another
                backward. Default: ``create_graph``.
            create_graph (bool): record the backward so ``.grad`` can be differentiated.
            inputs (Tensor or sequence, optional): accumulate only into these.

        Raises:
            AutogradError: see :func:`tinynet.autograd.backward`.
        """
        engine.backward([self], [gradient], retain_graph, create_graph, inputs)

    __hash__ = object.__hash__


class _HookHandle:
    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


def _rebuild(values, device, requires_grad, cls=None):
    dev = devices.resolve(device, "unpickle") if device != "cpu" else devices.CPU
    t = Tensor._wrap(backend.to_device(values, dev))
    if cls is not None:
        try:
            t.__class__ = cls  # a subclass without fields of its own (Parameter)
        except TypeError:  # one with a __dict__: a fresh instance around the same array
            t = object.__new__(cls)
            Tensor._init(t, backend.to_device(values, dev))
    t.requires_grad = requires_grad
    return t


node.tensor_type, node._wrap = Tensor, Tensor._wrap
