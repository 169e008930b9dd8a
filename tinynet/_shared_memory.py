"""Host arrays in memory that other processes can map: what ``Tensor.share_memory_()`` and
``Module.share_memory()`` put tensors into, so that processes started by
:mod:`tinynet.multiprocessing` (hogwild training) update one copy of the weights.

A shared array lives in a *segment*: an anonymous file (``memfd_create`` on Linux; elsewhere a
temporary file that is unlinked at once) mapped with :class:`mmap.mmap` (``MAP_SHARED``), the
NumPy array a view of that mapping. The segment is known by its mapping object; its file
descriptor stays open while the mapping lives (a finalizer closes it) and is what another
process receives, duplicated by :mod:`multiprocessing` (``multiprocessing.reduction.DupFd``),
to map the same pages. Nothing is left behind in the filesystem, whatever way the processes
end. A forked child inherits the mapping itself.
"""
import mmap
import os
import tempfile
import threading
import weakref

import numpy

from . import backend

_lock = threading.Lock()
_segments: dict = {}  # id(mmap) -> (fd, nbytes, base address)


def _anonymous_file(nbytes):
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("tinynet-shared", getattr(os, "MFD_CLOEXEC", 0))
    else:  # pragma: no cover - platforms without memfd (macOS)
        fd, path = tempfile.mkstemp(prefix="tinynet-shared-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        os.unlink(path)
    os.ftruncate(fd, nbytes)
    return fd


def _forget(key, fd):
    with _lock:
        _segments.pop(key, None)
    try:
        os.close(fd)
    except OSError:
        pass


def _map(fd, nbytes):
    """The mapping of ``fd``, registered as a segment; returns ``(mmap, base address)``."""
    mm = mmap.mmap(fd, nbytes)
    base = numpy.frombuffer(mm, dtype=numpy.uint8).__array_interface__["data"][0]
    with _lock:
        _segments[id(mm)] = (fd, nbytes, base)
    weakref.finalize(mm, _forget, id(mm), fd)
    return mm, base


def segment_of(array):
    """``(fd, nbytes, offset in bytes)`` of the segment a host array views, or None."""
    if not isinstance(array, numpy.ndarray):
        return None
    owner = array.base
    while owner is not None and not isinstance(owner, (memoryview, mmap.mmap)):
        owner = getattr(owner, "base", None)  # views, and as_strided's interface holders, keep their base there
    owner = owner.obj if isinstance(owner, memoryview) else owner
    if not isinstance(owner, mmap.mmap):
        return None
    with _lock:
        seg = _segments.get(id(owner))
    if seg is None:
        return None
    fd, nbytes, base = seg
    return fd, nbytes, array.__array_interface__["data"][0] - base


def share(array):
    """``array`` itself when it is already shared or lives on a GPU (as PyTorch, a no-op for
    CUDA tensors), else a copy of it in a new segment."""
    if backend.is_gpu_array(array) or segment_of(array) is not None:
        return array
    nbytes = max(int(array.nbytes), 1)
    fd = _anonymous_file(nbytes)
    mm, _ = _map(fd, nbytes)
    out = numpy.frombuffer(mm, dtype=array.dtype, count=array.size).reshape(array.shape)
    out[...] = array
    return out


def attach(fd, nbytes, dtype, shape, strides, offset):
    """The array another process described by :func:`segment_of` (``fd`` already duplicated
    into this process), mapped here."""
    mm, _ = _map(fd, nbytes)
    raw = numpy.frombuffer(mm, dtype=numpy.uint8)[offset:]
    dtype = numpy.dtype(dtype)
    usable = (len(raw) // dtype.itemsize) * dtype.itemsize
    return numpy.lib.stride_tricks.as_strided(raw[:usable].view(dtype), shape=shape, strides=strides)
