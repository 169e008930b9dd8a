"""The Tensor queries of PyTorch's "Tensors" family: ``is_tensor``, ``is_floating_point``,
``numel``, ``is_signed``, ``is_complex``, ``is_same_size``, ``is_inference`` (functions and
methods), ``stride``, ``storage_offset``, ``data_ptr`` (methods) and the properties
``is_cpu`` (and ``is_xpu``/``is_mps``/``is_meta``, always False), ``share_memory_``, ``is_shared`` and ``output_nr``.

``stride`` and ``storage_offset`` count elements (NumPy and CuPy count bytes).
"""
from .. import _shared_memory, backend
from ..dtypes import is_floating
from ..errors import IndexOutOfRangeError
from ..tensor import Tensor
from .util import check_tensor, dim_index


def is_tensor(obj):
    """True when ``obj`` is a tinynet Tensor."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    """True when ``input`` has a floating-point dtype."""
    return is_floating(check_tensor("is_floating_point", "input", input).array.dtype)


def numel(input):
    """Number of elements of ``input``."""
    return int(check_tensor("numel", "input", input).array.size)


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


def _no_such_device(self):
    """False: tinynet has no XPU, MPS or meta tensors (PyTorch's ``is_xpu``, ``is_mps``, ``is_meta``)."""
    return False


def _output_nr(self):
    return self._output_nr


METHODS = {"is_signed": is_signed, "is_complex": is_complex, "is_same_size": is_same_size,
           "is_inference": is_inference, "stride": stride, "storage_offset": storage_offset, "data_ptr": data_ptr,
           "share_memory_": share_memory_, "is_shared": is_shared}
PROPERTIES = {"is_cpu": _is_cpu, "output_nr": _output_nr, "is_xpu": _no_such_device, "is_mps": _no_such_device,
              "is_meta": _no_such_device}
