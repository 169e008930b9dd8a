"""tinynet's random state: one seed makes every random choice repeatable.

* The host generator (NumPy ``PCG64``, wrapped by :data:`default_generator`) draws
  parameter initialisations, ``rand``/``randn``/``randint``/..., dropout masks on the CPU
  and DataLoader shuffling. Draws for GPU tensors are made on the host too and copied, so
  a seed gives the same values on the CPU and the GPU.
* The Philox counter (Salmon et al., SC 2011) behind GPU dropout masks: a seed and an
  offset that advances by one per draw.
* The CuPy generator of the generic GPU path (``TINYNET_KERNELS=0``), seeded from the host.

:func:`manual_seed` reseeds all three. :func:`get_rng_state`/:func:`set_rng_state`
save and restore the host generator; ``tinynet.cuda.get_rng_state``/``set_rng_state``
the Philox counter. States are uint8 tensors holding the generator's state as JSON.
"""
import json
import numbers

import numpy

from . import backend, capture
from .errors import ArgumentError, ArgumentTypeError


def _check_seed(op, seed):
    if isinstance(seed, bool) or not isinstance(seed, (numbers.Integral, numpy.integer)):
        raise ArgumentTypeError(f"{op}: seed must be an int, got {type(seed).__name__}")
    if seed < 0:
        raise ArgumentError(f"{op}: seed must be >= 0, got {seed}")
    return int(seed)


def _encode(obj):
    from .tensor import Tensor
    raw = numpy.frombuffer(json.dumps(obj).encode("utf-8"), dtype=numpy.uint8).copy()
    return Tensor._wrap(raw)


