"""Gradients written as pieces of one buffer, so that the backward of the split that made
their inputs needs no copy.

A transformer computes ``q, k, v = linear(x).split(C, dim=-1)`` and hands the three (views
of one array) to attention. A backward that knows this (the cuDNN attention backward,
:mod:`tinynet.kernels.cudnn_attention`) can write dQ, dK and dV into one new array laid out
as the views' common base, as views at the same offsets and strides (:func:`like_base`); the
split's backward then gets exactly those views and returns the whole array
(:func:`joined`) instead of concatenating three copies. Only arrays made here are joined:
:func:`like_base` records the new array, :func:`joined` takes it back out of the record, so
pieces of any other memory are always concatenated as before. The record keeps at most
``KEEP`` arrays (a backward that stops before the split, or views joined by another op,
leave one behind until four newer ones push it out). The base may have another shape than
the split's input (a linear layer's (N*T, 3C) output viewed as (N, T, 3C)): the whole is then
returned as a view of that shape.
"""
import collections

import numpy

KEEP = 4
stats = {"made": 0, "joined": 0}
_made: collections.OrderedDict = collections.OrderedDict()  # data pointer -> the new whole array


def like_base(cp, arrays):
    """New arrays shaped and strided like ``arrays`` (CuPy views of one C-contiguous base, of
    one dtype), stored at the same offsets in one new array shaped like that base; or None
    when the arrays are not such views (the caller then makes its own)."""
    base = arrays[0].base
    if base is None or not base.flags.c_contiguous or any(a.base is not base or a.dtype != base.dtype
                                                          for a in arrays):
        return None
    whole = cp.empty(base.shape, dtype=base.dtype)
    out = [cp.ndarray(a.shape, a.dtype, memptr=whole.data + (a.data.ptr - base.data.ptr), strides=a.strides)
           for a in arrays]
    _made[whole.data.ptr] = whole
    stats["made"] += 1
    while len(_made) > KEEP:
        _made.popitem(last=False)
    return out


def joined(pieces, axis, shape):
    """The array made by :func:`like_base` whose pieces, along ``axis``, are ``pieces`` in
    order and whose shape is ``shape``; or None (then the caller concatenates)."""
    if not pieces or any(p is None for p in pieces):
        return None
    made = _made.get(pieces[0].data.ptr)
    if made is None or made.size != int(numpy.prod(shape)):
        return None
    whole = made.reshape(shape)  # a view: the made array is C-contiguous
    step = whole.strides[axis]
    lo = 0
    for p in pieces:
        if p.data.ptr != whole.data.ptr + lo * step or p.strides != whole.strides or p.dtype != whole.dtype:
            return None
        want = list(shape)
        want[axis] = p.shape[axis]
        if list(p.shape) != want:
            return None
        lo += p.shape[axis]
    if lo != shape[axis]:
        return None
    del _made[made.data.ptr]
    stats["joined"] += 1
    return whole
