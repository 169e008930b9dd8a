"""SGD with momentum/Nesterov and Adam/AdamW, matching PyTorch's update rules.

SGD (Sutskever et al. 2013; PyTorch's form): ``g = grad + wd * p``;
``buf = g`` at the first step, then ``buf = momentum * buf + (1 - dampening) * g``;
``g = g + momentum * buf`` (Nesterov) or ``g = buf``; ``p -= lr * g``.

Adam (Kingma & Ba 2015, arXiv:1412.6980): ``m = b1 m + (1-b1) g``,
``v = b2 v + (1-b2) g^2``, ``p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)``;
``amsgrad`` (Reddi et al. 2018) divides by the running maximum of ``v`` instead;
``weight_decay`` adds ``wd * p`` to ``g`` (L2). AdamW (Loshchilov & Hutter 2019,
arXiv:1711.05101), or Adam with ``decoupled_weight_decay=True``, instead decays the
weights directly: ``p *= 1 - lr * wd``. ``maximize`` ascends (uses ``-grad``).

The generic update runs on NumPy and CuPy arrays in PyTorch's order of operations; on the
GPU the common cases run as fused multi-tensor kernels (``tinynet.kernels.optim_update``).
"""
from .. import backend
from ..autograd import no_grad
from ..kernels import optim_update
from .optimizer import Optimizer, check, check_betas, check_numbers, implementation_flags, lerp_


class SGD(Optimizer):
    """Stochastic gradient descent.

    Args:
        params: parameters or parameter groups.
        lr (float): learning rate, default 1e-3. momentum (float): default 0.
        dampening (float): default 0. weight_decay (float): L2 factor, default 0.
        nesterov (bool): Nesterov momentum (needs momentum > 0, dampening 0). Default False.
        maximize (bool): ascend instead. Default False.

    State per parameter (with momentum): ``momentum_buffer``.

    Raises:
        ArgumentError (a ValueError): negative lr/momentum/weight_decay, or nesterov with bad settings.
    """
    _capturable = True
    _step_supports_amp_scaling = True  # a GradScaler step can be captured (tinynet/optim/amp_scaling.py)
    _graph_live_options = ("lr", "momentum", "dampening", "weight_decay")

    def _needs_state(self, group):
        return group["momentum"] != 0

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False, fused=None):
        flags = implementation_flags("SGD", foreach=foreach, differentiable=differentiable, fused=fused)
        check_numbers("SGD", lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay)
        check("SGD", lr >= 0, f"invalid learning rate: expected >= 0, got {lr}")
        check("SGD", momentum >= 0, f"invalid momentum value: expected >= 0, got {momentum}")
        check("SGD", weight_decay >= 0, f"invalid weight_decay value: expected >= 0, got {weight_decay}")
        check("SGD", not nesterov or (momentum > 0 and dampening == 0),
              f"nesterov momentum requires a momentum and zero dampening, got momentum={momentum}, "
              f"dampening={dampening}")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov, maximize=maximize, **flags))

    @no_grad()
    def step(self, closure=None):
        """Apply one update to every parameter that has a gradient; returns ``closure()``'s loss."""
        return self._step_groups(closure, self._state, _sgd_update, _sgd_fused)

    def _state(self, p, group):
        """PyTorch keeps state (the momentum buffer) only when there is momentum."""
        return self.state.setdefault(id(p), {}) if group["momentum"] != 0 else {}


def _sgd_fused(g, params, grads, states, found_inf=None):
    return optim_update.sgd(params, grads, states, g["lr"], g["momentum"], g["dampening"], g["weight_decay"],
                            g["nesterov"], group=g, maximize=g["maximize"], found_inf=found_inf)


def _sgd_update(g, p, grad, st):
    """The generic SGD step of one parameter array (the gradient already negated and decayed)."""
    mom = g["momentum"]
    if mom != 0:
        buf = st.get("momentum_buffer")
        if buf is None:
            buf = st["momentum_buffer"] = grad.copy()
        else:
            buf *= mom
            buf += (1 - g["dampening"]) * grad
        grad = grad + mom * buf if g["nesterov"] else buf
    p -= g["lr"] * grad


