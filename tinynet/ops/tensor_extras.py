"""PyTorch's remaining everyday Tensor spellings: the aliases ``multiply``, ``divide``,
``subtract``, ``positive``; the queries ``is_signed``, ``is_complex``, ``is_same_size``,
``is_cpu`` (and ``is_xpu``/``is_mps``/``is_meta``, always False), ``is_inference``, ``stride``,
``storage_offset``, ``data_ptr``, ``output_nr``, ``share_memory_``, ``is_shared``;
and the in-place versions of binary, comparison, logical/bitwise and scan functions
(``x.atan2_(y)``, ``x.lt_(y)``, ``x.tril_()``, ``x.cumsum_(0)``, ...), each the function of
the same name written back into ``x`` with autograd's in-place rules.

A comparison written in place stores 1 and 0 in ``x``'s own dtype, as PyTorch does.
``stride`` and ``storage_offset`` count elements (NumPy and CuPy count bytes).
"""
from .. import _shared_memory, backend
from ..errors import ArgumentTypeError, IndexOutOfRangeError
from . import arith, binary_math, compare, division, matrix_helpers, rearrange, scan
from .inplace import composed_method, inplace_apply
from .util import check_tensor, dim_index


def multiply(input, other):
    """An alias of :func:`tinynet.mul`."""
    return arith.mul(input, other)


def divide(input, other, *, rounding_mode=None):
    """An alias of :func:`tinynet.div`."""
    return division.div(input, other, rounding_mode=rounding_mode)


def subtract(input, other, *, alpha=1):
    """An alias of :func:`tinynet.sub`."""
    return arith.sub(input, other, alpha=alpha)


def positive(input):
    """``input`` itself (PyTorch's unary plus); bool tensors are refused, as PyTorch does.

    Raises:
        ArgumentTypeError: not a Tensor, or a bool tensor.
    """
    check_tensor("positive", "input", input)
    if input.array.dtype.kind == "b":
        raise ArgumentTypeError("positive: the unary + operator does not support bool tensors")
    return input


def is_signed(input):
    """True for a signed dtype (floats and signed integers; False for bool and uint8)."""
    return check_tensor("is_signed", "input", input).array.dtype.kind in "fi" or input.array.dtype.name == "bfloat16"


def is_complex(input):
    """False: tinynet has no complex dtypes."""
    check_tensor("is_complex", "input", input)
    return False


def is_same_size(input, other):
    """True when the two tensors have the same shape."""
    return tuple(check_tensor("is_same_size", "input", input).shape) == tuple(
        check_tensor("is_same_size", "other", other).shape)


def _is_cpu(self):
    return not backend.is_gpu_array(self.array)


def is_inference(input):
    """False: tinynet's ``inference_mode`` makes ordinary tensors (it records no tape)."""
    check_tensor("is_inference", "input", input)
    return False


def stride(self, dim=None):
    """The steps between neighbouring elements of each dim, in elements (a tuple), or of ``dim``.

    Raises:
        IndexOutOfRangeError: ``dim`` out of range.
    """
    steps = tuple(s // self.array.itemsize for s in self.array.strides)
    if dim is None:
        return steps
    if self.ndim == 0:
        raise IndexOutOfRangeError(f"stride: dimension specified as {dim} but tensor has no dimensions")
    return steps[dim_index("stride", dim, self.ndim)]


def data_ptr(self):
    """The address of the first element (host memory for NumPy, device memory for CuPy)."""
    a = self.array
    return int(a.data.ptr) if backend.is_gpu_array(a) else int(a.__array_interface__["data"][0])


def storage_offset(self):
    """The position of the first element in the storage it views, in elements (0 for a
    tensor that owns its memory)."""
    base = self._base
    if base is None:
        return 0
    return (data_ptr(self) - data_ptr(base)) // self.array.itemsize


def share_memory_(self):
    """Move a CPU tensor's values into memory that processes of :mod:`tinynet.multiprocessing`
    share (see :mod:`tinynet._shared_memory`); a no-op for a tensor already there and for a
    CUDA tensor, as in PyTorch. Returns self. Other tensors viewing the old array keep it (in
    PyTorch the storage moves with all its views)."""
    self.array = _shared_memory.share(self.array)
    return self


def is_shared(self):
    """True when the tensor's values are in shared memory (:meth:`share_memory_`)."""
    return _shared_memory.segment_of(self.array) is not None


def _output_nr(self):
    return self._output_nr


def _comparison_inplace(name, fn):
    def method(self, other):
        return inplace_apply(name, self, lambda t: fn(t.detach(), other).to(t.dtype))
    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place ``{name[:-1]}``: 1 where true, 0 where false, in this tensor's dtype; returns self."
    return method


_BINARY = {"multiply_": arith.mul, "subtract_": arith.sub, "divide_": division.div, "true_divide_": division.div,
           "floor_divide_": division.floor_divide, "remainder_": division.remainder, "fmod_": binary_math.fmod,
           "atan2_": binary_math.atan2, "arctan2_": binary_math.atan2, "hypot_": binary_math.hypot,
           "lerp_": binary_math.lerp, "addcmul_": binary_math.addcmul, "addcdiv_": binary_math.addcdiv,
           "clamp_min_": matrix_helpers.clamp_min, "clamp_max_": matrix_helpers.clamp_max,
           "tril_": rearrange.tril, "triu_": rearrange.triu, "cumsum_": scan.cumsum, "cumprod_": scan.cumprod,
           "logical_and_": compare.logical_and, "logical_or_": compare.logical_or,
           "logical_xor_": compare.logical_xor, "logical_not_": compare.logical_not,
           "bitwise_and_": compare.bitwise_and, "bitwise_or_": compare.bitwise_or,
           "bitwise_xor_": compare.bitwise_xor, "bitwise_not_": compare.bitwise_not}
_COMPARISONS = {f"{n}_": getattr(compare, n) for n in ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal",
                                                         "less", "less_equal", "not_equal")}

METHODS = {"multiply": multiply, "divide": divide, "subtract": subtract, "positive": positive,
           "is_signed": is_signed, "is_complex": is_complex, "is_same_size": is_same_size,
           "is_inference": is_inference, "stride": stride, "storage_offset": storage_offset, "data_ptr": data_ptr,
           "share_memory_": share_memory_, "is_shared": is_shared,
           **{n: composed_method(n, f) for n, f in _BINARY.items()},
           **{n: _comparison_inplace(n, f) for n, f in _COMPARISONS.items()}}
def _no_such_device(self):
    """False: tinynet has no XPU, MPS or meta tensors (PyTorch's ``is_xpu``, ``is_mps``, ``is_meta``)."""
    return False


PROPERTIES = {"is_cpu": _is_cpu, "output_nr": _output_nr, "is_xpu": _no_such_device, "is_mps": _no_such_device,
              "is_meta": _no_such_device}
