"""CUDA tensors passed to other processes share their GPU memory (PyTorch's CUDA IPC sharing).

A CUDA tensor that :mod:`multiprocessing` pickles (a ``Process`` argument under ``spawn``, a
queue, a pool task: :class:`multiprocessing.reduction.ForkingPickler`) goes as an IPC handle of
the ``cudaMalloc`` allocation that holds it (``cudaIpcGetMemHandle`` on the allocation's base,
found with the driver's ``cuMemGetAddressRange``), the array's byte offset in it, the device,
dtype, shape and strides. The receiver opens the handle once per allocation
(``cudaIpcOpenMemHandle``; a second tensor of the same allocation reuses the mapping) and views
the same memory: in-place updates on either side are seen by both, as hogwild training on the
GPU needs. The sender synchronises its device before the handle leaves, so the receiver reads
every value written before the send.

As in PyTorch, the sending process must keep the tensor alive (and the process running) while
receivers use it; the mapping closes when the receiver's last array on it is freed. A process
that receives its own tensor back (a queue within one process) gets the original array.
Memory from CuPy's asynchronous pool (``cudaMallocAsync``) cannot be exported: the send fails
with :class:`~tinynet.errors.BackendError`.
"""
import ctypes
import os
import weakref

from .. import backend
from ..errors import BackendError

_libcuda: list = []    # the driver library, loaded on first use
# handle bytes -> (allocation start, size, {id(array): weak reference}): this process's own exported
# arrays, each forgotten when it is freed (CuPy's pool may place several arrays in one allocation)
_exported: dict = {}
_mappings: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # (handle, device) -> open mapping


def _address_range(ptr, device):
    """(base, size) of the allocation holding device pointer ``ptr`` on GPU ``device``."""
    if not _libcuda:
        _libcuda.append(ctypes.CDLL("libcuda.so.1"))
    # the driver call needs the device's context current in this thread: a thread that made
    # no runtime call yet (a Queue's feeder thread) has none (CUDA_ERROR_INVALID_CONTEXT)
    backend.cupy.cuda.runtime.setDevice(device)
    backend.cupy.cuda.runtime.free(0)
    base, size = ctypes.c_uint64(), ctypes.c_size_t()
    rc = _libcuda[0].cuMemGetAddressRange_v2(ctypes.byref(base), ctypes.byref(size), ctypes.c_uint64(ptr))
    if rc != 0:
        raise BackendError(f"multiprocessing: cuMemGetAddressRange failed (CUresult {rc}) for a CUDA tensor")
    return base.value, size.value


def export(array):
    """The receiver's arguments for :func:`rebuild`: (handle, device, offset, pid)."""
    cp = backend.cupy
    device = array.device.id
    with cp.cuda.Device(device):
        base, size = _address_range(array.data.ptr, device)
        try:
            handle = bytes(cp.cuda.runtime.ipcGetMemHandle(base))
        except cp.cuda.runtime.CUDARuntimeError as exc:
            raise BackendError(f"multiprocessing: a CUDA tensor cannot be shared with another process ({exc}); "
                               "memory from an asynchronous pool cannot be exported") from None
        cp.cuda.Device(device).synchronize()  # what was written before the send is there when it arrives
    owner = array.base if array.base is not None else array
    owners = _exported.setdefault(handle, (base, size, {}))[2]
    if id(owner) not in owners:
        owners[id(owner)] = weakref.ref(owner)
        weakref.finalize(owner, _forget, handle, id(owner))
    return handle, device, array.data.ptr - base, os.getpid()


def _forget(handle, key):
    """Drop a freed array from :data:`_exported` (and the handle with its last array)."""
    entry = _exported.get(handle)
    if entry is not None:
        entry[2].pop(key, None)
        if not entry[2]:
            del _exported[handle]


def _own_array(handle, offset):
    """``(array, start, size)``: a live array of this process exported under ``handle`` whose
    memory holds byte ``offset`` of the allocation, or None."""
    start, size, owners = _exported.get(handle, (0, 0, {}))
    ptr = start + offset
    for ref in list(owners.values()):
        a = ref()
        if a is not None and a.data.ptr <= ptr <= a.data.ptr + a.nbytes:
            return a, start, size
    return None


class _Mapping:
    """One opened IPC handle; closed when the last array viewing it is freed."""

    def __init__(self, handle, device):
        cp = backend.cupy
        self.device = device
        with cp.cuda.Device(device):
            self.ptr = cp.cuda.runtime.ipcOpenMemHandle(handle)
            self.size = _address_range(self.ptr, device)[1]

    def __del__(self):
        try:
            with backend.cupy.cuda.Device(self.device):
                backend.cupy.cuda.runtime.ipcCloseMemHandle(self.ptr)
        except Exception:  # interpreter shutdown: the driver closes it with the process
            pass


def rebuild(handle, device, offset, pid, dtype, shape, strides):
    """A CuPy array on the memory the sender exported (its own array when this is the sender)."""
    cp = backend.require_cupy("multiprocessing (receiving a CUDA tensor)")
    if pid == os.getpid():
        own = _own_array(handle, offset)
        if own is not None:
            base, start, size = own
            mem = cp.cuda.UnownedMemory(start, size, base, device_id=device)
            return cp.ndarray(shape, dtype, cp.cuda.MemoryPointer(mem, offset), strides)
    mapping = _mappings.get((handle, device))
    if mapping is None:
        mapping = _mappings[(handle, device)] = _Mapping(handle, device)
    mem = cp.cuda.UnownedMemory(mapping.ptr, mapping.size, mapping, device_id=device)
    return cp.ndarray(shape, dtype, cp.cuda.MemoryPointer(mem, offset), strides)
