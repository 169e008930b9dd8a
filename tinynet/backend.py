"""Array modules: NumPy on the CPU, CuPy on NVIDIA GPUs, and which one is the default.

Tensors on the CPU (NumPy arrays) and on the GPU (CuPy arrays) coexist in one process;
``TINYNET_BACKEND`` (read once, at import) only picks the *default* device, the one
factories such as :func:`tinynet.zeros` use when no ``device=`` is given:

* ``auto`` (default): ``cuda`` when CuPy imports *and* a CUDA device is present, else ``cpu``.
* ``numpy``: ``cpu``. CuPy is then imported only when a ``cuda`` device is asked for.
* ``cupy``: ``cuda``; raises :class:`~tinynet.errors.BackendError` at import when CuPy is
  not installed or no GPU is visible.

``TINYNET_KERNELS=0`` makes CuPy ops use their generic ``xp`` code instead of tinynet's
own CUDA kernels (to compare the two on one GPU).

Module attributes: ``name`` (``"numpy"`` or ``"cupy"``: the default device's array
module), ``xp`` (that module), ``cupy`` (the CuPy module once loaded, else ``None``),
``kernels_enabled``. This is the only module that imports CuPy.
"""
import os

import numpy

from . import capture
from .errors import BackendError, DeviceMismatchError

_CHOICES = ("auto", "numpy", "cupy")


class _NoArray:
    """Placeholder type no array is an instance of (while CuPy is not loaded)."""


cupy = None
_CUPY_NDARRAY = _NoArray
_cupy_problem = None  # why CuPy is unusable, once a load was tried and failed


def load_cupy():
    """Import CuPy and check that a CUDA device is present; return the module or ``None``.

    The outcome is remembered: later calls cost one attribute read.
    """
    global cupy, _CUPY_NDARRAY, _cupy_problem
    if cupy is not None or _cupy_problem is not None:
        return cupy
    try:
        import cupy as cp
    except Exception as exc:  # ImportError or a broken CUDA install
        _cupy_problem = f"CuPy cannot be imported ({type(exc).__name__}: {exc})"
        return None
    try:
        count = cp.cuda.runtime.getDeviceCount()
    except Exception as exc:
        _cupy_problem = f"no CUDA device is usable ({type(exc).__name__}: {exc})"
        return None
    if count < 1:
        _cupy_problem = "no CUDA device is present"
        return None
    cupy, _CUPY_NDARRAY = cp, cp.ndarray
    return cupy


def cupy_problem():
    """Why CuPy cannot be used here (``""`` when it can)."""
    return "" if load_cupy() is not None else _cupy_problem


def require_cupy(op):
    """The CuPy module; raise :class:`~tinynet.errors.DeviceError` naming ``op`` without a GPU."""
    cp = load_cupy()
    if cp is None:
        from .errors import DeviceError
        raise DeviceError(f"{op}: a 'cuda' device was requested but {_cupy_problem} "
                          "(install the GPU extra, pip install '.[cuda13]', on a machine with a GPU)")
    return cp


def _select(raw):
    choice = raw.strip().lower()
    if choice not in _CHOICES:
        raise BackendError(
            f"TINYNET_BACKEND: expected one of {', '.join(_CHOICES)}, got {raw!r}")
    if choice == "numpy":
        return "numpy", numpy
    cp = load_cupy()
    if cp is None:
        if choice == "cupy":
            raise BackendError(f"TINYNET_BACKEND='cupy' but {_cupy_problem}; "
                               "install the GPU extra (pip install '.[cuda13]') or use numpy")
        return "numpy", numpy
    return "cupy", cp


name, xp = _select(os.environ.get("TINYNET_BACKEND", "auto"))
kernels_enabled = os.environ.get("TINYNET_KERNELS", "1").strip() not in ("0", "false", "no")


_fast_cast = [None]  # tinynet.kernels.cast registers its float32 <-> half cast here (see astype)


def register_cast(fn):
    """Set the GPU cast :func:`astype` tries first: ``fn(array, dtype)`` returns the cast array,
    or None for a pair it does not take. ``tinynet.kernels.cast`` registers its one-launch
    float32 <-> float16/bfloat16 cast at import; the layers below the kernels (autograd)
    reach it through here."""
    _fast_cast[0] = fn


_fast_add = [None]  # tinynet.kernels.add registers its one-launch float32 sum here (see add)


def register_add(fn):
    """Set the GPU sum :func:`add` tries first: ``fn(a, b)`` returns ``a + b`` or None for a
    pair it does not take (``tinynet.kernels.add``: same-shape contiguous float32 arrays, or
    float32 with a half type). The engine's gradient sums reach it through here."""
    _fast_add[0] = fn


def add(a, b):
    """``a + b`` of two arrays, through the registered GPU sum where it takes the pair and
    tinynet's kernels are on (the same bits)."""
    fn = _fast_add[0]
    if fn is not None and kernels_enabled and type(a) is _CUPY_NDARRAY and type(b) is _CUPY_NDARRAY:
        y = fn(a, b)
        if y is not None:
            return y
    return a + b


