"""Learning-rate schedules: PyTorch's ``torch.optim.lr_scheduler`` names, arguments and
numbers (each ``step()`` computes the new rate the way PyTorch does, chainably from the
current rate, so the printed rates are PyTorch's to the last bit; ``step(epoch)`` uses the
closed form, as PyTorch does).

Here (``b`` a group's base rate, ``e`` the epoch):

* ``LambdaLR``: ``b * lr_lambda(e)``; ``MultiplicativeLR``: ``lr *= lr_lambda(e)`` from epoch 1.
* ``StepLR``: ``b * gamma ** (e // step_size)``; ``MultiStepLR``: ``b * gamma ** (milestones passed)``.
* ``ConstantLR``: ``b * factor`` until ``total_iters``, then ``b``.
* ``LinearLR``: ``b * (start_factor + (end_factor - start_factor) * min(e, total_iters) / total_iters)``.
* ``ExponentialLR``: ``b * gamma ** e``; ``PolynomialLR``: ``b * (1 - min(e, total_iters) / total_iters) ** power``.
* ``CosineAnnealingLR`` (Loshchilov & Hutter 2017, SGDR, arXiv:1608.03983):
  ``eta_min + (b - eta_min) * (1 + cos(pi * e / T_max)) / 2``.

and, importable from here, in :mod:`.lr_scheduler_more` (``SequentialLR``,
``ChainedScheduler``, ``ReduceLROnPlateau``) and :mod:`.lr_scheduler_cyclic`
(``CosineAnnealingWarmRestarts``, ``OneCycleLR``, ``CyclicLR``).
Every scheduler has ``step()``, ``get_last_lr()``, ``last_epoch``, ``base_lrs``,
``state_dict()`` and ``load_state_dict()``.
"""
import math
import types
from bisect import bisect_right
from collections import Counter

from ..errors import ArgumentError, ArgumentTypeError
from .lr_scheduler_base import LRScheduler, _LRScheduler, check_optimizer, group_values
from .optimizer import check_numbers
from .lr_scheduler_cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from .lr_scheduler_more import ChainedScheduler, ReduceLROnPlateau, SequentialLR

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
           "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau",
           "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR", "PolynomialLR", "LRScheduler", "_LRScheduler"]


def _lambdas(name, optimizer, lr_lambda):
    check_optimizer(name, optimizer)
    if isinstance(lr_lambda, (list, tuple)):
        if len(lr_lambda) != len(optimizer.param_groups):
            raise ArgumentError(f"{name}: expected {len(optimizer.param_groups)} lr_lambdas (one per parameter "
                                f"group), got {len(lr_lambda)}")
        fns = list(lr_lambda)
    else:
        fns = [lr_lambda] * len(optimizer.param_groups)
    for fn in fns:
        if not callable(fn):
            raise ArgumentTypeError(f"{name}: lr_lambda must be a function, got {type(fn).__name__}")
    return fns


def _check_positive(name, key, value, **others):
    """``value`` (option ``key``) and ``others`` must be numbers, ``value`` above 0 (PyTorch fails
    later, dividing by zero)."""
    check_numbers(name, **{key: value}, **others)
    if not value > 0:
        raise ArgumentError(f"{name}: {key} must be positive, got {value}")


class _LambdaState:
    """The schedulers driven by ``lr_lambda`` (a function, or one per group): the lambdas
    checked at construction, and state_dict without them: a plain function is not saved
    (None), a callable object's ``__dict__`` is (PyTorch's rule).

    Raises:
        ArgumentError: a list of lambdas whose length is not the number of groups.
        ArgumentTypeError: a lambda that is not callable.
    """
    _name = ""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(self._name, optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def state_dict(self):
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict):
        state = dict(state_dict)
        fns = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for mine, saved in zip(self.lr_lambdas, fns):
            if saved is not None:
                mine.__dict__.update(saved)


