"""Who started this process and what it was told: the launcher's environment variables
(torchrun's ``RANK``/``WORLD_SIZE``/``LOCAL_RANK``/``MASTER_ADDR``/``MASTER_PORT``, or an MPI
launcher's), the init method, the timeout, and loading mpi4py."""
import datetime
import numbers
import os

from ..errors import ArgumentError, ArgumentTypeError, MissingExtraError, ProcessGroupError

BACKENDS = ("mpi", "nccl")
DEFAULT_TIMEOUT = {"mpi": 1800.0, "nccl": 600.0}  # PyTorch's defaults: 30 min, and 10 min for NCCL
# set by mpiexec/mpirun of MPICH (hydra), Intel MPI, Open MPI, and by PMIx launchers (srun --mpi=pmix)
_MPI_VARS = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK",
             "MPI_LOCALRANKID")
_RUN_MPI = "mpiexec -n N python script.py"
_RUN_TORCHRUN = "torchrun --nproc-per-node N script.py"


def backend_name(op, backend, cuda_available):
    """``"mpi"`` or ``"nccl"`` from the ``backend`` argument (None: nccl with a GPU, else mpi).

    Raises:
        ArgumentTypeError: not a string. ProcessGroupError: gloo, or an unknown backend.
    """
    if backend is None:
        return "nccl" if cuda_available else "mpi"
    if not isinstance(backend, str):
        raise ArgumentTypeError(f"{op}: backend must be a str ('mpi' or 'nccl') or None, got {type(backend).__name__}")
    name = backend.strip().lower()
    if name == "gloo":
        raise ProcessGroupError(f"{op}: backend 'gloo' is not supported by tinynet; use backend='mpi' on the CPU "
                                f"(pip install 'tinynet[distributed]', run with {_RUN_MPI}) or 'nccl' on GPUs")
    if name not in BACKENDS:
        raise ProcessGroupError(f"{op}: unknown backend {backend!r}; tinynet supports 'mpi' (CPU and GPU tensors, "
                                "started by mpiexec) and 'nccl' (GPU tensors, started by mpiexec or torchrun)")
    return name


def timeout_seconds(op, timeout, backend):
    """Seconds from a ``datetime.timedelta`` (PyTorch's type) or a number; None: the default.

    Raises:
        ArgumentTypeError: neither. ArgumentError: not positive.
    """
    if timeout is None:
        return DEFAULT_TIMEOUT[backend]
    if isinstance(timeout, datetime.timedelta):
        seconds = timeout.total_seconds()
    elif isinstance(timeout, numbers.Real) and not isinstance(timeout, bool):
        seconds = float(timeout)
    else:
        raise ArgumentTypeError(f"{op}: timeout must be a datetime.timedelta (or seconds), got "
                                f"{type(timeout).__name__}")
    if not seconds > 0:
        raise ArgumentError(f"{op}: timeout must be positive, got {seconds} s")
    return seconds


def under_mpi_launcher(env=None):
    """True when an MPI launcher (mpiexec, mpirun, srun with PMI) started this process."""
    env = os.environ if env is None else env
    return any(name in env for name in _MPI_VARS)


def started_by_torchrun(env=None):
    """True when torchrun (or a user following its convention) set RANK and WORLD_SIZE and
    no MPI launcher did."""
    env = os.environ if env is None else env
    return "RANK" in env and "WORLD_SIZE" in env and not under_mpi_launcher(env)


def init_method(op, method, backend, env=None):
    """``"mpi://"``, ``"env://"`` or ``("tcp", host, port)`` from the ``init_method`` argument.
    None picks env:// under torchrun, mpi:// under an MPI launcher, else mpi:// for the MPI
    backend (one process) and env:// for NCCL.

    Raises:
        ProcessGroupError: an init method tinynet does not know.
    """
    if method is None:
        if started_by_torchrun(env):
            return "env://"
        return "mpi://" if under_mpi_launcher(env) or backend == "mpi" else "env://"
    if not isinstance(method, str):
        raise ArgumentTypeError(f"{op}: init_method must be a str, got {type(method).__name__}")
    if method in ("env://", "mpi://"):
        return method
    if method.startswith("tcp://"):
        host, _, port = method[len("tcp://"):].rpartition(":")
        if host and port.isdigit():
            return ("tcp", host.strip("[]"), int(port))
    raise ProcessGroupError(f"{op}: init_method must be 'env://' (torchrun's variables), 'mpi://' (ranks from "
                            f"mpiexec) or 'tcp://HOST:PORT', got {method!r}")


