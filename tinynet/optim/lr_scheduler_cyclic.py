"""The cyclic learning-rate schedules (also importable from :mod:`.lr_scheduler`), as
PyTorch defines them:

* ``CosineAnnealingWarmRestarts`` (SGDR, Loshchilov & Hutter 2017, arXiv:1608.03983):
  ``eta_min + (b - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2``, restarting after ``T_i``
  epochs, ``T_i`` growing by ``T_mult``; ``step(epoch)`` takes fractional epochs.
* ``OneCycleLR`` (Smith & Topin 2018, arXiv:1708.07120): warm up from ``max_lr / div_factor``
  to ``max_lr`` over ``pct_start`` of the steps, then anneal to
  ``initial_lr / final_div_factor``; momentum (or Adam's beta1) cycles the opposite way.
* ``CyclicLR`` (Smith 2017, "Cyclical Learning Rates for Training Neural Networks",
  arXiv:1506.01186): triangles between ``base_lr`` and ``max_lr``, ``step_size_up`` steps
  up and ``step_size_down`` down, their height scaled per cycle (``triangular2``: halved
  each cycle) or per step (``exp_range``: ``gamma ** step``) or by a user ``scale_fn``;
  momentum cycles the opposite way.
"""
import math

from ..errors import ArgumentError, ArgumentTypeError
from .lr_scheduler_base import LRScheduler, check_optimizer, format_param, group_values
from .optimizer import check_numbers


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


class CyclicLR(LRScheduler):
    """Cyclical learning rate (call :meth:`step` after every batch).

    Within cycle ``c = floor(1 + t / (up + down))`` the position ``x = 1 + t / (up + down) - c``
    rises to the peak over the first ``up / (up + down)`` of the cycle and falls back; the
    learning rate is ``base_lr + (max_lr - base_lr) * h * scale``, with ``h`` the triangle's
    height in [0, 1] and ``scale = scale_fn(c)`` (``scale_mode="cycle"``) or ``scale_fn(t)``
    (``"iterations"``); momentum is ``max_momentum - (max_momentum - base_momentum) * h * scale``.

    Args:
        optimizer (Optimizer): the wrapped optimizer.
        base_lr, max_lr (float or list): the bounds, or one per group.
        step_size_up (int): steps from base to peak. Default 2000.
        step_size_down (int): steps back. Default ``step_size_up``.
        mode (str): ``"triangular"`` (scale 1), ``"triangular2"`` (``1 / 2 ** (c - 1)``) or
            ``"exp_range"`` (``gamma ** t``, per step). Default "triangular".
        gamma (float): for ``exp_range``. Default 1.0.
        scale_fn (callable): a custom scale, replacing ``mode``; with ``scale_mode``.
        scale_mode (str): ``"cycle"`` or ``"iterations"``. Default "cycle".
        cycle_momentum (bool): default True (needs ``momentum`` or ``betas``).
        base_momentum, max_momentum (float or list): default 0.8 and 0.9.
        last_epoch (int): default -1.

    ``state_dict`` leaves out a custom ``scale_fn`` (a function cannot be saved; PyTorch
    does the same), so pass it again when restoring.

    Raises:
        ArgumentError: an unknown mode without a scale_fn, a bad scale_mode, non-positive
            step sizes, per-group lists of the wrong length, or cycle_momentum with an
            optimizer that has neither momentum nor betas.
        ArgumentTypeError: a non-number rate, momentum, step size or gamma, or a scale_fn
            that is not callable.
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1):
        check_optimizer("CyclicLR", optimizer)
        check_numbers("CyclicLR", step_size_up=step_size_up, gamma=gamma, last_epoch=last_epoch,
                      **({} if step_size_down is None else {"step_size_down": step_size_down}))
        for name, v in (("base_lr", base_lr), ("max_lr", max_lr), ("base_momentum", base_momentum),
                        ("max_momentum", max_momentum)):
            check_numbers("CyclicLR", **{f"{name}[{i}]": x for i, x in enumerate(v if isinstance(v, (list, tuple))
                                                                                 else [v])})
        if scale_fn is not None and not callable(scale_fn):
            raise ArgumentTypeError(f"CyclicLR: scale_fn must be callable or None, got {type(scale_fn).__name__}")
        base_lrs = format_param("base_lr", optimizer, base_lr, "CyclicLR")
        if last_epoch == -1:
            for lr, g in zip(base_lrs, optimizer.param_groups):
                g["lr"] = lr
        self.max_lrs = format_param("max_lr", optimizer, max_lr, "CyclicLR")
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        if up <= 0 or down <= 0:
            raise ArgumentError(f"CyclicLR: step sizes must be positive, got step_size_up={step_size_up}, "
                                f"step_size_down={step_size_down}")
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ArgumentError(f"CyclicLR: mode is invalid and scale_fn is None, got mode={mode!r}")
        if scale_mode not in ("cycle", "iterations"):
            raise ArgumentError(f"CyclicLR: scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode if scale_fn is not None else ("iterations" if mode == "exp_range" else "cycle")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ArgumentError("CyclicLR: optimizer must support momentum or beta1 with `cycle_momentum` "
                                    "option enabled")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = format_param("base_momentum", optimizer, base_momentum, "CyclicLR")
            self.max_momentums = format_param("max_momentum", optimizer, max_momentum, "CyclicLR")
            if last_epoch == -1:
                for m_max, m_base, g in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    self._set_momentum(g, m_max)
                    g["max_momentum"], g["base_momentum"] = m_max, m_base
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def _set_momentum(self, g, m):
        if self.use_beta1:
            g["betas"] = (m, *g["betas"][1:])
        else:
            g["momentum"] = m

    def scale_fn(self, x):
        """The height's scale at cycle (or step) ``x``: the user's function or the mode's."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        if self.mode == "exp_range":
            return self.gamma ** x
        return 1.0

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        height = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [b + (m - b) * height * scale for b, m in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for g, b, m in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                self._set_momentum(g, m - (m - b) * height * scale)
        return lrs

    def state_dict(self):
        """Every attribute but the optimizer and a custom ``scale_fn``."""
        state = super().state_dict()
        state.pop("_scale_fn_custom", None)
        return state

