"""``tinynet.save`` / ``tinynet.load``: checkpoints as ``.npz`` files (or ``.safetensors``);
other objects pickled, loaded by default without running code.

A checkpoint is a NumPy ``.npz`` archive: every array under a readable name (the
state-dict key, or a ``/``-joined path for nested objects such as an optimizer's state)
plus one entry ``__tinynet__`` holding a JSON description of the structure (dicts with
their key types, lists, tuples, numbers, strings). Loading uses ``allow_pickle=False`` and
``json``, so opening such a file can never run code. Saving to a path goes through
:func:`tinynet.atomic.atomic_write`: a temporary file in the target folder, fsynced and
renamed over the target (``os.replace``), then the folder fsynced. A crash (SIGKILL, power
cut) or an error mid-save leaves any previous file untouched; docs/reliability.md says how
that is tested.

An object that this structure cannot hold (a whole ``nn.Module``, an optimizer, a dict with
tuple keys, ...) is pickled, as PyTorch's ``torch.save`` pickles everything: the archive then
holds the pickle stream (entry ``__tinynet_pickle__``, format 2 in ``__tinynet__``) and, beside
it, every array the object holds, so array data never goes through pickle. ``load`` reads
such a file with ``weights_only=True`` by default (PyTorch 2.6+'s default): only globals on an
allow-list are rebuilt (:mod:`tinynet._weights_only_unpickler`; extend it with
:func:`add_safe_globals` or :class:`safe_globals`), anything else stops the load with
:class:`~tinynet.errors.UnpicklingError` before any of its code runs. ``weights_only=False``
unpickles everything: only for files from a trusted source.

``format="safetensors"`` (or a path ending in ``.safetensors``) writes a flat state dict
in Hugging Face's safetensors format instead (:mod:`tinynet.safetensors_format`), through
the same atomic write; ``load`` recognises either format by the file's first bytes.
"""
import errno
import io
import json
import os
import pickle
import zipfile

import numpy

from . import _pickled, _torch_zip, backend, devices, safetensors_format
from ._weights_only_unpickler import (add_safe_globals, clear_safe_globals, get_safe_globals, register_default,
                                      safe_globals)
from .atomic import atomic_write
from .errors import ArgumentError, ArgumentTypeError, DeviceError, SerializationError
from .tensor import Tensor

__all__ = ["save", "load", "add_safe_globals", "clear_safe_globals", "get_safe_globals", "safe_globals"]

_META = "__tinynet__"
_FORMAT = 1          # the JSON structure
_PICKLED = 2         # a pickle stream beside the arrays
_PICKLE = "__tinynet_pickle__"

register_default([Tensor, devices.device])


def _encode(obj, path, arrays):
    if isinstance(obj, Tensor) or hasattr(obj, "__cuda_array_interface__") or isinstance(obj, numpy.ndarray):
        kind = "tensor" if isinstance(obj, Tensor) else "array"
        data = obj.array if isinstance(obj, Tensor) else obj
        name = "/".join(path) or "value"
        while name in arrays or name == _META:
            name += "_"
        arrays[name] = backend.to_device(data, devices.CPU)
        return {"__" + kind + "__": name, "device": str(devices.of_array(data))}
    if isinstance(obj, dict):
        return {"__dict__": [[_encode_key(k, path), _encode(v, path + [str(k)], arrays)] for k, v in obj.items()]}
    if isinstance(obj, (list, tuple)):
        items = [_encode(v, path + [str(i)], arrays) for i, v in enumerate(obj)]
        return {"__tuple__": items} if isinstance(obj, tuple) else items
    if isinstance(obj, numpy.generic):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    raise SerializationError(f"save: cannot store {type(obj).__name__} at '{'/'.join(path) or '<root>'}' "
                             "(tensors, arrays, numbers, strings, lists, tuples and dicts only)")


def _encode_key(k, path):
    if isinstance(k, (bool, int, str)) and not isinstance(k, numpy.generic):
        return k
    if isinstance(k, numpy.integer):
        return int(k)
    raise SerializationError(f"save: dict keys must be str or int, got {type(k).__name__} at "
                             f"'{'/'.join(path) or '<root>'}'")


