"""``x[idx]`` on the GPU for a 1-D int32/int64 index tensor on the first dimension: one kernel
launch (``index_rows.cu``), no host synchronisation, no bounds check that reads the device.

The loop users write (``perm = randperm(n)``; per batch ``X[perm[i:i + b]]``) gathered its
batch through CuPy's ``take`` (an ``ElementwiseKernel``: argument parsing, a broadcast and a
kernel-cache look-up per call); this launcher does the same copy with a cached ``RawKernel``.

Index checks. PyTorch checks indices on the device (an out-of-range index is a device-side
assert, reported at a later CUDA call). Reading the indices back on the host would wait for
the device at every gather; CuPy's ``take`` instead wraps an out-of-range index around
(modulo the size), silently. Here the kernel checks each index, writes a zero row for an
out-of-range one (never reading outside ``x``) and records the index and the size in an error
record in page-locked host memory that the device writes directly (mapped memory; no copy,
no wait). The host reads that record, a plain memory read, at the start of every later GPU
gather and in :func:`tinynet.cuda.synchronize`, and raises
:class:`~tinynet.errors.IndexOutOfRangeError` there: as asynchronous as PyTorch's report, but
a typed error that leaves the CUDA context usable. After ``synchronize()`` the error of every
gather launched before it has been raised.

:func:`check_range` queues the same check, one thread per index, for the index tensors of
``gather``, ``scatter``/``scatter_add``, ``take_along_dim`` and ``index_select`` on the GPU
(their copies go through CuPy's fancy indexing, which wraps an out-of-range index around).
"""
import ctypes

import numpy

from .. import backend
from ..errors import IndexOutOfRangeError
from . import cuda

_KERNELS: dict = {}   # (word bytes, index itemsize) -> the RawKernel function
_RECORD: list = []    # [host view (int64[4]) of the error record, its device address as a kernel argument]
_WORDS = (16, 8, 4, 2, 1)
_INDEX = {4: "i32", 8: "i64"}


def _record():
    """The error record: 4 int64 of page-locked, device-mapped host memory (made once per
    process, kept for its life: ``cudaHostAllocPortable | cudaHostAllocMapped``, readable from
    every GPU). ``[0]`` is 1 once an out-of-range index was met, ``[1]`` the index, ``[2]`` the size."""
    if not _RECORD:
        rt = backend.cupy.cuda.runtime
        ptr = rt.hostAlloc(32, 3)
        ctypes.memset(ptr, 0, 32)
        device_ptr = rt.pointerGetAttributes(ptr).devicePointer or ptr  # the same address under UVA
        view = numpy.ctypeslib.as_array((ctypes.c_int64 * 4).from_address(ptr))
        _RECORD.extend((view, numpy.uint64(device_ptr)))
    return _RECORD


def check(op="getitem"):
    """Raise the out-of-range error that a finished gather or index check recorded (and clear
    the record). A plain read of host memory: nothing waits for the device. Returns None when clean."""
    if _RECORD:
        view = _RECORD[0]
        if view[0]:
            bad, size, dim = int(view[1]), int(view[2]), int(view[3])
            view[0] = 0
            raise IndexOutOfRangeError(
                f"{op}: an index tensor on the GPU held index {bad}, out of bounds for dimension {dim} with size "
                f"{size} (found by an earlier gather or index check, reported now: GPU index checks are "
                f"asynchronous; that gather's values for it are zeros or, for gather/scatter/index_select, "
                f"those of the index wrapped around)")


def clear():
    """Drop a recorded out-of-range index without raising; True when one was pending (a test
    harness's isolation between tests: tests/conftest.py)."""
    if _RECORD and _RECORD[0][0]:
        _RECORD[0][0] = 0
        return True
    return False


def _kernel(word, index_itemsize):
    fn = _KERNELS.get((word, index_itemsize))
    if fn is None:
        fn = _KERNELS[(word, index_itemsize)] = cuda.module("index_rows.cu").get_function(
            f"tinynet_index_rows_w{word}_{_INDEX[index_itemsize]}")
    return fn


def check_range(op, idx, low, size, dim):
    """Queue the device-side check that every value of the CuPy index array ``idx`` lies in
    ``[low, size)`` (an index along dimension ``dim``): one launch, no wait. First raises the
    error of an earlier gather or check (see the module's docstring). Where tinynet's kernels
    are off, the indices are read back on the host instead (that waits for the device)."""
    record = _RECORD or _record()
    if record[0][0]:
        check(op)
    if not idx.size:
        return
    if not backend.kernels_enabled:
        lo, hi = int(idx.min()), int(idx.max())
        if lo < low or hi >= size:
            raise IndexOutOfRangeError(f"{op}: index {lo if lo < low else hi} is out of bounds for dimension "
                                       f"{dim} with size {size}")
        return
    cp = backend.cupy
    if idx.dtype.itemsize not in _INDEX:  # int8/int16 indices
        idx = idx.astype(cp.int32)
    idx = idx if idx._c_contiguous else cp.ascontiguousarray(idx)
    fn = _KERNELS.get(("check", idx.dtype.itemsize))
    if fn is None:
        fn = _KERNELS[("check", idx.dtype.itemsize)] = cuda.module("index_rows.cu").get_function(
            f"tinynet_index_check_{_INDEX[idx.dtype.itemsize]}")
    args = (idx, cuda.i64(idx.size), cuda.i64(low), cuda.i64(size), cuda.i64(dim), record[1])
    if idx.data.device_id == cp.cuda.runtime.getDevice():
        cuda.launch(fn, idx.size, args)
    else:
        with cp.cuda.Device(idx.data.device_id):
            cuda.launch(fn, idx.size, args)


