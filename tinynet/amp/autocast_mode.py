"""``tinynet.autocast``: mixed precision regions with PyTorch's API (``torch.autocast``).

Inside ``with tinynet.autocast("cuda"):`` matrix products and convolutions run in float16
(``dtype=tinynet.bfloat16`` for bfloat16), and softmax, the losses, the norms and the
exponentials in float32, by the op lists of :mod:`tinynet.ops.autocast_lists`; parameters
stay float32 and get float32 gradients. The casts happen at the ops' entry points
(:mod:`tinynet.ops.autocast`). docs/amp.md has the tables and the CPU behaviour.
"""
import functools
import warnings

from .. import backend, dtypes
from ..errors import ArgumentTypeError, AutocastError, UnsupportedDTypeError
from ..ops import autocast as _state

_SUPPORTED = (dtypes.float16, dtypes.bfloat16)


def _device_type(op, device_type):
    if not isinstance(device_type, str):
        raise ArgumentTypeError(f"{op}: expected `device_type` of type `str`, got: `{type(device_type)}`")
    return device_type


def is_autocast_available(device_type):
    """True for the device types tinynet autocasts: ``"cuda"`` and ``"cpu"``.

    Raises:
        ArgumentTypeError: ``device_type`` is not a str.
    """
    return _device_type("is_autocast_available", device_type) in ("cuda", "cpu")


def is_autocast_enabled(device_type="cuda"):
    """Whether autocast is on for ``device_type`` in this thread (``torch.is_autocast_enabled``).

    Args:
        device_type (str): ``"cuda"`` (the default, as PyTorch's no-argument form) or ``"cpu"``.

    Raises:
        ArgumentTypeError: ``device_type`` is not a str.
    """
    return _state.current().enabled.get(_device_type("is_autocast_enabled", device_type)) is not None


def get_autocast_dtype(device_type):
    """The dtype autocast uses for ``device_type`` (``torch.get_autocast_dtype``): the one the
    innermost region set, else float16 for ``"cuda"`` and bfloat16 for ``"cpu"``.

    Raises:
        ArgumentTypeError: ``device_type`` is not a str.
    """
    return _state.current().dtype.get(_device_type("get_autocast_dtype", device_type), dtypes.float16)


def is_autocast_cache_enabled():
    """Whether autocast regions reuse the low-precision copies of weights (default True)."""
    return _state.current().cache_enabled


def clear_autocast_cache():
    """Drop the cached low-precision copies of weights (PyTorch's ``torch.clear_autocast_cache``)."""
    _state.clear_cache()


def _deprecated(old, new):
    warnings.warn(f"{old} is deprecated. Please use {new} instead.", DeprecationWarning, stacklevel=3)


def get_autocast_cpu_dtype():
    """``get_autocast_dtype("cpu")`` (PyTorch's deprecated spelling, with its warning)."""
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return get_autocast_dtype("cpu")


def get_autocast_gpu_dtype():
    """``get_autocast_dtype("cuda")`` (PyTorch's deprecated spelling, with its warning)."""
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return get_autocast_dtype("cuda")


def is_autocast_cpu_enabled():
    """``is_autocast_enabled("cpu")`` (PyTorch's deprecated spelling, with its warning)."""
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return is_autocast_enabled("cpu")


class autocast:
    """Run the ops of a region in mixed precision (``torch.autocast``); a context manager and
    a decorator.

    In the region, for tensors on ``device_type``: the ops of the "lower" list (``linear``,
    ``conv1d/2d``, ``conv_transpose1d/2d``, ``matmul``, ``mm``, ``bmm``, ``addmm``,
    ``baddbmm``, ``addbmm``, ``einsum``, ``prelu``, ``scaled_dot_product_attention``; on
    CUDA also ``mv``, ``addmv``) cast their float inputs to ``dtype`` and return ``dtype``;
    the "fp32" list (losses; on CUDA also softmax, log_softmax, sum, prod, cumsum, norm,
    layer_norm, group_norm, exp, log, pow, ...) casts to float32; ``dot`` and
    ``scatter_add`` (CUDA) run in the widest input dtype. Other ops run in the dtype of
    their inputs. float64 tensors are never cast. The casts are differentiable, so a
    float32 parameter receives a float32 gradient. Regions nest: ``autocast(...,
    enabled=False)`` inside one turns it off for its body. The state is per thread.

    Args:
        device_type (str): ``"cuda"`` or ``"cpu"``; the region casts only tensors there.
        dtype: ``tinynet.float16`` or ``tinynet.bfloat16``; default float16 for ``"cuda"``
            and bfloat16 for ``"cpu"`` (:func:`get_autocast_dtype`).
        enabled (bool): False makes the region switch autocast off. Default True.
        cache_enabled (bool): reuse the cast of each float32 weight within the region.
            Default True (the surrounding region's setting when None).

    Raises:
        ArgumentTypeError: ``device_type`` is not a str (PyTorch raises ValueError; this
            error is also a TypeError).
        AutocastError: a device type other than "cuda" or "cpu".
        UnsupportedDTypeError: bfloat16 for "cuda" where the installed CuPy has no bfloat16.

    Warns:
        UserWarning: "cuda" without a usable GPU, or a dtype other than float16/bfloat16 for
            "cpu" (as PyTorch, the region then leaves autocast off).

    Example::

        scaler = tinynet.amp.GradScaler("cuda")
        with tinynet.autocast("cuda"):
            loss = F.cross_entropy(model(x), y)     # float16 products, float32 loss
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
    """

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not is_autocast_available(_device_type("autocast", device_type)):
            raise AutocastError(f"autocast: unsupported device_type {device_type!r} (tinynet autocasts 'cuda' and "
                                "'cpu')")
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtypes.as_dtype(dtype, "autocast")
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        enabled = bool(enabled)
        if enabled and device_type == "cuda":
            if backend.load_cupy() is None:
                warnings.warn("autocast: CUDA is not available. Disabling autocast.", stacklevel=2)
                enabled = False
            elif self.fast_dtype == dtypes.bfloat16 and not backend.cupy_has_bfloat16():
                raise UnsupportedDTypeError(
                    "autocast: the installed CuPy does not support bfloat16 (it needs CuPy's ml_dtypes bfloat16 "
                    "support). Please switch dtype to float16.")
        elif enabled and self.fast_dtype not in _SUPPORTED:
            warnings.warn(f"autocast: in CPU autocast, but the target dtype {self.fast_dtype} is not supported. "
                          "Disabling autocast. CPU autocast only supports bfloat16 and float16.", stacklevel=2)
            enabled = False
        self._enabled = enabled
        self._tokens = []

    def __enter__(self):
        self._tokens.append(_state.enter(self.device, self.fast_dtype, self._enabled, self._cache_enabled))
        return self

    def __exit__(self, *exc):
        _state.leave(self._tokens.pop())
        return False

    def __call__(self, func):
        if not callable(func):
            raise ArgumentTypeError(f"autocast()(func) requires a callable, but got {type(func).__name__}; use "
                                    "autocast as a context manager: with tinynet.autocast(device_type=...): ...")
        settings = (self.device, self.fast_dtype, self._enabled, self._cache_enabled)

        @functools.wraps(func)
        def run(*args, **kwargs):
            token = _state.enter(*settings)
            try:
                return func(*args, **kwargs)
            finally:
                _state.leave(token)
        return run
