"""cuDNN settings, spelled as ``torch.backends.cudnn``; read at every convolution call.

Attributes (assign to change):
    enabled (bool): use cuDNN for conv2d on the GPU when it is usable. Default True.
    benchmark (bool): time every candidate plan once per shape and keep the fastest
        (like PyTorch's ``cudnn.benchmark``). Default False: cuDNN's heuristic choice.
    benchmark_limit (int): with ``benchmark``, the most candidate plans timed per shape, taken
        in cuDNN's heuristic order; 0 times every candidate. Default 10, as PyTorch's
        ``torch.backends.cudnn.benchmark_limit`` (dcgan's five layers timed ~27 candidates
        each, three directions, before the limit: 6.8 s of a 10 s dry run on an H200).
    deterministic (bool): only engines without the NONDETERMINISTIC note. Default False.
    allow_tf32 (bool): let float32 convolutions (and cuDNN RNNs) use TF32 tensor cores.
        Default True, as PyTorch's ``torch.backends.cudnn.allow_tf32``.
    rnn_enabled (bool): run ``nn.RNN``/``nn.LSTM``/``nn.GRU`` on the GPU through cuDNN's RNN
        API (:mod:`tinynet.ops.rnn_cudnn`) when cuDNN takes the call. Default True, as
        PyTorch, which always uses cuDNN for these layers when it can; ``False``, or the
        environment variable ``TINYNET_CUDNN_RNN=0`` (read once at import), keeps tinynet's
        own kernels (:mod:`tinynet.ops.rnn_sequence`), which are twice differentiable.
        tinynet's own name (PyTorch switches them with ``enabled`` only).

The environment variable ``TINYNET_CUDNN`` (read once at import) sets the policy:
``auto`` (default: cuDNN when the cuDNN Frontend loads, else im2col + GEMM), ``always``
(raise :class:`~tinynet.errors.BackendError` at import when cuDNN cannot be used) or
``never``.
"""
import os
import sys

from ..errors import BackendError
from ..kernels import cudnn as _impl

enabled = True
benchmark = False
benchmark_limit = 10
deterministic = False
allow_tf32 = True
rnn_enabled = os.environ.get("TINYNET_CUDNN_RNN", "1").strip().lower() not in ("0", "false", "no")

_raw_mode = os.environ.get("TINYNET_CUDNN", "auto")
mode = _raw_mode.strip().lower()
if mode not in ("auto", "always", "never"):
    raise BackendError(f"TINYNET_CUDNN: expected one of auto, always, never, got {_raw_mode!r}")


def is_available():
    """True when convolutions on the GPU can go through cuDNN here."""
    return _impl.available(sys.modules[__name__])[0]


def version():
    """cuDNN's backend version number, or None when unavailable."""
    return _impl.version()


def status_line():
    """One line saying whether convolutions use cuDNN here, and if not, why."""
    return _impl.status_line(sys.modules[__name__])


def check_always():
    """Raise BackendError when ``TINYNET_CUDNN=always`` but cuDNN cannot be used."""
    if mode == "always":
        ok, why = _impl.available(sys.modules[__name__])
        if not ok:
            raise BackendError(f"TINYNET_CUDNN=always but cuDNN cannot be used: {why}")
