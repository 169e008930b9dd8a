"""Loss layers (PyTorch's ``torch.nn`` losses): each holds its settings and calls the
function of :mod:`tinynet.nn.functional` of the same name.

Class weights (``weight``, ``pos_weight``) are registered as buffers, as in PyTorch, so
``.to(device)``/``.double()`` move and cast them and ``state_dict()`` holds them (a
``None`` weight is not in the state dict). Settings are checked when the layer is built
(PyTorch checks most of them only when the loss is computed); the inputs when it is called.
``size_average``/``reduce`` are PyTorch's deprecated spelling of ``reduction`` and decide it
when given (with PyTorch's deprecation warning).

``repr`` shows the settings that differ from their defaults and the shapes of the weights,
e.g. ``CrossEntropyLoss(reduction='sum', label_smoothing=0.1, weight=<tensor (3,)>)``;
PyTorch's loss layers print only ``CrossEntropyLoss()``.
"""
from typing import Any
import warnings
import numbers

from ...errors import ArgumentError, ArgumentTypeError, ShapeError
from ...ops.loss import reduction_of
from ...ops.util import check_int
from ...tensor import Tensor
from .. import functional as F
from .module import Module


def _number(layer, name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ArgumentTypeError(f"{layer}: {name} must be a number, got {type(v).__name__}")
    return v


def _weight(layer, name, w, ndim=None):
    """``w`` (None or a Tensor, of ``ndim`` dimensions if given)."""
    if w is None:
        return None
    if not isinstance(w, Tensor):
        raise ArgumentTypeError(f"{layer}: {name} must be a Tensor or None, got {type(w).__name__}")
    if ndim is not None and w.ndim != ndim:
        raise ShapeError(f"{layer}: {name} must be a {ndim}-D tensor (one weight per class), got shape {w.shape}")
    return w


class _Loss(Module):
    """Base of the loss layers: ``reduction`` (or the legacy ``size_average``/``reduce``)."""
    _reductions: tuple[str, ...] = ("mean", "sum", "none")

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = reduction_of(type(self).__name__, reduction, size_average, reduce, self._reductions)

    def extra_repr(self):
        return ""  # PyTorch prints losses without their settings: CrossEntropyLoss()


class _WeightedLoss(_Loss):
    """A loss with an optional ``weight`` buffer."""
    _weight_ndim: Any = None

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", _weight(type(self).__name__, "weight", weight, self._weight_ndim))


class _ClassLoss(_WeightedLoss):
    """NLL and cross-entropy: a (C,) class ``weight`` and ``ignore_index``."""
    _weight_ndim = 1

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = check_int(type(self).__name__, "ignore_index", ignore_index)


class NLLLoss(_ClassLoss):
    """Negative log-likelihood of class indices under log-probabilities (see ``F.nll_loss``).

    Args:
        weight (Tensor, optional): (C,) class weights (a buffer). size_average, reduce:
            deprecated. ignore_index (int): targets to skip. Default -100.
        reduction (str): ``"mean"`` (default; weighted mean), ``"sum"`` or ``"none"``.

    Shape: input (N, C) or (N, C, d1, ...) float; target (N,) / (N, d1, ...) int64; output
    scalar, or the target's shape for ``"none"``.

    Raises:
        ArgumentError: unknown reduction. ShapeError: weight is not 1-D.
        ArgumentTypeError: weight is not a Tensor, ignore_index not an int.
    """

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """PyTorch's deprecated name of :class:`NLLLoss` for (N, C, H, W) input (it warns, as
    PyTorch's does): the same arguments and forward."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        warnings.warn("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a drop-in replacement.",
                      FutureWarning, stacklevel=2)
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


class CrossEntropyLoss(_ClassLoss):
    """Softmax cross-entropy of logits and class indices or class probabilities, with
    optional label smoothing (see ``F.cross_entropy``).

    Args:
        weight (Tensor, optional): (C,) class weights (a buffer). size_average, reduce:
            deprecated. ignore_index (int): targets to skip. Default -100.
        reduction (str): ``"mean"`` (default), ``"sum"`` or ``"none"``.
        label_smoothing (float): in [0, 1]; default 0.

    Shape: input (N, C) or (N, C, d1, ...) or (C,); target int64 (N,) / (N, d1, ...) or
    float of the input's shape; output scalar, or per sample for ``"none"``.

    Raises:
        ArgumentError: unknown reduction or ``label_smoothing`` outside [0, 1].
        ShapeError: weight is not 1-D. ArgumentTypeError: a setting of the wrong type.
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                 label_smoothing=0.0):
        super().__init__(weight, size_average, ignore_index, reduce, reduction)
        if not 0.0 <= _number("CrossEntropyLoss", "label_smoothing", label_smoothing) <= 1.0:
            raise ArgumentError(f"CrossEntropyLoss: label_smoothing must be in [0, 1], got {label_smoothing}")
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


