"""Collectives on picklable Python objects (``torch.distributed``'s ``all_gather_object``,
``gather_object`` and ``broadcast_object_list``).

Each object is pickled into bytes, the byte counts are all-gathered, and the bytes travel
as a uint8 array padded to the longest (on the host with MPI; through the GPU with NCCL).
As in PyTorch, unpickling runs code chosen by the sender: use these only between the
processes of your own run.
"""
import numbers
import pickle

import numpy

from ..errors import ArgumentError, ArgumentTypeError
from .api import group_or_raise


def _pickled(obj):
    return numpy.frombuffer(pickle.dumps(obj), dtype=numpy.uint8)


def _gather_bytes(pg, data, what):
    """Every rank's byte array, in rank order."""
    sizes = numpy.empty(pg.size, dtype=numpy.int64)
    pg.all_gather(sizes, numpy.array([data.size], dtype=numpy.int64), what=what).wait()
    longest = int(sizes.max())
    mine = numpy.zeros(longest, dtype=numpy.uint8)
    mine[:data.size] = data
    out = numpy.empty(pg.size * longest, dtype=numpy.uint8)
    pg.all_gather(out, mine, what=what).wait()
    return [out[r * longest:r * longest + int(sizes[r])] for r in range(pg.size)]


def all_gather_object(object_list, obj, group=None):
    """Gather ``obj`` from every rank into ``object_list`` (entry ``r`` from rank ``r``).

    Args:
        object_list (list): ``world_size`` entries, overwritten.
        obj: any picklable object.
        group: None (the default group).

    Raises:
        ArgumentTypeError: ``object_list`` is not a list.
        ArgumentError: it does not have ``world_size`` entries.
        ProcessGroupError: no process group. DistributedError: as the collectives.
    """
    op = "all_gather_object"
    pg = group_or_raise(op, group)
    _check_list(op, "object_list", object_list, pg.size)
    for r, data in enumerate(_gather_bytes(pg, _pickled(obj), op)):
        object_list[r] = pickle.loads(data.tobytes())


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    """Gather ``obj`` from every rank into ``object_gather_list`` on rank ``dst``.

    Args:
        obj: any picklable object.
        object_gather_list (list, optional): on ``dst``, ``world_size`` entries (overwritten);
            None on the other ranks.
        dst (int): the receiving rank (``group_dst`` is the same in the default group). Default 0.

    Raises:
        ArgumentError: ``dst`` outside the ranks, or ``object_gather_list`` missing or of the
            wrong length on ``dst``.
        ProcessGroupError: no process group. DistributedError: as the collectives.
    """
    op = "gather_object"
    pg = group_or_raise(op, group)
    dst = _rank(op, "dst", dst if dst is not None else (group_dst if group_dst is not None else 0), pg.size)
    if pg.rank == dst:
        _check_list(op, "object_gather_list", object_gather_list, pg.size)
    gathered = _gather_bytes(pg, _pickled(obj), op)
    if pg.rank == dst:
        for r, data in enumerate(gathered):
            object_gather_list[r] = pickle.loads(data.tobytes())


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    """Copy rank ``src``'s ``object_list`` entries into ``object_list`` on every rank.

    Args:
        object_list (list): the objects on ``src``; as many entries, overwritten, elsewhere.
        src (int): the sending rank (``group_src`` is the same). Default 0.
        device: accepted for PyTorch's sake (the bytes travel as the backend needs).

    Raises:
        ArgumentTypeError: ``object_list`` is not a list.
        ArgumentError: ``src`` outside the ranks, or ``object_list``'s length differs from
            ``src``'s (found on receipt).
        ProcessGroupError: no process group. DistributedError: as the collectives.
    """
    op = "broadcast_object_list"
    pg = group_or_raise(op, group)
    src = _rank(op, "src", src if src is not None else (group_src if group_src is not None else 0), pg.size)
    if not isinstance(object_list, list):
        raise ArgumentTypeError(f"{op}: object_list must be a list, got {type(object_list).__name__}")
    data = _pickled(list(object_list)) if pg.rank == src else numpy.zeros(0, dtype=numpy.uint8)
    size = numpy.array([data.size], dtype=numpy.int64)
    pg.broadcast(size, src, what=op).wait()
    buf = data if pg.rank == src else numpy.empty(int(size[0]), dtype=numpy.uint8)
    pg.broadcast(buf, src, what=op).wait()
    if pg.rank != src:
        received = pickle.loads(buf.tobytes())
        if len(received) != len(object_list):
            raise ArgumentError(f"{op}: rank {src} sent {len(received)} objects but object_list on rank {pg.rank} "
                                f"has {len(object_list)} entries; give it the same length on every rank")
        object_list[:] = received


def _check_list(op, name, value, size):
    if not isinstance(value, list):
        raise ArgumentTypeError(f"{op}: {name} must be a list of world_size ({size}) entries, got "
                                f"{type(value).__name__}")
    if len(value) != size:
        raise ArgumentError(f"{op}: {name} must have world_size ({size}) entries, got {len(value)}")


def _rank(op, name, value, size):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"{op}: {name} must be an int, got {type(value).__name__}")
    if not 0 <= value < size:
        raise ArgumentError(f"{op}: invalid rank {name}={value} (the group has ranks 0 to {size - 1})")
    return int(value)
