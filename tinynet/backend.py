"""Array backend selection: NumPy on the CPU or CuPy on an NVIDIA GPU.

The backend is read once, at import, from ``TINYNET_BACKEND``:

* ``auto`` (default): CuPy when it imports *and* a CUDA device is present, else NumPy.
* ``numpy``: always NumPy.
* ``cupy``: CuPy; raises :class:`~tinynet.errors.BackendError` at import when CuPy is
  not installed or no GPU is visible.

``TINYNET_KERNELS=0`` makes CuPy ops use their generic ``xp`` code instead of tinynet's
own CUDA kernels (to compare the two on one GPU).

Module attributes: ``name`` (``"numpy"`` or ``"cupy"``), ``xp`` (the array module of the
default device), ``cupy`` (the CuPy module or ``None``), ``kernels_enabled``.
"""
import os

import numpy

from .errors import BackendError, DeviceMismatchError

_CHOICES = ("auto", "numpy", "cupy")


def _load_cupy():
    """Return (cupy module or None, reason string when unusable)."""
    try:
        import cupy as cp
    except Exception as exc:  # ImportError or a broken CUDA install
        return None, f"CuPy cannot be imported ({type(exc).__name__}: {exc})"
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:
        return None, f"no CUDA device is usable ({type(exc).__name__}: {exc})"
    if count < 1:
        return None, "no CUDA device is present"
    return cp, ""


def _select(raw):
    choice = raw.strip().lower()
    if choice not in _CHOICES:
        raise BackendError(
            f"TINYNET_BACKEND: expected one of {', '.join(_CHOICES)}, got {raw!r}")
    if choice == "numpy":
        return "numpy", numpy, None
    cp, why = _load_cupy()
    if cp is None:
        if choice == "cupy":
            raise BackendError(f"TINYNET_BACKEND='cupy' but {why}; "
                               "install the GPU extra (pip install '.[cuda13]') or use numpy")
        return "numpy", numpy, None
    return "cupy", cp, cp


name, xp, cupy = _select(os.environ.get("TINYNET_BACKEND", "auto"))
kernels_enabled = os.environ.get("TINYNET_KERNELS", "1").strip() not in ("0", "false", "no")

if cupy is not None:
    _CUPY_NDARRAY = cupy.ndarray
else:
    class _CUPY_NDARRAY:  # placeholder type no array is an instance of
        pass


def default_device():
    """``"cuda"`` when the backend is CuPy, else ``"cpu"``."""
    return "cuda" if name == "cupy" else "cpu"


def is_gpu_array(a):
    """True when ``a`` is a CuPy array."""
    return isinstance(a, _CUPY_NDARRAY)


def array_module(a):
    """The array module (``numpy`` or ``cupy``) owning array ``a``."""
    return cupy if isinstance(a, _CUPY_NDARRAY) else numpy


def device_of(a):
    """``"cuda"`` for a CuPy array, ``"cpu"`` otherwise."""
    return "cuda" if isinstance(a, _CUPY_NDARRAY) else "cpu"


def normalize_device(device, op="tensor"):
    """Map ``None``/``"cpu"``/``"cuda"``/``"cuda:0"`` to ``"cpu"`` or ``"cuda"``.

    Raises:
        BackendError: ``"cuda"`` was asked for but the CuPy backend is not available.
        ValueError: an unknown device string.
    """
    if device is None:
        return default_device()
    dev = str(device).lower()
    if dev == "cpu":
        return "cpu"
    if dev == "cuda" or dev.startswith("cuda:"):
        if cupy is None:
            raise BackendError(f"{op}: device {device!r} requested but no CuPy GPU backend "
                               "is available (set TINYNET_BACKEND=cupy on a GPU machine)")
        return "cuda"
    raise ValueError(f"{op}: device must be 'cpu' or 'cuda', got {device!r}")


def to_device(a, device):
    """Return array ``a`` on ``device`` (``"cpu"`` or ``"cuda"``), copying only if needed."""
    if device == "cpu":
        return cupy.asnumpy(a) if isinstance(a, _CUPY_NDARRAY) else numpy.asarray(a)
    if isinstance(a, _CUPY_NDARRAY):
        return a
    return cupy.asarray(a)


def common_module(op, arrays):
    """Array module shared by ``arrays``; raise DeviceMismatchError when they mix devices."""
    mod = None
    for a in arrays:
        m = cupy if isinstance(a, _CUPY_NDARRAY) else numpy
        if mod is None:
            mod = m
        elif m is not mod:
            raise DeviceMismatchError(
                f"{op}: expected all tensors on the same device, got both cpu and cuda tensors")
    return mod if mod is not None else xp


def special(module):
    """``scipy.special`` for NumPy, ``cupyx.scipy.special`` for CuPy (for ``erf``)."""
    if module is numpy:
        import scipy.special
        return scipy.special
    import cupyx.scipy.special
    return cupyx.scipy.special


def gpu_name():
    """Name of CUDA device 0, or ``None`` without the CuPy backend."""
    if cupy is None:
        return None
    props = cupy.cuda.runtime.getDeviceProperties(0)
    raw = props["name"]
    return raw.decode() if isinstance(raw, bytes) else str(raw)