def dim_usable(x, idx, dim, per_element):
    """True when :func:`gather_dim` can take ``x`` and ``idx`` along ``dim``: CuPy arrays on the
    current GPU, ``x`` C-contiguous with a non-empty ``dim`` and an element of 1, 2, 4, 8 or 16
    bytes, ``idx`` C-contiguous int32/int64, tinynet's kernels on; ``per_element`` (gather):
    ``idx`` of ``x``'s shape except along ``dim``; otherwise (index_select) ``idx`` 1-D."""
    if not (backend.kernels_enabled and type(x) is backend._CUPY_NDARRAY and type(idx) is backend._CUPY_NDARRAY
            and x.ndim and x._c_contiguous and idx._c_contiguous and idx.dtype.kind == "i"
            and idx.dtype.itemsize in _INDEX and x.itemsize in _WORDS and x.shape[dim] and x.data.ptr % x.itemsize == 0
            and x.data.device_id == idx.data.device_id == backend.cupy.cuda.runtime.getDevice()):
        return False
    if per_element:
        return idx.ndim == x.ndim and all(a == b for k, (a, b) in enumerate(zip(idx.shape, x.shape)) if k != dim)
    return idx.ndim == 1


def gather_dim(x, idx, dim, low=0, per_element=True):
    """``x`` gathered along ``dim`` at ``idx`` in one launch (``dim_usable`` must hold): with
    ``per_element``, ``out[..., k, ...] = x[..., idx[..., k, ...], ...]`` (gather, out of
    ``idx``'s shape); otherwise ``x``'s entries at the 1-D ``idx`` along ``dim`` (index_select).
    Indices in ``[low, 0)`` count from the end; one outside ``[low, x.shape[dim])`` gives zeros
    and is recorded for :func:`check`. First raises the error of an earlier gather or check."""
    record = _RECORD or _record()
    if record[0][0]:
        check("gather")
    k_len = idx.shape[dim] if per_element else idx.shape[0]
    shape = x.shape[:dim] + (k_len,) + x.shape[dim + 1:]
    out = backend._CUPY_NDARRAY(shape, x.dtype)
    total = out.size
    if total == 0:
        return out
    inner = 1
    for n in x.shape[dim + 1:]:
        inner *= n
    key = ("dim", x.itemsize, idx.dtype.itemsize)
    fn = _KERNELS.get(key)
    if fn is None:
        fn = _KERNELS[key] = cuda.module("index_rows.cu").get_function(
            f"tinynet_gather_dim_w{x.itemsize}_{_INDEX[idx.dtype.itemsize]}")
    cuda.launch(fn, total, (x, idx, cuda.i64(total), cuda.i64(k_len), cuda.i64(x.shape[dim]), cuda.i64(inner),
                            cuda.i64(low), cuda.i32(1 if per_element else 0), cuda.i64(dim), out, record[1]))
    return out


def usable(src, idx):
    """True when ``src[idx]`` can go through :func:`gather_rows`: CuPy arrays on the current
    GPU, both C-contiguous, ``src`` with at least one dimension, ``idx`` 1-D int32 or int64,
    tinynet's kernels on. (``_c_contiguous`` is CuPy's flag, read without making a Flags object.)"""
    return (backend.kernels_enabled and type(src) is backend._CUPY_NDARRAY and type(idx) is backend._CUPY_NDARRAY
            and idx.ndim == 1 and idx.dtype.kind == "i" and idx.dtype.itemsize in _INDEX and idx._c_contiguous
            and src.ndim >= 1 and src._c_contiguous
            and src.data.device_id == idx.data.device_id == backend.cupy.cuda.runtime.getDevice())


def gather_rows(src, idx):
    """``src[idx]`` (``usable(src, idx)`` must hold): a new C-contiguous array of shape
    ``idx.shape + src.shape[1:]`` and ``src``'s dtype, in one launch on the current stream.
    Indices in ``[-len(src), 0)`` count from the end. First raises the error of an earlier
    gather whose index was out of range (see the module's docstring)."""
    record = _RECORD or _record()
    if record[0][0]:
        check()
    n = idx.shape[0]
    out = backend._CUPY_NDARRAY((n,) + src.shape[1:], src.dtype)  # cupy.empty without its wrapper
    rows = src.shape[0]
    if n == 0:
        return out
    if rows == 0:  # nothing to read: every index is out of range, known without the device
        raise IndexOutOfRangeError("getitem: index out of bounds for dimension 0 with size 0")
    row_bytes = src.nbytes // rows
    if row_bytes == 0:  # rows of no elements: nothing to copy
        return out
    ptr = src.data.ptr
    for word in _WORDS:
        if row_bytes % word == 0 and ptr % word == 0:
            break
    row_words = row_bytes // word
    total = n * row_words
    cuda.launch(_kernel(word, idx.dtype.itemsize), total,
                (src, idx, cuda.i64(rows), cuda.i64(row_words), cuda.i64(total), out, record[1]))
    return out
