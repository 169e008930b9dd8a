"""Adadelta, Adagrad and RMSprop: per-coordinate step sizes from running gradient
statistics, with PyTorch's update rules, argument names, defaults and state keys.

Every optimizer takes ``weight_decay`` (L2: ``g = grad + wd * p``) and ``maximize``
(``g = -grad``). With ``t`` the step count:

* Adadelta (Zeiler 2012, arXiv:1212.5701): ``v = rho v + (1-rho) g^2``;
  ``d = sqrt(u + eps) / sqrt(v + eps) * g``; ``u = rho u + (1-rho) d^2``; ``p -= lr d``.
* Adagrad (Duchi et al. 2011, JMLR 12): ``s = s + g^2``;
  ``p -= lr / (1 + (t-1) lr_decay) * g / (sqrt(s) + eps)``.
* RMSprop (Hinton 2012, lecture 6e): ``v = alpha v + (1-alpha) g^2``; centered:
  ``a = alpha a + (1-alpha) g`` and ``d = sqrt(v - a^2) + eps``, else ``d = sqrt(v) + eps``;
  with momentum ``b = momentum b + g / d`` and ``p -= lr b``, else ``p -= lr g / d``.

The update runs on NumPy and CuPy arrays alike (the arrays' own module); on the GPU, Adadelta,
Adagrad and RMSprop (centered or not) run as fused multi-tensor kernels
(``tinynet.kernels.optim_update``, ``fused.cu``).
"""
from .. import backend
from ..autograd import no_grad
from ..kernels import optim_update
from .optimizer import Optimizer, check, check_numbers, implementation_flags, lerp_


def _nonneg(name, **values):
    check_numbers(name, **values)
    for k, v in values.items():
        label = {"lr": "learning rate", "eps": "epsilon value"}.get(k, f"{k} value")
        check(name, v >= 0, f"invalid {label}: expected {k} >= 0, got {v}")


class Adadelta(Optimizer):
    """Adadelta.

    Args:
        params (iterable): parameters or parameter groups.
        lr (float): scales the step, default 1.0.
        rho (float): in [0, 1], default 0.9.
        eps (float): default 1e-6.
        weight_decay (float): L2, default 0.
        maximize (bool): default False.

    State per parameter: ``step``, ``square_avg``, ``acc_delta``.

    Raises:
        ArgumentError (a ValueError): lr, eps or weight_decay < 0; rho outside [0, 1].
    """
    _capturable = True  # lr and the other options are frozen by a capture and guarded

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *, capturable=False,
                 maximize=False, differentiable=False):
        flags = implementation_flags("Adadelta", foreach=foreach, capturable=capturable, differentiable=differentiable)
        _nonneg("Adadelta", lr=lr)
        check_numbers("Adadelta", rho=rho)
        check("Adadelta", 0.0 <= rho <= 1.0, f"invalid rho value: expected a value in [0, 1], got {rho}")
        _nonneg("Adadelta", eps=eps, weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize, **flags))

    @no_grad()
    def step(self, closure=None):
        """Apply one update to every parameter that has a gradient; returns ``closure()``'s loss."""
        return self._step_groups(closure, self._state, _adadelta_update, _adadelta_fused)

    def _state(self, p, group):
        """The parameter's state (made at its first step), its step count advanced."""
        st = self.state.get(id(p))
        if not st:
            xp = backend.array_module(p.array)
            st = self.state[id(p)] = {"step": 0, "square_avg": xp.zeros_like(p.array),
                                      "acc_delta": xp.zeros_like(p.array)}
        st["step"] += 1
        return st


def _adadelta_fused(g, params, grads, states):
    return optim_update.adadelta(params, grads, states, g["lr"], g["rho"], g["eps"], g["weight_decay"], g["maximize"])


def _adadelta_update(g, w, grad, st):
    rho, eps = g["rho"], g["eps"]
    xp = backend.array_module(w)
    v, u = st["square_avg"], st["acc_delta"]
    v *= rho
    v += (1 - rho) * grad * grad
    std = xp.sqrt(v + eps)
    delta = xp.sqrt(u + eps)
    delta /= std
    delta *= grad
    u *= rho
    u += (1 - rho) * delta * delta
    w -= g["lr"] * delta


