"""DistributedDataParallel's gradient reducer: buckets, readiness and the all-reduce.

The parameters are grouped into buckets in reverse registration order (the order their
gradients usually become ready in backward), cut when a bucket reaches its byte limit, as
PyTorch's ``compute_bucket_assignment_by_size``. A post-accumulate-grad hook on every
parameter marks it ready once backward has written its ``.grad``; when a bucket's last
parameter is ready (and every earlier bucket has been launched, so all ranks start their
collectives in one order), its gradients are copied, each multiplied by
``1 / world_size``, into the bucket's flat buffer (on a GPU one multi-tensor launch per 16
gradients, ``kernels/optim_update.scale_copy``; the copy back likewise) and its all-reduce (SUM) starts: a
nonblocking MPI request, or a kernel on the NCCL communication stream. A callback at the
end of backward waits for the buckets and copies the averages back into ``.grad``
(PyTorch's reducer: ``mul_out`` by ``1/world_size`` into the bucket view, all-reduce SUM,
copy back).
"""
import weakref

import numpy

from ... import backend
from ...autograd.post_hooks import queue_callback
from ...distributed import ReduceOp
from ...errors import DistributedError
from ...kernels import optim_update
from ...tensor import Tensor
from ._comm_hook import call_hook, hook_result

_WHAT = "DistributedDataParallel gradient all-reduce"


def assign_buckets(params, limits):
    """Bucket the parameters (reverse registration order) by ``limits``, a list of byte caps:
    the first bucket of each dtype/device gets ``limits[0]``, the next ``limits[1]``, and so
    on, the last cap repeating. A bucket closes once its size reaches its cap (PyTorch's
    ``compute_bucket_assignment_by_size`` with the parameters in gradient-ready order).
    Returns lists of parameter indices, in launch order."""
    open_buckets, caps, out = {}, {}, []
    for i in reversed(range(len(params))):
        a = params[i].array
        key = (str(a.dtype), str(getattr(a, "device", "cpu")))
        bucket = open_buckets.setdefault(key, [[], 0])
        bucket[0].append(i)
        bucket[1] += a.size * a.dtype.itemsize
        k = caps.setdefault(key, 0)
        if bucket[1] >= limits[k]:
            out.append(bucket[0])
            del open_buckets[key]
            caps[key] = min(k + 1, len(limits) - 1)
    out.extend(b[0] for b in open_buckets.values() if b[0])
    return out


class _Bucket:
    def __init__(self, params, indices, position):
        self.indices, self.position = indices, position
        first = params[indices[0]].array
        xp = backend.array_module(first)
        self.slots, total = [], 0
        for i in indices:
            n = params[i].array.size
            self.slots.append((i, total, n))
            total += n
        self.flat = xp.zeros(total, dtype=first.dtype)
        self.scale = first.dtype.type(1.0)
        self.pending = len(indices)
        self.work = None     # the all-reduce under way (no hook), or
        self.future = None   # the communication hook's Future


