"""SGD with momentum/Nesterov and Adam/AdamW, matching PyTorch's update rules.

SGD (Sutskever et al. 2013; PyTorch's form): ``g = grad + wd * p``;
``buf = g`` at the first step, then ``buf = momentum * buf + (1 - dampening) * g``;
``g = g + momentum * buf`` (Nesterov) or ``g = buf``; ``p -= lr * g``.

Adam (Kingma & Ba 2015, arXiv:1412.6980): ``m = b1 m + (1-b1) g``,
``v = b2 v + (1-b2) g^2``, ``p -= lr * (m / (1-b1^t)) / (sqrt(v / (1-b2^t)) + eps)``;
``weight_decay`` adds ``wd * p`` to ``g`` (L2). AdamW (Loshchilov & Hutter 2019,
arXiv:1711.05101) instead decays the weights directly: ``p *= 1 - lr * wd``.

On the GPU each parameter's update runs as one fused kernel (see tinynet.kernels).
"""
import math

from .. import backend
from ..autograd import no_grad
from ..autograd.node import bump_version
from ..kernels import optim_update
from .optimizer import Optimizer


def _check(name, cond, msg):
    if not cond:
        raise ValueError(f"{name}: {msg}")


class SGD(Optimizer):
    """Stochastic gradient descent.

    Args:
        params: parameters or parameter groups.
        lr (float): learning rate, default 1e-3. momentum (float): default 0.
        dampening (float): default 0. weight_decay (float): L2 factor, default 0.
        nesterov (bool): Nesterov momentum (needs momentum > 0, dampening 0). Default False.
        maximize (bool): ascend instead. Default False.

    Raises:
        ValueError: negative lr/momentum/weight_decay, or nesterov with bad settings.
    """

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, maximize=False):
        _check("SGD", lr >= 0, f"invalid learning rate {lr}")
        _check("SGD", momentum >= 0, f"invalid momentum {momentum}")
        _check("SGD", weight_decay >= 0, f"invalid weight_decay {weight_decay}")
        _check("SGD", not nesterov or (momentum > 0 and dampening == 0),
               "nesterov momentum requires momentum > 0 and dampening = 0")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov, maximize=maximize))

    @no_grad()
    def step(self):
        """Apply one update to every parameter that has a gradient."""
        for g in self.param_groups:
            lr, mom, damp, wd, nest = g["lr"], g["momentum"], g["dampening"], g["weight_decay"], g["nesterov"]
            live = [p for p in g["params"] if p.grad is not None]
            if not live:
                continue
            for p in live:
                bump_version(p)  # an in-place change: a graph that saved the old values will refuse backward
            datas, grads = [p.array for p in live], [p.grad.array for p in live]
            states = [self.state.setdefault(id(p), {}) for p in live]
            if not g["maximize"] and optim_update.usable(datas, grads):
                optim_update.sgd(datas, grads, states, lr, mom, damp, wd, nest)
                continue
            for p, grad, st in zip(datas, grads, states):
                if g["maximize"]:
                    grad = -grad
                if wd:
                    grad = grad + wd * p
                if mom:
                    buf = st.get("momentum_buffer")
                    if buf is None:
                        buf = st["momentum_buffer"] = grad.copy()
                    else:
                        buf *= mom
                        buf += (1 - damp) * grad
                    grad = grad + mom * buf if nest else buf
                p -= lr * grad


class Adam(Optimizer):
    """Adam.

    Args:
        params; lr (float, default 1e-3); betas (pair, default (0.9, 0.999));
        eps (float, default 1e-8); weight_decay (float, L2, default 0);
        amsgrad (bool, default False); maximize (bool, default False).

    Raises:
        ValueError: lr < 0, eps < 0, betas outside [0, 1), weight_decay < 0.
    """
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, maximize=False):
        name = type(self).__name__
        _check(name, lr >= 0, f"invalid learning rate {lr}")
        _check(name, eps >= 0, f"invalid eps {eps}")
        _check(name, 0 <= betas[0] < 1 and 0 <= betas[1] < 1, f"invalid betas {betas}")
        _check(name, weight_decay >= 0, f"invalid weight_decay {weight_decay}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                                      amsgrad=amsgrad, maximize=maximize))

    @no_grad()
    def step(self):
        """Apply one update to every parameter that has a gradient."""
        for g in self.param_groups:
            lr, (b1, b2), eps, wd = g["lr"], g["betas"], g["eps"], g["weight_decay"]
            live = [p for p in g["params"] if p.grad is not None]
            if not live:
                continue
            for p in live:
                bump_version(p)
            datas, grads = [p.array for p in live], [p.grad.array for p in live]
            states = []
            for p in live:
                st = self.state.get(id(p))
                if st is None:
                    xp = backend.array_module(p.array)
                    st = self.state[id(p)] = {"step": 0, "exp_avg": xp.zeros_like(p.array),
                                              "exp_avg_sq": xp.zeros_like(p.array)}
                    if g["amsgrad"]:
                        st["max_exp_avg_sq"] = xp.zeros_like(p.array)
                st["step"] += 1
                states.append(st)
            if not (g["amsgrad"] or g["maximize"]) and optim_update.usable(datas, grads):
                optim_update.adam(datas, grads, states, lr, b1, b2, eps, wd, self.decoupled)
                continue
            for p, grad, st in zip(datas, grads, states):
                xp = backend.array_module(p)
                if g["maximize"]:
                    grad = -grad
                bc1, bc2 = 1 - b1 ** st["step"], 1 - b2 ** st["step"]
                if wd and self.decoupled:
                    p *= 1 - lr * wd
                elif wd:
                    grad = grad + wd * p
                m, v = st["exp_avg"], st["exp_avg_sq"]
                m *= b1
                m += (1 - b1) * grad
                v *= b2
                v += (1 - b2) * grad * grad
                if g["amsgrad"]:
                    xp.maximum(st["max_exp_avg_sq"], v, out=st["max_exp_avg_sq"])
                    v = st["max_exp_avg_sq"]
                denom = xp.sqrt(v) / math.sqrt(bc2) + eps
                p -= (lr / bc1) * (m / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (default ``weight_decay=1e-2``); same args as Adam."""
    decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, maximize=False):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize)