def _decode(obj, arrays, place):
    if isinstance(obj, dict):
        if "__tensor__" in obj:
            return Tensor._wrap(backend.to_device(arrays[obj["__tensor__"]], place(obj.get("device"))))
        if "__array__" in obj:
            return backend.to_device(arrays[obj["__array__"]], place(obj.get("device")))
        if "__tuple__" in obj:
            return tuple(_decode(v, arrays, place) for v in obj["__tuple__"])
        if "__dict__" in obj:
            return {k: _decode(v, arrays, place) for k, v in obj["__dict__"]}
        raise SerializationError(f"load: unknown record {sorted(obj)} in the file's structure")
    if isinstance(obj, list):
        return [_decode(v, arrays, place) for v in obj]
    return obj


def _placer(map_location):
    """``place(saved)``: the device a tensor saved on ``saved`` (a device string, None when the
    file does not say) loads onto, following PyTorch's ``map_location`` rules: None keeps the
    saved device (files without one: the default device); a device (string, ``tinynet.device``,
    GPU index) takes every tensor; a dict maps saved device strings to targets, others keep
    theirs."""
    if map_location is None or isinstance(map_location, dict):
        table = {} if map_location is None else map_location
        for k, v in table.items():
            if not isinstance(k, str):
                raise ArgumentTypeError(f"load: map_location's keys must be device strings, got {type(k).__name__}")
            devices.resolve(v, "load")  # a bad target fails before any tensor is built
        cache = {}

        def place(saved):
            if saved not in cache:
                cache[saved] = _saved_device(table.get(saved, saved)) if saved is not None else devices.default_device()
            return cache[saved]
        return place
    if callable(map_location):
        raise ArgumentTypeError("load: map_location as a function (PyTorch's storage callback) is not supported; "
                                "pass a device, a device string or a dict of them")
    device = devices.resolve(map_location, "load")
    return lambda saved: device


def _saved_device(where):
    """The device ``where`` (from the file, or a map_location dict) on this machine."""
    try:
        return devices.resolve(where, "load")
    except DeviceError as exc:
        raise DeviceError(f"{exc}. The file's tensors were saved on {where!r} and load onto the device they were "
                          "saved from unless map_location says otherwise (PyTorch's rule): pass "
                          "map_location='cpu' (or a device of this machine)") from None


def _target(f, op):
    """``f`` as a path string, or None when it is a binary file object."""
    if hasattr(f, "write" if op == "save" else "read"):
        return None
    try:
        path = os.fspath(f)
    except TypeError:
        raise ArgumentTypeError(f"{op}: f must be a path (str or os.PathLike) or a binary file object, "
                                f"got {type(f).__name__}") from None
    path = os.fsdecode(path)
    if "\0" in path:
        raise ArgumentError(f"{op}: f must not contain a NUL byte, got {path!r}")
    return path


