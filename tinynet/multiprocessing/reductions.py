"""How tensors in shared memory travel to other processes (PyTorch's
``torch.multiprocessing.reductions``).

:func:`init_reductions` registers a reducer for :class:`~tinynet.Tensor` and
:class:`~tinynet.nn.Parameter` with :class:`multiprocessing.reduction.ForkingPickler`, the
pickler that :mod:`multiprocessing` uses for a spawned process's arguments, queues and pools
(not :func:`pickle.dumps` or :func:`tinynet.save`, which keep copying the values). A tensor
whose values are in shared memory (:meth:`~tinynet.Tensor.share_memory_`) goes as its
segment's file descriptor (duplicated into the other process by ``DupFd``) plus dtype, shape,
strides and offset; the receiver maps the same pages, so in-place updates on either side are
seen by both. A CUDA tensor goes as a CUDA IPC handle and views the same GPU memory on the
other side (:mod:`tinynet.multiprocessing.cuda_ipc`). Any other tensor goes by value, as
before. Subclasses other than Parameter go by value as well.
"""
from multiprocessing.reduction import DupFd, ForkingPickler

from .. import _shared_memory, backend
from ..nn import Parameter
from ..tensor import Tensor
from . import cuda_ipc

_registered: list = []


def rebuild_shared(cls, dupfd, nbytes, dtype, shape, strides, offset, requires_grad):
    """The receiving side: a ``cls`` tensor on the mapped segment."""
    array = _shared_memory.attach(dupfd.detach(), nbytes, dtype, shape, strides, offset)
    t = Tensor._wrap(array)
    if cls is not Tensor:
        t.__class__ = cls
    t.requires_grad = requires_grad
    return t


def rebuild_cuda(cls, handle, device, offset, pid, dtype, shape, strides, requires_grad):
    """The receiving side of a CUDA tensor: a ``cls`` tensor on the sender's GPU memory."""
    t = Tensor._wrap(cuda_ipc.rebuild(handle, device, offset, pid, dtype, shape, strides))
    if cls is not Tensor:
        t.__class__ = cls
    t.requires_grad = requires_grad
    return t


def reduce_tensor(t):
    if backend.is_gpu_array(t.array):
        a = t.array
        return (rebuild_cuda, (type(t), *cuda_ipc.export(a), a.dtype.str, a.shape, a.strides,
                               t.requires_grad and t.is_leaf))
    seg = _shared_memory.segment_of(t.array)
    if seg is None:
        return t.__reduce_ex__(2)
    fd, nbytes, offset = seg
    a = t.array
    return (rebuild_shared, (type(t), DupFd(fd), nbytes, a.dtype.str, a.shape, a.strides, offset,
                             t.requires_grad and t.is_leaf))


def init_reductions():
    """Register the reducers (idempotent)."""
    if _registered:
        return
    for cls in (Tensor, Parameter):
        ForkingPickler.register(cls, reduce_tensor)
    _registered.append(True)
