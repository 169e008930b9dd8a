"""The allow-list behind ``tinynet.load(..., weights_only=True)`` (the default).

A pickled checkpoint (what :func:`tinynet.save` writes for a whole Module, an optimizer, any
object that is not a plain nest of tensors) can name any global in its stream, and an ordinary
unpickler imports and calls whatever it names: opening such a file can run code. PyTorch 2.6+
loads with ``weights_only=True`` by default, and so does tinynet: :class:`Unpickler` resolves
a global only when its ``module.qualname`` is on the allow-list, *without importing anything*
(the name is looked up in a table of objects already in hand), and raises
:class:`~tinynet.errors.UnpicklingError` naming the global otherwise. Every callable a pickle
can call (REDUCE, NEWOBJ, BUILD's ``__setstate__``) is reached through a global, so the
check covers them all (Python's documented way of "restricting globals").

On the list by default: the containers and scalars of plain data (``collections.OrderedDict``,
``set``, ``frozenset``, ``bytearray``, ``complex``, ``slice``, ``range``), tinynet's tensor
rebuilding (``tinynet.tensor._rebuild``, ``Tensor``, ``Parameter``, ``Size``, ``device``),
``numpy.dtype`` and NumPy's scalar constructor. Array data never goes through pickle at all:
:func:`tinynet.save` stores it in the archive beside the stream. Anything else (the program's
``nn.Module`` subclasses, tinynet's layers, functions) must be allowed by the caller:
:func:`add_safe_globals` for the process, :class:`safe_globals` for a block, or
``weights_only=False`` for a file from a trusted source.
"""
import builtins
import collections
import pickle
import threading

import numpy

from .errors import ArgumentTypeError, UnpicklingError

__all__ = ["Unpickler", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]

_lock = threading.Lock()
_user: list = []        # add_safe_globals entries (objects or (object, "module.name") pairs)
_scoped = threading.local()  # safe_globals context entries, per thread
_defaults: dict = {}    # "module.qualname" -> object, tinynet's own list (see register_default)


def _name_of(obj):
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if module is None or qualname is None:
        raise ArgumentTypeError(f"safe_globals: {obj!r} has no __module__/__qualname__; pass (obj, 'module.name')")
    return f"{module}.{qualname}"


def _entry(item):
    """``("module.name", obj)`` of a safe-globals entry: an object or an ``(object, name)`` pair."""
    if isinstance(item, tuple):
        if len(item) != 2 or not isinstance(item[1], str):
            raise ArgumentTypeError(f"safe_globals: a tuple entry must be (object, 'module.name'), got {item!r}")
        return item[1], item[0]
    return _name_of(item), item


def register_default(objs):
    """Put tinynet's own data-only types on the default list (called by the modules above
    this one, such as ``tinynet/__init__.py`` for ``Parameter``)."""
    for obj in objs:
        name, value = _entry(obj)
        _defaults[name] = value


register_default([collections.OrderedDict, collections.Counter, builtins.set, builtins.frozenset,
                  builtins.bytearray, builtins.complex, builtins.slice, builtins.range, numpy.dtype])
_SCALAR = numpy.float32(0).__reduce__()[0]  # NumPy's scalar constructor (dtype, bytes) -> scalar
for _path in ("numpy._core.multiarray.scalar", "numpy.core.multiarray.scalar"):
    _defaults[_path] = _SCALAR


def add_safe_globals(safe_globals):
    """Allow these globals in every ``weights_only`` load of this process (PyTorch's
    ``torch.serialization.add_safe_globals``).

    Args:
        safe_globals (list): classes or functions, or ``(object, "module.qualname")`` pairs
            for objects saved under another name.

    Raises:
        ArgumentTypeError: not a list, or an entry without a name.
    """
    if not isinstance(safe_globals, (list, tuple)):
        raise ArgumentTypeError(f"add_safe_globals: safe_globals must be a list, got {type(safe_globals).__name__}")
    entries = [_entry(item) for item in safe_globals]
    with _lock:
        _user.extend(entries)


def clear_safe_globals():
    """Forget every :func:`add_safe_globals` entry."""
    with _lock:
        _user.clear()


def get_safe_globals():
    """The :func:`add_safe_globals` entries, as given."""
    with _lock:
        return [obj if name == _safe_name(obj) else (obj, name) for name, obj in _user]


def _safe_name(obj):
    try:
        return _name_of(obj)
    except ArgumentTypeError:
        return None


class safe_globals:
    """Context manager: these globals are allowed in ``weights_only`` loads inside the block
    (this thread), as PyTorch's ``torch.serialization.safe_globals``."""

    def __init__(self, safe_globals):
        if not isinstance(safe_globals, (list, tuple)):
            raise ArgumentTypeError(f"safe_globals: safe_globals must be a list, got {type(safe_globals).__name__}")
        self.entries = [_entry(item) for item in safe_globals]

    def __enter__(self):
        stack = getattr(_scoped, "stack", None)
        if stack is None:
            stack = _scoped.stack = []
        stack.append(self.entries)
        return self

    def __exit__(self, *exc):
        _scoped.stack.pop()
        return False


def allowed():
    """``{"module.qualname": object}`` allowed now: the defaults, the process list and the
    entries of enclosing :class:`safe_globals` blocks."""
    table = dict(_defaults)
    with _lock:
        table.update(_user)
    for entries in getattr(_scoped, "stack", None) or ():
        table.update(entries)
    return table


class Unpickler(pickle.Unpickler):
    """An unpickler that resolves only allowed globals (module doc) and takes array data
    from ``persistent_load``."""

    def __init__(self, file, persistent_load, where):
        super().__init__(file)
        self._persistent, self._where = persistent_load, where
        self._allowed = allowed()

    def persistent_load(self, pid):
        return self._persistent(pid)

    def find_class(self, module, name):
        full = f"{module}.{name}"
        if full in self._allowed:
            return self._allowed[full]
        raise UnpicklingError(
            f"load: weights_only=True refuses {self._where}: it holds the global {full}, which is not on the "
            f"allow-list (loading it would run its code). If you trust the file, allow it with "
            f"tinynet.serialization.add_safe_globals([{name}]) or the "
            f"tinynet.serialization.safe_globals([{name}]) context manager, or load with weights_only=False")