class Adam(Optimizer):
    """Adam.

    Args:
        params (iterable): parameters or parameter groups.
        lr (float): default 1e-3.
        betas (pair): default (0.9, 0.999).
        eps (float): default 1e-8.
        weight_decay (float): default 0; L2, or decoupled as in AdamW when
            ``decoupled_weight_decay``.
        amsgrad (bool): default False.
        maximize (bool): default False.
        decoupled_weight_decay (bool): default False.

    State per parameter: ``step``, ``exp_avg``, ``exp_avg_sq`` (and ``max_exp_avg_sq`` with amsgrad).

    Raises:
        ArgumentError (a ValueError): lr < 0, eps < 0, betas outside [0, 1), weight_decay < 0.
        ArgumentTypeError (a TypeError): betas not a pair.
    """
    _capturable = True
    _step_supports_amp_scaling = True
    _graph_live_options = ("lr", "betas", "eps", "weight_decay")

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False, differentiable=False, fused=None,
                 decoupled_weight_decay=False):
        name = type(self).__name__
        flags = implementation_flags(name, foreach=foreach, capturable=capturable, differentiable=differentiable,
                                     fused=fused)
        check_numbers(name, lr=lr, eps=eps, weight_decay=weight_decay)
        check(name, lr >= 0, f"invalid learning rate: expected >= 0, got {lr}")
        check(name, eps >= 0, f"invalid epsilon value: expected >= 0, got {eps}")
        betas = check_betas(name, betas)
        check(name, weight_decay >= 0, f"invalid weight_decay value: expected >= 0, got {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize,
                                      decoupled_weight_decay=decoupled_weight_decay, **flags))

    @no_grad()
    def step(self, closure=None):
        """Apply one update to every parameter that has a gradient; returns ``closure()``'s loss."""
        return self._step_groups(closure, self._state, _adam_update, _adam_fused, host_numbers=lambda g: True)

    def _state(self, p, group):
        """The parameter's state (made at its first step), its step count advanced."""
        st = self.state.get(id(p))
        if not st:
            xp = backend.array_module(p.array)
            st = self.state[id(p)] = {"step": 0, "exp_avg": xp.zeros_like(p.array),
                                      "exp_avg_sq": xp.zeros_like(p.array)}
            if group["amsgrad"]:
                st["max_exp_avg_sq"] = xp.zeros_like(p.array)
        st["step"] += 1
        return st


def _adam_fused(g, params, grads, states, found_inf=None):
    if g["amsgrad"] and not all("max_exp_avg_sq" in st for st in states):
        return False  # amsgrad switched on after the first step: the generic code raises, as PyTorch's
    b1, b2 = g["betas"]
    return optim_update.adam(params, grads, states, g["lr"], b1, b2, g["eps"], g["weight_decay"],
                             g["decoupled_weight_decay"], group=g, amsgrad=g["amsgrad"], maximize=g["maximize"],
                             found_inf=found_inf)


def _adam_update(g, p, grad, st):
    """The generic Adam step of one parameter array (the gradient already negated and decayed)."""
    xp = backend.array_module(p)
    (b1, b2), lr, eps = g["betas"], g["lr"], g["eps"]
    m, v = st["exp_avg"], st["exp_avg_sq"]
    lerp_(m, grad, 1 - b1)
    v *= b2
    v += (1 - b2) * grad * grad
    bc1, bc2 = 1 - b1 ** st["step"], 1 - b2 ** st["step"]
    if g["amsgrad"]:
        xp.maximum(st["max_exp_avg_sq"], v, out=st["max_exp_avg_sq"])
        v = st["max_exp_avg_sq"]
    denom = xp.sqrt(v) / bc2 ** 0.5 + eps
    p += (-(lr / bc1) * m) / denom


class AdamW(Adam):
    """Adam with decoupled weight decay (default ``weight_decay=1e-2``); same args as Adam."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize, foreach=foreach,
                         capturable=capturable, differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