def env_int(op, name, env=None, default=None):
    """The integer environment variable ``name``; ``default`` when unset (None: required).

    Raises:
        ProcessGroupError: unset and required, or not an integer.
    """
    env = os.environ if env is None else env
    raw = env.get(name)
    if raw is None:
        if default is not None:
            return default
        raise ProcessGroupError(f"{op}: environment variable {name} expected, but not set (start the script with "
                                f"{_RUN_TORCHRUN}, which sets RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and "
                                f"MASTER_PORT, or with {_RUN_MPI} and init_method='mpi://')")
    try:
        return int(raw)
    except ValueError:
        raise ProcessGroupError(f"{op}: environment variable {name} must be an integer, got {raw!r}") from None


def store_address(op, env=None):
    """Where rank 0 serves tinynet's TCP store for ``env://``: ``MASTER_ADDR`` and
    ``TINYNET_STORE_PORT`` if set, else ``MASTER_PORT`` -- plus one under torchrun, whose agent
    already serves PyTorch's own store on ``MASTER_PORT`` (``TORCHELASTIC_USE_AGENT_STORE=True``).

    Raises:
        ProcessGroupError: MASTER_ADDR or MASTER_PORT is not set.
    """
    env = os.environ if env is None else env
    host = env.get("MASTER_ADDR")
    if host is None:
        raise ProcessGroupError(f"{op}: environment variable MASTER_ADDR expected, but not set (torchrun sets it; "
                                "otherwise set it to rank 0's host name)")
    if "TINYNET_STORE_PORT" in env:
        return host, env_int(op, "TINYNET_STORE_PORT", env)
    port = env_int(op, "MASTER_PORT", env)
    return host, port + 1 if env.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() == "true" else port


STORE_TRIES = 16  # ports after MASTER_PORT that rank 0 may serve the store on under torchrun


def store_range(env=None):
    """``(tries, token)`` of the store's port range: under torchrun (its agent store on
    ``MASTER_PORT``) without ``TINYNET_STORE_PORT``, :data:`STORE_TRIES` ports from
    :func:`store_address`'s and a token naming the run, attempt and ``MASTER_PORT`` (see
    ``_store``); else the one port, and a token naming ``MASTER_PORT``."""
    env = os.environ if env is None else env
    token = "/".join(env.get(k, "") for k in ("TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT", "MASTER_PORT"))
    agent = env.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() == "true"
    return (STORE_TRIES if agent and "TINYNET_STORE_PORT" not in env else 1), token


def agree(op, what, given, found, source, rank=None):
    """Check an explicit ``rank``/``world_size`` argument (-1: not given) against the launcher's;
    ``rank`` (the launcher's rank of this process, when known) goes into the message."""
    if given != -1 and given != found:
        where = f" on rank {rank}" if rank is not None else ""
        raise ProcessGroupError(f"{op}: {what}={given} disagrees with the launcher{where} ({source} gives {what} "
                                f"{found}); drop the argument or start the right number of processes")


def check_rank(op, rank, size):
    if not 0 <= rank < size:
        raise ProcessGroupError(f"{op}: rank {rank} is outside [0, {size - 1}] for world_size {size}")


def load_mpi(op):
    """``mpi4py.MPI`` (importing it initialises MPI).

    Raises:
        MissingExtraError: mpi4py or its MPI library is missing.
    """
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise MissingExtraError(f"{op}: the 'mpi' backend needs mpi4py and an MPI library ({exc}); install them "
                                "with pip install 'tinynet[distributed]' (mpi4py and the mpich wheel, no system "
                                f"MPI needed) and start the script with {_RUN_MPI}") from None
    return MPI


def check_not_torchrun(op, backend):
    """The MPI backend takes its ranks from MPI: refuse a torchrun-style launch with more than
    one process, which would start N unrelated one-process MPI jobs."""
    if started_by_torchrun() and env_int(op, "WORLD_SIZE") > 1:
        raise ProcessGroupError(
            f"{op}: backend '{backend}' with init_method 'mpi://' needs its processes started by mpiexec, but this "
            f"one was started by torchrun or env:// (WORLD_SIZE={os.environ['WORLD_SIZE']}, no MPI launcher); run "
            f"{_RUN_MPI}, or use backend='nccl' on GPUs under torchrun")
