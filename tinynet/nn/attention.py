"""``tinynet.nn.attention``: which kernels ``scaled_dot_product_attention`` may use
(PyTorch's ``torch.nn.attention``: :class:`SDPBackend` and :func:`sdpa_kernel`).

The switches themselves live in :mod:`tinynet.backends.cuda`, which says what each backend
is in tinynet: ``CUDNN_ATTENTION`` and ``FLASH_ATTENTION`` select cuDNN's fused flash
attention (float16/bfloat16 on the GPU), ``EFFICIENT_ATTENTION`` tinynet's own fused
kernels (float32/float16 on the GPU), ``MATH`` the generic op (every dtype and device; on
the CPU the generic op also runs under ``FLASH_ATTENTION``).
"""
import contextlib
import enum

from ..backends import cuda as _cuda
from ..errors import ArgumentTypeError

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """The attention backends, numbered as PyTorch numbers them."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCH = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
           SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within the ``with`` block, let ``scaled_dot_product_attention`` use only ``backends``.

    Args:
        backends (SDPBackend or list of SDPBackend): the backends allowed; the others are
            switched off until the block exits (the previous switches are restored).
        set_priority (bool): accepted for PyTorch's sake; tinynet tries its backends in a
            fixed order (cuDNN, its own fused kernels, the math code), whatever the list order.

    Raises:
        ArgumentTypeError: an element that is not an :class:`SDPBackend`.

    A call that no allowed backend can run raises :class:`~tinynet.errors.BackendError`
    (a ``RuntimeError``) naming the enabled backends, as PyTorch's "No available kernel".
    """
    items = [backends] if isinstance(backends, SDPBackend) else list(backends)
    for b in items:
        if not isinstance(b, SDPBackend):
            raise ArgumentTypeError(f"sdpa_kernel: backends must be SDPBackend members, got {b!r}")
    saved = _cuda.sdp_state()
    _cuda.set_sdp_state({name: (b in items) for b, name in _SWITCH.items()})
    try:
        yield
    finally:
        _cuda.set_sdp_state(saved)
