"""The pickled side of :func:`tinynet.save` / :func:`tinynet.load`: objects that the JSON
structure of a checkpoint cannot hold (see :mod:`tinynet.serialization`).

:func:`dumps` pickles the object with every array taken out of the stream (``persistent_id``:
the stream records ``("array", name)`` and the array goes into the archive beside it, stored
by NumPy with ``allow_pickle=False``). :func:`loads` rebuilds it, the arrays coming back from
the archive (``persistent_load``) and every tensor put on the device asked for; with
``weights_only`` the unpickler of :mod:`tinynet._weights_only_unpickler` resolves only allowed
globals.
"""
import io
import pickle

import numpy

from . import backend, devices
from ._weights_only_unpickler import Unpickler
from .errors import SerializationError
from .tensor import _rebuild


class _Pickler(pickle.Pickler):
    def __init__(self, file, protocol, arrays):
        super().__init__(file, protocol=protocol)
        self.arrays, self.names = arrays, {}

    def persistent_id(self, obj):
        if not isinstance(obj, (numpy.ndarray, backend._CUPY_NDARRAY)) or obj.dtype == numpy.dtype(object):
            return None
        name = self.names.get(id(obj))
        if name is None:
            name = self.names[id(obj)] = f"p{len(self.arrays)}"
            self.arrays[name] = (obj, backend.to_device(obj, devices.CPU))  # the original kept alive for id()
        return ("array", name)


def dumps(obj, protocol):
    """``(stream, arrays)``: the pickle bytes and ``{name: host array}``.

    Raises:
        SerializationError: ``obj`` (or something in it) cannot be pickled; nothing is written.
    """
    buf, arrays = io.BytesIO(), {}
    try:
        _Pickler(buf, protocol, arrays).dump(obj)
    except (pickle.PicklingError, TypeError, AttributeError, RecursionError) as exc:
        raise SerializationError(f"save: cannot store {type(obj).__name__}: it is not a nest of tensors, "
                                 f"numbers and strings, and pickling it failed ({type(exc).__name__}: {exc})") from None
    return buf.getvalue(), {name: host for name, (_, host) in arrays.items()}


def _remap(place):
    """``tinynet.tensor._rebuild`` with its device argument replaced by ``place(saved device)``."""
    def rebuild(values, saved_device, requires_grad, cls=None):
        return _rebuild(values, str(place(saved_device)), requires_grad, cls)
    return rebuild


class _FullUnpickler(pickle.Unpickler):
    def __init__(self, file, persistent_load, rebuild, **kwargs):
        super().__init__(file, **kwargs)
        self._persistent, self._rebuild = persistent_load, rebuild

    def persistent_load(self, pid):
        return self._persistent(pid)

    def find_class(self, module, name):
        if (module, name) == ("tinynet.tensor", "_rebuild"):
            return self._rebuild
        return super().find_class(module, name)


def loads(stream, arrays, place, weights_only, where, encoding="ASCII"):
    """The object :func:`dumps` pickled, each tensor on ``place(its saved device string)``.

    Raises:
        UnpicklingError: ``weights_only`` and a global off the allow-list.
        SerializationError: a corrupt stream or a missing array.
    """
    def persistent_load(pid):
        if not (isinstance(pid, tuple) and len(pid) == 2 and pid[0] == "array" and pid[1] in arrays):
            raise SerializationError(f"load: {where} refers to a missing array {pid!r}")
        return arrays[pid[1]]

    rebuild = _remap(place)
    if weights_only:
        unpickler = Unpickler(io.BytesIO(stream), persistent_load, where)
        unpickler._allowed["tinynet.tensor._rebuild"] = rebuild
    else:
        unpickler = _FullUnpickler(io.BytesIO(stream), persistent_load, rebuild, encoding=encoding)
    try:
        return unpickler.load()
    except (EOFError, pickle.UnpicklingError, ValueError, IndexError, KeyError) as exc:
        if isinstance(exc, SerializationError):
            raise
        raise SerializationError(f"load: {where} holds a corrupt pickle stream ({type(exc).__name__}: {exc})") \
            from None
