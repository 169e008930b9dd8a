"""``a + b`` into a new float32 array on the GPU (``add.cu``): a float32 array plus a float32,
float16 or bfloat16 array of the same shape, both C-contiguous, in one RawKernel launch. The
half-type operand is widened inside the kernel, so the result has the bits of widening it first
and adding in float32 (what :func:`tinynet.ops.arith.add` computes for such a pair) without
the widened copy. ``tinynet.ops.arith`` uses it for its mixed and float32 adds and registers it
with :func:`tinynet.backend.register_add` for the engine's gradient sums."""
import numpy

from .. import backend
from ..dtypes import bfloat16
from . import cuda

_F32 = numpy.dtype(numpy.float32)
_SECOND = (_F32, numpy.dtype(numpy.float16), bfloat16)


def covers(a, b):
    """True when :func:`add` takes ``(a, b)``: CuPy arrays of one shape, both C-contiguous,
    ``a`` float32 and ``b`` float32, float16 or bfloat16."""
    gpu = backend._CUPY_NDARRAY
    return (type(a) is gpu and type(b) is gpu and a.dtype == _F32 and b.dtype in _SECOND and a.shape == b.shape
            and a.flags.c_contiguous and b.flags.c_contiguous)


def add(a, b):
    """``a + b`` (float32) for the pairs :func:`covers` accepts."""
    y = backend.cupy.empty(a.shape, dtype=_F32)
    if a.size:
        cuda.launch(cuda.kernel("add.cu", "tinynet_add_f32", b.dtype), -(-a.size // 4), (a, b, y, cuda.i64(a.size)))
    return y


def float32_sum(a, b):
    """``a + b`` as a float32 array through :func:`add` when one operand is float32 and the pair
    is covered in either order (the sum is commutative bit for bit), else None."""
    if covers(a, b):
        return add(a, b)
    if covers(b, a):
        return add(b, a)
    return None


backend.register_add(float32_sum)
