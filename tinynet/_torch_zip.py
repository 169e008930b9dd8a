"""Reading PyTorch's own checkpoint files without PyTorch: ``tinynet.load("model.pth")``.

Since PyTorch 1.6 ``torch.save`` writes a zip archive: ``<name>/data.pkl`` is a pickle (protocol
2) of the saved object in which each tensor is the call
``torch._utils._rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks)`` (wrapped in
``_rebuild_parameter`` for a Parameter), and each storage a persistent id
``("storage", torch.FloatStorage, key, location, numel)`` whose bytes are the archive's entry
``<name>/data/<key>``, in the byte order of ``<name>/byteorder`` (little-endian when absent).
This module unpickles that stream with its own table of globals, so nothing of PyTorch is
imported or needed: the storage types give the dtype, the rebuild functions make tinynet
tensors (copies: tensors that shared a storage in PyTorch no longer share memory), and the
dtypes, ``torch.device`` and ``torch.Size`` objects of the stream become tinynet's.

With ``weights_only`` (the default) every other global must be on tinynet's allow-list
(``collections.OrderedDict`` and what :func:`tinynet.serialization.add_safe_globals` adds), as
PyTorch's own ``weights_only`` loader requires; ``weights_only=False`` imports other globals as
an ordinary unpickler does (trusted files only). Objects of PyTorch itself other than tensors,
such as a whole pickled ``nn.Module``, cannot be rebuilt without PyTorch either way: the error
names the class and says to save its ``state_dict()``. Quantized, sparse, nested and subclass
tensors are refused the same way. The legacy (pre-1.6, non-zip) format is not read.
"""
import _compat_pickle
import collections
import io
import pickle
import zipfile

import numpy

from . import dtypes
from ._weights_only_unpickler import allowed
from .errors import SerializationError, UnpicklingError

_STORAGES = {"FloatStorage": "float32", "DoubleStorage": "float64", "HalfStorage": "float16",
             "BFloat16Storage": dtypes.bfloat16, "LongStorage": "int64", "IntStorage": "int32",
             "ShortStorage": "int16", "CharStorage": "int8", "ByteStorage": "uint8", "BoolStorage": "bool",
             "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128", "UntypedStorage": "uint8"}
_DTYPES = {"float32": "float32", "float": "float32", "float64": "float64", "double": "float64",
           "float16": "float16", "half": "float16", "bfloat16": dtypes.bfloat16, "int64": "int64", "long": "int64",
           "int32": "int32", "int": "int32", "int16": "int16", "short": "int16", "int8": "int8", "uint8": "uint8",
           "bool": "bool", "complex64": "complex64", "cfloat": "complex64", "complex128": "complex128",
           "cdouble": "complex128"}


def archive_prefix(source):
    """The folder name inside a ``torch.save`` zip archive (``"archive/"``), or None when
    ``source`` (a path or a binary file object, its position kept) is not one."""
    try:
        if hasattr(source, "read"):
            start = source.tell()
            try:
                if not zipfile.is_zipfile(source):
                    return None
                source.seek(start)
                names = zipfile.ZipFile(source).namelist()
            finally:
                source.seek(start)
        else:
            if not zipfile.is_zipfile(source):
                return None
            with zipfile.ZipFile(source) as z:
                names = z.namelist()
    except (OSError, zipfile.BadZipFile, ValueError):
        return None
    for n in names:
        if n.endswith("/data.pkl") and n.count("/") == 1:
            return n[:-len("data.pkl")]
    return None


class _Storage:
    """A storage read from the archive: its values (1-D, the storage type's dtype) and the
    device string it was saved from."""

    def __init__(self, values, location):
        self.values, self.location = values, location


