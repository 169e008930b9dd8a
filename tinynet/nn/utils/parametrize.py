"""``tinynet.nn.utils.parametrize``: a module's tensor computed from other tensors (PyTorch's
``torch.nn.utils.parametrize``).

``register_parametrization(module, "weight", P)`` moves ``module.weight`` to
``module.parametrizations.weight.original`` and makes ``module.weight`` a property that
returns ``P(original)`` each time it is read. The property lives on a class made for this
module alone (a subclass of its class, named ``Parametrized<Class>``), since a property
must sit on the class; the module's ``__class__`` is switched to it and back when the last
parametrization goes. The state dict therefore holds ``parametrizations.weight.original``
(``original0``, ``original1``, ... when ``right_inverse`` returns several tensors) and the
parametrizations' own parameters and buffers (``parametrizations.weight.0._u``), as
PyTorch's does, so state dicts load across.

Assigning ``module.weight = X`` sets the originals to ``right_inverse(X)`` (the
parametrizations' ``right_inverse`` methods applied last to first; none: ``X`` itself).
Inside :func:`cached` each parametrized tensor is computed once and reused.
"""
import contextlib

from ...autograd import no_grad
from ...errors import ArgumentError, ArgumentTypeError, ShapeError
from ...ops.util import check_flag
from ...tensor import Tensor
from ..modules.container import ModuleDict, ModuleList
from ..modules.module import Module
from ..modules.parameter import Parameter

__all__ = ["register_parametrization", "remove_parametrizations", "is_parametrized", "cached",
           "ParametrizationList", "type_before_parametrizations"]

_cache_depth = [0]
_cache: dict = {}


@contextlib.contextmanager
def cached():
    """Compute each parametrized tensor once inside the block (PyTorch's ``cached``): reads
    of ``module.weight`` reuse the first result until the outermost ``cached()`` exits."""
    _cache_depth[0] += 1
    try:
        yield
    finally:
        _cache_depth[0] -= 1
        if not _cache_depth[0]:
            _cache.clear()


def _check(name, what, new, old):
    if not isinstance(new, Tensor):
        raise ArgumentTypeError(f"register_parametrization: {what} must return a Tensor, got {type(new).__name__}")
    if new.dtype != old.dtype:
        raise ArgumentError(f"register_parametrization: {what} changed the dtype of '{name}' from {old.dtype} to "
                            f"{new.dtype} (pass unsafe=True to allow it)")
    if tuple(new.shape) != tuple(old.shape):
        raise ShapeError(f"register_parametrization: {what} changed the shape of '{name}' from {tuple(old.shape)} "
                         f"to {tuple(new.shape)} (pass unsafe=True to allow it)")


def _as_original(t, like):
    """``t`` as a stored original: a Parameter when ``like`` (the tensor replaced) is one."""
    if isinstance(like, Parameter):
        return t if isinstance(t, Parameter) else Parameter(t.detach(), requires_grad=like.requires_grad)
    return t.detach()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor (applied first to last) and its original(s):
    ``original`` (a Parameter or buffer), or ``original0``, ``original1``, ... when the
    first parametrization's ``right_inverse`` returns a tuple of tensors."""

    def __init__(self, modules, original, unsafe=False):
        super().__init__(modules)
        self.unsafe = unsafe
        first = modules[0]
        with no_grad():
            new = original
            for m in reversed(list(modules)):
                inv = getattr(m, "right_inverse", None)
                new = inv(new) if inv is not None else new
        self.is_tensor = isinstance(new, Tensor)
        self.ntensors = 1 if self.is_tensor else len(new)
        if self.is_tensor:
            if not unsafe:
                _check("original", "right_inverse", new, original)
            with no_grad():
                original.array = new.array if new is not original else original.array
            self._store("original", original, original)
        else:
            if not isinstance(new, (tuple, list)) or not all(isinstance(t, Tensor) for t in new):
                raise ArgumentTypeError("register_parametrization: right_inverse must return a Tensor or a "
                                        f"sequence of Tensors, got {type(new).__name__}")
            for i, t in enumerate(new):
                self._store(f"original{i}", _as_original(t, original), original)
        if not unsafe:
            value = self()
            _check("tensor", f"the parametrization {type(first).__name__}", value, original)

    def _store(self, name, t, like):
        if isinstance(like, Parameter):
            self.register_parameter(name, t if isinstance(t, Parameter) else Parameter(t, like.requires_grad))
        else:
            self.register_buffer(name, t)

    def right_inverse(self, value):
        """Set the original(s) so that the parametrized tensor is ``value`` (in place, no gradient)."""
        with no_grad():
            for m in reversed(list(self)):
                inv = getattr(m, "right_inverse", None)
                if inv is not None:
                    value = inv(value)
                elif not self.unsafe and not isinstance(value, Tensor):
                    raise ArgumentTypeError("right_inverse: a parametrization without right_inverse got "
                                            f"a {type(value).__name__}")
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ArgumentTypeError(f"right_inverse: expected a Tensor, got {type(value).__name__}")
                if not self.unsafe:
                    _check("original", "right_inverse", value, self.original)
                self.original.array = value.array.astype(self.original.array.dtype, copy=True)
            else:
                if not isinstance(value, (tuple, list)) or len(value) != self.ntensors:
                    raise ArgumentError(f"right_inverse: expected {self.ntensors} tensors, got "
                                        f"{len(value) if isinstance(value, (tuple, list)) else type(value).__name__}")
                for i, t in enumerate(value):
                    orig = getattr(self, f"original{i}")
                    orig.array = t.array.astype(orig.array.dtype, copy=True)

    def forward(self):
        if self.is_tensor:
            x = self[0](self.original)
        else:
            x = self[0](*(getattr(self, f"original{i}") for i in range(self.ntensors)))
        for m in list(self)[1:]:
            x = m(x)
        return x


