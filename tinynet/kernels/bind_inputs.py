"""Launcher of ``bind_inputs.cu``: ``tinynet.compile``'s copy of a call's tensor arguments into
the static input buffers of its CUDA graph, recorded inside the graph (``tinynet/cuda/compiled.py``).

The static buffers' addresses and sizes are fixed when the step is captured and go to the
kernel by value (a struct, as ``fused.cu``'s multi-tensor launches); each call's source
addresses go through device cells that every replay refills (``tinynet/capture.py``), in the
same host-to-device copy as the graph's other per-replay numbers (dropout offsets, the learning
rate). A replay then binds all its arguments with no launch of its own: before, each argument
was one ``cudaMemcpyAsync`` issued by the host per call.
"""
import numpy

from .. import backend
from . import cuda

MAXB = 16  # arguments per launch (bind_inputs.cu's MAXB); a step with more binds by per-argument copies
_BIND = numpy.dtype([("dst", "<u8", (MAXB,)), ("start", "<i8", (MAXB + 1,)), ("unit", "<i4", (MAXB,))],
                    align=True)


def plan(statics):
    """``(struct, total words, count)`` for binding into the arrays ``statics`` (the static
    buffers, in argument order), or None when they do not qualify: none or more than ``MAXB``,
    not C-contiguous CuPy arrays, or tinynet's kernels switched off (``TINYNET_KERNELS=0``)."""
    if not backend.kernels_enabled or not 0 < len(statics) <= MAXB:
        return None
    pack = numpy.zeros((), dtype=_BIND)
    total = 0
    for k, s in enumerate(statics):
        if type(s) is not backend._CUPY_NDARRAY or not s.flags.c_contiguous:
            return None
        unit = 4 if s.itemsize % 4 == 0 else s.itemsize  # 4-byte words, or the 1- and 2-byte dtypes' own
        pack["dst"][k] = s.data.ptr
        pack["start"][k] = total
        pack["unit"][k] = unit
        total += s.nbytes // unit
    pack["start"][len(statics):] = total
    _function()  # compiled and loaded now: module loading is not allowed during a capture
    return pack[()], total, len(statics)


def _function():
    return cuda.module("bind_inputs.cu").get_function("tinynet_bind_inputs")


def launch(bind, cells):
    """Launch (or, during a capture, record) the copy of ``bind`` (from :func:`plan`) reading
    the source addresses from ``cells`` (a uint64 CuPy array, one cell per argument; 0 skips
    that argument)."""
    pack, total, count = bind
    if total:
        cuda.launch(_function(), total, (pack, numpy.int32(count), cells))