class Adagrad(Optimizer):
    """Adagrad.

    Args:
        params (iterable): parameters or parameter groups.
        lr (float): default 1e-2.
        lr_decay (float): default 0.
        weight_decay (float): L2, default 0.
        initial_accumulator_value (float): default 0; the starting ``sum`` (as in PyTorch
            the constructor's value is used for every group).
        eps (float): default 1e-10.
        maximize (bool): default False.

    State per parameter (made at construction, as in PyTorch): ``step``, ``sum``.

    Raises:
        ArgumentError (a ValueError): lr, lr_decay, weight_decay, initial_accumulator_value
            or eps < 0.
    """
    _capturable = True  # lr and the other options are frozen by a capture and guarded

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10,
                 foreach=None, *, maximize=False, differentiable=False, fused=None):
        flags = implementation_flags("Adagrad", foreach=foreach, differentiable=differentiable, fused=fused)
        _nonneg("Adagrad", lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                initial_accumulator_value=initial_accumulator_value, eps=eps)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value, maximize=maximize,
                                      **flags))
        for g in self.param_groups:
            for p in g["params"]:
                self._init_state(p)

    def _init_state(self, p):
        """Step 0 and ``sum`` filled with the constructor's ``initial_accumulator_value``."""
        xp = backend.array_module(p.array)
        st = self.state[id(p)] = {"step": 0, "sum": xp.full_like(p.array, self.defaults["initial_accumulator_value"])}
        return st

    @no_grad()
    def step(self, closure=None):
        """Apply one update to every parameter that has a gradient; returns ``closure()``'s loss."""
        return self._step_groups(closure, self._state, _adagrad_update, self._fused,
                                 host_numbers=lambda g: g["lr_decay"] != 0)  # the decayed rate changes every step

    def _state(self, p, group):
        st = self.state.get(id(p)) or self._init_state(p)
        st["step"] += 1
        return st

    def _fused(self, g, params, grads, states):
        if g["lr_decay"] != 0:
            self._graph_generic(g, per_step=True)  # the kernels take the decayed rate from the host too
        return optim_update.adagrad(params, grads, states, g["lr"], g["lr_decay"], g["eps"], g["weight_decay"],
                                    g["maximize"])


def _adagrad_update(g, w, grad, st):
    clr = g["lr"] / (1 + (st["step"] - 1) * g["lr_decay"])
    s = st["sum"]
    s += grad * grad
    w += (-clr * grad) / (backend.array_module(w).sqrt(s) + g["eps"])


class RMSprop(Optimizer):
    """RMSprop.

    Args:
        params (iterable): parameters or parameter groups.
        lr (float): default 1e-2.
        alpha (float): smoothing, default 0.99.
        eps (float): default 1e-8.
        weight_decay (float): L2, default 0.
        momentum (float): default 0.
        centered (bool): normalise by the variance estimate, default False.
        maximize (bool): default False.

    State per parameter: ``step``, ``square_avg``, ``momentum_buffer`` (momentum > 0),
    ``grad_avg`` (centered).

    Raises:
        ArgumentError (a ValueError): lr, eps, momentum, weight_decay or alpha < 0.
    """
    _capturable = True  # lr and the other options are frozen by a capture and guarded

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        flags = implementation_flags("RMSprop", capturable=capturable, foreach=foreach, differentiable=differentiable)
        _nonneg("RMSprop", lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                                      weight_decay=weight_decay, maximize=maximize, **flags))

    @no_grad()
    def step(self, closure=None):
        """Apply one update to every parameter that has a gradient; returns ``closure()``'s loss."""
        return self._step_groups(closure, self._state, _rmsprop_update, _rmsprop_fused)

    def _state(self, p, group):
        """The parameter's state (made at its first step), its step count advanced."""
        st = self.state.get(id(p))
        if not st:
            xp = backend.array_module(p.array)
            st = self.state[id(p)] = {"step": 0, "square_avg": xp.zeros_like(p.array)}
            if group["momentum"] > 0:
                st["momentum_buffer"] = xp.zeros_like(p.array)
            if group["centered"]:
                st["grad_avg"] = xp.zeros_like(p.array)
        st["step"] += 1
        return st


def _rmsprop_fused(g, params, grads, states):
    return optim_update.rmsprop(params, grads, states, g["lr"], g["alpha"], g["eps"], g["weight_decay"],
                                g["momentum"], g["maximize"], g["centered"])


def _rmsprop_update(g, w, grad, st):
    alpha, eps, mom = g["alpha"], g["eps"], g["momentum"]
    xp = backend.array_module(w)
    v = st["square_avg"]
    v *= alpha
    v += (1 - alpha) * grad * grad
    if g["centered"]:
        a = st["grad_avg"]
        lerp_(a, grad, 1 - alpha)
        avg = xp.sqrt(v + (-1 * a) * a)
    else:
        avg = xp.sqrt(v)
    avg += eps
    if mom > 0:
        buf = st["momentum_buffer"]
        buf *= mom
        buf += grad / avg
        w -= g["lr"] * buf
    else:
        w += (-g["lr"] * grad) / avg
