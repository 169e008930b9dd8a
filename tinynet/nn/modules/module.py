"""``Module``, the base class of layers and models, and ``Parameter``.

Attributes that are :class:`Parameter`, :class:`Module` or registered buffers are
tracked automatically, giving ``parameters()``, ``state_dict()`` and friends with
PyTorch's names (dotted paths such as ``conv1.weight``).
"""
import collections

import numpy

from ... import backend, devices, dtypes
from ...autograd import no_grad
from ...errors import ArgumentTypeError, ShapeError, StateDictError
from ...tensor import Tensor


class Parameter(Tensor):
    """A tensor that is a learnable parameter of a Module (``requires_grad=True``).

    Args:
        data (Tensor or array): initial values; float dtype.
        requires_grad (bool): default True.
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = Tensor._wrap(backend.xp.empty(0, dtype=dtypes.get_default_dtype()))
        if not isinstance(data, Tensor):
            from ...ops.creation import tensor
            data = tensor(data)
        self._init(data.array)
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Module:
    """Base class of every layer and model.

    Subclasses set parameters and sub-modules as attributes in ``__init__`` and define
    ``forward``; calling the module runs ``forward``.
    """

    def __init__(self):
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_non_persistent", set())
        object.__setattr__(self, "_modules", collections.OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        d = self.__dict__
        if "_parameters" not in d:
            raise AttributeError(f"{type(self).__name__}: call super().__init__() before "
                                 "assigning attributes")
        params, mods, bufs = d["_parameters"], d["_modules"], d["_buffers"]
        if isinstance(value, (Parameter, Module)):
            for store in (params, mods, bufs, d):
                store.pop(name, None)
            (params if isinstance(value, Parameter) else mods)[name] = value
        elif name in bufs:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"{type(self).__name__}: buffer '{name}' must be a Tensor or None")
            bufs[name] = value
        elif name in params or name in mods:
            if value is not None:
                kind = "Parameter" if name in params else "Module"
                raise TypeError(f"{type(self).__name__}: cannot assign {type(value).__name__} to "
                                f"'{name}' ({kind} or None expected)")
            (params if name in params else mods)[name] = None
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__[store]:
                del self.__dict__[store][name]
                return
        object.__delattr__(self, name)

    def register_buffer(self, name, tensor, persistent=True):
        """Track a non-learnable tensor (e.g. BatchNorm's running mean) in ``state_dict``.

        Args:
            name (str): attribute name. tensor (Tensor or None): the value.
            persistent (bool): include in ``state_dict``. Default True.
        """
        if not isinstance(name, str) or not name or "." in name:
            raise KeyError(f"register_buffer: invalid buffer name {name!r}")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"register_buffer: '{name}' must be a Tensor or None, got "
                            f"{type(tensor).__name__}")
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent.discard(name)
        else:
            self._non_persistent.add(name)

    def register_parameter(self, name, param):
        """Add a parameter (or ``None``) under ``name``."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"register_parameter: '{name}' must be a Parameter or None")
        self._parameters[name] = param

    def add_module(self, name, module):
        self._modules[str(name)] = module

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} does not define forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    # ---- traversal ---------------------------------------------------------------------
    def named_modules(self, prefix=""):
        """Yield ``(dotted_name, module)`` for this module and every descendant, once each."""
        seen = set()
        stack = [(prefix, self)]
        while stack:
            name, mod = stack.pop()
            if id(mod) in seen:
                continue
            seen.add(id(mod))
            yield name, mod
            children = [(f"{name}.{k}" if name else k, m) for k, m in mod._modules.items() if m is not None]
            stack.extend(reversed(children))

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        for k, m in self._modules.items():
            if m is not None:
                yield k, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def named_parameters(self, prefix="", recurse=True):
        """Yield ``(dotted_name, Parameter)``, each parameter object once."""
        seen = set()
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mname, mod in mods:
            for k, p in mod._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{mname}.{k}" if mname else k), p

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix=""):
        for mname, mod in self.named_modules(prefix):
            for k, b in mod._buffers.items():
                if b is not None:
                    yield (f"{mname}.{k}" if mname else k), b

    def buffers(self):
        for _, b in self.named_buffers():
            yield b

    # ---- modes and gradients -------------------------------------------------------------
    def train(self, mode=True):
        """Set training mode (dropout active, batch statistics) on every sub-module."""
        for m in self.modules():
            object.__setattr__(m, "training", bool(mode))
        return self

    def eval(self):
        """Set evaluation mode (``train(False)``)."""
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        """Clear the gradients of every parameter (``None`` by default, or zeros)."""
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.array[...] = 0

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def apply(self, fn):
        """Call ``fn(module)`` on every sub-module and self (children first)."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        """Move and/or cast (floating-point) parameters and buffers in place; returns self.

        Call forms as :meth:`tinynet.Tensor.to`: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``, or keywords ``device=``/``dtype=``.

        Raises:
            DeviceError: an unknown device, or cuda without a GPU.
        """
        from ...ops.conversion import _parse_to
        device, dtype, _ = _parse_to(args, dict(kwargs))
        dev = devices.resolve(device, "Module.to") if device is not None else None
        dt = dtypes.as_dtype(dtype, "Module.to")
        for m in self.modules():
            for store in (m._parameters, m._buffers):
                for k, t in store.items():
                    if t is None:
                        continue
                    data = backend.to_device(t.array, dev) if dev else t.array
                    if dt is not None and data.dtype.kind == "f":
                        data = data.astype(dt)
                    t.array = data
                    if t.grad is not None:
                        g = backend.to_device(t.grad.array, dev) if dev else t.grad.array
                        t.grad.array = g.astype(data.dtype) if g.dtype != data.dtype else g
        return self

    def cpu(self):
        """Move to the CPU; returns self."""
        return self.to("cpu")

    def cuda(self, device=None):
        """Move to GPU ``device`` (default the current one); returns self."""
        return self.to("cuda" if device is None else devices.device("cuda", device) if isinstance(device, int)
                       else device)

    def float(self):
        """Cast floating-point parameters and buffers to float32; returns self."""
        return self.to(dtype=dtypes.float32)

    def double(self):
        """Cast floating-point parameters and buffers to float64; returns self."""
        return self.to(dtype=dtypes.float64)

    def half(self):
        """Cast floating-point parameters and buffers to float16; returns self."""
        return self.to(dtype=dtypes.float16)

    # ---- state ---------------------------------------------------------------------------
    def state_dict(self):
        """Ordered ``{dotted_name: Tensor}`` of parameters and persistent buffers (detached,
        sharing memory with the module)."""
        out = collections.OrderedDict()
        for mname, mod in self.named_modules():
            for k, p in mod._parameters.items():
                if p is not None:
                    out[f"{mname}.{k}" if mname else k] = p.detach()
            for k, b in mod._buffers.items():
                if b is not None and k not in mod._non_persistent:
                    out[f"{mname}.{k}" if mname else k] = b.detach()
        return out

    def load_state_dict(self, state_dict, strict=True):
        """Copy values from ``state_dict`` into parameters and buffers.

        Args:
            state_dict (Mapping[str, Tensor or array]): as produced by :meth:`state_dict`.
            strict (bool): require exactly the same keys. Default True.

        Returns:
            namedtuple ``(missing_keys, unexpected_keys)``.

        Raises:
            StateDictError: with ``strict``, names every missing and unexpected key; always,
                names every shape mismatch. Nothing is copied when it raises.
        """
        own = self.state_dict()  # detached tensors sharing the parameters' and buffers' arrays
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        problems = []
        for k, v in state_dict.items():
            if k in own:
                shape = tuple(getattr(v, "shape", numpy.shape(v)))
                if shape != tuple(own[k].shape):
                    problems.append(f"size mismatch for {k}: copying a param with shape {shape}, "
                                    f"the shape in the current model is {tuple(own[k].shape)}")
        if strict:
            if missing:
                problems.append("Missing key(s) in state_dict: " + ", ".join(repr(k) for k in missing))
            if unexpected:
                problems.append("Unexpected key(s) in state_dict: " + ", ".join(repr(k) for k in unexpected))
        if problems:
            raise StateDictError(f"Error(s) in loading state_dict for {type(self).__name__}:\n    "
                                 + "\n    ".join(problems))
        with no_grad():
            for k, v in state_dict.items():
                if k in own:
                    t = own[k]
                    src = v.array if isinstance(v, Tensor) else v
                    t.array[...] = backend.to_device(src, t.device).astype(t.dtype, copy=False)
        return _IncompatibleKeys(missing, unexpected)

    # ---- repr ----------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        for k, m in self._modules.items():
            child = repr(m).replace("\n", "\n  ")
            lines.append(f"({k}): {child}")
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


_IncompatibleKeys = collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])


def check_input(layer, x, ndims, layout):
    """Raise ShapeError naming ``layer`` unless ``x`` is a Tensor with ndim in ``ndims``."""
    if not isinstance(x, Tensor):
        raise ArgumentTypeError(f"{layer}: expected a Tensor input, got {type(x).__name__}")
    if x.ndim not in ndims:
        raise ShapeError(f"{layer}: expected input of shape {layout}, got {x.shape}")