class Reducer:
    """Averages the gradients of ``params`` across the process group during backward."""

    def __init__(self, params, names, group, limits, find_unused):
        self.params, self.names, self.group, self.find_unused = params, names, group, find_unused
        self.buckets = [_Bucket(params, idx, k) for k, idx in enumerate(assign_buckets(params, limits))]
        self.hook = self.hook_state = None  # DistributedDataParallel.register_comm_hook
        self.where = {}
        for b in self.buckets:
            b.scale = b.flat.dtype.type(1.0 / group.size)
            for i, *_ in b.slots:
                self.where[i] = b
        # the hooks reach the reducer through a weak reference, and go when it goes: a dropped
        # DistributedDataParallel leaves its module's parameters as they were
        me = weakref.ref(self)
        self.handles = [p.register_post_accumulate_grad_hook(_hook(me, i)) for i, p in enumerate(params)]
        weakref.finalize(self, _remove, self.handles)
        self.armed = self.started = False
        self.ready = self.fired = None
        self.next = 0
        self.unused = []

    # ---- one iteration ---------------------------------------------------------------------
    def prepare_for_backward(self, used_ids=None):
        """Arm the reducer for the next backward (a forward ran with gradient sync on).
        ``used_ids``: with ``find_unused_parameters``, the ids of the parameters the forward's
        outputs depend on; the others are counted ready when backward starts.

        Raises:
            DistributedError: the previous backward started a reduction that never finished.
        """
        if self.started:
            raise DistributedError(
                "DistributedDataParallel: Expected to have finished reduction in the prior iteration before "
                "starting a new one: the previous backward did not finish (it raised, or was interrupted)")
        n = len(self.params)
        self.ready, self.fired, self.next = [False] * n, [False] * n, 0
        for b in self.buckets:
            b.pending, b.work, b.future = len(b.indices), None, None
        self.unused = [] if used_ids is None else [i for i, p in enumerate(self.params) if id(p) not in used_ids]
        self.armed = True

    def on_grad_ready(self, i):
        """Parameter ``i``'s gradient is final in this backward (its post-accumulate hook)."""
        if not self.armed:  # no_sync(), or a backward without a synced forward: accumulate locally
            return
        if not self.started:
            self.started = True
            queue_callback(self.finalize)
            for j in self.unused:
                self._mark(j)
        self.fired[i] = True
        if not self.ready[i]:
            self._mark(i)

    def _mark(self, i):
        self.ready[i] = True
        bucket = self.where[i]
        bucket.pending -= 1
        while self.next < len(self.buckets) and self.buckets[self.next].pending == 0:
            self._launch(self.buckets[self.next])
            self.next += 1

    def _launch(self, bucket):
        """Copy the bucket's gradients, times 1/world_size, into its buffer; start its
        all-reduce. With a communication hook: copy them as they are and call the hook."""
        flat = bucket.flat
        xp = backend.array_module(flat)
        hooked = self.hook is not None
        grads = [self.params[i].grad for i, *_ in bucket.slots]
        if not (all(g is not None for g in grads) and optim_update.scale_copy(  # one launch for 16 on a GPU
                [flat[off:off + n] for _, off, n in bucket.slots], [g.array for g in grads],
                1.0 if hooked else bucket.scale)):
            self._pack(bucket, xp, hooked)
        if hooked:
            bucket.future = call_hook(self, bucket)
        else:
            bucket.work = self.group.all_reduce(flat, ReduceOp.SUM, what=_WHAT)

    def _pack(self, bucket, xp, hooked):
        """The bucket's gradients into its buffer one by one (NumPy, or gradients that the
        multi-tensor copy does not take)."""
        flat = bucket.flat
        for i, off, n in bucket.slots:
            g = self.params[i].grad
            if g is None:  # unused on this rank (find_unused_parameters): it adds zeros
                flat[off:off + n] = 0
            elif hooked:
                flat[off:off + n] = g.array.reshape(-1)
            else:
                xp.multiply(g.array.reshape(-1), bucket.scale, out=flat[off:off + n])

    def _result(self, bucket):
        """The bucket's averaged gradients (a flat array) once its reduction has finished."""
        if bucket.future is None:
            bucket.work.wait()
            return bucket.flat
        return hook_result(self, bucket)

    def finalize(self):
        """End of backward: launch what is left, wait, write the averaged gradients back."""
        try:
            missing = [i for i, r in enumerate(self.ready) if not r]
            if missing and not self.find_unused:
                for b in self.buckets[:self.next]:
                    self._result(b)
                names = ", ".join(self.names[i] for i in missing)
                raise DistributedError(
                    f"DistributedDataParallel: parameters that did not receive a gradient in this backward on rank "
                    f"{self.group.rank}: {names} (indices {' '.join(map(str, missing))}). Your module has parameters "
                    "that were not used in producing the loss; pass find_unused_parameters=True to "
                    "DistributedDataParallel, or make sure every parameter takes part in the loss")
            for i in missing:
                self._mark(i)
            used = self._globally_used() if self.find_unused else None
            for b in self.buckets:
                flat = self._result(b)
                back = [(i, off, n) for i, off, n in b.slots if used is None or used[i]]  # unused by every
                grads = [self.params[i].grad for i, *_ in back]                        # rank: .grad unchanged
                if all(g is not None for g in grads) and optim_update.scale_copy(
                        [g.array for g in grads], [flat[off:off + n] for _, off, n in back], 1.0):
                    continue  # one launch for 16 gradients on a GPU
                for i, off, n in back:
                    p = self.params[i]
                    avg = flat[off:off + n].reshape(p.shape)
                    if p.grad is None:
                        p.grad = Tensor._wrap(avg.copy())
                    else:
                        p.grad.array[...] = avg
        finally:
            self.armed = self.started = False

    def _globally_used(self):
        """Which parameters got a gradient on some rank (an all-reduce MAX of the local marks)."""
        marks = numpy.array(self.fired, dtype=numpy.int32)
        self.group.all_reduce(marks, ReduceOp.MAX, what="DistributedDataParallel unused-parameter check").wait()
        return marks.astype(bool).tolist()


def _hook(reducer_ref, i):
    def hook(param):
        reducer = reducer_ref()
        if reducer is not None:
            reducer.on_grad_ready(i)
    return hook


def _remove(handles):
    for h in handles:
        h.remove()