class LambdaLR(_LambdaState, LRScheduler):
    """``lr = base_lr * lr_lambda(epoch)``; ``lr_lambda`` a function or one per group.

    Raises:
        ArgumentError: a list of lambdas whose length is not the number of groups.
        ArgumentTypeError: a lambda that is not callable.
    """
    _name = "LambdaLR"

    def get_lr(self):
        return [b * fn(self.last_epoch) for fn, b in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """``lr = lr * lr_lambda(epoch)`` at every step after the first; raises as :class:`LambdaLR`."""
    _name = "MultiplicativeLR"

    def get_lr(self):
        if self._is_initial:
            return group_values(self.optimizer, "lr")
        return [g["lr"] * fn(self.last_epoch) for fn, g in zip(self.lr_lambdas, self.optimizer.param_groups)]


class StepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` (default 0.1) every ``step_size`` epochs.

    Raises:
        ArgumentError: ``step_size`` <= 0 (PyTorch fails later, dividing by zero).
    """

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        _check_positive("StepLR", "step_size", step_size, gamma=gamma)
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` (default 0.1) at each epoch in ``milestones``
    (a milestone listed twice multiplies twice).

    Raises:
        ArgumentTypeError: ``milestones`` is not an iterable.
    """

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        try:
            self.milestones = Counter(milestones)
        except TypeError:
            raise ArgumentTypeError(f"MultiStepLR: milestones must be a list of epochs, "
                                    f"got {type(milestones).__name__}") from None
        check_numbers("MultiStepLR", gamma=gamma)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma ** self.milestones[self.last_epoch] for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        milestones = sorted(Counter(self.milestones).elements())  # a plain dict after tinynet.load
        return [b * self.gamma ** bisect_right(milestones, self.last_epoch) for b in self.base_lrs]


class ConstantLR(LRScheduler):
    """Multiply the learning rate by ``factor`` (default 1/3) until epoch ``total_iters`` (default 5).

    Raises:
        ArgumentError: ``factor`` outside [0, 1].
    """

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        check_numbers("ConstantLR", factor=factor, total_iters=total_iters)
        if factor > 1.0 or factor < 0:
            raise ArgumentError(f"ConstantLR: factor must be in [0, 1], got {factor}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return group_values(self.optimizer, "lr")
        return [g["lr"] * (1.0 / self.factor) for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [b * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)) for b in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale the learning rate by a factor going linearly from ``start_factor`` (default 1/3)
    to ``end_factor`` (default 1.0) over ``total_iters`` (default 5) epochs.

    Raises:
        ArgumentError: ``start_factor`` outside (0, 1] or ``end_factor`` outside [0, 1].
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1):
        check_numbers("LinearLR", start_factor=start_factor, end_factor=end_factor, total_iters=total_iters)
        if start_factor > 1.0 or start_factor <= 0:
            raise ArgumentError(f"LinearLR: start_factor must be in (0, 1], got {start_factor}")
        if end_factor > 1.0 or end_factor < 0:
            raise ArgumentError(f"LinearLR: end_factor must be in [0, 1], got {end_factor}")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return group_values(self.optimizer, "lr")
        d = self.end_factor - self.start_factor
        return [g["lr"] * (1.0 + d / (self.total_iters * self.start_factor + (self.last_epoch - 1) * d))
                for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [b * (self.start_factor + (self.end_factor - self.start_factor) * min(self.total_iters, self.last_epoch)
                     / self.total_iters) for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply the learning rate by ``gamma`` every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        check_numbers("ExponentialLR", gamma=gamma)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial:
            return group_values(self.optimizer, "lr")
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [b * self.gamma ** self.last_epoch for b in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay the learning rate polynomially (``power``, default 1.0) to 0 over ``total_iters``
    (default 5) epochs."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        check_numbers("PolynomialLR", total_iters=total_iters, power=power)
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self._is_initial or self.last_epoch > self.total_iters:
            return group_values(self.optimizer, "lr")
        decay = ((1.0 - self.last_epoch / self.total_iters)
                 / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [g["lr"] * decay for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [b * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine decay from the base rate to ``eta_min`` (default 0) over ``T_max`` epochs (and
    back up over the next ``T_max``, as PyTorch's chainable form does).

    Raises:
        ArgumentError: ``T_max`` <= 0 (PyTorch fails later, dividing by zero).
    """

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        _check_positive("CosineAnnealingLR", "T_max", T_max, eta_min=eta_min)
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        e, T, lo = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return group_values(self.optimizer, "lr")
        if self._step_count == 1 and e > 0:
            return [lo + (b - lo) * (1 + math.cos(e * math.pi / T)) / 2 for b in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:
            return [g["lr"] + (b - lo) * (1 - math.cos(math.pi / T)) / 2
                    for b, g in zip(self.base_lrs, self.optimizer.param_groups)]
        return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T)) * (g["lr"] - lo) + lo
                for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for b in self.base_lrs]
