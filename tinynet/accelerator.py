"""``tinynet.accelerator``: PyTorch's device-generic ``torch.accelerator`` names.

tinynet has one kind of accelerator, CUDA GPUs through CuPy, so these are
:mod:`tinynet.cuda` under PyTorch's generic names: :func:`is_available` is
``cuda.is_available()``, :func:`current_accelerator` is ``device("cuda")`` where a GPU is
usable and ``None`` elsewhere (PyTorch answers with the accelerator its build was compiled for;
tinynet has no build-time notion of one, so both answers follow the machine), and
:func:`current_device_index`, :func:`set_device_index`, :func:`synchronize` and the
``device_index`` context act on the current GPU.

The functions that need a device raise :class:`~tinynet.errors.DeviceError` (a
``RuntimeError``, as PyTorch's) on a machine without one, with PyTorch's message.
"""
from . import cuda
from .devices import device
from .errors import ArgumentTypeError, DeviceError

__all__ = ["is_available", "current_accelerator", "device_count", "synchronize", "current_device_index",
           "current_device_idx", "set_device_index", "set_device_idx", "device_index", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved", "reset_peak_memory_stats",
           "empty_cache"]


def is_available():
    """True when an accelerator (a CUDA GPU usable through CuPy) is present."""
    return cuda.is_available()


def current_accelerator(check_available=False):
    """``tinynet.device("cuda")`` when a GPU is usable, else ``None``.

    Args:
        check_available (bool): PyTorch's argument (return None unless the accelerator is
            usable); tinynet's answer is the same either way (module doc).
    """
    return device("cuda") if cuda.is_available() else None


def device_count():
    """The number of usable GPUs (0 on a machine without one)."""
    return cuda.device_count() if cuda.is_available() else 0


def _require(op):
    if not cuda.is_available():
        raise DeviceError(f"accelerator.{op}: Cannot access accelerator device when none is available.")


def _index(op, dev):
    """A GPU number from an int, ``"cuda:1"``, a device, or None (the current GPU)."""
    _require(op)
    if dev is None:
        return cuda.current_device()
    if isinstance(dev, bool) or not isinstance(dev, (int, str, device)):
        raise ArgumentTypeError(f"accelerator.{op}: device must be an int, a str or a device, got {type(dev).__name__}")
    if isinstance(dev, int):
        if not 0 <= dev < cuda.device_count():
            raise DeviceError(f"accelerator.{op}: device index {dev} is out of range for {cuda.device_count()} GPUs")
        return dev
    d = device(dev) if isinstance(dev, str) else dev
    if d.type != "cuda":
        raise DeviceError(f"accelerator.{op}: {d} does not match the current accelerator cuda")
    return cuda.current_device() if d.index is None else d.index


def current_device_index():
    """The number of the current GPU.

    Raises:
        DeviceError: no accelerator is available.
    """
    _require("current_device_index")
    return cuda.current_device()


current_device_idx = current_device_index  # PyTorch's older spelling


def set_device_index(device, /):
    """Make ``device`` (an int, ``"cuda:1"`` or a device) the current GPU.

    Raises:
        DeviceError: no accelerator is available, or ``device`` is not one of its GPUs.
        ArgumentTypeError: ``device`` is of another type.
    """
    cuda.set_device(_index("set_device_index", device))


set_device_idx = set_device_index  # PyTorch's older spelling


def synchronize(device=None, /):
    """Wait for every kernel queued on ``device`` (default the current GPU).

    Raises:
        DeviceError: no accelerator is available.
    """
    cuda.synchronize(_index("synchronize", device))


class device_index:
    """Context manager: ``device`` (an int; None does nothing) is the current GPU inside the block.

    Raises:
        DeviceError: on entering, with an int and no accelerator.
    """

    def __init__(self, device, /):
        self.idx, self.prev = device, None

    def __enter__(self):
        if self.idx is not None:
            self.prev = current_device_index()
            set_device_index(self.idx)
        return self

    def __exit__(self, *exc):
        if self.prev is not None:
            set_device_index(self.prev)
        return False


def memory_allocated(device_index=None, /):
    """Bytes held by tensors on the GPU (``cuda.memory_allocated``)."""
    return cuda.memory_allocated(_index("memory_allocated", device_index))


def max_memory_allocated(device_index=None, /):
    """Peak of :func:`memory_allocated` since tracking started (``cuda.max_memory_allocated``)."""
    return cuda.max_memory_allocated(_index("max_memory_allocated", device_index))


def memory_reserved(device_index=None, /):
    """Bytes the memory pool holds on the GPU (``cuda.memory_reserved``)."""
    return cuda.memory_reserved(_index("memory_reserved", device_index))


def max_memory_reserved(device_index=None, /):
    """Peak of :func:`memory_reserved` (``cuda.max_memory_reserved``)."""
    return cuda.max_memory_reserved(_index("max_memory_reserved", device_index))


def reset_peak_memory_stats(device_index=None, /):
    """Restart the peak counters (``cuda.reset_peak_memory_stats``)."""
    cuda.reset_peak_memory_stats(_index("reset_peak_memory_stats", device_index))


def empty_cache():
    """Give the pool's unused GPU blocks back (``cuda.empty_cache``); nothing without a GPU."""
    if cuda.is_available():
        cuda.empty_cache()
