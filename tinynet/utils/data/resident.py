"""Mini-batches gathered on the device, for training steps replayed from CUDA graphs.

A DataLoader hands each step a new batch from the host, so a step replayed from a CUDA
graph (``tinynet.compile``) must copy it into the graph's static inputs every time.
:class:`ResidentBatches` keeps the dataset, a shuffled index and a batch counter on the
device; :meth:`~ResidentBatches.next` launches the gathers (``kernels/batch_gather.cu``)
that read the counter and then advance it. Captured into a graph, a step that calls
``next()`` gathers the next batch at every replay: an epoch costs one graph launch per
step and no host-side indexing. PyTorch has no counterpart; on the CPU the same calls
gather with NumPy, so a script runs unchanged.
"""
import numpy

from ... import backend, capture
from ...errors import ArgumentError, ArgumentTypeError, ShapeError
from ...kernels import batch_gather
from ...ops.sampling import randperm
from ...tensor import Tensor


class ResidentBatches:
    """Shuffled full batches of ``tensors`` (same first dim N), gathered where they live.

    Args:
        *tensors (Tensor): the dataset, e.g. images (N, C, H, W) float32 and labels (N,)
            int64, all on one device.
        batch_size (int): rows per batch (default 64, at most N).
        shuffle (bool): a new random order at each :meth:`reset` (default True; False:
            rows in order).
        generator (tinynet.Generator, optional): the source of the orders (default the
            global generator).

    ``len()`` is the number of full batches, ``N // batch_size`` (the remainder is dropped,
    as ``drop_last=True``). Call :meth:`reset` before each epoch (on the host, outside a
    captured step), then :meth:`next` once per step; ``next`` returns the same static
    tensors every time, overwritten by the next call. Past the last batch the index wraps
    around instead of reading out of bounds.

    Raises:
        ArgumentTypeError: a non-tensor or a bad ``batch_size`` type.
        ArgumentError: no tensors, ``batch_size`` outside 1..N, tensors on different devices.
        ShapeError: first dims differ, or a 0-d tensor.
    """

    def __init__(self, *tensors, batch_size=64, shuffle=True, generator=None):
        op = "ResidentBatches"
        if not tensors:
            raise ArgumentError(f"{op}: expected at least one tensor")
        for t in tensors:
            if not isinstance(t, Tensor):
                raise ArgumentTypeError(f"{op}: expected tensors, got {type(t).__name__}")
            if t.ndim == 0:
                raise ShapeError(f"{op}: expected tensors with a first (sample) dim, got a 0-d tensor")
        n = tensors[0].shape[0]
        if any(t.shape[0] != n for t in tensors):
            raise ShapeError(f"{op}: tensors must have the same first dim, got {[t.shape[0] for t in tensors]}")
        if len({str(t.device) for t in tensors}) != 1:
            raise ArgumentError(f"{op}: tensors must be on one device, got {[str(t.device) for t in tensors]}")
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, numpy.integer)):
            raise ArgumentTypeError(f"{op}: batch_size must be an int, got {type(batch_size).__name__}")
        if not 1 <= batch_size <= n:
            raise ArgumentError(f"{op}: batch_size must be in 1..{n} (the number of samples), got {batch_size}")
        self.batch_size, self.shuffle, self.generator = int(batch_size), bool(shuffle), generator
        self.device = tensors[0].device
        xp = backend.array_module(tensors[0].array)
        self._xp, self._gpu = xp, backend.is_gpu_array(tensors[0].array)
        self._src = [xp.ascontiguousarray(t.detach().array) for t in tensors]
        self._perm = xp.arange(n, dtype=numpy.int64)
        self._counter = xp.zeros((), dtype=numpy.int64)
        self._out = [Tensor._wrap(xp.empty((self.batch_size,) + s.shape[1:], dtype=s.dtype)) for s in self._src]

    def __len__(self):
        return self._src[0].shape[0] // self.batch_size

    def reset(self):
        """Start an epoch: a new order (when shuffling) and the counter back to batch 0.

        Raises:
            GraphCaptureError: called inside a captured step (it copies the order from the host).
        """
        capture.check_sync("ResidentBatches.reset")
        n = self._src[0].shape[0]
        if self.shuffle:
            order = randperm(n, generator=self.generator, device="cpu").array  # drawn on the host
            self._perm[...] = self._xp.asarray(order) if self._gpu else order
        else:
            self._perm[...] = self._xp.arange(n, dtype=numpy.int64)
        self._counter[...] = 0

    def next(self):
        """Gather the counter's batch into the static outputs, advance the counter; returns
        the outputs (one tensor per dataset tensor, ``(batch_size, *rest)``)."""
        if self._gpu:
            for s, o in zip(self._src, self._out):
                batch_gather.gather(s, self._perm, self._counter, o.array)
            batch_gather.advance(self._counter)
        else:
            n, b = self._src[0].shape[0], self.batch_size
            rows = self._perm[(int(self._counter) * b + numpy.arange(b)) % n]
            for s, o in zip(self._src, self._out):
                numpy.take(s, rows, axis=0, out=o.array)
            self._counter += 1
        return tuple(self._out)
