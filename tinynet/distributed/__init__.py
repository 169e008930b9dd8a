"""``tinynet.distributed``: data-parallel training across processes (``torch.distributed``'s names).

One process per CPU worker or per GPU, started by ``mpiexec -n N python script.py`` (the
``mpi`` backend, CPU or GPU tensors; ``pip install 'tinynet[distributed]'``) or, on GPUs,
by ``torchrun --nproc-per-node N script.py`` as well (the ``nccl`` backend through CuPy).
:func:`init_process_group` joins the run; the collectives (:func:`all_reduce`,
:func:`broadcast`, :func:`all_gather`, :func:`reduce_scatter`, :func:`barrier`) work in
place on tensors; :class:`tinynet.nn.parallel.DistributedDataParallel` averages gradients
during backward and :class:`tinynet.utils.data.DistributedSampler` splits the data.
``docs/distributed.md`` explains launching, correctness and failures.

A collective never waits forever: after the group's ``timeout``, or as soon as another
rank reports an uncaught error, it raises :class:`~tinynet.errors.DistributedError`.
Importing this package does not start MPI or touch the GPU; ``init_process_group`` does.
"""
from ._grad_bucket import GradBucket
from ._group import ReduceOp, Work
from .api import (WORLD, destroy_process_group, get_backend, get_default_backend_for_device, get_rank,
                  get_world_size, init_process_group, is_available, is_initialized, is_mpi_available,
                  is_nccl_available, is_torchelastic_launched)
from . import algorithms  # noqa: E402  (ddp_comm_hooks.default_hooks)
from .collectives import (all_gather, all_gather_into_tensor, all_reduce, barrier, broadcast, reduce_scatter,
                          reduce_scatter_tensor)
from .object_collectives import all_gather_object, broadcast_object_list, gather_object


class group:
    """``tinynet.distributed.group.WORLD``: the default process group (the only one)."""

    WORLD = WORLD


__all__ = ["init_process_group", "destroy_process_group", "is_available", "is_initialized", "is_mpi_available",
           "is_nccl_available", "is_torchelastic_launched", "get_rank", "get_world_size", "get_backend",
           "get_default_backend_for_device",
           "all_reduce", "broadcast", "all_gather", "all_gather_into_tensor", "reduce_scatter",
           "reduce_scatter_tensor", "barrier", "all_gather_object", "gather_object", "broadcast_object_list",
           "ReduceOp", "Work", "GradBucket", "group"]
