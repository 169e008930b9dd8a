"""The collectives on tensors (``torch.distributed``'s names, arguments and defaults).

Each works in place on CPU (NumPy) and GPU (CuPy) tensors with either backend; MPI stages
GPU tensors through host memory, NCCL stages CPU tensors through the GPU. With
``async_op=True`` a :class:`~tinynet.distributed.Work` comes back and the tensors must not
be read before its ``wait()``; otherwise the call returns when the result may be used.
With ``TINYNET_DISTRIBUTED_DEBUG=1`` (or ``TORCH_DISTRIBUTED_DEBUG=DETAIL``) every call
first checks that all ranks pass the same collective, dtype and shape.
"""
import numbers

from .. import backend
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..ops.util import check_tensor
from . import _group
from ._group import ReduceOp
from .api import group_or_raise


def _tensor(op, t, name="tensor"):
    return check_tensor(op, name, t)


def _reduce_op(op, value, array):
    if not isinstance(value, ReduceOp):
        raise ArgumentTypeError(f"{op}: op must be a tinynet.distributed.ReduceOp, got {value!r}")
    if value is ReduceOp.AVG and array.dtype.kind != "f":
        raise DTypeError(f"{op}: ReduceOp.AVG needs a floating-point tensor, got {array.dtype}")
    return value


def _contiguous(array):
    """``array`` when C-contiguous, else a contiguous copy (the result is written back)."""
    return array if array.flags.c_contiguous else array.copy()


def _finish(work, async_op, copy_back=None, result=None):
    work._result = result
    if copy_back is not None:
        previous = work._finish

        def finish():
            if previous is not None:
                previous()
            copy_back()
        work._finish = finish
    if async_op:
        return work
    work.wait()
    return None