def save(obj, f, pickle_module=None, pickle_protocol=None, format=None):
    """Save ``obj`` to ``f``, atomically: a state dict (or any nest of dicts/lists/tuples of
    tensors, arrays, numbers and strings) as ``.npz`` with a JSON structure, any other
    picklable object (a whole Module, an optimizer, ...) pickled with its arrays beside the
    stream (module doc), or a flat state dict as ``.safetensors``.

    Saving to a path is crash-safe: the bytes go to a temporary file
    ``.<name>.<random>.tmp`` in the same folder, which is flushed, fsynced and renamed over
    ``f`` (``os.replace``); then the folder is fsynced. A save that fails or is killed at
    any moment leaves the previous file at ``f`` complete and loadable; temporary files
    left by a killed process are removed by the next successful save to the same ``f``.
    A file object is written directly (no atomicity: that is the caller's business).

    Args:
        obj: e.g. ``model.state_dict()``, ``optimizer.state_dict()``, a dict of them, or
            ``model`` itself (then loading needs its classes allowed, see :func:`load`).
        f (str, os.PathLike or binary file object): target (``.npz`` is not appended).
        pickle_module: PyTorch's argument; only ``None`` or the standard :mod:`pickle`.
        pickle_protocol (int, optional): the pickle protocol for pickled objects (>= 2);
            default :data:`pickle.DEFAULT_PROTOCOL`.
        format (str, optional): ``"npz"`` or ``"safetensors"``; default ``"safetensors"``
            for a path ending in ``.safetensors``, else ``"npz"``. safetensors holds a flat
            ``{name: tensor}`` (a model's ``state_dict()``), readable by PyTorch's
            ``safetensors.torch.load_file``; it needs the ``safetensors`` extra.

    Raises:
        SerializationError: tinynet's own failures: ``obj`` can be neither stored nor pickled
            (a lock, a lambda, ...: the message says which; nothing is written), or the
            archive writer failed.
        ArgumentTypeError: ``f`` is neither a path nor a file object.
        ArgumentError: an unknown ``format``, another ``pickle_module``, a protocol below 2.
        DTypeError: a dtype the safetensors package cannot write.
        MissingExtraError: ``format="safetensors"`` without the ``safetensors`` package.
        OSError: the filesystem's failures, re-raised unchanged: the folder is missing or
            not writable, the disk is full (``ENOSPC``), ... In every error case, and on
            ``KeyboardInterrupt``, the temporary file is removed and a previous file at
            ``f`` is left intact.
    """
    path = _target(f, "save")
    if format is None:
        format = "safetensors" if path is not None and path.endswith(".safetensors") else "npz"
    if not isinstance(format, str) or format not in ("npz", "safetensors"):
        raise ArgumentError(f"save: format must be 'npz' or 'safetensors', got {format!r}")
    if pickle_module is not None and pickle_module is not pickle:
        raise ArgumentError(f"save: pickle_module must be None or pickle, got {pickle_module!r}")
    protocol = pickle.DEFAULT_PROTOCOL if pickle_protocol is None else pickle_protocol
    if isinstance(protocol, bool) or not isinstance(protocol, int) or not 2 <= protocol <= pickle.HIGHEST_PROTOCOL:
        raise ArgumentError(f"save: pickle_protocol must be an int in [2, {pickle.HIGHEST_PROTOCOL}], got {protocol!r}")
    if format == "safetensors":
        data = safetensors_format.to_bytes(obj)
        write = lambda out: out.write(data)  # noqa: E731
    else:
        arrays = _arrays_of(obj, protocol)
        write = lambda out: numpy.savez(out, **arrays)  # noqa: E731
    if path is None:
        write(f)
        return
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FileNotFoundError(errno.ENOENT, f"save: folder {folder!r} of the target does not exist", path)
    try:
        atomic_write(path, write)
    except (OSError, SerializationError):
        raise
    except Exception as exc:
        raise SerializationError(f"save: writing {path!r} failed ({type(exc).__name__}: {exc}); "
                                 "any previous file there is unchanged") from exc