class MSELoss(_Loss):
    """Mean squared error ``(input - target)^2`` (see ``F.mse_loss``). Args: size_average,
    reduce (deprecated), reduction (``"mean"``, ``"sum"``, ``"none"``). Shape: input and
    target of one shape (tinynet does not broadcast them); output scalar or that shape.
    Raises: ArgumentError for an unknown reduction."""

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error ``|input - target|`` (see ``F.l1_loss``). Args and shapes as
    :class:`MSELoss`."""

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Smooth L1: quadratic below ``beta``, linear above (see ``F.smooth_l1_loss``).

    Args: size_average, reduce (deprecated), reduction (default ``"mean"``), beta (float,
    >= 0, default 1.0). Shape: as :class:`MSELoss`.
    Raises: ArgumentError for ``beta < 0`` or an unknown reduction.
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        if _number("SmoothL1Loss", "beta", beta) < 0:
            raise ArgumentError(f"SmoothL1Loss: does not support negative values for beta, got {beta}")
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Huber loss: ``0.5 d^2`` below ``delta``, ``delta (|d| - 0.5 delta)`` above (see
    ``F.huber_loss``).

    Args: reduction (default ``"mean"``), delta (float, > 0, default 1.0). Shape: as
    :class:`MSELoss`. Raises: ArgumentError for ``delta <= 0`` or an unknown reduction.
    """

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        if not _number("HuberLoss", "delta", delta) > 0:
            raise ArgumentError(f"HuberLoss: does not support non-positive values for delta, got {delta}")
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities, logs clamped at -100 (see
    ``F.binary_cross_entropy``).

    Args: weight (Tensor, optional; broadcasting to the input; a buffer), size_average,
    reduce (deprecated), reduction (default ``"mean"``). Shape: input and target of one
    shape, values in [0, 1]; output scalar or that shape.
    Raises: ArgumentError for an unknown reduction; ArgumentTypeError for a non-Tensor weight.
    """

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class BCEWithLogitsLoss(_WeightedLoss):
    """Sigmoid + binary cross-entropy, numerically stable (see
    ``F.binary_cross_entropy_with_logits``).

    Args: weight (Tensor, optional; per element, broadcasting to the input; a buffer),
    size_average, reduce (deprecated), reduction (default ``"mean"``), pos_weight (Tensor,
    optional; weights of the positive term broadcasting along the trailing dims, e.g. (C,);
    a buffer). Shape: input and target of one shape; output scalar or that shape.
    Raises: ArgumentError for an unknown reduction; ArgumentTypeError for a non-Tensor weight.
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        super().__init__(weight, size_average, reduce, reduction)
        self.register_buffer("pos_weight", _weight("BCEWithLogitsLoss", "pos_weight", pos_weight))

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, weight=self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of log-probabilities ``input`` from ``target`` (see
    ``F.kl_div``).

    Args: size_average, reduce (deprecated), reduction (``"mean"`` default, ``"batchmean"``,
    ``"sum"``, ``"none"``; unlike PyTorch, ``"mean"`` does not warn), log_target (bool,
    default False). Shape: input and target of one shape; output scalar or that shape.
    Raises: ArgumentError for an unknown reduction.
    """
    _reductions = ("mean", "batchmean", "sum", "none")

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class SoftMarginLoss(_Loss):
    """Two-class logistic loss ``log(1 + exp(-y x))`` for y in {-1, 1} (see
    ``F.soft_margin_loss``). Args and shapes as :class:`MSELoss`."""

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood (see ``F.poisson_nll_loss``).

    Args: log_input (bool, default True), full (bool, default False), size_average,
    eps (float, default 1e-8), reduce, reduction (default ``"mean"``). Shape: input and
    target of one shape. Raises: ArgumentError for an unknown reduction.
    """

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, _number("PoissonNLLLoss", "eps", eps)

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full, eps=self.eps,
                                  reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """Gaussian negative log-likelihood with predicted variances (see
    ``F.gaussian_nll_loss``).

    Args (keyword-only): full (bool, default False), eps (float, default 1e-6), reduction
    (default ``"mean"``). Shape: input and target (N, *); var (N, *), (N, *) without the
    last dim, or with one dim 1. Raises: ArgumentError for an unknown reduction.
    """

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(reduction=reduction)
        self.full, self.eps = full, _number("GaussianNLLLoss", "eps", eps)

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps, reduction=self.reduction)


class _MarginLoss(_Loss):

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = _number(type(self).__name__, "margin", margin)


class CosineEmbeddingLoss(_MarginLoss):
    """``1 - cos(x1, x2)`` for target 1, ``max(0, cos(x1, x2) - margin)`` for -1 (see
    ``F.cosine_embedding_loss``). Args: margin (float, default 0), size_average, reduce,
    reduction. Shape: inputs (N, D) with target (N,), or (D,) with a 0-d target."""

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class MarginRankingLoss(_MarginLoss):
    """``max(0, -y (x1 - x2) + margin)`` (see ``F.margin_ranking_loss``). Args: margin
    (float, default 0), size_average, reduce, reduction. Shape: x1, x2, y of one shape."""

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin, reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """``x`` for target 1, ``max(0, margin - x)`` for -1 (see ``F.hinge_embedding_loss``).
    Args: margin (float, default 1.0), size_average, reduce, reduction. Shape: input and
    target of one shape."""

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)


class TripletMarginLoss(_MarginLoss):
    """``max(0, margin + d(a, p) - d(a, n))`` (see ``F.triplet_margin_loss``). Args: margin
    (1.0), p (2.0), eps (1e-6), swap (False), size_average, reduce, reduction. Shape:
    anchor, positive, negative (N, D) or (D,)."""

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, size_average, reduce, reduction)
        self.p, self.eps, self.swap = _number("TripletMarginLoss", "p", p), _number("TripletMarginLoss", "eps", eps), \
            bool(swap)

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p, eps=self.eps,
                                     swap=self.swap, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """One-versus-all logistic loss per class, averaged over the classes (see
    ``F.multilabel_soft_margin_loss``). Args: weight (Tensor (C,), optional), size_average,
    reduce, reduction. Shape: input and target (N, C) or (C,)."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight, reduction=self.reduction)