def _written_back(tensor, buf):
    """A function writing ``buf`` into ``tensor``'s array, or None when they are one array."""
    if buf is tensor.array:
        return None

    def copy_back():
        tensor.array[...] = buf
    return copy_back


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` across all ranks in place: afterwards every rank holds the element-wise
    ``op`` (sum by default) of all ranks' tensors.

    Args:
        tensor (Tensor): any shape; same shape and dtype on every rank.
        op (ReduceOp): SUM (default), PRODUCT, MIN, MAX or AVG.
        group: None (the default group).
        async_op (bool): return a Work instead of waiting. Default False.

    Returns:
        None, or a Work when ``async_op``.

    Raises:
        ProcessGroupError: no process group (init_process_group was not called).
        ArgumentTypeError: ``tensor`` is not a Tensor, or ``op`` not a ReduceOp.
        DTypeError: AVG on an integer tensor.
        DistributedError: another rank failed, the timeout passed, or (debug mode) the
            ranks' calls differ.
    """
    pg = group_or_raise("all_reduce", group)
    array = _tensor("all_reduce", tensor).array
    op = _reduce_op("all_reduce", op, array)
    if pg.debug:
        _group.check_same(pg, "all_reduce", array, op)
    buf = _contiguous(array)
    return _finish(pg.all_reduce(buf, op), async_op, _written_back(tensor, buf), [tensor])


def _check_rank(op, name, value, size):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"{op}: {name} must be an int, got {type(value).__name__}")
    if not 0 <= value < size:
        raise ArgumentError(f"{op}: invalid root rank {name}={value} (the group has ranks 0 to {size - 1})")
    return int(value)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy rank ``src``'s ``tensor`` into ``tensor`` on every rank.

    Args:
        tensor (Tensor): the data on ``src``, overwritten elsewhere; same shape and dtype on
            every rank.
        src (int): the rank that sends (``group_src`` is the same in the default group).
        group: None. async_op (bool): return a Work. Default False.

    Raises:
        ArgumentError: neither ``src`` nor ``group_src`` given, or outside the ranks.
        ProcessGroupError: no process group.
        DistributedError: as :func:`all_reduce`.
    """
    pg = group_or_raise("broadcast", group)
    if src is None:
        src = group_src
    if src is None:
        raise ArgumentError("broadcast: Must specify global_rank or group_rank (src=)")
    src = _check_rank("broadcast", "src", src, pg.size)
    array = _tensor("broadcast", tensor).array
    if pg.debug:
        _group.check_same(pg, "broadcast", array, src=src)
    buf = _contiguous(array)
    return _finish(pg.broadcast(buf, src), async_op, _written_back(tensor, buf), [tensor])


def _like(op, name, tensors, ref, size):
    if not isinstance(tensors, (list, tuple)):
        raise ArgumentTypeError(f"{op}: {name} must be a list of Tensors, got {type(tensors).__name__}")
    if len(tensors) != size:
        raise ArgumentError(f"{op}: {name} must hold one tensor per rank ({size}), got {len(tensors)}")
    for i, t in enumerate(tensors):
        _tensor(op, t, f"{name}[{i}]")
        if t.shape != ref.shape or t.dtype != ref.dtype:
            raise ShapeError(f"{op}: {name}[{i}] must have shape {tuple(ref.shape)} and dtype {ref.dtype}, got "
                             f"{tuple(t.shape)} {t.dtype}")


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gather every rank's ``tensor`` into ``tensor_list`` (entry ``i`` from rank ``i``).

    Args:
        tensor_list (list of Tensor): world_size tensors shaped like ``tensor``, written.
        tensor (Tensor): this rank's contribution.
        group: None. async_op (bool): return a Work. Default False.

    Raises:
        ArgumentError: not one tensor per rank.
        ShapeError: an entry unlike ``tensor``.
        ProcessGroupError: no process group.
        DistributedError: as :func:`all_reduce`.
    """
    pg = group_or_raise("all_gather", group)
    array = _tensor("all_gather", tensor).array
    _like("all_gather", "tensor_list", tensor_list, array, pg.size)
    if pg.debug:
        _group.check_same(pg, "all_gather", array)
    xp = _module(array)
    out = xp.empty(pg.size * array.size, dtype=array.dtype)

    def scatter_out():
        for i, t in enumerate(tensor_list):
            t.array[...] = out[i * array.size:(i + 1) * array.size].reshape(array.shape)
    return _finish(pg.all_gather(out, _contiguous(array)), async_op, scatter_out, [tensor_list])


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gather every rank's ``input_tensor`` into ``output_tensor``, stacked along dim 0
    (``output_tensor``: ``(world_size * n, ...)`` for an input ``(n, ...)``, or
    ``(world_size, n, ...)``).

    Raises:
        ShapeError: ``output_tensor`` has the wrong number of elements or dtype.
        ProcessGroupError: no process group.
        DistributedError: as :func:`all_reduce`.
    """
    pg = group_or_raise("all_gather_into_tensor", group)
    array = _tensor("all_gather_into_tensor", input_tensor, "input_tensor").array
    out = _tensor("all_gather_into_tensor", output_tensor, "output_tensor").array
    if out.size != pg.size * array.size or out.dtype != array.dtype:
        raise ShapeError(f"all_gather_into_tensor: output_tensor must hold {pg.size} x {array.size} elements of "
                         f"{array.dtype}, got shape {tuple(out.shape)} {out.dtype}")
    if pg.debug:
        _group.check_same(pg, "all_gather", array)
    buf = out if out.flags.c_contiguous else _module(out).empty(out.size, dtype=out.dtype)
    flat = buf.reshape(-1)

    def copy_back():
        if buf is not out:
            out[...] = flat.reshape(out.shape)
    return _finish(pg.all_gather(flat, _contiguous(array)), async_op, copy_back, [output_tensor])


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input_list[i]`` across ranks and leave the result on rank ``i`` in ``output``.

    Args:
        output (Tensor): receives this rank's block.
        input_list (list of Tensor): world_size tensors shaped like ``output``.
        op (ReduceOp): SUM (default), PRODUCT, MIN, MAX or AVG.
        group: None. async_op (bool): return a Work. Default False.

    Raises:
        ArgumentError: not one tensor per rank.
        ShapeError: an entry unlike ``output``.
        ProcessGroupError: no process group.
        DTypeError: AVG on an integer tensor.
        DistributedError: as :func:`all_reduce`.
    """
    pg = group_or_raise("reduce_scatter", group)
    out = _tensor("reduce_scatter", output, "output").array
    op = _reduce_op("reduce_scatter", op, out)
    _like("reduce_scatter", "input_list", input_list, out, pg.size)
    if pg.debug:
        _group.check_same(pg, "reduce_scatter", out, op)
    xp = _module(out)
    send = xp.concatenate([t.array.reshape(-1) for t in input_list])
    buf = _contiguous(out)
    return _finish(pg.reduce_scatter(buf.reshape(-1), send, op), async_op, _written_back(output, buf), [output])


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``input`` (``world_size`` blocks along dim 0) across ranks; rank ``i`` gets block
    ``i`` of the result in ``output``.

    Raises:
        ShapeError: ``input`` does not hold world_size blocks of ``output``'s size.
        ProcessGroupError: no process group.
        DTypeError: AVG on an integer tensor.
        DistributedError: as :func:`all_reduce`.
    """
    pg = group_or_raise("reduce_scatter_tensor", group)
    out = _tensor("reduce_scatter_tensor", output, "output").array
    inp = _tensor("reduce_scatter_tensor", input, "input").array
    op = _reduce_op("reduce_scatter_tensor", op, out)
    if inp.size != pg.size * out.size or inp.dtype != out.dtype:
        raise ShapeError(f"reduce_scatter_tensor: input must hold {pg.size} x {out.size} elements of {out.dtype}, "
                         f"got shape {tuple(inp.shape)} {inp.dtype}")
    if pg.debug:
        _group.check_same(pg, "reduce_scatter", out, op)
    buf = _contiguous(out)
    return _finish(pg.reduce_scatter(buf.reshape(-1), _contiguous(inp).reshape(-1), op), async_op,
                   _written_back(output, buf), [output])


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every rank has reached the barrier.

    Raises:
        ProcessGroupError: no process group.
        DistributedError: another rank failed, or the timeout passed.
    """
    pg = group_or_raise("barrier", group)
    if pg.debug:
        _group.check_same(pg, "barrier", None)
    return _finish(pg.barrier(), async_op)


def _module(array):
    return backend.array_module(array)