def _arrays_of(obj, protocol):
    """The archive's entries: the JSON structure and its arrays, else the pickle stream and its arrays."""
    arrays = {}
    try:
        meta = {"format": _FORMAT, "root": _encode(obj, [], arrays)}
    except SerializationError:
        stream, arrays = _pickled.dumps(obj, protocol)
        meta = {"format": _PICKLED, "pickle": _PICKLE}
        arrays[_PICKLE] = numpy.frombuffer(stream, dtype=numpy.uint8)
    arrays[_META] = numpy.frombuffer(json.dumps(meta).encode("utf-8"), dtype=numpy.uint8)
    return arrays


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    """Load what :func:`save` wrote: tinynet's ``.npz`` (or a plain ``.npz`` of arrays), a
    ``.safetensors`` file (PyTorch's ``safetensors.torch.save_file`` output included), or
    PyTorch's own ``torch.save`` file (its zip format, read without PyTorch:
    ``tinynet/_torch_zip.py``), told apart by the file's contents.

    Args:
        f (str, os.PathLike or binary file object): the file.
        map_location: where tensors load, PyTorch's rules: None (default) puts each tensor on
            the device it was saved from (files that do not record one, such as safetensors
            and plain ``.npz``: the default device); a device (``"cpu"``, ``"cuda:0"``, a
            :class:`tinynet.device`, a GPU index) takes every tensor; a dict maps saved device
            strings to targets (``{"cuda:1": "cuda:0"}``), unmapped ones stay. PyTorch's
            function form is not supported.
        pickle_module: PyTorch's argument; only ``None`` or the standard :mod:`pickle`.
        weights_only (bool, optional): for a pickled object (module doc), rebuild only
            allowed globals (tensors, containers, numbers and what :func:`add_safe_globals` /
            :class:`safe_globals` allow). Default (None) True, as PyTorch 2.6+. ``False``
            unpickles anything: it runs whatever code the file names, so only for trusted
            files. Files with the JSON structure never run code either way.
        mmap: PyTorch's argument; only ``None``/``False`` (tinynet reads the whole file).
        **pickle_load_args: ``encoding`` for a pickled object loaded with ``weights_only=False``.

    Returns:
        The saved object, with tensors as :class:`~tinynet.Tensor` (Parameters stay
        Parameters). A plain ``.npz`` without tinynet's structure entry, and a safetensors
        file, give ``{name: Tensor}``.

    Raises:
        FileNotFoundError: ``f`` does not exist.
        UnpicklingError: ``weights_only`` and the file names a global off the allow-list
            (the message names it and the opt-ins); nothing of the file's code ran.
        SerializationError: the file is neither a readable ``.npz`` archive (or needs
            pickle) nor a readable safetensors file (truncated, foreign); a damaged PyTorch
            archive, or one holding a PyTorch object other than a tensor (a whole module).
        MissingExtraError: a safetensors file without the ``safetensors`` package.
        DeviceError: a tensor's device (saved, or from ``map_location``) is not on this
            machine (``"cuda"`` without a GPU); the message says to pass ``map_location``.
        ArgumentTypeError: ``f`` is neither a path nor a file object; ``weights_only`` not a
            bool; ``map_location`` a function or a dict with non-string keys.
        ArgumentError: another ``pickle_module``, ``mmap=True``, an unknown keyword argument.
    """
    if weights_only is not None and not isinstance(weights_only, bool):
        raise ArgumentTypeError(f"load: weights_only must be a bool or None, got {type(weights_only).__name__}")
    if pickle_module is not None and pickle_module is not pickle:
        raise ArgumentError(f"load: pickle_module must be None or pickle, got {pickle_module!r}")
    if not (mmap is None or (isinstance(mmap, (bool, int)) and not mmap)):
        raise ArgumentError(f"load: mmap={mmap!r} is not supported (tinynet reads the whole file)")
    unknown = set(pickle_load_args) - {"encoding"}
    if unknown:
        raise ArgumentError(f"load: unexpected keyword argument(s) {sorted(unknown)}")
    place = _placer(map_location)
    path = _target(f, "load")
    source = f if path is None else path
    if path is None:
        path = getattr(f, "name", "<file object>")
    data = _safetensors_bytes(source)
    if data is not None:
        return safetensors_format.from_bytes(data, path, place(None))
    prefix = _torch_zip.archive_prefix(source)
    if prefix is not None:  # PyTorch's own torch.save file
        return _torch_zip.load(source, prefix, _pickled._remap(place), weights_only is not False, repr(path))
    try:
        loaded = numpy.load(source, allow_pickle=False)
        if not isinstance(loaded, numpy.lib.npyio.NpzFile):
            raise ValueError(f"a single .npy array ({type(loaded).__name__}), not an .npz archive")
        with loaded as archive:
            arrays = {k: archive[k] for k in archive.files}
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError) as exc:
        raise SerializationError(f"load: {path!r} is not a readable tinynet .npz checkpoint ({exc})") from None
    if _META not in arrays:
        return {k: Tensor._wrap(backend.to_device(v, place(None))) for k, v in arrays.items()}
    try:
        meta = json.load(io.BytesIO(arrays.pop(_META).tobytes()))
    except ValueError as exc:
        raise SerializationError(f"load: {path!r} has a corrupt structure entry ({exc})") from None
    if meta.get("format") == _PICKLED and meta.get("pickle") in arrays:
        stream = arrays.pop(meta["pickle"]).tobytes()
        return _pickled.loads(stream, arrays, place, weights_only is not False, repr(path),
                              pickle_load_args.get("encoding", "ASCII"))
    if meta.get("format") != _FORMAT:
        raise SerializationError(f"load: {path!r} has format {meta.get('format')!r}, expected {_FORMAT} "
                                 f"or {_PICKLED}")
    return _decode(meta["root"], arrays, place)


def _safetensors_bytes(source):
    """The whole file when it starts like a safetensors file, else None (the file object's
    position is put back)."""
    if hasattr(source, "read"):
        start = source.tell()
        head = source.read(16)
        source.seek(start)
        return source.read() if safetensors_format.looks_like(head) else None
    try:
        with open(source, "rb") as fh:
            if not safetensors_format.looks_like(fh.read(16)):
                return None
            fh.seek(0)
            return fh.read()
    except FileNotFoundError:
        raise
    except OSError:
        return None  # numpy.load reports it
