"""Reverse-mode automatic differentiation (``torch.autograd``'s names).

* :mod:`.grad_mode`: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.
* :mod:`.node`: :class:`Op`, the base of tinynet's own ops (forward/backward on arrays).
* :mod:`.engine`: the tape walk, :func:`backward` and :func:`grad` (``create_graph`` for
  higher-order gradients); :mod:`.order`, the order it runs the ops in; :mod:`.endpoints`,
  its starting gradients and :func:`grad`'s targets; :mod:`.higher_order`, recorded backwards.
* :mod:`.function`: :class:`Function`, user-defined ops in PyTorch's style.
* :mod:`.gradcheck`: :func:`gradcheck` and :func:`gradgradcheck`.
* :mod:`.anomaly`: :func:`detect_anomaly` and :func:`set_detect_anomaly` (NaN hunting).
* :mod:`.functional`: ``jacobian``, ``hessian``, ``vjp``, ``jvp``, ``hvp``, ``vhp`` of a function.
"""
from .anomaly import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .engine import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                        set_grad_enabled)
from .gradcheck import gradcheck, gradgradcheck
from .node import Op
from . import functional  # noqa: E402  (torch.autograd.functional)

__all__ = ["backward", "grad", "Function", "FunctionCtx", "once_differentiable", "enable_grad", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled", "no_grad", "set_grad_enabled", "gradcheck",
           "gradgradcheck", "Op", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]
