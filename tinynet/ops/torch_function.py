"""The ``__torch_function__`` protocol's helpers (PyTorch's ``torch.overrides``, which
``torch.nn.functional`` re-exports): ``has_torch_function``, ``has_torch_function_unary``,
``has_torch_function_variadic`` and ``handle_torch_function``.

An object takes part when its type defines ``__torch_function__`` (a classmethod
``__torch_function__(cls, func, types, args=(), kwargs=None)``) and is not tinynet's plain
``Tensor`` or ``Parameter`` (which define none). ``handle_torch_function`` offers the call
to each such type in PyTorch's order -- subclasses before their base classes, otherwise in
the order of appearance, each type once -- and returns the first result that is not
``NotImplemented``. So a function written in PyTorch's style::

    def my_op(x, w):
        if has_torch_function_variadic(x, w):
            return handle_torch_function(my_op, (x, w), x, w)
        ...

lets tensor-like classes override it. tinynet's own ops do not consult the protocol.
"""
from ..errors import ArgumentTypeError
from ..tensor import Tensor


def _overrides(obj):
    """Whether ``obj`` takes part in the protocol."""
    kind = type(obj)
    if kind is Tensor or kind.__name__ == "Parameter" and kind.__module__.startswith("tinynet."):
        return False
    return getattr(kind, "__torch_function__", None) is not None


def has_torch_function(relevant_args):
    """True when an element of the iterable ``relevant_args`` defines ``__torch_function__``.

    Raises:
        ArgumentTypeError: ``relevant_args`` is not iterable.
    """
    try:
        items = tuple(relevant_args)
    except TypeError:
        raise ArgumentTypeError(f"has_torch_function: relevant_args must be an iterable, got "
                                f"{type(relevant_args).__name__}") from None
    return any(_overrides(a) for a in items)


def has_torch_function_unary(obj):
    """True when ``obj`` defines ``__torch_function__``."""
    return _overrides(obj)


def has_torch_function_variadic(*args):
    """True when one of ``args`` defines ``__torch_function__``."""
    return any(_overrides(a) for a in args)


def _overloaded_types(args):
    """The participating types in PyTorch's order: each once, a subclass before its bases."""
    types = []
    for a in args:
        kind = type(a)
        if not _overrides(a) or kind in types:
            continue
        at = len(types)
        for i, t in enumerate(types):  # before the first base class already listed
            if issubclass(kind, t):
                at = i
                break
        types.insert(at, kind)
    return types


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call ``public_api``'s overrides: each participating type's ``__torch_function__(public_api,
    types, args, kwargs)`` in turn until one returns something other than ``NotImplemented``.

    Args:
        public_api (callable): the function being overridden (passed to the overrides).
        relevant_args (iterable): the arguments that may carry overrides.
        *args, **kwargs: the call's arguments, passed on.

    Returns:
        The first override's result.

    Raises:
        ArgumentTypeError: ``public_api`` not callable, ``relevant_args`` not iterable, or
            every override returned ``NotImplemented`` (PyTorch's TypeError).
    """
    if not callable(public_api):
        raise ArgumentTypeError(f"handle_torch_function: public_api must be callable, got "
                                f"{type(public_api).__name__}")
    try:
        relevant = tuple(relevant_args)
    except TypeError:
        raise ArgumentTypeError(f"handle_torch_function: relevant_args must be an iterable, got "
                                f"{type(relevant_args).__name__}") from None
    types = _overloaded_types(relevant)
    for kind in types:
        result = kind.__torch_function__(public_api, tuple(types), args, kwargs)
        if result is not NotImplemented:
            return result
    name = getattr(public_api, "__name__", repr(public_api))
    raise ArgumentTypeError(f"handle_torch_function: no implementation found for '{name}' on types that implement "
                            f"__torch_function__: {[t for t in types]}")
