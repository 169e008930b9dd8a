"""Learning-rate schedules (PyTorch's ``torch.optim.lr_scheduler`` names and formulas).

* ``StepLR``: ``lr = base_lr * gamma ** (epoch // step_size)``.
* ``CosineAnnealingLR`` (Loshchilov & Hutter 2017, SGDR, arXiv:1608.03983):
  ``lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2``.
* ``OneCycleLR`` (Smith & Topin 2018, arXiv:1708.07120): warm up from
  ``max_lr / div_factor`` to ``max_lr`` over ``pct_start`` of the steps, then anneal to
  ``initial_lr / final_div_factor``; momentum cycles the opposite way.
"""
import math

from .optimizer import Optimizer


class LRScheduler:
    """Base class: call :meth:`step` once per epoch (or per batch for OneCycleLR)."""

    def __init__(self, optimizer, last_epoch=-1):
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(self).__name__}: expected an Optimizer, got {type(optimizer).__name__}")
        self.optimizer = optimizer
        for g in optimizer.param_groups:
            g.setdefault("initial_lr", g["lr"])
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def get_lr(self):
        raise NotImplementedError

    def step(self):
        """Advance one epoch/step and write the new learning rates into the optimizer."""
        self.last_epoch += 1
        for g, lr in zip(self.optimizer.param_groups, self.get_lr()):
            g["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def get_last_lr(self):
        """The learning rates set by the last :meth:`step`."""
        return list(self._last_lr)

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state):
        self.__dict__.update(state)


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` (default 0.1) every ``step_size`` epochs.

    Raises:
        ValueError: ``step_size`` < 1.
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        if int(step_size) < 1:
            raise ValueError(f"StepLR: step_size must be >= 1, got {step_size}")
        self.step_size, self.gamma = int(step_size), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine decay from the base rate to ``eta_min`` (default 0) over ``T_max`` epochs.

    Raises:
        ValueError: ``T_max`` < 1.
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        if T_max < 1:
            raise ValueError(f"CosineAnnealingLR: T_max must be >= 1, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        c = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (b - self.eta_min) * c for b in self.base_lrs]


class OneCycleLR(LRScheduler):
    """The 1cycle policy; step once per batch.

    Args:
        optimizer; max_lr (float or list); total_steps, or epochs and steps_per_epoch;
        pct_start=0.3; anneal_strategy='cos' or 'linear'; cycle_momentum=True;
        base_momentum=0.85; max_momentum=0.95; div_factor=25; final_div_factor=1e4;
        three_phase=False.

    Raises:
        ValueError: total steps not given or not positive, pct_start outside [0, 1],
            unknown anneal_strategy, or stepping past ``total_steps``.
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError("OneCycleLR: give total_steps, or epochs and steps_per_epoch")
            total_steps = epochs * steps_per_epoch
        if total_steps < 1:
            raise ValueError(f"OneCycleLR: total_steps must be positive, got {total_steps}")
        if not 0 <= pct_start <= 1:
            raise ValueError(f"OneCycleLR: pct_start must be in [0, 1], got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self.total_steps, self.anneal_strategy = total_steps, anneal_strategy
        up = float(pct_start * total_steps) - 1
        if three_phase:
            self.phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (2 * up, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                           (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            self.phases = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                           (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        lrs = max_lr if isinstance(max_lr, (list, tuple)) else [max_lr] * len(optimizer.param_groups)
        self.cycle_momentum = cycle_momentum
        for g, m in zip(optimizer.param_groups, lrs):
            g["initial_lr"] = m / div_factor
            g["max_lr"], g["min_lr"] = m, m / div_factor / final_div_factor
            if cycle_momentum:
                self._use_betas = "betas" in g
                if not self._use_betas and "momentum" not in g:
                    raise ValueError("OneCycleLR: cycle_momentum needs an optimizer with momentum or betas")
                g["max_momentum"], g["base_momentum"] = max_momentum, base_momentum
                self._set_momentum(g, max_momentum)
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, g, m):
        if "betas" in g:
            g["betas"] = (m, g["betas"][1])
        else:
            g["momentum"] = m

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step >= self.total_steps:
            raise ValueError(f"OneCycleLR: tried to step {step + 1} times, more than total_steps "
                             f"{self.total_steps}")
        out = []
        for g in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr_a, lr_b, m_a, m_b) in enumerate(self.phases):
                if step <= end or i == len(self.phases) - 1:
                    pct = (step - start) / (end - start) if end > start else 1.0
                    lr = self._anneal(g[lr_a], g[lr_b], pct)
                    if self.cycle_momentum:
                        self._set_momentum(g, self._anneal(g[m_a], g[m_b], pct))
                    break
                start = end
            out.append(lr)
        return out
