"""CUDA settings in PyTorch's spelling (``torch.backends.cuda``): TF32 for float32 matrix
products and which kernels ``scaled_dot_product_attention`` may use.

``matmul.allow_tf32`` (default False, as PyTorch): float32 products through cuBLAS may round
their inputs to TF32 (10-bit mantissa) on the tensor cores. ``set_float32_matmul_precision``
is the other spelling of the same switch: ``"highest"`` (TF32 off), ``"high"`` and
``"medium"`` (TF32 on; tinynet has no bfloat16x3 mode, so "medium" is "high"). float64 and
the half types are unaffected; tinynet's own small-product kernel (``kernels/gemm.cu``)
always sums in full float32.

Attention backends (each ``enable_*_sdp(bool)`` / ``*_sdp_enabled()``), tried in this order
for each call, the first that accepts the call running it:

- ``cudnn`` and ``flash``: cuDNN's fused flash attention (the cuDNN Frontend's ``sdpa`` and
  ``sdpa_backward`` graphs), float16 and bfloat16 on the GPU. tinynet has no separate
  FlashAttention kernel: both switches select cuDNN's, and it runs when either is on.
- ``mem_efficient``: tinynet's own fused kernels (``kernels/attention.cu``): float32 and
  float16, head dims up to 128, masks of any broadcast shape.
- ``math``: the generic op, any dtype and device (the only one on the CPU).

A call whose inputs no enabled backend accepts raises :class:`~tinynet.errors.BackendError`
(a ``RuntimeError``, as PyTorch's "No available kernel") naming the enabled backends.
:func:`tinynet.nn.attention.sdpa_kernel` sets these switches for a ``with`` block.
"""
import contextlib

from ..errors import ArgumentError, ArgumentTypeError
from ..kernels import cublas as _cublas

SDP_ENABLED = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}  # read by the attention op
_SDP = SDP_ENABLED
_PRECISIONS = ("highest", "high", "medium")
_precision = ["highest"]


class _MatmulSettings:
    """``tinynet.backends.cuda.matmul``: the cuBLAS settings of float32/half matrix products."""

    @property
    def allow_tf32(self):
        """bool: float32 cuBLAS products may use TF32 tensor cores. Default False."""
        return _cublas.settings["tf32"]

    @allow_tf32.setter
    def allow_tf32(self, value):
        if not isinstance(value, bool):
            raise ArgumentTypeError(f"backends.cuda.matmul.allow_tf32: expected a bool, got {type(value).__name__}")
        _cublas.settings["tf32"] = value
        _precision[0] = "high" if value else "highest"

    # accepted for PyTorch's sake: cuBLAS's half-precision GEMMs here always allow its
    # reduced-precision split-K reductions (the handle's default math mode), as PyTorch's defaults do
    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True


matmul = _MatmulSettings()


def set_float32_matmul_precision(precision):
    """Set the internal precision of float32 matrix products (``torch.set_float32_matmul_precision``).

    Args:
        precision (str): ``"highest"`` (full float32, the default), ``"high"`` or ``"medium"``
            (TF32 tensor cores for cuBLAS products).

    Raises:
        ArgumentTypeError: ``precision`` is not a string. ArgumentError: any other string.
    """
    if not isinstance(precision, str):
        raise ArgumentTypeError(f"set_float32_matmul_precision: expected a string, got {type(precision).__name__}")
    if precision not in _PRECISIONS:
        raise ArgumentError(f"set_float32_matmul_precision: expected one of {', '.join(_PRECISIONS)}, "
                            f"got {precision!r}")
    _cublas.settings["tf32"] = precision != "highest"
    _precision[0] = precision


def get_float32_matmul_precision():
    """The precision last set: ``"highest"``, ``"high"`` or ``"medium"``."""
    return _precision[0]


def _setter(name):
    def enable(enabled):
        if not isinstance(enabled, bool):
            raise ArgumentTypeError(f"backends.cuda.enable_{name}_sdp: expected a bool, got {type(enabled).__name__}")
        _SDP[name] = enabled
    enable.__name__ = f"enable_{name}_sdp"
    enable.__doc__ = f"Allow (True) or forbid (False) the {name} attention backend."
    return enable


def _getter(name):
    def enabled():
        return _SDP[name]
    enabled.__name__ = f"{name}_sdp_enabled"
    enabled.__doc__ = f"True when the {name} attention backend is allowed."
    return enabled


enable_flash_sdp, flash_sdp_enabled = _setter("flash"), _getter("flash")
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _setter("mem_efficient"), _getter("mem_efficient")
enable_math_sdp, math_sdp_enabled = _setter("math"), _getter("math")
enable_cudnn_sdp, cudnn_sdp_enabled = _setter("cudnn"), _getter("cudnn")


def sdp_state():
    """A copy of the four attention switches (``{"flash": bool, ...}``)."""
    return dict(_SDP)


def set_sdp_state(state):
    """Set the four attention switches from a dict made by :func:`sdp_state`."""
    _SDP.update({k: bool(state[k]) for k in _SDP})


def is_flash_attention_available():
    """True when cuDNN's fused attention (tinynet's flash backend) can be loaded here."""
    from ..kernels import cudnn_attention
    return cudnn_attention.available()


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """The deprecated context manager form of the switches (``torch.backends.cuda.sdp_kernel``);
    prefer :func:`tinynet.nn.attention.sdpa_kernel`."""
    saved = sdp_state()
    set_sdp_state({"flash": enable_flash, "math": enable_math, "mem_efficient": enable_mem_efficient,
                   "cudnn": enable_cudnn})
    try:
        yield
    finally:
        set_sdp_state(saved)
