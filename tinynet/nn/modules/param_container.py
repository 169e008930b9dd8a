"""``ParameterList`` and ``ParameterDict``: parameters held in a list or a dict, registered
so ``parameters()`` and ``state_dict()`` find them (keys ``"0"``, ``"1"``... or the dict's).

As in PyTorch, a plain Tensor put in one is wrapped into a :class:`Parameter` (sharing its
array); other objects are kept as plain attributes.
"""
import collections
import collections.abc

from ...errors import ArgumentTypeError
from ...ops.conversion import type as _typename
from ...tensor import Tensor
from .container import _index, _pairs
from .module import Module
from .parameter import Parameter


def _describe(p, dtype_name):
    if not isinstance(p, Tensor):
        return "Object of type: " + type(p).__name__
    size = "x".join(str(s) for s in p.shape)
    device = f" ({p.device})" if p.is_cuda else ""
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    return f"{kind} containing: [{dtype_name(p)} of size {size}{device}]"


class ParameterList(Module):
    """A list of parameters (or other values), indexable, iterable and sliceable.

    Args:
        values (iterable, optional): initial elements; Tensors become Parameters.
    """

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self += values

    def _key(self, idx):
        return str(_index("ParameterList", idx, len(self)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            out = self.__class__()
            for i in range(*idx.indices(len(self))):
                out.append(self[i])
            return out
        return getattr(self, self._key(idx))

    def __setitem__(self, idx, param):
        key = self._key(idx)
        if isinstance(param, Tensor) and not isinstance(param, Parameter):
            param = Parameter(param)
        setattr(self, key, param)

    def __len__(self):
        return self._size

    def __iter__(self):
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, parameters):
        return self.extend(parameters)

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value):
        """Add ``value`` at the end (a Tensor becomes a Parameter); returns self."""
        self._size += 1
        self[self._size - 1] = value
        return self

    def extend(self, values):
        """Append every element of an iterable (not a Tensor); returns self.

        Raises:
            ArgumentTypeError: ``values`` is a Tensor or not iterable.
        """
        if not isinstance(values, collections.abc.Iterable) or isinstance(values, Tensor):
            raise ArgumentTypeError(f"ParameterList.extend should be called with an iterable, but got "
                                    f"{type(values).__name__}")
        try:
            values = list(values)
        except TypeError:  # iterable by type only (a 0-d array)
            raise ArgumentTypeError(f"ParameterList.extend should be called with an iterable, but got "
                                    f"{type(values).__name__}") from None
        for value in values:
            self.append(value)
        return self

    def extra_repr(self):
        return "\n".join(f"  ({k}): " + _describe(p, lambda t: f"tinynet.{t.dtype.name}") for k, p in enumerate(self))

    def __call__(self, *args, **kwargs):
        raise NotImplementedError("ParameterList should not be called.")


class ParameterDict(Module):
    """An ordered dict of parameters (or other values) keyed by strings.

    Args:
        parameters: a mapping or an iterable of ``(key, value)`` pairs; Tensors become
            Parameters. A plain ``dict`` is added in sorted key order, an ``OrderedDict``,
            a ParameterDict or an iterable of pairs in its own order (PyTorch's rule).
    """

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}
        if parameters is not None:
            self.update(parameters)

    @staticmethod
    def _attr(key):
        if not isinstance(key, str):
            raise ArgumentTypeError(f"ParameterDict: a key must be a str, got {type(key).__name__}")
        return key

    def __getitem__(self, key):
        return getattr(self, self._attr(key))

    def __setitem__(self, key, value):
        attr = self._attr(key)
        self._keys[key] = None
        if isinstance(value, Tensor) and not isinstance(value, Parameter):
            value = Parameter(value)
        setattr(self, attr, value)

    def __delitem__(self, key):
        del self._keys[key]
        delattr(self, self._attr(key))

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __reversed__(self):
        return reversed(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def copy(self):
        """A new ParameterDict holding the same parameters."""
        return ParameterDict(collections.OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self):
        for k in list(self._keys):
            del self[k]

    def pop(self, key):
        """Remove ``key`` and return its value (KeyError when absent)."""
        v = self[key]
        del self[key]
        return v

    def popitem(self):
        """Remove and return the last inserted ``(key, value)``."""
        k = next(reversed(self._keys))
        return k, self.pop(k)

    def get(self, key, default=None):
        return self[key] if key in self else default  # noqa: SIM401  (this is get)

    def fromkeys(self, keys, default=None):
        return ParameterDict((k, default) for k in keys)

    def keys(self):
        return self._keys.keys()

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def values(self):
        return (self[k] for k in self._keys)

    def update(self, parameters):
        """Add or overwrite entries (see the class docstring for the order).

        Raises:
            ArgumentTypeError / ArgumentError: not a mapping nor an iterable of pairs.
        """
        if isinstance(parameters, (collections.OrderedDict, ParameterDict)):
            pairs = list(parameters.items())
        elif isinstance(parameters, collections.abc.Mapping):
            pairs = sorted(parameters.items(), key=lambda kv: kv[0])
        else:
            pairs = _pairs("ParameterDict", parameters)
        for key, value in pairs:
            self[key] = value

    def extra_repr(self):
        return "\n".join(f"  ({k}): " + _describe(p, _typename) for k, p in self.items())

    def __call__(self, input):
        raise NotImplementedError("ParameterDict should not be called.")

    def __or__(self, other):
        out = self.copy()
        out.update(other)
        return out

    def __ror__(self, other):
        out = other.copy()
        out.update(self)
        return out

    def __ior__(self, other):
        self.update(other)
        return self