def _decode(op, state, kind):
    from .tensor import Tensor
    if not isinstance(state, Tensor) or state.dtype != numpy.uint8 or state.ndim != 1:
        raise ArgumentTypeError(f"{op}: expected the uint8 tensor returned by get_state/get_rng_state, "
                                f"got {getattr(state, 'dtype', type(state).__name__)}")
    try:
        obj = json.loads(bytes(state.numpy(force=True)).decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise ArgumentError(f"{op}: the state tensor is not a tinynet generator state") from None
    if not isinstance(obj, dict) or obj.get("kind") != kind:
        raise ArgumentError(f"{op}: expected a {kind} state, got {obj.get('kind') if isinstance(obj, dict) else obj!r}")
    return obj


class Generator:
    """A random number generator, as ``torch.Generator`` (NumPy's PCG64 underneath).

    Args:
        device: ``"cpu"`` or ``"cuda"``; accepted for PyTorch's sake (draws are made on the
            host either way). Default ``"cpu"``.

    Example::

        g = tinynet.Generator().manual_seed(0)
        tinynet.randperm(5, generator=g)
    """

    def __init__(self, device="cpu"):
        from . import devices
        self.device = devices.device(device)
        self._initial = int(numpy.random.SeedSequence().entropy % 2**63)
        self.numpy = numpy.random.default_rng(self._initial)

    def manual_seed(self, seed):
        """Reseed; returns the generator.

        Raises:
            ArgumentTypeError: not an int. ArgumentError: negative.
        """
        self._initial = _check_seed("Generator.manual_seed", seed)
        self.numpy = numpy.random.default_rng(self._initial)
        return self

    def seed(self):
        """Reseed from the operating system's entropy; returns the new seed."""
        self.manual_seed(int(numpy.random.SeedSequence().entropy % 2**63))
        return self._initial

    def initial_seed(self):
        """The seed last set (or drawn at creation)."""
        return self._initial

    def get_state(self):
        """The state as a uint8 tensor (for :meth:`set_state`)."""
        return _encode({"kind": "pcg64", "seed": self._initial, "state": self.numpy.bit_generator.state})

    def set_state(self, new_state):
        """Restore a state from :meth:`get_state`; returns the generator.

        Raises:
            ArgumentError / ArgumentTypeError: not such a state.
        """
        obj = _decode("Generator.set_state", new_state, "pcg64")
        rng = numpy.random.default_rng()
        rng.bit_generator.state = obj["state"]
        self.numpy, self._initial = rng, obj["seed"]
        return self


default_generator = Generator()
_device = {"seed": None, "offset": 0, "cupy": None}


def manual_seed(seed):
    """Seed every random generator tinynet uses; returns :data:`default_generator`.

    Args:
        seed (int): a non-negative integer.

    Raises:
        ArgumentTypeError: ``seed`` is not an int. ArgumentError: ``seed`` is negative.
    """
    seed = _check_seed("manual_seed", seed)
    default_generator.manual_seed(seed)
    _device.update(seed=seed, offset=0, cupy=None)
    return default_generator


def seed():
    """Seed every generator from the operating system's entropy; returns the seed."""
    s = default_generator.seed()
    _device.update(seed=s, offset=0, cupy=None)
    return s


def initial_seed():
    """The seed of the default generator."""
    return default_generator.initial_seed()


def get_rng_state():
    """The host generator's state as a uint8 tensor (``torch.get_rng_state``)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    """Restore the host generator from :func:`get_rng_state` (``torch.set_rng_state``).

    Raises:
        ArgumentError / ArgumentTypeError: not such a state.
    """
    default_generator.set_state(new_state)


def host_generator(generator=None, op="random"):
    """The NumPy ``Generator`` behind host draws: ``generator``'s, else the default's.

    Raises:
        ArgumentTypeError: ``generator`` is not a :class:`Generator` (the message names ``op``).
    """
    if generator is None:
        return default_generator.numpy
    if not isinstance(generator, Generator):
        raise ArgumentTypeError(f"{op}: generator must be a tinynet.Generator, got {type(generator).__name__}")
    return generator.numpy


def device_generator():
    """The CuPy generator used for GPU-side draws on the generic path (seeded from the host).

    Raises:
        GraphCaptureError: called during a CUDA graph capture (a graph would freeze its state).
    """
    if capture.current() is not None:
        from .errors import GraphCaptureError
        raise GraphCaptureError("random draw on the generic GPU path (TINYNET_KERNELS=0): CuPy's generator "
                                f"cannot be replayed by a CUDA graph; called at {capture.user_line()}")
    if _device["cupy"] is None:
        s = int(default_generator.numpy.integers(0, 2**63 - 1))
        _device["cupy"] = backend.cupy.random.default_rng(s)
    return _device["cupy"]


def philox_draw():
    """``(seed, offset, cells)`` of the next draw of the Philox generator behind GPU dropout;
    the offset then advances by one. The launcher (``tinynet.kernels.gpu_ops.dropout_fwd``)
    turns them into the kernel's arguments: this module holds the state, not the launch.

    The seed comes from :func:`manual_seed` (so GPU masks repeat), or from the host
    generator when none was set; the offset counts draws since then from 0. Draw ``k``
    uses the counter block ``(unit, k)`` of Philox4x32-10. ``cells`` is None outside a CUDA
    graph capture. During a capture it is the device array of two cells ``[seed, base]``
    that each replay rewrites, ``seed`` is 0 (the kernel reads the cells), and ``offset`` is
    the draw's place within the captured step: the kernel uses ``base + offset``. The first
    replay after the capture uses the offsets the capture took, each later one takes the
    next free ones, so a graphed run draws exactly the masks of the eager run.
    """
    if _device["seed"] is None:
        _device["seed"] = int(default_generator.numpy.integers(0, 2**63 - 1))
    offset = _device["offset"]
    _device["offset"] = offset + 1
    cap = capture.current()
    if cap is None:
        return _device["seed"], offset, None
    rec = cap.shared.get("philox")
    if rec is None:
        rec = cap.shared["philox"] = {"base": offset, "n": 0}
        cap.on_abort(lambda: _device.update(offset=rec["base"]))

        def replay_cells(first):
            if first:
                return (_device["seed"] % 2**64, rec["base"])
            base = _device["offset"]
            _device["offset"] = base + rec["n"]
            return (_device["seed"] % 2**64, base)
        rec["cells"] = cap.cells(2, replay_cells)
    rec["n"] += 1
    return 0, offset - rec["base"], rec["cells"]


def get_device_state():
    """The Philox seed and offset as a uint8 tensor (``tinynet.cuda.get_rng_state``)."""
    return _encode({"kind": "philox", "seed": _device["seed"], "offset": _device["offset"]})


def set_device_state(new_state):
    """Restore the Philox seed and offset (and reseed the generic path's CuPy generator)."""
    obj = _decode("cuda.set_rng_state", new_state, "philox")
    _device.update(seed=obj["seed"], offset=int(obj["offset"]), cupy=None)


def device_seed(seed):
    """Seed the GPU-side generators only (``tinynet.cuda.manual_seed``)."""
    _device.update(seed=_check_seed("cuda.manual_seed", seed), offset=0, cupy=None)


def generator_for(xp):
    """Host generator for NumPy, device generator for CuPy."""
    return default_generator.numpy if xp is numpy else device_generator()
