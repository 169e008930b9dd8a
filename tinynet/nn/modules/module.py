"""``Module``, the base class of layers and models (and ``Parameter``, re-exported).

Attributes that are :class:`Parameter`, :class:`Module` or registered buffers are
tracked automatically, giving ``parameters()``, ``state_dict()`` and friends with
PyTorch's names (dotted paths such as ``conv1.weight``). The hook methods come from
:mod:`.hooks`, the state dict and the device/dtype conversions from :mod:`.state`.
"""
import collections

from ... import capture
from ...autograd import no_grad
from ...errors import ArgumentError, ArgumentTypeError, ShapeError
from ...tensor import Tensor
from . import hooks as _hooks
from .hooks import HookMixin
from .parameter import Buffer, Parameter
from .state import StateMixin

__all__ = ["Module", "Parameter", "check_input"]


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join((n * " ") + line if line.strip() else "" for line in lines[1:])


class Module(HookMixin, StateMixin):
    """Base class of every layer and model.

    Subclasses set parameters and sub-modules as attributes in ``__init__`` (after
    ``super().__init__()``) and define ``forward``; calling the module runs ``forward``
    between its forward pre-hooks and forward hooks.
    """

    training: bool

    def __init__(self):
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", collections.OrderedDict())
        setattr_(self, "_buffers", collections.OrderedDict())
        setattr_(self, "_non_persistent_buffers_set", set())
        for name, store in _hooks.new_hook_dicts().items():
            setattr_(self, name, store)
        setattr_(self, "_modules", collections.OrderedDict())

    # ---- attributes ----------------------------------------------------------------------
    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            for store in (d, d["_buffers"], d["_modules"]):
                store.pop(name, None)
            d["_non_persistent_buffers_set"].discard(name)
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise ArgumentTypeError(f"{type(self).__name__}: cannot assign '{type(value).__name__}' as parameter "
                                        f"'{name}' (Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Buffer):  # nn.Buffer: registered as a buffer, with its persistence
            if params is None:
                raise AttributeError("cannot assign buffers before Module.__init__() call")
            for store in (d, params, d["_modules"]):
                store.pop(name, None)
            self.register_buffer(name, value, value.persistent)
        elif isinstance(value, Module):
            if params is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            for store in (d, params, d["_buffers"]):
                store.pop(name, None)
            d["_non_persistent_buffers_set"].discard(name)
            d["_modules"][name] = value
        elif params is not None and name in d["_modules"]:
            if value is not None:
                raise ArgumentTypeError(f"{type(self).__name__}: cannot assign '{type(value).__name__}' as child "
                                        f"module '{name}' (Module or None expected)")
            d["_modules"][name] = None
        elif params is not None and name in d["_buffers"]:
            if value is not None and not isinstance(value, Tensor):
                raise ArgumentTypeError(f"{type(self).__name__}: cannot assign '{type(value).__name__}' as buffer "
                                        f"'{name}' (Tensor or None expected)")
            d["_buffers"][name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        # reached only when normal lookup fails: every parameter read of every forward
        d = self.__dict__
        params = d.get("_parameters")
        if params is not None and name in params:
            return params[name]
        for store in ("_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        d = self.__dict__
        if name in d["_parameters"]:
            del d["_parameters"][name]
        elif name in d["_buffers"]:
            del d["_buffers"][name]
            d["_non_persistent_buffers_set"].discard(name)
        elif name in d["_modules"]:
            del d["_modules"][name]
        else:
            object.__delattr__(self, name)

    def _check_name(self, op, kind, name, store):
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"cannot assign {kind} before Module.__init__() call")
        if not isinstance(name, str):
            raise ArgumentTypeError(f"{op}: {kind} name should be a string, got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{op}: {kind} name can\'t contain ".", got {name!r}')
        if name == "":
            raise KeyError(f'{op}: {kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in store:
            raise KeyError(f"{op}: attribute '{name}' already exists")

    def register_buffer(self, name, tensor, persistent=True):
        """Track a non-learnable tensor (e.g. BatchNorm's running mean): moved by ``to()``,
        saved in ``state_dict`` when ``persistent``.

        Raises:
            ArgumentTypeError: ``name`` not a str, or ``tensor`` neither a Tensor nor None.
            KeyError: an empty or dotted name, or one taken by another attribute.
        """
        self._check_name("register_buffer", "buffer", name, self.__dict__.get("_buffers", ()))
        if tensor is not None and not isinstance(tensor, Tensor):
            raise ArgumentTypeError(f"register_buffer: cannot assign '{type(tensor).__name__}' object to buffer "
                                    f"'{name}' (Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Add a :class:`Parameter` (or ``None``, which ``state_dict`` skips) under ``name``.

        Raises:
            ArgumentTypeError: not a Parameter or None. KeyError: a bad or taken name.
        """
        self._check_name("register_parameter", "parameter", name, self.__dict__.get("_parameters", ()))
        if param is not None and not isinstance(param, Parameter):
            raise ArgumentTypeError(f"register_parameter: cannot assign '{type(param).__name__}' object to parameter "
                                    f"'{name}' (Parameter or None required)")
        self._parameters[name] = param

    def add_module(self, name, module):
        """Register ``module`` (or None) as the child ``name``.

        Raises:
            ArgumentTypeError: not a Module or None, or a non-str name. KeyError: a bad or taken name.
        """
        if module is not None and not isinstance(module, Module):
            raise ArgumentTypeError(f"add_module: {type(module).__name__} is not a Module subclass")
        self._check_name("add_module", "module", name, self.__dict__.get("_modules", ()))
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        """The sub-module at dotted path ``target`` (``""`` is self).

        Raises:
            AttributeError: a step of the path is missing or not a Module.
        """
        mod = self
        for item in target.split(".") if target else ():
            if not hasattr(mod, item):
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")  # noqa: TRY004  (as PyTorch)
        return mod

    def set_submodule(self, target, module, strict=False):
        """Replace (or, unless ``strict``, add) the sub-module at dotted path ``target``."""
        if target == "":
            raise ArgumentError("set_submodule: cannot set the submodule without a target name")
        if not isinstance(module, Module):
            raise ArgumentTypeError(f"set_submodule: `module` is not an nn.Module, found {type(module).__name__}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{type(parent).__name__} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def _attribute_at(self, target):
        """``(module, name)`` of the last step of dotted path ``target``, which must exist."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
        return mod, name

    def get_parameter(self, target):
        """The :class:`Parameter` at dotted path ``target``. Raises AttributeError otherwise."""
        mod, name = self._attribute_at(target)
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")  # noqa: TRY004  (as PyTorch)
        return param

    def get_buffer(self, target):
        """The buffer at dotted path ``target``. Raises AttributeError otherwise."""
        mod, name = self._attribute_at(target)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return getattr(mod, name)

    # ---- calling and hooks ---------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    def __call__(self, *args, **kwargs):
        # runs for every layer of every forward: the hook dicts read from __dict__ (attribute
        # reads on a class with __getattr__ are not specialised by the interpreter), and no
        # keyword dict built when there are no keywords
        d = self.__dict__
        try:
            hooked = d["_forward_pre_hooks"] or d["_forward_hooks"] or d["_backward_hooks"]
        except KeyError:
            raise AttributeError(f"{type(self).__name__}: Module.__init__() was not called (call "
                                 "super().__init__() first in __init__)") from None
        if hooked:
            return _hooks.call_impl(self, args, kwargs)
        return self.forward(*args, **kwargs) if kwargs else self.forward(*args)

    # ---- traversal -----------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Yield ``(dotted_name, module)`` for this module and every descendant (each once
        unless ``remove_duplicate=False``), parents before children."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is not None:
                yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self, remove_duplicate=True):
        for _, m in self.named_modules(remove_duplicate=remove_duplicate):
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, store, prefix, recurse, remove_duplicate):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for mname, mod in mods:
            for k, v in mod.__dict__[store].items():
                if v is None or id(v) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield (mname + "." + k if mname else k), v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Yield ``(dotted_name, Parameter)``; a parameter shared by two modules once (first name)."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        if recurse and type(self).named_parameters is Module.named_parameters:
            yield from self._members("_parameters")  # the same parameters, without their names
            return
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def _members(self, store):
        """The values in ``store`` of this module and its descendants, each once, in the order
        of ``named_parameters``/``named_buffers`` (the modules listed without their names:
        ``parameters()`` runs at every step that clips gradients)."""
        mods: list = []
        if not _collect(self, set(), mods):  # a module with a walk of its own: take that walk
            mods = [m for _, m in self.named_modules()]
        seen, out = set(), []
        for mod in mods:
            for v in mod.__dict__[store].values():
                if v is not None and id(v) not in seen:
                    seen.add(id(v))
                    out.append(v)
        return out

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Yield ``(dotted_name, buffer)``, persistent or not."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes and gradients -------------------------------------------------------------
    def train(self, mode=True):
        """Set training mode (dropout active, batch statistics) here and in every child; returns self.

        Raises:
            ArgumentError: ``mode`` is not a bool.
        """
        if not isinstance(mode, bool):
            raise ArgumentError(f"{type(self).__name__}.train: training mode is expected to be boolean, got {mode!r}")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        """Set evaluation mode (``train(False)``); returns self."""
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        """Clear the gradients of every parameter: ``None`` (default), or zeros in place."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                capture.grad_journal(p)  # a failed CUDA graph capture puts it back
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                with no_grad():
                    g.zero_()

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` of every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def apply(self, fn):
        """Call ``fn(module)`` on every child (recursively) and then on self; returns self."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- repr ----------------------------------------------------------------------------
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The layer's settings shown inside its ``repr`` (override in subclasses)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({k}): " + _addindent(repr(m), 2) for k, m in self._modules.items()]
        lines = extra_lines + child_lines
        s = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                s += extra_lines[0]
            else:
                s += "\n  " + "\n  ".join(lines) + "\n"
        return s + ")"

    def __dir__(self):
        keys = dir(type(self)) + list(self.__dict__) + list(self._parameters) + list(self._modules) + \
            list(self._buffers)
        return sorted(k for k in keys if not k[0].isdigit())


def _collect(mod, memo, out):
    """Append ``mod`` and its descendants to ``out`` in ``named_modules``' order, each once;
    False as soon as one of them has a ``named_modules`` of its own."""
    if type(mod).named_modules is not Module.named_modules:
        return False
    memo.add(mod)
    out.append(mod)
    for child in mod.__dict__["_modules"].values():
        if child is not None and child not in memo and not _collect(child, memo, out):
            return False
    return True


def check_input(layer, x, ndims, layout):
    """Raise ShapeError naming ``layer`` (a module, named by its repr, built only then, or
    a string) unless ``x`` is a Tensor with ndim in ``ndims``."""
    if not isinstance(x, Tensor):
        raise ArgumentTypeError(f"{_label(layer)}: expected a Tensor input, got {type(x).__name__}")
    if x.ndim not in ndims:
        raise ShapeError(f"{_label(layer)}: expected input of shape {layout}, got {x.shape}")


def _label(layer):
    return layer if isinstance(layer, str) else repr(layer)
