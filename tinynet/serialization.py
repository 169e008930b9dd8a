"""``tinynet.save`` / ``tinynet.load``: checkpoints as ``.npz`` files (or ``.safetensors``),
never pickle.

A checkpoint is a NumPy ``.npz`` archive: every array under a readable name (the
state-dict key, or a ``/``-joined path for nested objects such as an optimizer's state)
plus one entry ``__tinynet__`` holding a JSON description of the structure (dicts with
their key types, lists, tuples, numbers, strings). Loading uses ``allow_pickle=False`` and
``json``, so opening a file can never run code. Saving to a path goes through
:func:`tinynet.atomic.atomic_write`: a temporary file in the target folder, fsynced and
renamed over the target (``os.replace``), then the folder fsynced. A crash (SIGKILL, power
cut) or an error mid-save leaves any previous file untouched; docs/reliability.md says how
that is tested.

``format="safetensors"`` (or a path ending in ``.safetensors``) writes a flat state dict
in Hugging Face's safetensors format instead (:mod:`tinynet.safetensors_format`), through
the same atomic write; ``load`` recognises either format by the file's first bytes.
"""
import errno
import io
import json
import os
import zipfile

import numpy

from . import backend, devices, safetensors_format
from .atomic import atomic_write
from .errors import ArgumentError, ArgumentTypeError, SerializationError
from .tensor import Tensor

_META = "__tinynet__"
_FORMAT = 1


def _encode(obj, path, arrays):
    if isinstance(obj, Tensor) or hasattr(obj, "__cuda_array_interface__") or isinstance(obj, numpy.ndarray):
        kind = "tensor" if isinstance(obj, Tensor) else "array"
        data = obj.array if isinstance(obj, Tensor) else obj
        name = "/".join(path) or "value"
        while name in arrays or name == _META:
            name += "_"
        arrays[name] = backend.to_device(data, devices.CPU)
        return {"__" + kind + "__": name}
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


def _decode(obj, arrays, device):
    if isinstance(obj, dict):
        if "__tensor__" in obj:
            return Tensor._wrap(backend.to_device(arrays[obj["__tensor__"]], device))
        if "__array__" in obj:
            return backend.to_device(arrays[obj["__array__"]], device)
        if "__tuple__" in obj:
            return tuple(_decode(v, arrays, device) for v in obj["__tuple__"])
        if "__dict__" in obj:
            return {k: _decode(v, arrays, device) for k, v in obj["__dict__"]}
        raise SerializationError(f"load: unknown record {sorted(obj)} in the file's structure")
    if isinstance(obj, list):
        return [_decode(v, arrays, device) for v in obj]
    return obj


def _target(f, op):
    """``f`` as a path string, or None when it is a binary file object."""
    if hasattr(f, "write" if op == "save" else "read"):
        return None
    try:
        path = os.fspath(f)
    except TypeError:
        raise ArgumentTypeError(f"{op}: f must be a path (str or os.PathLike) or a binary file object, "
                                f"got {type(f).__name__}") from None
    return os.fsdecode(path)


def save(obj, f, format=None):
    """Save a state dict (or any nest of dicts/lists/tuples of tensors, arrays and
    numbers) to ``f`` as ``.npz``, or a flat state dict as ``.safetensors``, atomically.

    Saving to a path is crash-safe: the bytes go to a temporary file
    ``.<name>.<random>.tmp`` in the same folder, which is flushed, fsynced and renamed over
    ``f`` (``os.replace``); then the folder is fsynced. A save that fails or is killed at
    any moment leaves the previous file at ``f`` complete and loadable; temporary files
    left by a killed process are removed by the next successful save to the same ``f``.
    A file object is written directly (no atomicity: that is the caller's business).

    Args:
        obj: e.g. ``model.state_dict()``, ``optimizer.state_dict()`` or a dict of them.
        f (str, os.PathLike or binary file object): target (``.npz`` is not appended).
        format (str, optional): ``"npz"`` or ``"safetensors"``; default ``"safetensors"``
            for a path ending in ``.safetensors``, else ``"npz"``. safetensors holds a flat
            ``{name: tensor}`` (a model's ``state_dict()``), readable by PyTorch's
            ``safetensors.torch.load_file``; it needs the ``safetensors`` extra.

    Raises:
        SerializationError: tinynet's own failures: ``obj`` holds something that can't be
            stored (the message names its place and type; nothing is written), or the
            archive writer failed.
        ArgumentTypeError: ``f`` is neither a path nor a file object.
        ArgumentError: an unknown ``format``.
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
    if format not in ("npz", "safetensors"):
        raise ArgumentError(f"save: format must be 'npz' or 'safetensors', got {format!r}")
    if format == "safetensors":
        data = safetensors_format.to_bytes(obj)
        write = lambda out: out.write(data)  # noqa: E731
    else:
        arrays = {}
        meta = {"format": _FORMAT, "root": _encode(obj, [], arrays)}
        arrays[_META] = numpy.frombuffer(json.dumps(meta).encode("utf-8"), dtype=numpy.uint8)
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


def load(f, map_location=None):
    """Load what :func:`save` wrote: tinynet's ``.npz`` (or a plain ``.npz`` of arrays) or
    a ``.safetensors`` file (PyTorch's ``safetensors.torch.save_file`` output included),
    told apart by the file's first bytes.

    Args:
        f (str, os.PathLike or binary file object): the file.
        map_location: ``"cpu"`` or ``"cuda"``; default the active backend's device.

    Returns:
        The saved structure, with tensors as :class:`~tinynet.Tensor`. A plain ``.npz``
        without tinynet's structure entry, and a safetensors file, give ``{name: Tensor}``.

    Raises:
        FileNotFoundError: ``f`` does not exist.
        SerializationError: the file is neither a readable ``.npz`` archive (or needs
            pickle) nor a readable safetensors file (truncated, foreign).
        MissingExtraError: a safetensors file without the ``safetensors`` package.
        ArgumentTypeError: ``f`` is neither a path nor a file object.
    """
    device = devices.resolve(map_location, "load")
    path = _target(f, "load")
    source = f if path is None else path
    if path is None:
        path = getattr(f, "name", "<file object>")
    data = _safetensors_bytes(source)
    if data is not None:
        return safetensors_format.from_bytes(data, path, device)
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
        return {k: Tensor._wrap(backend.to_device(v, device)) for k, v in arrays.items()}
    try:
        meta = json.load(io.BytesIO(arrays.pop(_META).tobytes()))
    except ValueError as exc:
        raise SerializationError(f"load: {path!r} has a corrupt structure entry ({exc})") from None
    if meta.get("format") != _FORMAT:
        raise SerializationError(f"load: {path!r} has format {meta.get('format')!r}, expected {_FORMAT}")
    return _decode(meta["root"], arrays, device)


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
