"""tinynet's random state: one seed makes every random choice repeatable.

:func:`manual_seed` reseeds the host generator (NumPy ``PCG64``, used for parameter
initialisation, dropout on the CPU and DataLoader shuffling) and, on the CuPy backend,
the device generator used for dropout masks on the GPU.
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
    if _state["philox"] is not None:  # reseed in place: kernels hold this array
        _state["philox"][...] = backend.cupy.asarray(_philox_seed(), dtype=numpy.uint64)


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
    return [seed if seed is not None else int(_state["host"].integers(0, 2**63 - 1)), 0]


def device_philox_state():
    """Device array ``[seed, offset]`` (uint64) of the Philox generator behind GPU dropout.

    It is seeded from the host generator (so :func:`manual_seed` makes GPU masks
    repeatable) and advanced on the device after each draw, never read by the host.
    """
    if _state["philox"] is None:
        _state["philox"] = backend.cupy.asarray(_philox_seed(), dtype=numpy.uint64)
    return _state["philox"]


def generator_for(xp):
    """Host generator for NumPy, device generator for CuPy."""
    return _state["host"] if xp is numpy else device_generator()
