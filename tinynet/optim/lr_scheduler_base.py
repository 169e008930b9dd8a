"""The base of the learning-rate schedulers (PyTorch's ``torch.optim.lr_scheduler.LRScheduler``).

A scheduler sets ``group["lr"]`` of each of its optimizer's parameter groups. Constructing
one stores each group's starting rate as ``group["initial_lr"]`` (``base_lrs``) and takes a
first step to epoch 0. ``step()`` then advances ``last_epoch`` by one and asks
:meth:`~LRScheduler.get_lr` for the new rates, which most schedulers compute *chainably*
from the current ``group["lr"]`` (so two schedulers on one optimizer compose), exactly as
PyTorch does; ``step(epoch)`` jumps to ``epoch`` and uses the closed form
(``_get_closed_form_lr``) where the scheduler has one. The two agree up to rounding, and
each path reproduces PyTorch's numbers to the last bit.
"""
from ..errors import ArgumentError, ArgumentTypeError
from .optimizer import Optimizer, check_numbers


def check_optimizer(name, optimizer):
    if not isinstance(optimizer, Optimizer):
        raise ArgumentTypeError(f"{name}: optimizer must be an Optimizer, got {type(optimizer).__name__}")


def format_param(name, optimizer, param, owner):
    """``param`` as one value per parameter group (a single value repeated, or a list of the
    groups' length)."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ArgumentError(f"{owner}: {name} must have one value per parameter group: expected "
                                f"{len(optimizer.param_groups)} values, got {len(param)}")
        return list(param)
    return [param] * len(optimizer.param_groups)


def group_values(optimizer, key):
    """``[group[key] for group in optimizer.param_groups]``."""
    return [g[key] for g in optimizer.param_groups]


class LRScheduler:
    """Base class of the schedulers; subclasses implement :meth:`get_lr`.

    Args:
        optimizer (Optimizer): the optimizer whose learning rates are set.
        last_epoch (int): index of the last epoch seen, default -1 (start fresh). Another
            value resumes: every group must then already hold ``initial_lr``.

    Attributes:
        base_lrs (list): the groups' ``initial_lr``. last_epoch (int): the current epoch.

    Raises:
        ArgumentTypeError (a TypeError): ``optimizer`` is not an Optimizer.
        ArgumentError (a ValueError): resuming (``last_epoch != -1``) without ``initial_lr``
            in a group (PyTorch raises a KeyError).
    """

    _is_initial = False

    def __init__(self, optimizer, last_epoch=-1):
        name = type(self).__name__
        check_optimizer(name, optimizer)
        check_numbers(name, last_epoch=last_epoch)
        self.optimizer = optimizer
        if last_epoch == -1:
            for g in optimizer.param_groups:
                g.setdefault("initial_lr", g["lr"])
        else:
            for i, g in enumerate(optimizer.param_groups):
                if "initial_lr" not in g:
                    raise ArgumentError(f"{name}: param_groups[{i}] has no 'initial_lr' while resuming with "
                                        f"last_epoch={last_epoch} (load the optimizer's state first, or use "
                                        "last_epoch=-1)")
        self.base_lrs = group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        """Reset the step count and take the constructor's step (``get_lr`` sees ``_is_initial``)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        """The learning rates for the epoch ``last_epoch`` (called by :meth:`step`)."""
        raise NotImplementedError

    def step(self, epoch=None):
        """Advance one epoch (or, deprecated in PyTorch, jump to ``epoch`` using the closed form
        where there is one) and write the new learning rates into the optimizer."""
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            values = closed() if closed is not None else self.get_lr()
        for g, lr in zip(self.optimizer.param_groups, values):
            g["lr"] = lr
        self._last_lr = group_values(self.optimizer, "lr")

    def get_last_lr(self):
        """The learning rates set by the last :meth:`step`, one per parameter group."""
        return list(self._last_lr)

    def state_dict(self):
        """Every attribute but the optimizer (restore with :meth:`load_state_dict`)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        """Restore attributes saved by :meth:`state_dict`."""
        self.__dict__.update(state_dict)


class _LRScheduler(LRScheduler):
    """PyTorch's old name of :class:`LRScheduler`."""