def astype(a, dtype):
    """``a.astype(dtype)`` (a new array), through the registered GPU cast where it takes the pair
    and tinynet's kernels are on (the same values; CuPy's own cast of a large array took about
    three times as long, H200, 2026-11-28)."""
    fn = _fast_cast[0]
    if fn is not None and kernels_enabled and type(a) is _CUPY_NDARRAY:
        y = fn(a, dtype)
        if y is not None:
            return y
    return a.astype(dtype)


def is_gpu_array(a):
    """True when ``a`` is a CuPy array."""
    return isinstance(a, _CUPY_NDARRAY)


def array_module(a):
    """The array module (``numpy`` or ``cupy``) owning array ``a``."""
    return cupy if isinstance(a, _CUPY_NDARRAY) else numpy


def module_for(device):
    """The array module of a :class:`tinynet.device` (``numpy`` for cpu, ``cupy`` for cuda)."""
    return numpy if device.type == "cpu" else require_cupy("device")


def to_device(a, device):
    """Return array ``a`` on ``device`` (a :class:`tinynet.device`), copying only if needed."""
    if device.type == "cpu":
        if isinstance(a, _CUPY_NDARRAY):
            capture.check_sync("to(cpu)")
            return cupy.asnumpy(a)
        return numpy.asarray(a)
    cp = require_cupy("to")
    index = device.index if device.index is not None else cp.cuda.runtime.getDevice()
    if isinstance(a, _CUPY_NDARRAY) and a.device.id == index:
        return a
    if not isinstance(a, _CUPY_NDARRAY):
        capture.check_sync("to(cuda) from host memory")
    with cp.cuda.Device(index):
        return cp.asarray(a) if not isinstance(a, _CUPY_NDARRAY) else a.copy()


_bf16_gpu: list = []  # [bool] once probed: does this CuPy compute on ml_dtypes' bfloat16?


def cupy_has_bfloat16():
    """True when the installed CuPy creates, casts and multiplies bfloat16 arrays (CuPy's
    experimental ml_dtypes support); probed once with a tiny product."""
    if not _bf16_gpu:
        ok = False
        if load_cupy() is not None:
            try:
                from .dtypes import bfloat16
                a = cupy.ones((2, 2), dtype=numpy.float32).astype(bfloat16)
                ok = float((a @ a).astype(numpy.float32)[0, 0]) == 2.0
            except Exception:  # TypeError/NotImplementedError/compile errors of a CuPy without it
                ok = False
        _bf16_gpu.append(ok)
    return _bf16_gpu[0]


def check_bfloat16(op):
    """Raise :class:`~tinynet.errors.UnsupportedDTypeError` naming ``op`` when bfloat16 cannot
    live on the GPU here (CuPy without bfloat16 support)."""
    if not cupy_has_bfloat16():
        from .errors import UnsupportedDTypeError
        version = getattr(cupy, "__version__", "none") if cupy is not None else "none"
        raise UnsupportedDTypeError(
            f"{op}: bfloat16 on a cuda device needs CuPy with bfloat16 (ml_dtypes) support; CuPy {version} "
            f"has none here. Use float16 on the GPU, or bfloat16 on the CPU")


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


def gpu_name(index=0):
    """Name of CUDA device ``index``, or ``None`` without a usable GPU."""
    if load_cupy() is None:
        return None
    props = cupy.cuda.runtime.getDeviceProperties(index)
    raw = props["name"]
    return raw.decode() if isinstance(raw, bytes) else str(raw)


def load_nccl():
    """CuPy's NCCL binding (``cupy.cuda.nccl``), or ``None`` when CuPy, a GPU or the NCCL
    library (the ``nvidia-nccl-cu12``/``-cu13`` wheel) is missing; :func:`nccl_problem` says which."""
    global _nccl_problem
    if load_cupy() is None:
        _nccl_problem = _cupy_problem
        return None
    try:
        from cupy.cuda import nccl
    except Exception as exc:
        _nccl_problem = f"cupy.cuda.nccl cannot be imported ({type(exc).__name__}: {exc})"
        return None
    if not getattr(nccl, "available", False):
        _nccl_problem = "CuPy found no NCCL library (install nvidia-nccl-cu13, or -cu12 to match CuPy)"
        return None
    return nccl


_nccl_problem = ""


def nccl_problem():
    """Why :func:`load_nccl` returned ``None`` (``""`` when NCCL is usable)."""
    return "" if load_nccl() is not None else _nccl_problem


def copy_from_host(dst, host):
    """Write NumPy array ``host`` into array ``dst`` (NumPy, or CuPy: a host-to-device copy)
    of the same shape and dtype."""
    if isinstance(dst, _CUPY_NDARRAY):
        dst.set(numpy.ascontiguousarray(host))
    else:
        dst[...] = host


def pinned_copy(host, op):
    """A copy of NumPy array ``host`` in page-locked (pinned) host memory, from CuPy's pinned
    memory pool; :class:`~tinynet.errors.DeviceError` naming ``op`` without a usable GPU."""
    require_cupy(op)
    import cupyx
    out = cupyx.empty_pinned(host.shape, host.dtype)
    out[...] = host
    return out


def is_pinned(a):
    """True when NumPy array ``a`` (or the array it views) lives in CuPy's pinned host memory."""
    if cupy is None or isinstance(a, _CUPY_NDARRAY):
        return False
    pinned = cupy.cuda.PinnedMemoryPointer
    while a is not None:
        if isinstance(a, pinned):
            return True
        a = getattr(a, "base", None)
    return False
