"""Fused optimizer updates on the GPU: one element-wise kernel per parameter.

Each function returns ``True`` when it performed the update (a float CuPy parameter with
kernels enabled) and ``False`` to let the optimizer run its generic ``xp`` code.
"""
from .. import backend
from . import cuda


def _usable(p, grad):
    return backend.kernels_enabled and cuda.supported(p, grad) and p.dtype == grad.dtype and p.flags.c_contiguous


def sgd(p, grad, state, lr, momentum, dampening, weight_decay, nesterov):
    """Fused SGD step (momentum buffer in ``state["momentum_buffer"]``)."""
    if not _usable(p, grad):
        return False
    from . import elementwise
    first = False
    buf = None
    if momentum:
        buf = state.get("momentum_buffer")
        if buf is None:
            buf = state["momentum_buffer"] = backend.cupy.empty_like(p)
            first = True
    elementwise.sgd_update(p, grad, buf, lr, momentum, dampening, weight_decay, nesterov, first)
    return True


def adam(p, grad, state, lr, b1, b2, eps, weight_decay, decoupled, bc1, bc2, amsgrad):
    """Fused Adam/AdamW step (AMSGrad keeps the generic path)."""
    if amsgrad or not _usable(p, grad):
        return False
    from . import elementwise
    elementwise.adam_update(p, grad, state["exp_avg"], state["exp_avg_sq"], lr, b1, b2, eps,
                            weight_decay, decoupled, bc1, bc2)
    return True
