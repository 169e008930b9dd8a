"""NAdam, RAdam and Adamax: Adam's relatives, with PyTorch's update rules, argument names,
defaults and state keys.

With ``t`` the step count, ``m = b1 m + (1-b1) g`` and ``v = b2 v + (1-b2) g^2`` as in Adam,
``weight_decay`` L2 (``g += wd p``) or, with ``decoupled_weight_decay``, ``p *= 1 - lr wd``;
``maximize`` uses ``-grad``:

* NAdam (Dozat 2016, "Incorporating Nesterov Momentum into Adam"): momentum schedule
  ``mu_t = b1 (1 - 0.5 * 0.96^(t psi))`` (``psi`` = momentum_decay), ``P_t = prod mu``;
  ``d = sqrt(v / (1-b2^t)) + eps``;
  ``p -= lr (1-mu_t) / (1-P_t) g / d + lr mu_{t+1} / (1 - P_t mu_{t+1}) m / d``.
  ``P_t`` (``mu_product``) is kept in the default float dtype's precision like PyTorch's
  scalar state (float32 unless the default dtype is float64).
* RAdam (Liu et al. 2020, arXiv:1908.03265): ``rho_inf = 2/(1-b2) - 1``,
  ``rho_t = rho_inf - 2 t b2^t / (1-b2^t)``; when ``rho_t > 5`` the adaptive step
  ``p -= lr m/(1-b1^t) * sqrt(1-b2^t)/(sqrt(v)+eps) * r_t`` with the rectification
  ``r_t = sqrt((rho_t-4)(rho_t-2) rho_inf / ((rho_inf-4)(rho_inf-2) rho_t))``, else SGD with
  momentum ``p -= lr m/(1-b1^t)``.
* Adamax (Kingma & Ba 2015, section 7.1): ``u = max(b2 u, |g| + eps)``;
  ``p -= lr / (1-b1^t) * m / u``.

The update runs on NumPy and CuPy arrays alike (the arrays' own module); on the GPU NAdam and
RAdam run as fused multi-tensor kernels (``tinynet.kernels.optim_update``, ``fused.cu``), with
the per-step numbers (bias corrections, momentum schedule, rectification) computed here.
"""
import numpy

from .. import backend, dtypes
from ..autograd import no_grad
from ..kernels import optim_update
from .optimizer import Optimizer, check, check_betas, check_numbers, implementation_flags, lerp_


def _check_common(name, lr, eps, betas, weight_decay):
    check_numbers(name, lr=lr, eps=eps, weight_decay=weight_decay)
    check(name, lr >= 0, f"invalid learning rate: expected >= 0, got {lr}")
    check(name, eps >= 0, f"invalid epsilon value: expected >= 0, got {eps}")
    betas = check_betas(name, betas)
    check(name, weight_decay >= 0, f"invalid weight_decay value: expected >= 0, got {weight_decay}")
    return betas


def _moments_state(opt, p, second, **extra):
    """The parameter's state, made at its first step: ``step``, ``extra``, ``exp_avg``, ``second``."""
    st = opt.state.get(id(p))
    if not st:
        xp = backend.array_module(p.array)
        st = opt.state[id(p)] = {"step": 0, **extra, "exp_avg": xp.zeros_like(p.array),
                                 second: xp.zeros_like(p.array)}
    return st


def _moments(st, grad, b1, b2):
    """The generic first half of NAdam's and RAdam's update (the gradient already negated and
    decayed): ``exp_avg`` moved towards ``grad``, ``exp_avg_sq`` updated, both in place;
    returns ``(exp_avg, exp_avg_sq)``."""
    m, v = st["exp_avg"], st["exp_avg_sq"]
    lerp_(m, grad, 1 - b1)
    v *= b2
    v += (1 - b2) * grad * grad
    return m, v


class NAdam(Optimizer):
    """NAdam.

    Args:
        params (iterable): parameters or parameter groups.
        lr (float): default 2e-3.
        betas (pair): default (0.9, 0.999).
        eps (float): default 1e-8.
        weight_decay (float): default 0.
        momentum_decay (float): default 4e-3.
        decoupled_weight_decay (bool): default False; NAdamW when True.
        maximize (bool): default False.

    State per parameter: ``step``, ``mu_product``, ``exp_avg``, ``exp_avg_sq``.

    Raises:
        ArgumentError (a ValueError): lr, eps, weight_decay or momentum_decay < 0; betas outside [0, 1).
        ArgumentTypeError (a TypeError): betas not a pair.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False, differentiable=False):
        flags = implementation_flags("NAdam", foreach=foreach, capturable=capturable, differentiable=differentiable)
        betas = _check_common("NAdam", lr, eps, betas, weight_decay)
        check_numbers("NAdam", momentum_decay=momentum_decay)
        check("NAdam", momentum_decay >= 0, f"invalid momentum_decay value: expected >= 0, got {momentum_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
                                      maximize=maximize, **flags))

    @no_grad()
    def step(self, closure=None):
        """Apply one update to every parameter that has a gradient; returns ``closure()``'s loss."""
        return self._step_groups(closure, self._state, _nadam_update, _nadam_fused)

    def _state(self, p, group):
        """``(state, (bc2, cg, cm))``: the parameter's state with its step and ``mu_product``
        advanced, and this step's coefficients from the momentum schedule."""
        (b1, b2), lr, psi = group["betas"], group["lr"], group["momentum_decay"]
        st = _moments_state(self, p, "exp_avg_sq", mu_product=1.0)
        st["step"] += 1
        t = st["step"]
        mu = b1 * (1.0 - 0.5 * (0.96 ** (t * psi)))
        mu_next = b1 * (1.0 - 0.5 * (0.96 ** ((t + 1) * psi)))
        if dtypes.get_default_dtype() == numpy.float64:
            st["mu_product"] = mu_product = st["mu_product"] * mu
        else:  # a float32 multiply, as PyTorch's float32 scalar state does
            st["mu_product"] = mu_product = float(numpy.float32(st["mu_product"]) * numpy.float32(mu))
        return st, (1 - b2 ** t, -lr * (1.0 - mu) / (1.0 - mu_product), (-lr * mu_next) / (1.0 - mu_product * mu_next))


