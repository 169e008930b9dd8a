"""Containers: ``Sequential``, ``ModuleList``, ``ModuleDict``; and ``Flatten``.

Their children are registered sub-modules, so ``parameters()`` and ``state_dict()`` see
them under PyTorch's keys (``0.weight``, ``blocks.2.bias``, ``heads.cls.weight``).
``ParameterList`` and ``ParameterDict`` are in :mod:`.param_container`.
"""
import warnings
import collections
import collections.abc
import itertools
import operator

from ...errors import ArgumentError, ArgumentTypeError, IndexOutOfRangeError
from .. import functional as F
from .module import Module


class Flatten(Module):
    """Flatten dims ``start_dim`` (default 1) to ``end_dim`` (default -1).

    Shape: (N, *) -> (N, prod(*)) with the defaults.
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return F.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


def _index(owner, idx, size):
    """``idx`` as a non-negative int below ``size`` (PyTorch's container indexing)."""
    try:
        idx = operator.index(idx)
    except TypeError:
        raise ArgumentTypeError(f"{owner}: indices must be integers or slices, got {type(idx).__name__}") from None
    if not -size <= idx < size:
        raise IndexOutOfRangeError(f"{owner}: index {idx} is out of range (size {size})")
    return idx % size


def _renumber(module):
    """Keys ``"0" .. "n-1"`` after a deletion, as PyTorch does."""
    module._modules = collections.OrderedDict((str(i), m) for i, m in enumerate(module._modules.values()))


class Container(Module):
    """PyTorch's deprecated ``nn.Container``: a Module holding the modules given as keyword
    arguments as its children (``Container(conv=nn.Conv2d(1, 2, 3))``); it warns, as
    PyTorch's does, and has no forward of its own.

    Raises:
        ArgumentTypeError: a value that is not a Module (or None).
    """

    def __init__(self, **kwargs):
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now implemented in `nn.Module`. "
                      "Subclass that instead.", FutureWarning, stacklevel=2)
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class Sequential(Module):
    """Modules applied in order: ``forward(x)`` returns ``m_n(...m_1(x))``.

    ``Sequential(m1, m2, ...)`` names the children ``"0"``, ``"1"``...;
    ``Sequential(OrderedDict([("conv", m1), ...]))`` (or a dict) uses the given names.
    Supports ``len``, iteration, ``s[i]`` (negative too), ``s[a:b]`` (a Sequential keeping
    the names), ``s[i] = m``, ``del s[i]`` (renumbers), ``append``, ``extend``,
    ``insert``, ``pop``, ``+``, ``+=``, ``*``.
    """

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], dict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(collections.OrderedDict(list(self._modules.items())[idx]))
        i = _index("Sequential", idx, len(self))
        return next(itertools.islice(self._modules.values(), i, None))

    def __setitem__(self, idx, module):
        key = list(self._modules)[_index("Sequential", idx, len(self))]
        setattr(self, key, module)

    def __delitem__(self, idx):
        keys = list(self._modules)
        for key in keys[idx] if isinstance(idx, slice) else [keys[_index("Sequential", idx, len(self))]]:
            delattr(self, key)
        _renumber(self)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __add__(self, other):
        if not isinstance(other, Sequential):
            raise ArgumentError(f"Sequential: add operator supports only objects of Sequential class, but "
                                f"{type(other)} is given")
        ret = Sequential()
        for layer in itertools.chain(self, other):
            ret.append(layer)
        return ret

    def __iadd__(self, other):
        if not isinstance(other, Sequential):
            raise ArgumentError(f"Sequential: add operator supports only objects of Sequential class, but "
                                f"{type(other)} is given")
        offset = len(self)
        for i, module in enumerate(other):
            self.add_module(str(i + offset), module)
        return self

    def _check_factor(self, other):
        if isinstance(other, bool) or not isinstance(other, int):
            raise ArgumentTypeError(f"unsupported operand type(s) for *: {type(self)} and {type(other)}")
        if other <= 0:
            raise ArgumentError(f"Sequential: non-positive multiplication factor {other}")

    def __mul__(self, other):
        self._check_factor(other)
        combined = Sequential()
        for i, module in enumerate(itertools.chain.from_iterable([list(self)] * other)):
            combined.add_module(str(i), module)
        return combined

    __rmul__ = __mul__

    def __imul__(self, other):
        self._check_factor(other)
        mods, n = list(self), len(self)
        for i, module in enumerate(mods * (other - 1)):
            self.add_module(str(n + i), module)
        return self

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def forward(self, input):
        for module in self:
            input = module(input)
        return input

    def append(self, module):
        """Add ``module`` at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index, module):
        """Put ``module`` at position ``index`` (negative counts from the end); returns self.

        Raises:
            ArgumentTypeError: not a Module. IndexOutOfRangeError: ``index`` beyond ``[-len, len]``.
        """
        if not isinstance(module, Module):
            raise ArgumentTypeError(f"Sequential.insert: module should be of type Module, got {type(module).__name__}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexOutOfRangeError(f"Sequential.insert: index {index} is out of range (size {n})")
        index = index + n if index < 0 else index
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def extend(self, sequential):
        """Append every module of ``sequential`` (any iterable of modules); returns self."""
        for layer in sequential:
            self.append(layer)
        return self

    def pop(self, key):
        """Remove and return the module at ``key`` (an index or a slice)."""
        v = self[key]
        del self[key]
        return v


def _addindent(s, n):
    first, *rest = s.split("\n")
    return s if not rest else first + "\n" + "\n".join(n * " " + line for line in rest)


class ModuleList(Module):
    """A list of sub-modules, registered (keys ``"0"``, ``"1"``...) so their parameters are found.

    Supports indexing (negative too), slices (a new ModuleList, renumbered), ``l[i] = m``,
    ``del l[i]`` (renumbers), ``append``, ``extend``, ``insert``, ``pop``, ``+``, ``+=``.
    Its repr folds runs of identical children (``(0-2): 3 x Linear(...)``) like PyTorch's.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def _key(self, idx):
        return str(_index("ModuleList", idx, len(self)))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._key(idx)]

    def __setitem__(self, idx, module):
        setattr(self, self._key(idx), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._key(idx))
        _renumber(self)

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(itertools.chain(self, other)):
            combined.add_module(str(i), module)
        return combined

    def __repr__(self):
        reprs = [repr(m) for m in self]
        if not reprs:
            return self._get_name() + "()"
        blocks = []  # [start, end, repr]
        for i, r in enumerate(reprs):
            if blocks and blocks[-1][2] == r:
                blocks[-1][1] = i
            else:
                blocks.append([i, i, r])
        lines = [_addindent(f"({a}): {r}" if a == b else f"({a}-{b}): {b - a + 1} x {r}", 2) for a, b, r in blocks]
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"

    def __dir__(self):
        return [k for k in super().__dir__() if not k.isdigit()]

    def insert(self, index, module):
        """Insert ``module`` before position ``index`` (negative counts from the end, as list.insert)."""
        n = len(self._modules)
        index = max(0, min(n, index + n if index < 0 else index))
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module):
        """Add ``module`` at the end; returns self.

        Raises:
            ArgumentTypeError: not a Module.
        """
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key):
        """Remove and return the module at ``key`` (an index or a slice)."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules):
        """Append the modules of an iterable; returns self.

        Raises:
            ArgumentTypeError: ``modules`` is not iterable, or holds a non-Module.
        """
        try:
            modules = list(modules)
        except TypeError:
            raise ArgumentTypeError(f"ModuleList.extend should be called with an iterable, but got "
                                    f"{type(modules).__name__}") from None
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


def _pairs(owner, values):
    """``(key, value)`` pairs of a mapping (in its order) or of an iterable of pairs."""
    if not isinstance(values, collections.abc.Iterable):
        raise ArgumentTypeError(f"{owner}.update should be called with an iterable of key/value pairs, but got "
                                f"{type(values).__name__}")
    if isinstance(values, (collections.abc.Mapping, ModuleDict)):
        return list(values.items())
    try:
        values = list(values)
    except TypeError:  # iterable by type only (a 0-d array)
        raise ArgumentTypeError(f"{owner}.update should be called with an iterable of key/value pairs, but got "
                                f"{type(values).__name__}") from None
    out = []
    for j, p in enumerate(values):
        if not isinstance(p, collections.abc.Iterable):
            raise ArgumentTypeError(f"{owner} update sequence element #{j} should be Iterable; is "
                                    f"{type(p).__name__}")
        p = list(p)
        if len(p) != 2:
            raise ArgumentError(f"{owner} update sequence element #{j} has length {len(p)}; 2 is required")
        out.append((p[0], p[1]))
    return out


class ModuleDict(Module):
    """An ordered dict of sub-modules (insertion order, kept by ``update``), registered
    under their keys so their parameters are found (``heads.cls.weight``).

    Args:
        modules: a mapping of name to Module, or an iterable of ``(name, Module)`` pairs.
    """

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        """Remove every module."""
        self._modules.clear()

    def pop(self, key):
        """Remove ``key`` and return its module (KeyError when absent)."""
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        """Add or overwrite from a mapping or an iterable of ``(name, Module)`` pairs, in their order.

        Raises:
            ArgumentTypeError: not iterable, or an element that is not a pair's iterable or not a Module.
            ArgumentError: an element that is not of length 2.
        """
        for key, module in _pairs("ModuleDict", modules):
            self[key] = module