class _Reader(pickle.Unpickler):
    def __init__(self, archive, prefix, rebuild, weights_only, where):
        self._archive, self._prefix, self._where = archive, prefix, where
        self._rebuild, self._weights_only = rebuild, weights_only
        self._storages, self._saved_on = {}, {}
        order = self._entry("byteorder", optional=True)
        self._swap = order is not None and order.strip() == b"big"
        self._known = allowed()  # tinynet's own types (device, Size, Parameter) and what the caller allowed
        self._table = self._known if weights_only else {}
        super().__init__(io.BytesIO(self._entry("data.pkl")))

    def _entry(self, name, optional=False):
        try:
            return self._archive.read(self._prefix + name)
        except KeyError:
            if optional:
                return None
            raise SerializationError(f"load: {self._where} is a PyTorch archive without its entry "
                                     f"{self._prefix + name!r} (truncated or damaged)") from None

    # ---- the stream's references --------------------------------------------------------------
    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage" and isinstance(pid[1], numpy.dtype)):
            raise SerializationError(f"load: {self._where} holds a PyTorch reference tinynet cannot read: {pid!r:.80}")
        _, dtype, key, location, numel = pid
        if key not in self._storages:
            raw = self._entry(f"data/{key}")
            values = numpy.frombuffer(raw, dtype=dtype.newbyteorder(">") if self._swap else dtype,
                                      count=len(raw) // dtype.itemsize)
            if self._swap:
                values = values.astype(dtype)
            if values.size < numel:
                raise SerializationError(f"load: {self._where}: storage {key} holds {values.size} values, "
                                         f"the stream says {numel}")
            self._storages[key] = _Storage(values, str(location))
        return self._storages[key]

    def find_class(self, module, name):
        # protocol 2 (PyTorch's) writes Python 2's names (__builtin__.set): Python's own mapping to 3's
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        full = f"{module}.{name}"
        if module == "torch._utils" and name in ("_rebuild_tensor_v2", "_rebuild_tensor"):
            return self._tensor
        if module == "torch._utils" and name in ("_rebuild_parameter", "_rebuild_parameter_with_state"):
            return self._as_parameter
        if module == "torch" and name in _STORAGES:
            return numpy.dtype(_STORAGES[name])
        if module == "torch" and name in _DTYPES:
            return numpy.dtype(_DTYPES[name])
        if full == "collections.OrderedDict":
            return collections.OrderedDict
        if full in ("torch.device", "torch.Size"):
            return self._known["tinynet.devices.device" if name == "device" else "tinynet.size.Size"]
        if full in self._table:
            return self._table[full]
        if self._weights_only:
            raise UnpicklingError(
                f"load: weights_only=True refuses {self._where}: it holds the global {full}, which is not on the "
                f"allow-list (loading it would run its code). If you trust the file, allow it with "
                f"tinynet.serialization.add_safe_globals or load with weights_only=False"
                + (" (a PyTorch object other than a tensor: tinynet cannot rebuild it either way; save its "
                   "state_dict() in PyTorch instead)" if module.split(".")[0] == "torch" else ""))
        if module.split(".")[0] == "torch":
            raise SerializationError(
                f"load: {self._where} holds the PyTorch object {full}, which tinynet cannot rebuild without PyTorch "
                f"(tensors, dtypes, devices, sizes and plain containers can be read): save its state_dict() in "
                f"PyTorch and load that")
        return super().find_class(module, name)

    # ---- rebuilding ---------------------------------------------------------------------------
    def _tensor(self, storage, offset, size, stride, requires_grad=False, hooks=None, metadata=None):
        if not isinstance(storage, _Storage):
            raise SerializationError(f"load: {self._where}: a tensor without a storage of the archive")
        size, stride = tuple(int(n) for n in size), tuple(int(s) for s in stride)
        values = storage.values
        if all(size):
            last = offset + sum((n - 1) * s for n, s in zip(size, stride))
            if offset < 0 or last >= values.size or min(stride, default=0) < 0:
                raise SerializationError(f"load: {self._where}: a tensor of size {size}, stride {stride} at offset "
                                         f"{offset} reaches past its storage of {values.size} values")
            array = numpy.lib.stride_tricks.as_strided(values[offset:], size, [s * values.itemsize for s in stride])
        else:
            array = numpy.empty(size, values.dtype)
        t = self._rebuild(numpy.array(array, copy=True), storage.location, bool(requires_grad))
        self._saved_on[id(t)] = (t, storage.location)
        return t

    def _as_parameter(self, data, requires_grad, hooks=None, state=None):
        saved = self._saved_on.get(id(data))
        if saved is None or saved[0] is not data:
            raise SerializationError(f"load: {self._where}: a Parameter around something other than a tensor")
        return self._rebuild(data.array, saved[1], bool(requires_grad),
                             self._known["tinynet.nn.modules.parameter.Parameter"])


def load(source, prefix, rebuild, weights_only, where):
    """The object a ``torch.save`` archive holds (module doc). ``rebuild(values, saved
    device, requires_grad, cls=None)`` makes a tensor; ``where`` names the file in errors.

    Raises:
        UnpicklingError: ``weights_only`` and a global off the allow-list.
        SerializationError: a damaged archive, a PyTorch object other than a tensor.
    """
    try:
        with zipfile.ZipFile(source) as archive:
            return _Reader(archive, prefix, rebuild, weights_only, where).load()
    except (UnpicklingError, SerializationError):
        raise
    except (zipfile.BadZipFile, pickle.UnpicklingError, EOFError, ValueError, TypeError, IndexError) as exc:
        raise SerializationError(f"load: {where} is a damaged PyTorch archive ({type(exc).__name__}: {exc})") from None
