"""Rprop and ASGD with PyTorch's update rules, argument names, defaults and state keys (the
generic update, on NumPy and CuPy arrays alike).

* Rprop (Riedmiller and Braun, 1993, "A direct adaptive method for faster backpropagation
  learning: the RPROP algorithm"): each coordinate keeps its own step size, multiplied by
  ``etaplus`` while the gradient keeps its sign and by ``etaminus`` when it flips (then that
  coordinate's gradient counts as 0 for the step), clamped to ``step_sizes``; the parameter
  moves by ``-sign(g) * step_size``.
* ASGD (Polyak and Juditsky, 1992; the schedule of Bottou, 2012): ``p *= 1 - lambd eta``,
  ``p -= eta g``, and the average ``ax`` follows ``p`` with weight ``mu``;
  ``eta = lr / (1 + lambd lr t) ** alpha`` and ``mu = 1 / max(1, t - t0)`` after step ``t``.
"""
from .. import backend
from ..autograd import no_grad
from .optimizer import Optimizer, check, check_numbers, closure_loss, implementation_flags


class Rprop(Optimizer):
    """Resilient backpropagation (sign-based steps; full-batch training).

    Args:
        params (iterable): parameters or parameter groups.
        lr (float): the initial step size, default 1e-2.
        etas (tuple): (etaminus, etaplus), default (0.5, 1.2), with 0 < etaminus < 1 < etaplus.
        step_sizes (tuple): (min, max) step size, default (1e-6, 50).
        maximize (bool): default False.

    State per parameter: ``step``, ``prev``, ``step_size``.

    Raises:
        ArgumentError (a ValueError): lr < 0, or etas outside ``0 < etaminus < 1 < etaplus``.
        ArgumentTypeError: a non-number setting.
    """

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *, capturable=False, foreach=None,
                 maximize=False, differentiable=False):
        implementation_flags("Rprop", foreach=foreach, capturable=capturable, differentiable=differentiable)
        check_numbers("Rprop", lr=lr)
        check("Rprop", lr >= 0, f"invalid learning rate: expected lr >= 0, got {lr}")
        for name, pair in (("etas", etas), ("step_sizes", step_sizes)):
            check("Rprop", isinstance(pair, (tuple, list)) and len(pair) == 2, f"{name} must be a pair, got {pair!r}")
            check_numbers("Rprop", **{f"{name}[{i}]": v for i, v in enumerate(pair)})
        check("Rprop", 0.0 < etas[0] < 1.0 < etas[1], f"invalid eta values: expected 0 < etaminus < 1 < etaplus, "
                                                     f"got {etas}")
        super().__init__(params, dict(lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), maximize=maximize,
                                      foreach=foreach, capturable=capturable, differentiable=differentiable))

    @no_grad()
    def step(self, closure=None):
        """Apply one update to every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = closure_loss(closure)
        for g in self.param_groups:
            (eta_minus, eta_plus), (lo, hi) = g["etas"], g["step_sizes"]
            for p in self._live(g):
                w, grad = p.array, p.grad.array
                xp = backend.array_module(w)
                st = self.state.get(id(p))
                if not st:
                    st = self.state[id(p)] = {"step": 0, "prev": xp.zeros_like(w),
                                              "step_size": xp.full_like(grad, g["lr"])}
                st["step"] += 1
                if g["maximize"]:
                    grad = -grad
                sign = xp.sign(grad * st["prev"])
                factor = xp.where(sign > 0, eta_plus, xp.where(sign < 0, eta_minus, 1.0)).astype(w.dtype)
                size = st["step_size"]
                size *= factor
                xp.clip(size, lo, hi, out=size)
                grad = xp.where(sign < 0, 0, grad).astype(w.dtype)  # a flipped sign: no move this step
                w -= xp.sign(grad) * size
                st["prev"][...] = grad
        return loss


class ASGD(Optimizer):
    """Averaged stochastic gradient descent.

    Args:
        params (iterable): parameters or parameter groups.
        lr (float): default 1e-2.
        lambd (float): decay term, default 1e-4.
        alpha (float): power for the eta update, default 0.75.
        t0 (float): the step at which averaging starts, default 1e6.
        weight_decay (float): L2, default 0.
        maximize (bool): default False.

    State per parameter: ``step``, ``eta``, ``mu``, ``ax`` (the averaged parameter).

    Raises:
        ArgumentError (a ValueError): lr or weight_decay < 0.
        ArgumentTypeError: a non-number setting.
    """

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, foreach=None,
                 maximize=False, differentiable=False, capturable=False):
        implementation_flags("ASGD", foreach=foreach, capturable=capturable, differentiable=differentiable)
        check_numbers("ASGD", lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay)
        check("ASGD", lr >= 0, f"invalid learning rate: expected lr >= 0, got {lr}")
        check("ASGD", weight_decay >= 0, f"invalid weight_decay value: expected weight_decay >= 0, got {weight_decay}")
        super().__init__(params, dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                                      maximize=maximize, foreach=foreach, differentiable=differentiable,
                                      capturable=capturable))

    @no_grad()
    def step(self, closure=None):
        """Apply one update to every parameter that has a gradient; returns ``closure()``'s loss."""
        loss = closure_loss(closure)
        for g in self.param_groups:
            lr, lambd, alpha, t0, wd = g["lr"], g["lambd"], g["alpha"], g["t0"], g["weight_decay"]
            for p in self._live(g):
                w, grad = p.array, p.grad.array
                xp = backend.array_module(w)
                st = self.state.get(id(p))
                if not st:
                    st = self.state[id(p)] = {"step": 0, "eta": lr, "mu": 1.0, "ax": xp.zeros_like(w)}
                st["step"] += 1
                if g["maximize"]:
                    grad = -grad
                if wd != 0:
                    grad = grad + wd * w
                eta, mu = st["eta"], st["mu"]
                w *= 1 - lambd * eta
                w -= eta * grad
                if mu != 1:
                    st["ax"] += (w - st["ax"]) * mu
                else:
                    st["ax"][...] = w
                st["eta"] = lr / ((1 + lambd * lr * st["step"]) ** alpha)
                st["mu"] = 1 / max(1, st["step"] - t0)
        return loss
