"""tinynet's random state: one seed makes every random choice repeatable.

:func:`manual_seed` reseeds the host generator (NumPy ``PCG64``, used for parameter
initialisation, dropout on the CPU and DataLoader shuffling), the Philox counter behind
GPU dropout masks, and the CuPy generator used instead when tinynet's kernels are off
(``TINYNET_KERNELS=0``).
"""
import numpy

from . import backend

_state = {"host": numpy.random.default_rng(), "seed": None, "device": None, "philox": None}


def manual_seed(seed):
    """Seed every random generator tinynet uses.

    Args:
        seed (int): a non-negative integer.

    Raises:
        TypeError: ``seed`` is not an int.
        ValueError: ``seed`` is negative.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, numpy.integer)):
        raise TypeError(f"manual_seed: seed must be an int, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"manual_seed: seed must be >= 0, got {seed}")
    _state["seed"] = int(seed)
    _state["host"] = numpy.random.default_rng(int(seed))
    _state["device"] = None
    _state["philox"] = None


def host_generator():
    """The NumPy ``Generator`` behind every host-side random draw."""
    return _state["host"]


def device_generator():
    """The CuPy generator used for GPU-side draws (created lazily, seeded from the host)."""
    if _state["device"] is None:
        seed = int(_state["host"].integers(0, 2**63 - 1))
        _state["device"] = backend.cupy.random.default_rng(seed)
    return _state["device"]


def _philox_seed():
    seed = _state["seed"]  # derived from the seed itself: host draws stay as on the CPU
    return seed if seed is not None else int(_state["host"].integers(0, 2**63 - 1))


def philox_draw():
    """``(seed, offset)`` of the next draw of the Philox generator behind GPU dropout, as
    ``numpy.uint64`` kernel arguments; the offset then advances by one.

    The seed comes from :func:`manual_seed` (so GPU masks repeat), or from the host
    generator when none was set; the offset counts draws since then from 0. Draw ``k``
    uses the counter block ``(unit, k)`` of Philox4x32-10 (Salmon et al., SC 2011).
    """
    state = _state["philox"]
    if state is None:
        state = _state["philox"] = [numpy.uint64(_philox_seed() % 2**64), 0]
    offset = state[1]
    state[1] = offset + 1
    return state[0], numpy.uint64(offset)


def generator_for(xp):
    """Host generator for NumPy, device generator for CuPy."""
    return _state["host"] if xp is numpy else device_generator()
