"""Margin losses of several classes or of triplets with any distance: ``MultiMarginLoss``,
``TripletMarginWithDistanceLoss`` (the functions of :mod:`tinynet.nn.functional` of the
same names; conventions as in :mod:`.loss`)."""
import numbers

from ...errors import ArgumentError, ArgumentTypeError
from .. import functional as F
from .distance import PairwiseDistance
from .loss import _Loss, _number, _weight


class MultiMarginLoss(_Loss):
    """Multi-class hinge loss (see ``F.multi_margin_loss``). Args: p (1 or 2, default 1),
    margin (1.0), weight (Tensor (C,), optional, a buffer), size_average, reduce,
    reduction. Shape: input (N, C) with target (N,), or (C,) with a 0-d target.

    Raises:
        ArgumentError: ``p`` not 1 or 2, an unknown reduction.
        ArgumentTypeError: a non-number margin or a non-Tensor weight.
    """

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        if isinstance(p, bool) or not isinstance(p, numbers.Integral) or p not in (1, 2):
            raise ArgumentError(f"MultiMarginLoss: only p == 1 and p == 2 supported, got {p!r}")
        self.p, self.margin = p, _number("MultiMarginLoss", "margin", margin)
        self.register_buffer("weight", _weight("MultiMarginLoss", "weight", weight, 1))

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin, weight=self.weight,
                                   reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """Triplet margin loss with any distance (see ``F.triplet_margin_with_distance_loss``).
    Args (keyword-only): distance_function (callable; default a ``PairwiseDistance()``
    child, as PyTorch), margin (> 0, default 1.0), swap (False), reduction.

    Raises:
        ArgumentError: a margin <= 0, an unknown reduction.
        ArgumentTypeError: a distance_function that is not callable.
    """

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(reduction=reduction)
        if _number("TripletMarginWithDistanceLoss", "margin", margin) <= 0:
            raise ArgumentError(f"TripletMarginWithDistanceLoss: margin must be greater than 0, got {margin}")
        if distance_function is not None and not callable(distance_function):
            raise ArgumentTypeError(f"TripletMarginWithDistanceLoss: distance_function must be callable, got "
                                    f"{type(distance_function).__name__}")
        self.distance_function = distance_function if distance_function is not None else PairwiseDistance()
        self.margin, self.swap = margin, bool(swap)

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(anchor, positive, negative,
                                                   distance_function=self.distance_function, margin=self.margin,
                                                   swap=self.swap, reduction=self.reduction)