def _getter(name):
    def get(self):
        plist = self.parametrizations[name]
        if _cache_depth[0]:
            key = (id(self), name)
            if key not in _cache:
                _cache[key] = plist()
            return _cache[key]
        return plist()

    def set_(self, value):
        self.parametrizations[name].right_inverse(value)
    return property(get, set_)


def _inject(module):
    """Give ``module`` a class of its own (a subclass of its class) to hold the properties."""
    cls = module.__class__
    new = type(f"Parametrized{cls.__name__}", (cls,), {"_parametrized_base": cls})
    module.__class__ = new


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make ``module.<tensor_name>`` the output of ``parametrization`` (a Module) applied to
    the original tensor, stored as ``module.parametrizations.<tensor_name>.original``. A
    second call on the same name appends to the chain. With ``parametrization.right_inverse``
    the original is first set to ``right_inverse(tensor)`` (a tuple gives ``original0``, ...).

    ``unsafe=True`` skips the checks that the parametrization keeps the shape and dtype.

    Returns ``module``.

    Raises:
        ArgumentTypeError: ``parametrization`` is not a Module, ``module`` is not a Module, or
            ``tensor_name`` is not a str, or ``unsafe`` not a bool.
        ArgumentError: ``tensor_name`` is neither a parameter, a buffer nor parametrized, or
            (unless ``unsafe``) the parametrization changes the dtype. ShapeError: (unless
            ``unsafe``) it changes the shape.
    """
    if not isinstance(module, Module):
        raise ArgumentTypeError(f"register_parametrization: module must be a Module, got {type(module).__name__}")
    if not isinstance(parametrization, Module):
        raise ArgumentTypeError("register_parametrization: parametrization must be a Module, got "
                                f"{type(parametrization).__name__}")
    if not isinstance(tensor_name, str):
        raise ArgumentTypeError(f"register_parametrization: tensor_name must be a str, got "
                                f"{type(tensor_name).__name__}")
    unsafe = check_flag("register_parametrization", "unsafe", unsafe)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            current = getattr(module, tensor_name)
            value = parametrization(current)
            _check(tensor_name, f"the parametrization {type(parametrization).__name__}", value, current)
            inv = getattr(parametrization, "right_inverse", None)
            if inv is not None:
                _check(tensor_name, "right_inverse", inv(current), current)
        plist.append(parametrization)
        plist.unsafe |= unsafe
        return module
    if tensor_name in module._parameters or tensor_name in module._buffers:
        original = getattr(module, tensor_name)
        if original is None:
            raise ArgumentError(f"register_parametrization: '{tensor_name}' of {type(module).__name__} is None")
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject(module)
            module.parametrizations = ModuleDict()
        module.parametrizations[tensor_name] = plist
        setattr(module.__class__, tensor_name, _getter(tensor_name))
        return module
    raise ArgumentError(f"register_parametrization: module '{type(module).__name__}' has no parameter, buffer or "
                        f"parametrized element named '{tensor_name}'")


def is_parametrized(module, tensor_name=None):
    """Whether ``module`` has a parametrization (on ``tensor_name`` when given)."""
    plist = module._modules.get("parametrizations") if isinstance(module, Module) else None
    if not isinstance(plist, ModuleDict) or not isinstance(tensor_name, (str, type(None))):
        return False
    return len(plist) > 0 if tensor_name is None else tensor_name in plist


def type_before_parametrizations(module):
    """The module's class before any parametrization was registered."""
    return module.__class__._parametrized_base if is_parametrized(module) else type(module)


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo :func:`register_parametrization` for ``tensor_name``: it becomes a plain parameter
    (or buffer) again holding the parametrized value (``leave_parametrized=True``) or the
    original. The Parameter object of ``original`` is kept (its values replaced), so an
    optimizer holding it goes on working. Returns ``module``.

    Raises:
        ArgumentError: ``tensor_name`` is not parametrized, or ``leave_parametrized=False`` with
            several originals (there is no one tensor to keep). ArgumentTypeError: a non-str
            ``tensor_name``.
    """
    if not isinstance(tensor_name, str):
        raise ArgumentTypeError(f"remove_parametrizations: tensor_name must be a str, got "
                                f"{type(tensor_name).__name__}")
    if not is_parametrized(module, tensor_name):
        raise ArgumentError(f"remove_parametrizations: module {type(module).__name__} has no parametrization on "
                            f"'{tensor_name}'")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                value = getattr(module, tensor_name)
            original.array = value.array.copy()
    else:
        if not leave_parametrized:
            raise ArgumentError("remove_parametrizations: cannot leave unparametrized (leave_parametrized=False) a "
                                "tensor whose parametrization has several originals")
        with no_grad():
            value = getattr(module, tensor_name)
        like = plist.original0
        original = Parameter(value.detach(), like.requires_grad) if isinstance(like, Parameter) else value.detach()
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        del module.parametrizations
        module.__class__ = module.__class__._parametrized_base
    return module
