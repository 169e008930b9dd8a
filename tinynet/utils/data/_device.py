"""Getting host batches onto the DataLoader's device.

* CPU: tensors already on the CPU stay (no copy); others are moved.
* GPU, staged: each CPU tensor of a batch is copied into a pinned host buffer (two sets,
  reused in turn) and sent to the GPU with an asynchronous copy on a side CUDA stream,
  one batch ahead: while the training step runs on batch ``k``, batch ``k + 1`` is being
  gathered (or received from a worker) and copied. CUDA events order the copy before the
  main stream's use, and each pinned buffer is rewritten only after its last copy is done.
* GPU, resident: the whole dataset lives on the GPU (``dataset.to(device)``), and each
  batch is one gather there from an index array uploaded once per epoch.
"""
import itertools

import numpy

from ... import backend
from ...tensor import Tensor
from . import sampler as _samplers
from ._fetch import collate_prestacked
from .collate import host_collate, rebuild_mapping


def map_tensors(obj, fn):
    """``obj`` with every Tensor ``t`` inside (lists, tuples, namedtuples, dicts) replaced by ``fn(t)``."""
    if isinstance(obj, Tensor):
        return fn(obj)
    if isinstance(obj, tuple):
        items = [map_tensors(o, fn) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if isinstance(obj, list):
        items = [map_tensors(o, fn) for o in obj]
        if type(obj) is list:
            return items
        try:
            return type(obj)(items)
        except TypeError:
            return items
    if isinstance(obj, dict):
        return rebuild_mapping(obj, {k: map_tensors(v, fn) for k, v in obj.items()})
    return obj


def on_device(batches, device):
    """CPU target: each batch with its tensors on ``device``."""
    move = (lambda t: t if t.device == device else t.to(device))
    for batch in batches:
        yield map_tensors(batch, move)


def staged(batches, device):
    """GPU target: pinned staging and side-stream copies, one batch ahead (module doc)."""
    import cupyx
    cp = backend.cupy
    gpu = cp.cuda.Device(device.index)
    with gpu:
        main, side = cp.cuda.get_current_stream(), cp.cuda.Stream(non_blocking=True)
    pinned, copied = [{}, {}], [None, None]

    def stage(k, batch):
        slot = k % 2
        count = itertools.count()

        def move(t):
            i = next(count)
            if t.device.type != "cpu":
                return t if t.device == device else t.to(device)
            a = numpy.ascontiguousarray(t.array)
            key = (i, a.shape, a.dtype.str)
            buf = pinned[slot].get(key)
            if buf is None:
                buf = pinned[slot][key] = cupyx.empty_pinned(a.shape, a.dtype)
            buf[...] = a
            d = cp.empty(a.shape, a.dtype)
            d.set(buf, stream=side)
            return Tensor._wrap(d)

        with gpu:
            if copied[slot] is not None:
                copied[slot].synchronize()  # the copy that last read this slot's pinned buffers is done
            side.wait_event(main.record())  # device memory handed back by earlier steps is idle
            out = map_tensors(batch, move)
            copied[slot] = side.record()
        return out, copied[slot]

    it = iter(batches)
    try:
        nxt = stage(0, next(it))
    except StopIteration:
        return
    for k in itertools.count(1):
        out, ready = nxt
        try:
            nxt = stage(k, next(it))
        except StopIteration:
            nxt = None
        main.wait_event(ready)
        yield out
        if nxt is None:
            return


def _epoch_order(batch_sampler):
    """The whole epoch's indices as one int64 array when ``batch_sampler`` is a plain
    BatchSampler over one of tinynet's samplers (so slicing it gives the same batches)."""
    known = (_samplers.SequentialSampler, _samplers.RandomSampler, _samplers.SubsetRandomSampler,
             _samplers.WeightedRandomSampler)
    if type(batch_sampler) is _samplers.BatchSampler and type(batch_sampler.sampler) in known:
        return numpy.fromiter(iter(batch_sampler.sampler), dtype=numpy.int64)
    return None


def resident(loader, batch_sampler):
    """GPU-resident batches, ``batch_sampler``'s, gathered on the device from ``loader._resident``."""
    cp = backend.cupy
    gpu = cp.cuda.Device(loader.device.index)
    ds, bs = loader._resident, batch_sampler
    where = f"DataLoader ({type(loader.dataset).__name__})"

    def gather(dev_idx):
        with gpu:
            data = ds.__getitems__(dev_idx)
            n = len(dev_idx)
            if isinstance(data, list):
                return host_collate(data)
            return collate_prestacked(data, n, host_collate, where)

    order = _epoch_order(bs)
    if order is not None:
        with gpu:
            dev_order = cp.asarray(order)
        size = bs.batch_size
        stop = len(order) - len(order) % size if bs.drop_last else len(order)
        for start in range(0, stop, size):
            yield gather(dev_order[start:start + size])
        return
    for index in bs:
        with gpu:
            dev_idx = cp.asarray(numpy.asarray(index, dtype=numpy.int64))
        yield gather(dev_idx)
