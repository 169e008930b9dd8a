"""Setting up and tearing down the default process group (``torch.distributed``'s names)."""
import numbers

from .. import backend, devices
from ..errors import ArgumentError, ArgumentTypeError, ProcessGroupError
from . import _launch

_default = {"group": None}


def _check_int(op, name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ArgumentTypeError(f"{op}: {name} must be an int, got {type(value).__name__}")
    if value < -1:
        raise ArgumentError(f"{op}: {name} must be -1 (from the launcher) or >= 0, got {value}")
    return int(value)


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Join this process to the run's default process group (``torch.distributed.init_process_group``).

    How the processes find each other:

    * ``mpiexec -n N python script.py`` (``init_method="mpi://"``, the default under an MPI
      launcher): ranks from ``MPI.COMM_WORLD``; with NCCL the communicator's unique id is
      broadcast over MPI (ChainerMN's way).
    * ``torchrun --nproc-per-node N script.py`` (``init_method="env://"``, the default where
      ``RANK`` and ``WORLD_SIZE`` are set): ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
      ``MASTER_ADDR`` and ``MASTER_PORT``; rank 0 serves a small TCP store there through
      which the NCCL unique id travels. NCCL only: the MPI backend needs mpiexec.
    * ``"tcp://HOST:PORT"`` with ``rank`` and ``world_size`` given: the same store (NCCL).

    With NCCL each process binds the GPU numbered ``LOCAL_RANK`` (under mpiexec: its rank
    among the processes on its node), and ``NCCL_NVLS_ENABLE=0`` (NVLink multicast off) is
    set unless the environment sets it. ``init_process_group`` also installs an excepthook:
    a rank that dies of an exception tells the others, which raise
    :class:`~tinynet.errors.DistributedError` instead of waiting for it (docs/distributed.md).

    Args:
        backend (str, optional): ``"mpi"`` (CPU and GPU tensors; needs the ``distributed``
            extra) or ``"nccl"`` (GPU tensors; needs CuPy with NCCL). Default: ``"nccl"``
            when a GPU is usable, else ``"mpi"``.
        init_method (str, optional): ``"env://"``, ``"mpi://"`` or ``"tcp://HOST:PORT"``;
            default from the launcher (above).
        timeout (datetime.timedelta or float, optional): how long a collective may wait for
            the other ranks before raising DistributedError. Default 30 min (mpi), 10 min (nccl),
            as PyTorch.
        world_size (int): the number of processes; -1 (default): from the launcher.
        rank (int): this process's rank; -1 (default): from the launcher.
        store: PyTorch's Store; not supported (must be None).
        group_name (str): accepted and ignored (PyTorch deprecated it).
        pg_options: must be None.
        device_id (int or tinynet.device, optional): the GPU to bind with NCCL when
            ``LOCAL_RANK`` is not set.

    Raises:
        ProcessGroupError: already initialised; 'gloo' or an unknown backend; a launcher
            variable missing; ``world_size``/``rank`` disagreeing with the launcher; the
            MPI backend started by torchrun; a rendezvous that timed out.
        MissingExtraError: mpi4py (the ``distributed`` extra) or CuPy is not installed.
        DeviceError: no GPU for ``LOCAL_RANK`` (NCCL), or NCCL missing.
        ArgumentTypeError: ``timeout``, ``rank`` or ``world_size`` of the wrong type.
        ArgumentError: a negative ``timeout``, or ``rank``/``world_size`` below -1.
    """
    op = "init_process_group"
    if _default["group"] is not None:
        raise ProcessGroupError(f"{op}: trying to initialize the default process group twice! (call "
                                "destroy_process_group() first)")
    world_size = _check_int(op, "world_size", world_size)
    rank = _check_int(op, "rank", rank)
    if store is not None or pg_options is not None:
        raise ProcessGroupError(f"{op}: store= and pg_options= are not supported by tinynet; leave them None and "
                                "use init_method")
    name = _launch.backend_name(op, backend, _cuda_available())
    seconds = _launch.timeout_seconds(op, timeout, name)
    method = _launch.init_method(op, init_method, name)
    if name == "mpi":
        from . import _mpi
        group = _mpi.create(op, method, world_size, rank, seconds)
    else:
        from . import _nccl
        group = _nccl.create(op, method, world_size, rank, seconds, device_id)
    _default["group"] = group


def _cuda_available():
    return backend.load_cupy() is not None


def group_or_raise(op, group=None):
    """The default process group.

    Raises:
        ProcessGroupError: not initialised.
        ArgumentError: a ``group`` other than the default.
    """
    pg = _default["group"]
    if pg is None:
        raise ProcessGroupError(f"{op}: Default process group has not been initialized, please make sure to call "
                                "init_process_group.")
    if group is not None and group is not pg and group is not WORLD:
        raise ArgumentError(f"{op}: tinynet has only the default process group; pass group=None")
    return pg


class _World:
    """``tinynet.distributed.group.WORLD``: stands for the default process group."""

    def __repr__(self):
        return "<tinynet.distributed.group.WORLD>"


WORLD = _World()


def is_available():
    """True: the package is there (whether a backend can run is :func:`is_mpi_available` /
    :func:`is_nccl_available`)."""
    return True


def is_mpi_available():
    """True when mpi4py can be imported (without importing it: that would start MPI)."""
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def is_nccl_available():
    """True when CuPy, a GPU and CuPy's NCCL binding are usable."""
    return backend.load_nccl() is not None


def get_default_backend_for_device(device):
    """The backend :func:`init_process_group` uses for tensors on ``device``: ``"nccl"`` for a
    GPU, ``"mpi"`` for the CPU (tinynet's CPU backend; PyTorch answers ``"gloo"``, which tinynet
    does not have).

    Raises:
        ArgumentTypeError / ArgumentError: ``device`` not a device or device string.
    """
    dev = devices.device(device) if not isinstance(device, devices.device) else device
    return "nccl" if dev.type == "cuda" else "mpi"


def is_initialized():
    """True between :func:`init_process_group` and :func:`destroy_process_group`."""
    return _default["group"] is not None


def is_torchelastic_launched():
    """True when torchrun started this process (``TORCHELASTIC_RUN_ID`` is set)."""
    import os
    return "TORCHELASTIC_RUN_ID" in os.environ


def get_rank(group=None):
    """This process's rank, 0 to ``world_size - 1``.

    Raises:
        ProcessGroupError: the process group is not initialised (a ValueError, as PyTorch's).
    """
    return group_or_raise("get_rank", group).rank


def get_world_size(group=None):
    """The number of processes in the group.

    Raises:
        ProcessGroupError: the process group is not initialised.
    """
    return group_or_raise("get_world_size", group).size


def get_backend(group=None):
    """``"mpi"`` or ``"nccl"``.

    Raises:
        ProcessGroupError: the process group is not initialised.
    """
    return group_or_raise("get_backend", group).backend


def destroy_process_group(group=None):
    """Leave the process group and free its communicators (MPI communicators, the NCCL
    communicator and stream, the TCP store). ``init_process_group`` may be called again.

    Raises:
        ProcessGroupError: the process group is not initialised.
    """
    pg = group_or_raise("destroy_process_group", group)
    _default["group"] = None
    pg.destroy()
