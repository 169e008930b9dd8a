"""PyTorch's default DDP communication hooks
(``torch.distributed.algorithms.ddp_comm_hooks.default_hooks``).

A hook is ``hook(state, bucket) -> Future``: ``state`` is what was given to
``DistributedDataParallel.register_comm_hook`` (here: the process group, or None for the
default one), ``bucket`` a :class:`~tinynet.distributed.GradBucket` holding this rank's
gradients, and the Future's value the bucket's averaged gradients (a tensor shaped like
``bucket.buffer()``). Register one with ``ddp.register_comm_hook(None, fp16_compress_hook)``.

* :func:`allreduce_hook`: divide by the world size and all-reduce (sum): what DDP does
  without a hook. With a world size that is a power of two the result is bit for bit DDP's
  own (which multiplies by ``1 / world_size`` instead of dividing, as PyTorch's reducer).
* :func:`fp16_compress_hook` / :func:`bf16_compress_hook`: the same on a float16 /
  bfloat16 copy of the buffer (half the bytes on the wire), decompressed into the buffer
  afterwards. The averaged gradient then carries the rounding of the compressed type:
  relative errors up to about 2**-11 per rounding for float16 (whose range also stops at
  65504) and 2**-8 for bfloat16 (which keeps float32's range). The MPI backend, which has
  no bfloat16, reduces bfloat16 buffers in float32 and rounds the sum to bfloat16 once.
"""
from ....dtypes import bfloat16, float16
from ... import api
from ...collectives import all_reduce


def _world(process_group):
    return api.get_world_size(process_group)


def _allreduce_future(process_group, tensor):
    """Start the all-reduce (sum) of ``tensor``; the Future's value is ``tensor``."""
    work = all_reduce(tensor, group=process_group, async_op=True)
    return work.get_future().then(lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """Average the bucket across the ranks: divide the buffer by the world size in place,
    then all-reduce (sum) it, asynchronously (PyTorch's ``allreduce_hook``).

    Args:
        process_group: None (the default group) or the group DDP uses.
        bucket (GradBucket): this rank's gradients.

    Returns:
        Future: of the averaged buffer.

    Raises:
        ProcessGroupError: no process group.
    """
    world = _world(process_group)
    buffer = bucket.buffer()
    buffer.div_(world)
    return _allreduce_future(process_group, buffer)


def _compress_hook(dtype, process_group, bucket):
    world = _world(process_group)
    compressed = bucket.buffer().to(dtype).div_(world)

    def decompress(fut):
        out = bucket.buffer()
        out.copy_(fut.value()[0])
        return out
    work = all_reduce(compressed, group=process_group, async_op=True)
    return work.get_future().then(decompress)


def fp16_compress_hook(process_group, bucket):
    """Average the bucket in float16: cast the buffer to float16, divide by the world size,
    all-reduce (sum), and copy the result back into the buffer in its own dtype (PyTorch's
    ``fp16_compress_hook``). Half the bytes of a float32 all-reduce; float16's rounding
    (about 3 decimal digits) and range (up to 65504) apply to the averaged gradients.

    Returns:
        Future: of the decompressed, averaged buffer.

    Raises:
        ProcessGroupError: no process group.
    """
    return _compress_hook(float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """Average the bucket in bfloat16: as :func:`fp16_compress_hook`, with bfloat16 (8 bits
    of mantissa, float32's range) (PyTorch's ``bf16_compress_hook``).

    Returns:
        Future: of the decompressed, averaged buffer.

    Raises:
        ProcessGroupError: no process group.
    """
    return _compress_hook(bfloat16, process_group, bucket)
