"""Margin losses of several classes or of triplets with any distance: ``MultiMarginLoss``,
``MultiLabelMarginLoss``, ``TripletMarginWithDistanceLoss``; and the sequence loss
``CTCLoss`` (the functions of :mod:`tinynet.nn.functional` of the
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


class MultiLabelMarginLoss(_Loss):
    """Multi-class multi-label hinge loss (see ``F.multilabel_margin_loss``). Args:
    size_average, reduce (deprecated), reduction ('mean'). Shape: input (N, C) or (C,) float,
    target of the same shape (class indices ended by -1); output 0-d, or (N,) with 'none'.

    Raises:
        ArgumentError: an unknown reduction.
    """

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class CTCLoss(_Loss):
    """Connectionist temporal classification loss (see ``F.ctc_loss``).

    Args:
        blank (int): the blank class. Default 0.
        reduction (str): 'mean' (default: each loss over its target length, then the batch
            mean), 'sum' or 'none'.
        zero_infinity (bool): infinite losses and their gradients become 0. Default False.

    Shape: log_probs (T, N, C) or (T, C); targets (N, S), or concatenated; input_lengths and
    target_lengths (N,); output 0-d, or (N,) with 'none'.

    Raises:
        ArgumentError: an unknown reduction. ArgumentTypeError: a non-int blank.
    """

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        if isinstance(blank, bool) or not isinstance(blank, numbers.Integral):
            raise ArgumentTypeError(f"CTCLoss: blank must be an int, got {type(blank).__name__}")
        self.blank, self.zero_infinity = int(blank), bool(zero_infinity)

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank, self.reduction,
                          self.zero_infinity)
