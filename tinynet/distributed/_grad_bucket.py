"""``GradBucket`` (``torch.distributed.GradBucket``): what a DDP communication hook receives."""


class GradBucket:
    """One bucket of gradients handed to a communication hook registered with
    ``DistributedDataParallel.register_comm_hook``.

    :meth:`buffer` is a flat 1-D tensor holding the bucket's gradients one after the other
    (in bucket order, each flattened), as this rank computed them: not yet averaged across
    ranks (the hook does that, e.g. ``allreduce_hook`` divides by the world size and sums).
    The hook returns a :class:`tinynet.futures.Future` whose value is a tensor of the
    buffer's shape; DDP copies that tensor into the parameters' ``.grad``.
    """

    def __init__(self, index, buffer, params, last):
        self._index, self._buffer, self._params, self._last = index, buffer, list(params), last

    def index(self):
        """The bucket's position in launch order (0 is the first bucket all-reduced: the
        last layers' gradients)."""
        return self._index

    def buffer(self):
        """The flat 1-D tensor of this rank's gradients (shape ``(n,)``, the parameters' dtype)."""
        return self._buffer

    def gradients(self):
        """The gradients in the bucket, each a view of :meth:`buffer` shaped like its parameter."""
        out, off = [], 0
        for p in self._params:
            n = p.numel()
            out.append(self._buffer[off:off + n].view(p.shape))
            off += n
        return out

    def parameters(self):
        """The parameters whose gradients the bucket holds, in bucket order."""
        return list(self._params)

    def is_last(self):
        """True for the last bucket of the iteration (the first layers' gradients)."""
        return self._last

    def set_buffer(self, buffer):
        """Replace the bucket's buffer (a tensor of the same shape)."""
        self._buffer = buffer

    def __repr__(self):
        return f"GradBucket(index={self._index}, {len(self._params)} parameters, {self._buffer.numel()} elements)"
