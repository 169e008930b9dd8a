"""``LinearCrossEntropyLoss``: a linear layer and the cross entropy of its logits in one
module (PyTorch's ``torch.nn.LinearCrossEntropyLoss``), running
:func:`tinynet.nn.functional.linear_cross_entropy` (chunked when ``options`` are given); and
PyTorch's module path of ``LinearCrossEntropyOptions``."""
import math

from ...errors import ArgumentError, ArgumentTypeError, ShapeError
from ...ops.linear_cross_entropy import LinearCrossEntropyOptions
from ...ops.util import check_int, check_number
from .. import functional as F
from .linear import Linear
from .loss import _WeightedLoss

__all__ = ["LinearCrossEntropyLoss", "LinearCrossEntropyOptions"]


class LinearCrossEntropyLoss(_WeightedLoss):
    """Cross entropy of ``Linear(in_features, num_classes * prod(out_features))``'s logits.

    Args:
        in_features (int): size of each input sample.
        num_classes (int): C.
        out_features (tuple of ints, keyword-only): the K extra dims of a K-dimensional
            loss (logits (N, C, d_1 .. d_K)). Default ().
        bias (bool, keyword-only): the linear layer's bias. Default False.
        device, dtype: where and in which float dtype the linear layer is made.
        reduction (str): 'mean' (default), 'sum' or 'none'.
        weight (Tensor, optional): (C,) class weights (a buffer).
        ignore_index (int, optional): a class index left out (default -100 for index targets).
        label_smoothing (float): in [0, 1]. Default 0.
        options (LinearCrossEntropyOptions, optional): the chunked path's settings.

    Shape: input (N, in_features) or (in_features,); target class indices (N,) or
    probabilities (N, C); output 0-d, or (N,) with 'none'.

    Raises:
        ShapeError: a weight not of shape (C,).
        ArgumentError: label_smoothing outside [0, 1], an unknown reduction, bad sizes.
        ArgumentTypeError: out_features not a tuple of ints.
    """

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None, dtype=None,
                 reduction="mean", weight=None, ignore_index=None, label_smoothing=0.0, options=None):
        layer = "LinearCrossEntropyLoss"
        num_classes = check_int(layer, "num_classes", num_classes, 1)
        if weight is not None and tuple(getattr(weight, "shape", ())) != (num_classes,):
            raise ShapeError(f"{layer}: expected weight shape to be {(num_classes,)}, got "
                             f"{tuple(getattr(weight, 'shape', ()))}")
        if not 0.0 <= check_number(layer, "label_smoothing", label_smoothing) <= 1.0:
            raise ArgumentError(f"{layer}: expected label_smoothing to be in range [0, 1], got {label_smoothing}")
        if not isinstance(out_features, (tuple, list)):
            raise ArgumentTypeError(f"{layer}: out_features must be a tuple of ints, got {type(out_features).__name__}")
        super().__init__(weight, None, None, reduction)
        self.num_classes, self.out_features = num_classes, tuple(check_int(layer, "out_features", d, 1)
                                                                   for d in out_features)
        self.ignore_index = None if ignore_index is None else check_int(layer, "ignore_index", ignore_index)
        self.label_smoothing = label_smoothing
        self.linear = Linear(in_features, math.prod(self.out_features, start=num_classes), bias=bias,
                             device=device, dtype=dtype)
        self.options = options

    def forward(self, input, target):
        w = self.linear.weight.reshape((self.num_classes, *self.out_features, self.linear.in_features))
        b = self.linear.bias.reshape((self.num_classes, *self.out_features)) if self.linear.bias is not None else None
        return F.linear_cross_entropy(input, w, target, linear_bias=b, weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index, label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, reduction={self.reduction}, "
                f"ignore_index={self.ignore_index}, label_smoothing={self.label_smoothing}, options={self.options}")
