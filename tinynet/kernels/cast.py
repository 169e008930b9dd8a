"""Casts between float32 and float16/bfloat16 on the GPU (``cast.cu``): the casts autocast
makes around every matrix product, one RawKernel launch each (the same values as CuPy's
``astype``)."""
import numpy

from .. import backend
from ..dtypes import bfloat16
from . import cuda

_F32, _F16 = numpy.dtype(numpy.float32), numpy.dtype(numpy.float16)
_NAMES = {(_F32, _F16): "tinynet_cast_to_f16", (_F32, bfloat16): "tinynet_cast_to_bf16",
          (_F16, _F32): "tinynet_cast_to_f32", (bfloat16, _F32): "tinynet_cast_to_f32"}


def covers(x, dtype):
    """True when :func:`convert` takes ``x`` to ``dtype``: a C-contiguous CuPy array, float32
    to or from float16/bfloat16."""
    return (x.dtype, dtype) in _NAMES and type(x) is backend._CUPY_NDARRAY and x.flags.c_contiguous


def convert(x, dtype):
    """``x.astype(dtype)`` for the pairs :func:`covers` accepts, as a new C-contiguous array."""
    y = backend.cupy.empty(x.shape, dtype=dtype)
    if x.size:
        name = _NAMES[(x.dtype, dtype)]
        fn = (cuda.kernel("cast.cu", "tinynet_cast_to_f16", x.dtype) if name == "tinynet_cast_to_f16" else
              cuda.kernel("cast.cu", "tinynet_cast_to_bf16", x.dtype) if name == "tinynet_cast_to_bf16" else
              cuda.kernel("cast.cu", "tinynet_cast_to_f32", x.dtype))
        cuda.launch(fn, -(-x.size // 4), (x, y, cuda.i64(x.size)))
    return y


def _registered(x, dtype):
    """:func:`convert` for the pairs it takes, else None (what ``backend.astype`` tries first)."""
    dtype = numpy.dtype(dtype)
    return convert(x, dtype) if covers(x, dtype) else None


backend.register_cast(_registered)
