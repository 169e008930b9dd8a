"""Per-sample normalisation layers: ``LayerNorm``, ``GroupNorm``, ``InstanceNorm1d``,
``InstanceNorm2d`` and ``InstanceNorm3d`` (formulas: :mod:`tinynet.ops.layer_norm`). Parameters and buffers have
PyTorch's names and initial values (weight ones, bias zeros, running mean zeros, running
variance ones), so state dicts move across unchanged.
"""
import numbers
import warnings

from ... import ops
from ...errors import ArgumentError, ArgumentTypeError, ShapeError
from ...tensor import Tensor
from ...ops.local_response_norm import cross_map_lrn2d
from .. import functional as F, init
from .module import Module, Parameter, check_input


def _count(layer, name, v, minimum=0):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise ArgumentTypeError(f"{layer}: {name} must be an int, got {type(v).__name__}")
    if v < minimum:
        raise ArgumentError(f"{layer}: {name} must be >= {minimum}, got {v}")
    return int(v)


def _eps(layer, eps):
    if isinstance(eps, bool) or not isinstance(eps, numbers.Real):
        raise ArgumentTypeError(f"{layer}: eps must be a number, got {type(eps).__name__}")
    return eps


def _affine_params(module, shape, weight, bias, device, dtype):
    """Register ``weight`` (ones) and ``bias`` (zeros) of ``shape``, or None for each left out."""
    if weight:
        module.weight = Parameter(ops.creation.ones(*shape, device=device, dtype=dtype))
    else:
        module.register_parameter("weight", None)
    if bias:
        module.bias = Parameter(ops.creation.zeros(*shape, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


class LayerNorm(Module):
    """Layer normalisation over the trailing ``normalized_shape`` of each sample
    (Ba, Kiros & Hinton, 2016): ``y = (x - mean) / sqrt(var + eps) * weight + bias``.

    Args:
        normalized_shape (int or sequence of ints): the trailing shape normalised over.
        eps (float): added to the variance. Default 1e-5.
        elementwise_affine (bool): learn ``weight`` (ones) and ``bias`` (zeros) of shape
            ``normalized_shape``. Default True.
        bias (bool): with ``elementwise_affine``, learn the bias too. Default True.
        device, dtype: where and in which float dtype the parameters are made.

    Shape:
        input ``(*, *normalized_shape)`` -> output of the same shape.

    Raises:
        ArgumentTypeError / ArgumentError: a ``normalized_shape`` that is not ints >= 0, or
        an empty one (construction). ShapeError (call): the input's trailing shape differs.
    """

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        if isinstance(normalized_shape, numbers.Integral) and not isinstance(normalized_shape, bool):
            normalized_shape = (normalized_shape,)
        if not isinstance(normalized_shape, (tuple, list)):
            raise ArgumentTypeError(f"LayerNorm: normalized_shape must be an int or a sequence of ints, got "
                                    f"{type(normalized_shape).__name__}")
        self.normalized_shape = tuple(_count("LayerNorm", "normalized_shape", s) for s in normalized_shape)
        if not self.normalized_shape:
            raise ArgumentError("LayerNorm: normalized_shape must have at least one element, got ()")
        self.eps, self.elementwise_affine = _eps("LayerNorm", eps), bool(elementwise_affine)
        _affine_params(self, self.normalized_shape, self.elementwise_affine, self.elementwise_affine and bias,
                       device, dtype)

    def reset_parameters(self):
        """Weight to ones, bias to zeros."""
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        shape = self.normalized_shape
        k = len(shape)
        if not isinstance(input, Tensor) or not k <= input.array.ndim < 64:  # check_input raises
            check_input(self, input, range(k, 64), f"(*, {self._trailing()})")
        have = input.array.shape
        if have[len(have) - k:] != shape:
            raise ShapeError(f"{self!r}: expected input of shape (*, {self._trailing()}), got {tuple(input.shape)}")
        return F.layer_norm(input, shape, self.weight, self.bias, self.eps)

    def _trailing(self):
        return ", ".join(map(str, self.normalized_shape))

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


class GroupNorm(Module):
    """Group normalisation (Wu & He, 2018): the channels in ``num_groups`` groups, each
    normalised over its channels and positions, then a per-channel affine map.

    Args:
        num_groups (int): G, dividing ``num_channels``.
        num_channels (int): C.
        eps (float): default 1e-5.
        affine (bool): learn per-channel ``weight`` (ones) and ``bias`` (zeros). Default True.
        device, dtype: where and in which float dtype the parameters are made.
        bias (bool, keyword-only): with ``affine``, learn the bias too. Default True.

    Shape:
        input (N, C, *) -> output of the same shape.

    Raises:
        ArgumentError: ``num_channels`` not divisible by ``num_groups``, or G < 1.
        ShapeError (call): fewer than 2 dims or another number of channels.
    """

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None, dtype=None, *, bias=True):
        super().__init__()
        self.num_groups = _count("GroupNorm", "num_groups", num_groups, 1)
        self.num_channels = _count("GroupNorm", "num_channels", num_channels)
        if self.num_channels % self.num_groups:
            raise ArgumentError(f"GroupNorm: num_channels ({self.num_channels}) must be divisible by num_groups "
                                f"({self.num_groups})")
        self.eps, self.affine = _eps("GroupNorm", eps), bool(affine)
        _affine_params(self, (self.num_channels,), self.affine, self.affine and bias, device, dtype)

    def forward(self, input):
        check_input(self, input, range(2, 64), "(N, C, *)")
        if input.shape[1] != self.num_channels:
            raise ShapeError(f"{self!r}: expected input with {self.num_channels} channels (dim 1), got shape "
                             f"{tuple(input.shape)}")
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _InstanceNorm(Module):
    _no_batch_dim, _layout = 2, "(N, C, L) or (C, L)"

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False, track_running_stats=False,
                 device=None, dtype=None, *, bias=True):
        super().__init__()
        name = type(self).__name__
        self.num_features = _count(name, "num_features", num_features)
        self.eps, self.momentum = _eps(name, eps), momentum
        self.affine, self.track_running_stats = bool(affine), bool(track_running_stats)
        _affine_params(self, (self.num_features,), self.affine, self.affine and bias, device, dtype)
        if self.track_running_stats:
            self.register_buffer("running_mean", ops.creation.zeros(self.num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ops.creation.ones(self.num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked",
                                 ops.creation.zeros((), dtype=ops.creation.dtypes.int64, device=device))
        else:
            for b in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(b, None)

    def forward(self, input):
        nb = self._no_batch_dim
        check_input(self, input, (nb, nb + 1), self._layout)
        channels = input.shape[input.ndim - nb]
        if channels != self.num_features:
            msg = (f"{self!r}: expected input's size at dim={input.ndim - nb} to match num_features "
                   f"({self.num_features}), got {channels}")
            if self.affine or self.track_running_stats:
                raise ShapeError(msg)
            warnings.warn(msg + "; num_features is not used because affine=False", stacklevel=2)
        unbatched = input.ndim == nb
        x = input.unsqueeze(0) if unbatched else input
        y = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                            self.training or not self.track_running_stats,
                            self.momentum if self.momentum is not None else 0.0, self.eps)
        return y.squeeze(0) if unbatched else y

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of each channel of each sample over its positions
    (Ulyanov et al., 2016).

    Args:
        num_features (int): C.
        eps (float): default 1e-5.
        momentum (float or None): the running statistics' factor, default 0.1 (None: 0).
        affine (bool): learn per-channel ``weight`` (ones) and ``bias`` (zeros). Default False.
        track_running_stats (bool): keep ``running_mean``/``running_var`` (used in eval
            mode) and ``num_batches_tracked`` buffers. Default False.
        device, dtype: where and in which float dtype parameters and buffers are made.
        bias (bool, keyword-only): with ``affine``, learn the bias too. Default True.

    Shape:
        (N, C, L) or unbatched (C, L) -> the same; L > 1 when using input statistics.

    Raises:
        ShapeError: (at call) another number of dims, or of channels with ``affine`` or
            ``track_running_stats`` (without them PyTorch's warning is given instead).
    """


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or unbatched (C, H, W) input; arguments as
    :class:`InstanceNorm1d`."""
    _no_batch_dim, _layout = 3, "(N, C, H, W) or (C, H, W)"


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or unbatched (C, D, H, W) input; arguments
    as :class:`InstanceNorm1d`."""
    _no_batch_dim, _layout = 4, "(N, C, D, H, W) or (C, D, H, W)"


class LocalResponseNorm(Module):
    """Local response normalisation across channels; see
    :func:`tinynet.nn.functional.local_response_norm` for the formula.

    Args:
        size (int): channels in the window. alpha (float): default 1e-4. beta (float):
            default 0.75. k (float): default 1.0.

    Shape:
        (N, C, *) -> same shape.
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """PyTorch's legacy cross-channel LRN of (N, C, H, W) input:
    ``y = x * (k + alpha/size * S)^-beta``, ``S`` the sums of squares over PyTorch's legacy
    channel windows (see :func:`tinynet.ops.local_response_norm.cross_map_lrn2d`; they
    differ from :class:`LocalResponseNorm`'s at the channel edges).

    Args:
        size (int): channels in the window. alpha (float): default 1e-4. beta (float):
            default 0.75. k (float): default 1.

    Raises:
        ShapeError (call): input not 4-D. ArgumentError: ``size < 1``.

    Its gradient is the exact derivative of the forward; PyTorch's hand-written backward
    (which assumes symmetric windows) differs from it.
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
