"""``tinynet.cuda``: the GPUs, spelled as ``torch.cuda``.

Everything here works on any machine: without CuPy or a GPU, :func:`is_available` is
False, :func:`device_count` is 0, and the functions that need a GPU raise
:class:`~tinynet.errors.DeviceError` saying why. CuPy is imported on first use when the
default backend is NumPy (``TINYNET_BACKEND=numpy``), so GPU tensors can still be made
with ``device="cuda"``.

CUDA graphs (``CUDAGraph``, ``graph``, ``graph_pool_handle``, ``make_graphed_callables``)
are in :mod:`tinynet.cuda.graphs`; ``tinynet.compile`` graphs a whole training step.

Memory figures come from CuPy's default memory pool (tinynet allocates all GPU arrays
there): ``memory_allocated`` is the bytes in use by arrays, ``memory_reserved`` the bytes
the pool holds. The peak of the allocated bytes is tracked from the first call to
:func:`reset_peak_memory_stats` or :func:`max_memory_allocated` on (a hook on every
allocation costs host time, so it is off until asked for).
"""
from .. import backend, random as _random
from ..errors import DeviceError
from ..kernels import index_rows
from .graphs import CUDAGraph, graph, graph_pool_handle, is_current_stream_capturing
from .graphed_callables import make_graphed_callables


def is_available():
    """True when CuPy imports and at least one CUDA GPU is visible."""
    return backend.load_cupy() is not None


def device_count():
    """Number of visible CUDA GPUs (0 without CuPy or a GPU)."""
    cp = backend.load_cupy()
    return cp.cuda.runtime.getDeviceCount() if cp is not None else 0


def _cp(op):
    return backend.require_cupy(f"cuda.{op}")


def _index(op, device):
    """GPU number of ``device`` (None: the current one; int, "cuda:1" or a tinynet.device)."""
    cp = _cp(op)
    if device is None:
        return cp.cuda.runtime.getDevice()
    from .. import devices
    dev = devices.resolve(device if not isinstance(device, int) else devices.device("cuda", device), f"cuda.{op}")
    if dev.type != "cuda":
        raise DeviceError(f"cuda.{op}: expected a cuda device, got {dev}")
    return dev.index


def current_device():
    """The number of the current GPU.

    Raises:
        DeviceError: no GPU is usable.
    """
    return _cp("current_device").cuda.runtime.getDevice()


def set_device(device):
    """Make ``device`` (an int, ``"cuda:1"`` or a device) the current GPU."""
    _cp("set_device").cuda.Device(_index("set_device", device)).use()


class device:
    """Context manager making ``device`` the current GPU inside the block (``torch.cuda.device``)."""

    def __init__(self, device):
        self._index = _index("device", device)
        self._prev = None

    def __enter__(self):
        cp = _cp("device")
        self._prev = cp.cuda.runtime.getDevice()
        cp.cuda.Device(self._index).use()
        return self

    def __exit__(self, *exc):
        _cp("device").cuda.Device(self._prev).use()
        return False


def synchronize(device=None):
    """Wait until every kernel queued on ``device`` (default the current GPU) has finished.

    Raises:
        IndexOutOfRangeError: a GPU tensor-index gather (``x[idx]``) that finished met an index
            out of range (its check runs on the device; see ``tinynet/kernels/index_rows.py``).
    """
    cp = _cp("synchronize")
    with cp.cuda.Device(_index("synchronize", device)):
        cp.cuda.runtime.deviceSynchronize()
    index_rows.check("cuda.synchronize")


def get_device_name(device=None):
    """The GPU's name, e.g. ``"NVIDIA H100 80GB HBM3"``."""
    return backend.gpu_name(_index("get_device_name", device))


def get_device_capability(device=None):
    """The GPU's compute capability as ``(major, minor)``, e.g. ``(9, 0)`` for Hopper."""
    props = _cp("get_device_capability").cuda.runtime.getDeviceProperties(_index("get_device_capability", device))
    return int(props["major"]), int(props["minor"])