def _nadam_fused(g, params, grads, states):
    (b1, b2) = g["betas"]
    return optim_update.nadam(params, grads, [st for st, _ in states], [c for _, c in states], g["lr"], b1, b2,
                              g["eps"], g["weight_decay"], g.get("decoupled_weight_decay", False), g["maximize"])


def _nadam_update(g, w, grad, state):
    st, (bc2, cg, cm) = state
    m, v = _moments(st, grad, *g["betas"])
    denom = backend.array_module(w).sqrt(v / bc2)
    denom += g["eps"]
    w += (cg * grad) / denom
    w += (cm * m) / denom


class RAdam(Optimizer):
    """RAdam.

    Args:
        params (iterable): parameters or parameter groups.
        lr (float): default 1e-3.
        betas (pair): default (0.9, 0.999).
        eps (float): default 1e-8.
        weight_decay (float): default 0.
        decoupled_weight_decay (bool): default False; RAdamW when True.
        maximize (bool): default False.

    State per parameter: ``step``, ``exp_avg``, ``exp_avg_sq``.

    Raises:
        ArgumentError (a ValueError): lr, eps or weight_decay < 0; betas outside [0, 1).
        ArgumentTypeError (a TypeError): betas not a pair.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False, capturable=False, differentiable=False):
        flags = implementation_flags("RAdam", foreach=foreach, capturable=capturable, differentiable=differentiable)
        betas = _check_common("RAdam", lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      maximize=maximize, decoupled_weight_decay=decoupled_weight_decay, **flags))

    @no_grad()
    def step(self, closure=None):
        """Apply one update to every parameter that has a gradient; returns ``closure()``'s loss."""
        return self._step_groups(closure, self._state, _radam_update, _radam_fused)

    def _state(self, p, group):
        """``(state, (bc1, sqrt(bc2), rect))``: the parameter's state with its step advanced, and
        this step's numbers."""
        st = _moments_state(self, p, "exp_avg_sq")
        st["step"] += 1
        return st, _radam_coefficients(st["step"], *group["betas"])


def _radam_fused(g, params, grads, states):
    (b1, b2) = g["betas"]
    return optim_update.radam(params, grads, [st for st, _ in states], [c for _, c in states], g["lr"], b1, b2,
                              g["eps"], g["weight_decay"], g.get("decoupled_weight_decay", False), g["maximize"])


def _radam_update(g, w, grad, state):
    st, (bc1, sqrt_bc2, rect) = state
    m, v = _moments(st, grad, *g["betas"])
    corrected = m / bc1
    if rect:
        w -= corrected * g["lr"] * (sqrt_bc2 / (backend.array_module(w).sqrt(v) + g["eps"])) * rect
    else:
        w -= corrected * g["lr"]


def _radam_coefficients(t, b1, b2):
    """RAdam's per-step numbers at step ``t``: ``(1 - b1^t, sqrt(1 - b2^t), r_t)``, with
    ``r_t`` 0 while ``rho_t <= 5`` (the un-rectified steps)."""
    bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
    rho_inf = 2 / (1 - b2) - 1
    rho_t = rho_inf - 2 * t * (b2 ** t) / bc2
    if rho_t <= 5.0:
        return bc1, bc2 ** 0.5, 0.0
    return bc1, bc2 ** 0.5, ((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5


class Adamax(Optimizer):
    """Adamax (Adam with the infinity norm).

    Args:
        params (iterable): parameters or parameter groups.
        lr (float): default 2e-3.
        betas (pair): default (0.9, 0.999).
        eps (float): default 1e-8.
        weight_decay (float): L2, default 0.
        maximize (bool): default False.

    State per parameter: ``step``, ``exp_avg``, ``exp_inf``.

    Raises:
        ArgumentError (a ValueError): lr, eps or weight_decay < 0; betas outside [0, 1).
        ArgumentTypeError (a TypeError): betas not a pair.
    """

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, foreach=None, *, maximize=False,
                 differentiable=False, capturable=False):
        flags = implementation_flags("Adamax", foreach=foreach, differentiable=differentiable, capturable=capturable)
        betas = _check_common("Adamax", lr, eps, betas, weight_decay)
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, maximize=maximize,
                                      **flags))

    @no_grad()
    def step(self, closure=None):
        """Apply one update to every parameter that has a gradient; returns ``closure()``'s loss."""
        return self._step_groups(closure, self._state, _adamax_update)

    def _state(self, p, group):
        st = _moments_state(self, p, "exp_inf")
        st["step"] += 1
        return st


def _adamax_update(g, w, grad, st):
    (b1, b2), eps = g["betas"], g["eps"]
    xp = backend.array_module(w)
    m = st["exp_avg"]
    lerp_(m, grad, 1 - b1)
    u = st["exp_inf"]
    u *= b2
    xp.maximum(u, xp.abs(grad) + eps, out=u)
    clr = g["lr"] / (1 - b1 ** st["step"])
    w += (-clr * m) / u
