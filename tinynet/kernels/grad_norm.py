"""The total 2-norm of many gradients and their in-place scaling (``clip_grad_norm_``) on the
GPU, in launches of ``grad_norm.cu`` that never wait for the host.

Per launch up to ``MAXG`` gradients travel by value (``Grads``: their addresses and sizes);
each gets ``PARTS`` blocks (fewer for small tensors' share of work does not matter: a block
past a tensor's end adds nothing), whose partial sums of squares land in a float32 buffer
(float64 for float64 gradients). One block then adds the partials in a fixed order and writes
the norm and the factor ``min(1, max_norm / (norm + 1e-6))``, and a last kind of launch
multiplies every gradient by the factor, read from device memory. A training step with
clipping therefore has no host synchronisation and can be captured whole in a CUDA graph.
"""
import numpy

from .. import backend
from . import cuda

MAXG = 32
PARTS = 64      # blocks per tensor and launch (a grid-stride loop covers the rest)
THREADS = 256
_GRADS = numpy.dtype([("g", "<u8", (MAXG,)), ("size", "<i8", (MAXG,))])


def usable(grads):
    """True when the kernels take these gradients: C-contiguous CuPy arrays of one float dtype
    on one GPU."""
    if not grads or not backend.kernels_enabled:
        return False
    dtype, device = grads[0].dtype, getattr(grads[0], "device", None)
    return all(cuda.supported(g, half=True) and g.dtype == dtype and g.device == device and g.flags.c_contiguous
               for g in grads)


def _packs(grads):
    """``(pack, n)`` per chunk of ``MAXG`` gradients."""
    out = []
    for lo in range(0, len(grads), MAXG):
        chunk = grads[lo:lo + MAXG]
        pack = numpy.zeros((), dtype=_GRADS)
        for k, g in enumerate(chunk):
            pack["g"][k], pack["size"][k] = g.data.ptr, g.size
        out.append((pack[()], len(chunk)))
    return out


def _parts(grads):
    largest = max(g.size for g in grads)
    return max(1, min(PARTS, -(-largest // THREADS)))


def total_norm(grads, max_norm=None):
    """``(norm, factor)``: the 2-norm of all ``grads`` together as a 0-d array of their
    dtype, and, when ``max_norm`` is given, the clip factor as a 0-d float32 (float64 for
    float64 gradients) array, both on the device; with ``max_norm`` the gradients are also
    scaled in place by the factor."""
    cp = backend.cupy
    dtype = grads[0].dtype
    acc = numpy.float64 if dtype == numpy.float64 else numpy.float32
    parts = _parts(grads)
    packs = _packs(grads)
    partial = cp.empty(len(grads) * parts, dtype=acc)
    base = 0
    sqsum = cuda.kernel("grad_norm.cu", "tinynet_grad_sqsum_fwd", dtype)
    for pack, n in packs:
        sqsum((parts, n), (THREADS,), (pack, partial, cuda.i64(base)))
        base += n
    norm = cp.empty((), dtype=dtype)
    factor = cp.empty((), dtype=acc)
    bound = float("inf") if max_norm is None else float(max_norm)
    cuda.kernel("grad_norm.cu", "tinynet_grad_norm_finish_fwd", dtype)(
        (1,), (THREADS,), (partial, cuda.i64(partial.size), numpy.float64(bound), norm, factor))
    if max_norm is not None:
        scale = cuda.kernel("grad_norm.cu", "tinynet_grad_scale_fwd", dtype)
        for pack, n in packs:
            scale((parts, n), (THREADS,), (pack, factor))
    return norm, factor
