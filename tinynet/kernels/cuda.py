"""Compile tinynet's CUDA sources once and launch their kernels.

Each ``.cu`` file beside this module is compiled on first use into a ``cupy.RawModule``
and cached for the process; kernels are looked up by name (``tinynet_<op>_<fwd|bwd>_<f32|
f64|f16|bf16>``; ``attention.cu`` has float16 kernels, max pooling and dropout float16 and
bfloat16 ones) so profiles read well. Element-wise
kernels are ``cupy.ElementwiseKernel`` specs built once by :func:`elementwise`.
"""
import functools
import os
import re

import numpy

from .. import backend
from ..dtypes import bfloat16

BLOCK = 256
_SUFFIX = {numpy.dtype(numpy.float32): "f32", numpy.dtype(numpy.float64): "f64"}
# kernel() and supported(half=True) only: the kernels of max pooling and dropout have half-width versions
_KERNEL_SUFFIX = {**_SUFFIX, numpy.dtype(numpy.float16): "f16", bfloat16: "bf16"}


def supported(*arrays, half=False):
    """True when every array is a float32/float64 CuPy array our kernels handle
    (``half=True``: float16 and bfloat16 too, for the kernels that have half-width versions)."""
    gpu_array = backend._CUPY_NDARRAY
    dtypes = _KERNEL_SUFFIX if half else _SUFFIX
    for a in arrays:  # a plain loop: this runs several times per op on the hot path
        if not isinstance(a, gpu_array) or a.dtype not in dtypes:
            return False
    return True


INCLUDE = re.compile(r'^#include "(\w+\.cuh)"[^\n]*$', re.M)  # a header of this folder, pasted in


def source(filename):
    """The CUDA text of ``filename`` (a .cu file in this folder) as it is compiled: each line
    ``#include "NAME.cuh"`` (``half.cuh``: the half-width types; ``attention_tiles.cuh``: the
    attention kernels' tile products) is replaced by that file's text, so the source CuPy
    caches its build under is the whole program (an edited header is a new source)."""
    here = os.path.dirname(__file__)

    def text(name):
        with open(os.path.join(here, name)) as f:
            return f.read()
    return INCLUDE.sub(lambda m: text(m.group(1)), text(filename))


@functools.lru_cache(maxsize=None)
def module(filename):
    """The compiled RawModule of ``filename`` (a .cu file in this folder)."""
    return backend.cupy.RawModule(code=source(filename), options=("--std=c++14",))


@functools.lru_cache(maxsize=None)  # the C-level cache: a launch costs one look-up
def kernel(filename, op, dtype):
    """The typed kernel ``op`` (e.g. ``tinynet_max_pool2d_fwd``) for ``dtype``."""
    return module(filename).get_function(f"{op}_{_KERNEL_SUFFIX[numpy.dtype(dtype)]}")


def launch(fn, n, args, threads=BLOCK):
    """Launch ``fn`` with one thread per item of ``n`` (grid rounded up)."""
    blocks = max(1, (int(n) + threads - 1) // threads)
    fn((blocks,), (threads,), args)


# Per-channel reductions over (N, C, L) memory (the bias gradient, batch norm's statistics and
# sums) read rows of L values on a (C, parts) grid. The grid aims for ROW_BLOCKS blocks: an H200
# has 132 SMs; with 1024 blocks instead of 512 a bias gradient of (1024, 32, 26, 26) took 50
# against 87 us and a batch-norm forward of (1024, 32, 24, 24) 138 against 178 us (CUDA events,
# 2026-11-27), shapes whose call is bound by host time unchanged. Rows shorter than MIN_ROW take
# one block per channel.
ROW_BLOCKS = 1024
MIN_ROW = 32


def row_grid(n, c, length):
    """``(parts, threads)`` of a (C, parts) reduction over ``n`` rows of ``length`` values per
    channel (``threads`` a power of two, at most 256, for the tree sums), or None where one
    block per channel is the better launch (short rows, or a single part)."""
    parts = min(n, max(1, ROW_BLOCKS // max(c, 1)))
    if length < MIN_ROW or parts == 1:
        return None
    return parts, min(256, 1 << (int(length) - 1).bit_length())


# Integer kernel arguments, cached: making a NumPy scalar took 0.57 us of host time on the H100
# machine, a cache hit 0.15 us (benchmarks/host_costs.py), and a training step's launchers pass
# the same few sizes at every step.
@functools.lru_cache(maxsize=8192)
def i32(value):
    """``value`` as a C ``int`` kernel argument (``numpy.int32``)."""
    return numpy.int32(value)


@functools.lru_cache(maxsize=8192)
def i64(value):
    """``value`` as a C ``long long`` kernel argument (``numpy.int64``)."""
    return numpy.int64(value)


@functools.lru_cache(maxsize=4096)
def i32s(values):
    """The tuple ``values`` as ``int32`` kernel arguments, cached as one tuple (a launch's shape
    and window arguments: one look-up instead of one per value)."""
    return tuple(numpy.int32(v) for v in values)


NULL = numpy.uint64(0)  # a null pointer argument (e.g. no device cells outside a graph capture)


def scalar(dtype, value):
    """``value`` as a NumPy scalar of ``dtype`` (kernel arguments need exact C types)."""
    return numpy.dtype(dtype).type(value)


@functools.lru_cache(maxsize=None)
def elementwise(in_params, out_params, operation, name, preamble=""):
    """A memoised ``cupy.ElementwiseKernel``."""
    return backend.cupy.ElementwiseKernel(in_params, out_params, operation, name, preamble=preamble)
