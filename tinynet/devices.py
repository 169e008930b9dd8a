"""``tinynet.device``: where a tensor's array lives, spelled as in PyTorch.

A device is ``cpu`` (a NumPy array in host memory) or ``cuda:<index>`` (a CuPy array on
GPU ``index``). Strings such as ``"cpu"``, ``"cuda"`` and ``"cuda:1"`` are accepted
wherever a device is. Unlike PyTorch, a device also compares equal to a string naming it
(``t.device == "cpu"``; ``"cuda"`` matches every GPU), which is convenient in tests and
scripts.
"""
import builtins

from . import backend
from .errors import ArgumentTypeError, DeviceError


class device:
    """A device: ``type`` (``"cpu"`` or ``"cuda"``) and ``index`` (``None`` or an int >= 0).

    Args:
        type (str, int or device): ``"cpu"``, ``"cuda"``, ``"cuda:<index>"``, a GPU number,
            or a device.
        index (int, optional): the GPU number, for ``"cuda"`` only.

    Raises:
        DeviceError: the string does not parse, or a CPU index other than 0 is given.
        ArgumentTypeError: ``type`` is neither a string nor a device, or ``index`` is not an int.

    Example::

        >>> tinynet.device("cuda:1")
        device(type='cuda', index=1)
    """

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        elif isinstance(type, int) and not isinstance(type, bool):  # device(1): GPU 1, as in PyTorch
            type, index = "cuda", type
        if not isinstance(type, str):
            raise ArgumentTypeError(f"device: expected a string such as 'cpu' or 'cuda:0', got "
                                    f"{builtins.type(type).__name__}")
        text = type.strip().lower()
        kind, sep, num = text.partition(":")
        if sep:
            if index is not None:
                raise DeviceError(f"device: index given twice, in {type!r} and as index={index!r}")
            if not num.isdigit():
                raise DeviceError(f"device: invalid device string {type!r} (expected 'cpu', 'cuda' or 'cuda:<n>')")
            index = int(num)
        if kind not in ("cpu", "cuda"):
            raise DeviceError(f"device: invalid device string {type!r} (expected 'cpu', 'cuda' or 'cuda:<n>')")
        if index is not None:
            if isinstance(index, bool) or not isinstance(index, int) or index < 0:
                raise DeviceError(f"device: index must be an int >= 0, got {index!r}")
            if kind == "cpu" and index != 0:
                raise DeviceError(f"device: the cpu device has index 0 only, got {index}")
        object.__setattr__(self, "type", kind)
        object.__setattr__(self, "index", index)

    def __setattr__(self, name, value):
        raise AttributeError("device objects are immutable")

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):  # tinynet's convenience: "cuda" matches any GPU, "cuda:1" only GPU 1
            try:
                other = device(other)
            except DeviceError:
                return False
            return self.type == other.type and (other.index is None or self.index == other.index)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self):
        return hash((self.type, self.index))

    def __reduce__(self):
        return (device, (self.type, self.index))


CPU = device("cpu")
_cuda_devices: dict = {}


def cuda_device(index):
    """The (cached) ``cuda:<index>`` device object."""
    d = _cuda_devices.get(index)
    if d is None:
        d = _cuda_devices[index] = device("cuda", index)
    return d


def of_array(a):
    """The device an array lives on: ``cpu`` or ``cuda:<id>``."""
    if isinstance(a, backend._CUPY_NDARRAY):
        return cuda_device(a.device.id)
    return CPU


_chosen_default = [None]  # what set_default_device() chose, else None


def set_default_device(dev):
    """Make ``dev`` the device that factories (``zeros``, ``randn``, ``tensor``, ...) use when
    none is given, as ``torch.set_default_device``; ``None`` goes back to the backend's
    default (``cuda:<current>`` on the CuPy backend, else ``cpu``).

    Raises:
        DeviceError: an invalid device string, or a GPU that this machine lacks.
    """
    _chosen_default[0] = None if dev is None else resolve(dev, "set_default_device")


def default_device():
    """The device factories use when none is given: the one :func:`set_default_device`
    chose, else ``cuda:<current>`` on the CuPy backend, else ``cpu`` (see :mod:`tinynet.backend`)."""
    if _chosen_default[0] is not None:
        return _chosen_default[0]
    if backend.name == "cupy":
        return cuda_device(backend.cupy.cuda.runtime.getDevice())
    return CPU


def resolve(dev, op="tensor"):
    """Turn ``None``, a string or a device into a concrete device (``cuda`` gets the
    current GPU's index) that exists on this machine.

    Raises:
        DeviceError: an invalid string, ``cuda`` without a GPU, or a GPU index past the
            number of GPUs.
    """
    if dev is None:
        return default_device()
    if not isinstance(dev, device):
        try:
            dev = device(dev)
        except DeviceError as exc:
            raise DeviceError(f"{op}: {exc}") from None
        except ArgumentTypeError:
            raise ArgumentTypeError(f"{op}: device must be a string, a tinynet.device or an int, "
                                    f"got {type(dev).__name__}") from None
    if dev.type == "cpu":
        return CPU
    cp = backend.require_cupy(op)
    count = cp.cuda.runtime.getDeviceCount()
    index = cp.cuda.runtime.getDevice() if dev.index is None else dev.index
    if index >= count:
        raise DeviceError(f"{op}: device 'cuda:{index}' requested but this machine has {count} GPU(s)")
    return cuda_device(index)