def is_bf16_supported(including_emulation=True):
    """True when the current GPU computes in bfloat16: natively from compute capability 8.0
    (Ampere), and with ``including_emulation`` (the default) on any GPU, where tinynet's bfloat16
    kernels compute in float32 as PyTorch's emulation does. False without a GPU."""
    if not is_available():
        return False
    return bool(including_emulation) or get_device_capability()[0] >= 8


class _Properties:
    def __init__(self, props):
        raw = props["name"]
        self.name = raw.decode() if isinstance(raw, bytes) else str(raw)
        self.total_memory = int(props["totalGlobalMem"])
        self.major, self.minor = int(props["major"]), int(props["minor"])
        self.multi_processor_count = int(props["multiProcessorCount"])

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // 2**20}MB, multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    """Name, total memory (bytes), compute capability and SM count of a GPU."""
    return _Properties(_cp("get_device_properties").cuda.runtime.getDeviceProperties(
        _index("get_device_properties", device)))


# ---- memory ----------------------------------------------------------------------------
_peak = {"hook": None, "bytes": 0, "used": 0}


def _pool():
    return _cp("memory").get_default_memory_pool()


def memory_allocated(device=None):
    """Bytes of GPU memory held by live arrays (CuPy's pool ``used_bytes``)."""
    with _cp("memory_allocated").cuda.Device(_index("memory_allocated", device)):
        return int(_pool().used_bytes())


def memory_reserved(device=None):
    """Bytes of GPU memory the pool holds, used or cached (``total_bytes``)."""
    with _cp("memory_reserved").cuda.Device(_index("memory_reserved", device)):
        return int(_pool().total_bytes())


def _track_peak():
    if _peak["hook"] is None:
        from cupy.cuda import memory_hook

        class _PeakHook(memory_hook.MemoryHook):
            """Counts the pool's used bytes itself, from each allocation's and free's size: asking
            the pool (``used_bytes()``) at every allocation cost about 70 us a call on the H100
            machine (benchmarks/transformer.py host profile, 2026-11-28), 2,500 calls a GPT step."""
            name = "tinynet_peak"

            def malloc_postprocess(self, **kwargs):
                used = _peak["used"] = _peak["used"] + kwargs["mem_size"]
                if used > _peak["bytes"]:
                    _peak["bytes"] = used

            def free_postprocess(self, **kwargs):
                _peak["used"] -= kwargs["mem_size"]

        _peak["hook"] = _PeakHook()
        _peak["used"] = _peak["bytes"] = _pool().used_bytes()
        _peak["hook"].__enter__()  # installed for good (in this thread)


def max_memory_allocated(device=None):
    """The peak of :func:`memory_allocated` since tracking began (see the module docstring)
    or since :func:`reset_peak_memory_stats`."""
    _track_peak()
    return max(_peak["bytes"], memory_allocated(device))


def reset_peak_memory_stats(device=None):
    """Start the peak of :func:`max_memory_allocated` again from the current use."""
    _track_peak()
    _peak["used"] = _peak["bytes"] = memory_allocated(device)


def max_memory_reserved(device=None):
    """The pool's size (CuPy's pool only grows until :func:`empty_cache`)."""
    return memory_reserved(device)


def empty_cache():
    """Hand the pool's cached, unused blocks back to the driver."""
    if backend.cupy is not None:
        _pool().free_all_blocks()


# ---- random numbers ----------------------------------------------------------------------
def manual_seed(seed):
    """Seed the GPU-side generators (the Philox counter behind GPU dropout)."""
    _random.device_seed(seed)


manual_seed_all = manual_seed


def seed():
    """Seed the GPU-side generators from the operating system's entropy."""
    _random.device_seed(_random.Generator().initial_seed())


def get_rng_state(device="cuda"):
    """The Philox seed and offset behind GPU dropout masks, as a uint8 tensor."""
    return _random.get_device_state()


def set_rng_state(new_state, device="cuda"):
    """Restore what :func:`get_rng_state` returned.

    Raises:
        ArgumentError / ArgumentTypeError: not such a state.
    """
    _random.set_device_state(new_state)


def get_rng_state_all():
    return [get_rng_state()]


def set_rng_state_all(new_states):
    for s in new_states:
        set_rng_state(s)
