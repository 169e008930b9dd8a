"""The cyclic learning-rate schedules (also importable from :mod:`.lr_scheduler`), as
PyTorch defines them:

* ``CosineAnnealingWarmRestarts`` (SGDR, Loshchilov & Hutter 2017, arXiv:1608.03983):
  ``eta_min + (b - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``, restarting after ``T_i``
  epochs, ``T_i`` growing by ``T_mult``; ``step(epoch)`` takes fractional epochs.
* ``OneCycleLR`` (Smith & Topin 2018, arXiv:1708.07120): warm up from ``max_lr / div_factor``
  to ``max_lr`` over ``pct_start`` of the steps, then anneal to
  ``initial_lr / final_div_factor``; momentum (or Adam's beta1) cycles the opposite way.
"""
import math

from ..errors import ArgumentError
from .lr_scheduler_base import LRScheduler, check_optimizer, format_param, group_values


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing restarted every ``T_i`` epochs: ``T_0`` first, then times ``T_mult``.

    Args:
        optimizer (Optimizer): the wrapped optimizer.
        T_0 (int): steps of the first restart period, > 0.
        T_mult (int): >= 1, default 1.
        eta_min (float): default 0.
        last_epoch (int): default -1.

    ``step(epoch)`` accepts fractional epochs (e.g. ``epoch + i / iters`` per batch).

    Raises:
        ArgumentError: ``T_0`` not a positive int, ``T_mult`` not an int >= 1, ``eta_min``
            not a number (all ValueErrors in PyTorch), or a negative epoch.
    """

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        if not isinstance(T_0, int) or T_0 <= 0:
            raise ArgumentError(f"CosineAnnealingWarmRestarts: expected a positive integer T_0, got {T_0!r}")
        if not isinstance(T_mult, int) or T_mult < 1:
            raise ArgumentError(f"CosineAnnealingWarmRestarts: expected an integer T_mult >= 1, got {T_mult!r}")
        if not isinstance(eta_min, (float, int)):
            raise ArgumentError(f"CosineAnnealingWarmRestarts: expected a float or int eta_min, "
                                f"got {type(eta_min).__name__}")
        self.T_0 = self.T_i = T_0
        self.T_mult, self.eta_min = T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for b in self.base_lrs]

    def step(self, epoch=None):
        """Advance one epoch, or go to (fractional) ``epoch``."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ArgumentError(f"CosineAnnealingWarmRestarts: expected a non-negative epoch, got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        for g, lr in zip(self.optimizer.param_groups, self.get_lr()):
            g["lr"] = lr
        self._last_lr = group_values(self.optimizer, "lr")


class OneCycleLR(LRScheduler):
    """The 1cycle policy; step once per batch.

    Args:
        optimizer (Optimizer): the wrapped optimizer.
        max_lr (float or list): one number or one per group.
        total_steps (int): or give ``epochs`` and ``steps_per_epoch``.
        epochs (int): with ``steps_per_epoch``, instead of ``total_steps``.
        steps_per_epoch (int): with ``epochs``.
        pct_start (float): default 0.3.
        anneal_strategy (str): 'cos' (default) or 'linear'.
        cycle_momentum (bool): default True.
        base_momentum (float or list): default 0.85, or one per group.
        max_momentum (float or list): default 0.95, or one per group.
        div_factor (float): default 25.
        final_div_factor (float): default 1e4.
        three_phase (bool): default False.
        last_epoch (int): default -1.

    Raises:
        ArgumentError: total steps not given or not a positive int, pct_start outside
            [0, 1], unknown anneal_strategy, cycle_momentum with an optimizer without
            momentum or betas, per-group lists of the wrong length, or stepping to
            ``total_steps`` (PyTorch allows that one extra step, past the schedule's end).
    """

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85,
                 max_momentum=0.95, div_factor=25.0, final_div_factor=1e4, three_phase=False,
                 last_epoch=-1):
        check_optimizer("OneCycleLR", optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if not isinstance(total_steps, int) or total_steps <= 0:
                raise ArgumentError(f"OneCycleLR: expected a positive integer total_steps, got {total_steps!r}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            for k, v in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
                if not isinstance(v, int) or v <= 0:
                    raise ArgumentError(f"OneCycleLR: expected a positive integer {k}, got {v!r}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ArgumentError("OneCycleLR: give total_steps, or epochs and steps_per_epoch")
        if not isinstance(pct_start, (int, float)) or not 0 <= pct_start <= 1:
            raise ArgumentError(f"OneCycleLR: expected pct_start in [0, 1], got {pct_start!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ArgumentError(f"OneCycleLR: anneal_strategy must be 'cos' or 'linear', got {anneal_strategy!r}")
        self._anneal_func_type = anneal_strategy
        up = float(pct_start * self.total_steps) - 1
        phase = ("end_step", "start_lr", "end_lr", "start_momentum", "end_momentum")
        if three_phase:
            rows = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                    (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                     "max_momentum"),
                    (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]
        else:
            rows = [(up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                    (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
        self._schedule_phases = [dict(zip(phase, r)) for r in rows]
        max_lrs = format_param("max_lr", optimizer, max_lr, "OneCycleLR")
        if last_epoch == -1:
            for m, g in zip(max_lrs, optimizer.param_groups):
                g["initial_lr"] = m / div_factor
                g["max_lr"] = m
                g["min_lr"] = g["initial_lr"] / final_div_factor
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ArgumentError(f"OneCycleLR: cycle_momentum needs an optimizer with momentum or betas, "
                                    f"got {type(optimizer).__name__}")
            self.use_beta1 = "betas" in optimizer.defaults
            max_ms = format_param("max_momentum", optimizer, max_momentum, "OneCycleLR")
            base_ms = format_param("base_momentum", optimizer, base_momentum, "OneCycleLR")
            if last_epoch == -1:
                for m_max, m_base, g in zip(max_ms, base_ms, optimizer.param_groups):
                    self._set_momentum(g, m_max)
                    g["max_momentum"], g["base_momentum"] = m_max, m_base
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, g, m):
        if self.use_beta1:
            g["betas"] = (m, *g["betas"][1:])
        else:
            g["momentum"] = m

    def _anneal_func(self, start, end, pct):
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self):
        step = self.last_epoch
        if step >= self.total_steps:
            raise ArgumentError(f"OneCycleLR: tried to step {step + 1} times, more than total_steps "
                                f"{self.total_steps}")
        lrs = []
        for g in self.optimizer.param_groups:
            start = 0.0
            for i, ph in enumerate(self._schedule_phases):
                end = ph["end_step"]
                if step <= end or i == len(self._schedule_phases) - 1:
                    pct = (step - start) / (end - start) if end != start else 1.0
                    lrs.append(self._anneal_func(g[ph["start_lr"]], g[ph["end_lr"]], pct))
                    if self.cycle_momentum:
                        self._set_momentum(g, self._anneal_func(g[ph["start_momentum"]], g[ph["end_momentum"]], pct))
                    break
                start = ph["end_step"]
        return lrs
