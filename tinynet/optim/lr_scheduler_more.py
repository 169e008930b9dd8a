"""The composite and stateful schedulers (also importable from :mod:`.lr_scheduler`), as
PyTorch defines them:

* ``SequentialLR``: run ``schedulers[i]`` between ``milestones[i-1]`` and ``milestones[i]``;
  at each milestone the next scheduler starts from its epoch 0 (closed form).
* ``ChainedScheduler``: step every scheduler at each step (their factors compose).
* ``ReduceLROnPlateau``: ``lr = max(lr * factor, min_lr)`` once the metric has not improved
  (by ``threshold``, relative or absolute) for more than ``patience`` steps; then wait
  ``cooldown`` steps.

The cyclic schedules (``CosineAnnealingWarmRestarts``, ``OneCycleLR``) are in
:mod:`.lr_scheduler_cyclic`.
"""
import math
from bisect import bisect_right

from ..errors import ArgumentError, ArgumentTypeError
from .lr_scheduler_base import LRScheduler, check_optimizer, format_param, group_values
from .optimizer import check_numbers


def _check_children(name, optimizer, schedulers):
    if not isinstance(schedulers, (list, tuple)):
        raise ArgumentTypeError(f"{name}: schedulers must be a list of schedulers, got {type(schedulers).__name__}")
    if len(schedulers) < 1:
        raise ArgumentError(f"{name}: expected at least one scheduler, got none")
    for i, s in enumerate(schedulers):
        if not hasattr(s, "optimizer"):
            raise ArgumentTypeError(f"{name}: schedulers[{i}] must be a scheduler (with an optimizer), "
                                    f"got {type(s).__name__}")
        if isinstance(s, ReduceLROnPlateau):
            raise ArgumentError(f"{name}: does not support ReduceLROnPlateau (its step needs a metric), "
                                f"got one at index {i}")
        if s.optimizer is not optimizer:
            raise ArgumentError(f"{name}: all schedulers must belong to the same optimizer; schedulers[{i}] "
                                f"({type(s).__name__}) has another one")


class _Composite:
    """state_dict/load_state_dict holding the children's state dicts under ``_schedulers``."""

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        children = state.pop("_schedulers")
        self.__dict__.update(state)
        for s, saved in zip(self._schedulers, children):
            s.load_state_dict(saved)


class SequentialLR(_Composite, LRScheduler):
    """Hand over from one scheduler to the next at each of ``milestones``.

    Raises:
        ArgumentError: no schedulers, ``len(milestones) != len(schedulers) - 1``, a
            ReduceLROnPlateau, or a scheduler of another optimizer.
        ArgumentTypeError: ``optimizer`` is not an Optimizer, or a scheduler is not one.
    """

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        check_optimizer("SequentialLR", optimizer)
        _check_children("SequentialLR", optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ArgumentError(f"SequentialLR: expected {len(schedulers) - 1} milestones (one fewer than the "
                                f"schedulers), got {len(milestones)}")
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for g in optimizer.param_groups:  # undo the children's first steps
            g["lr"] = g["initial_lr"]
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = self._schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None):
        """Step back ``last_epoch`` of every (nested) child, undoing its constructor's step."""
        s = self if sched is None else sched
        if hasattr(s, "_schedulers"):
            for child in s._schedulers:
                self.recursive_undo(child)
        elif hasattr(s, "last_epoch"):
            s.last_epoch -= 1

    def step(self):
        """Advance one epoch with the scheduler whose interval holds it."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        s = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            s._update_lr(0)
        else:
            s.step()
        self._last_lr = s.get_last_lr()


class ChainedScheduler(_Composite, LRScheduler):
    """Step all ``schedulers`` at once (``optimizer`` defaults to theirs).

    Raises:
        ArgumentError: no schedulers, a ReduceLROnPlateau, or schedulers of different optimizers.
        ArgumentTypeError: a scheduler that is not one.
    """

    def __init__(self, schedulers, optimizer=None):
        if not isinstance(schedulers, (list, tuple)):
            raise ArgumentTypeError(f"ChainedScheduler: schedulers must be a list of schedulers, got "
                                    f"{type(schedulers).__name__}")
        if len(schedulers) < 1:
            raise ArgumentError("ChainedScheduler: expected at least one scheduler, got none")
        optimizer = optimizer if optimizer is not None else getattr(schedulers[0], "optimizer", None)
        _check_children("ChainedScheduler", optimizer, schedulers)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = group_values(optimizer, "lr")

    def step(self):
        """Step every scheduler, in order."""
        for s in self._schedulers:
            s.step()
        self._last_lr = group_values(self.optimizer, "lr")


class ReduceLROnPlateau(LRScheduler):
    """Reduce the learning rate when a metric stops improving; call ``step(metric)``.

    Args:
        optimizer (Optimizer): the wrapped optimizer.
        mode (str): 'min' (default) or 'max'.
        factor (float): default 0.1, below 1.
        patience (int): steps without improvement tolerated, default 10.
        threshold (float): default 1e-4.
        threshold_mode (str): 'rel' (default): better than ``best * (1 -+ threshold)``,
            or 'abs': ``best -+ threshold``.
        cooldown (int): default 0.
        min_lr (float or list): one number or one per group, default 0.
        eps (float): smallest change applied, default 1e-8.

    Raises:
        ArgumentError: ``factor`` >= 1, an unknown mode or threshold_mode, or a ``min_lr``
            list whose length is not the number of groups.
        ArgumentTypeError: ``optimizer`` is not an Optimizer.
    """

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8):
        check_numbers("ReduceLROnPlateau", factor=factor, patience=patience, threshold=threshold, cooldown=cooldown,
                      eps=eps)
        if factor >= 1.0:
            raise ArgumentError(f"ReduceLROnPlateau: factor must be < 1.0, got {factor}")
        self.factor = factor
        check_optimizer("ReduceLROnPlateau", optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            self.default_min_lr = None
            self.min_lrs = format_param("min_lr", optimizer, min_lr, "ReduceLROnPlateau")
        else:
            check_numbers("ReduceLROnPlateau", min_lr=min_lr)
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience, self.cooldown, self.eps = patience, cooldown, eps
        self.last_epoch = 0
        self._last_lr = group_values(optimizer, "lr")
        self._init_is_better(mode, threshold, threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        """Record ``metrics`` (a number or a one-element tensor) and reduce the rates if it has
        not improved for more than ``patience`` steps."""
        current = float(metrics)
        self.last_epoch = epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = group_values(self.optimizer, "lr")

    def _reduce_lr(self, epoch):
        if len(self.optimizer.param_groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise ArgumentError(f"ReduceLROnPlateau: the optimizer has {len(self.optimizer.param_groups)} "
                                    f"parameter groups but min_lrs has {len(self.min_lrs)} values (a group was "
                                    "added); set min_lrs to match")
            self.min_lrs = [self.default_min_lr] * len(self.optimizer.param_groups)
        for i, g in enumerate(self.optimizer.param_groups):
            old = float(g["lr"])
            new = max(old * self.factor, self.min_lrs[i])
            if old - new > self.eps:
                g["lr"] = new

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in ("min", "max"):
            raise ArgumentError(f"ReduceLROnPlateau: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ArgumentError(f"ReduceLROnPlateau: threshold_mode must be 'rel' or 'abs', got {threshold_mode!r}")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)
