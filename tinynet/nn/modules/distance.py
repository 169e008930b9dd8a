"""Layers over :mod:`tinynet.ops.distance` (``CosineSimilarity``, ``PairwiseDistance``),
:mod:`tinynet.ops.piecewise_activations` (``Threshold``, ``Hardshrink``, ``Softshrink``) and
:mod:`tinynet.ops.normalization` (``RMSNorm``); formulas and gradients there.
"""
import numbers
from typing import Any

from ...errors import ArgumentError, ArgumentTypeError
from ...ops.distance import cosine_similarity, pairwise_distance
from ...ops.normalization import rms_norm
from ...ops.piecewise_activations import _lambd, hardshrink, softshrink, threshold
from ...ops.util import check_int, check_number
from .. import init
from .linear import float_tensor
from .module import Module, Parameter


class CosineSimilarity(Module):
    """Cosine similarity of two inputs along ``dim``. Args: dim (int, default 1),
    eps (float, default 1e-8). Shape: (*, D, *) twice -> the broadcast shape without ``dim``."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
            raise ArgumentTypeError(f"CosineSimilarity: dim must be an int, got {type(dim).__name__}")
        self.dim, self.eps = int(dim), check_number("CosineSimilarity", "eps", eps)

    def forward(self, x1, x2):
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` over the last dimension. Args: p (float, default 2),
    eps (float, default 1e-6), keepdim (bool, default False). Shape: (N, D) or (D,) twice
    -> (N,) or ()."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm = check_number("PairwiseDistance", "p", p)
        self.eps, self.keepdim = check_number("PairwiseDistance", "eps", eps), bool(keepdim)

    def forward(self, x1, x2):
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``. Args: threshold, value (numbers),
    inplace (bool, default False). Shape: any, output = input."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = check_number("Threshold", "threshold", threshold)
        self.value = check_number("Threshold", "value", value)
        self.inplace = bool(inplace)

    def forward(self, input):
        return threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return f"threshold={self.threshold}, value={self.value}" + (", inplace=True" if self.inplace else "")


class _Shrink(Module):
    _fn: Any = None

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = _lambd(type(self).__name__, lambd)

    def forward(self, input):
        return type(self)._fn(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """``x`` where ``|x| > lambd``, else 0. Args: lambd (float >= 0, default 0.5).
    Shape: any, output = input."""
    _fn = staticmethod(hardshrink)


class Softshrink(_Shrink):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0. Args: lambd
    (float >= 0, default 0.5). Shape: any, output = input."""
    _fn = staticmethod(softshrink)


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` (Zhang &
    Sennrich, 2019): ``x / sqrt(mean(x^2) + eps) * weight``.

    Args:
        normalized_shape (int or sequence of ints): the trailing shape normalised over.
        eps (float, optional): default None: the input dtype's machine epsilon.
        elementwise_affine (bool): learn ``weight`` (ones) of ``normalized_shape``. Default True.
        device, dtype: where and in which float dtype the weight is made.

    Shape: (*, *normalized_shape) -> the same.

    Raises:
        ArgumentError: an empty ``normalized_shape`` or a negative size (construction).
        ArgumentTypeError: a non-integer size (construction).
        ShapeError: the input's trailing shape differs (call).
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral) and not isinstance(normalized_shape, bool):
            normalized_shape = (normalized_shape,)
        if not isinstance(normalized_shape, (tuple, list)) or not normalized_shape:
            raise ArgumentError(f"RMSNorm: normalized_shape must be an int or a non-empty sequence of ints, got "
                                f"{normalized_shape!r}")
        self.normalized_shape = tuple(check_int("RMSNorm", "normalized_shape", s, 0) for s in normalized_shape)
        self.eps = None if eps is None else check_number("RMSNorm", "eps", eps)
        self.elementwise_affine = bool(elementwise_affine)
        if self.elementwise_affine:
            self.weight = Parameter(float_tensor("RMSNorm", 1, *self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def reset_parameters(self):
        """Weight to ones."""
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
