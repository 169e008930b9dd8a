"""The ``.safetensors`` side of ``tinynet.save`` / ``tinynet.load``.

safetensors (Hugging Face's format, https://github.com/huggingface/safetensors) is a flat
mapping ``name -> array`` behind an 8-byte little-endian header length and a JSON header
of names, dtypes, shapes and byte offsets; like tinynet's ``.npz`` it runs no code when
read. The bytes are made and parsed by the ``safetensors`` package (its NumPy API,
``safetensors.numpy.save`` / ``load``), so a state dict PyTorch wrote with
``safetensors.torch.save_file(model.state_dict(), path)`` loads into the same tinynet model,
and back. The package is optional: the ``safetensors`` extra installs it.
"""
import numpy

from . import backend, devices
from .dtypes import bfloat16
from .errors import DTypeError, SerializationError
from .tensor import Tensor
from .optional import import_optional

MAGIC_HINT = b"{"  # the JSON header follows the 8-byte length


def looks_like(head):
    """Whether the first bytes of a file (at least 9) look like a safetensors file: an
    8-byte header length that fits, then the header's opening brace."""
    if len(head) < 9 or head[8:9] != MAGIC_HINT:
        return False
    return 2 <= int.from_bytes(head[:8], "little") < 100 << 20


def _module():
    return import_optional("safetensors.numpy", "safetensors", "tinynet.save/load in the safetensors format")


def to_bytes(obj):
    """``obj`` (a flat ``{str: Tensor or array}``) as the bytes of a safetensors file.

    Raises:
        SerializationError: ``obj`` is not a flat mapping of names to tensors (the message
            names the first offending entry; safetensors holds no nesting and no numbers).
        DTypeError: a dtype safetensors' NumPy API cannot write (e.g. bfloat16).
    """
    if not isinstance(obj, dict):
        raise SerializationError(f"save: the safetensors format holds a flat dict of named tensors, got "
                                 f"{type(obj).__name__}; save it in the default .npz format instead")
    arrays = {}
    for name, value in obj.items():
        if not isinstance(name, str):
            raise SerializationError(f"save: safetensors names must be str, got {type(name).__name__} ({name!r})")
        if isinstance(value, Tensor):
            value = value.array
        if not (isinstance(value, numpy.ndarray) or backend.is_gpu_array(value)):
            raise SerializationError(f"save: the safetensors format holds tensors only; {name!r} is a "
                                     f"{type(value).__name__} (save nested state, such as an optimizer's, as .npz)")
        arrays[name] = numpy.ascontiguousarray(backend.to_device(value, devices.CPU))
    st = _module()
    try:
        return st.save(arrays)
    except (ValueError, TypeError, KeyError) as exc:
        kinds = ", ".join(f"{n} ({a.dtype})" for n, a in arrays.items())
        raise DTypeError(f"save: safetensors cannot write one of {kinds} ({exc})") from None


def from_bytes(data, path, device):
    """The ``{name: Tensor}`` of safetensors bytes, on ``device``.

    Raises:
        SerializationError: the bytes are not a valid safetensors file (truncated, foreign).
    """
    _module()
    import safetensors
    try:
        items = safetensors.deserialize(data)  # the package parses and checks the header and offsets
    except Exception as exc:  # the package's SafetensorError and friends: a bad or truncated file
        raise SerializationError(f"load: {path!r} is not a readable safetensors file ({exc})") from None
    out = {}
    for name, item in items:
        dtype = _DTYPES.get(item["dtype"])
        if dtype is None:
            raise SerializationError(f"load: {path!r} holds {name!r} as {item['dtype']}, a dtype tinynet does not have")
        array = numpy.frombuffer(bytes(item["data"]), dtype=dtype).reshape(item["shape"])
        out[name] = Tensor._wrap(backend.to_device(array.copy(), device))
    return out


# safetensors' dtype names; BF16 through ml_dtypes (tinynet.bfloat16), which the package's
# NumPy loader lacks
_DTYPES = {"F64": numpy.float64, "F32": numpy.float32, "F16": numpy.float16, "BF16": bfloat16,
           "I64": numpy.int64, "I32": numpy.int32, "I16": numpy.int16, "I8": numpy.int8, "U64": numpy.uint64,
           "U32": numpy.uint32, "U16": numpy.uint16, "U8": numpy.uint8, "BOOL": numpy.bool_,
           "C64": numpy.complex64}
