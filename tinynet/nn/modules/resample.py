"""Resampling and rearranging layers: ``Upsample``, ``UpsamplingNearest2d``,
``UpsamplingBilinear2d``, ``PixelShuffle``, ``PixelUnshuffle``, ``ChannelShuffle``, ``Unflatten``, ``Unfold``,
``Fold``.

Difference from PyTorch: the configuration is checked at construction (exactly one of
size/scale_factor, a supported mode, align_corners only with linear modes, positive sizes,
scales and factors); PyTorch checks it at the first call. ``Unflatten`` takes an int dim
only (tinynet has no named tensors).
"""
import numbers

from ... import errors, ops
from .. import functional as F
from .module import Module, check_input

_MODES = ("nearest", "nearest-exact", "linear", "bilinear")


class Upsample(Module):
    """Resample (N, C, L) or (N, C, H, W) input; see :func:`tinynet.nn.functional.interpolate`.

    Args:
        size (int or tuple of ints), scale_factor (float or tuple of floats): exactly one.
        mode (str): 'nearest' (default), 'nearest-exact', 'linear' (3-D), 'bilinear' (4-D).
        align_corners (bool): linear modes only; None means False.
        recompute_scale_factor (bool): see interpolate. Default None.

    Shape:
        (N, C, *in) -> (N, C, *out), ``out = size`` or ``floor(in * scale_factor)``.

    Raises:
        ArgumentError (construction): a bad configuration (see the module docstring).
        ShapeError (call): input not 3-D/4-D (or not of the rank the mode needs).
    """
    _ranks: tuple[int, ...] = (3, 4)
    _layout = "(N, C, L) or (N, C, H, W)"

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        layer = type(self).__name__
        if (size is None) == (scale_factor is None):
            raise errors.ArgumentError(f"{layer}: exactly one of size and scale_factor must be given, got "
                                       f"size={size!r}, scale_factor={scale_factor!r}")
        if mode not in _MODES:
            raise errors.ArgumentError(f"{layer}: mode must be one of {list(_MODES)}, got {mode!r}")
        if align_corners is not None and mode.startswith("nearest"):
            raise errors.ArgumentError(f"{layer}: align_corners can only be set with the interpolating modes "
                                       f"linear | bilinear, got mode={mode!r}")
        for name, v, kind in (("size", size, numbers.Integral), ("scale_factor", scale_factor, numbers.Real)):
            values = v if isinstance(v, (tuple, list)) else (v,)
            if v is not None and not all(isinstance(i, kind) and not isinstance(i, bool) and i > 0
                                         for i in values):
                raise errors.ArgumentError(f"{layer}: {name} must be positive, a number or a tuple, got {v!r}")
        self.name = layer
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode, self.align_corners = mode, align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        check_input(self, input, self._ranks, self._layout)
        return F.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        info = f"scale_factor={self.scale_factor!r}" if self.scale_factor is not None else f"size={self.size!r}"
        return info + f", mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """``Upsample(size, scale_factor, mode='nearest')`` for (N, C, H, W) input.

    Args: size or scale_factor (exactly one). Shape: (N, C, H, W) -> (N, C, H_out, W_out).
    """
    _ranks, _layout = (4,), "(N, C, H, W)"

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """``Upsample(size, scale_factor, mode='bilinear', align_corners=True)`` for (N, C, H, W).

    Args: size or scale_factor (exactly one). Shape: (N, C, H, W) -> (N, C, H_out, W_out).
    """
    _ranks, _layout = (4,), "(N, C, H, W)"

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)


def _factor(layer, name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        raise errors.ArgumentTypeError(f"{layer}: {name} must be an int, got {type(v).__name__}")
    if v < 1:
        raise errors.ArgumentError(f"{layer}: {name} must be a positive int, got {v}")
    return int(v)


class PixelShuffle(Module):
    """(*, C*r^2, H, W) -> (*, C, H*r, W*r); see :func:`tinynet.nn.functional.pixel_shuffle`.

    Args: upscale_factor (int r >= 1). Raises: ArgumentError/ArgumentTypeError (construction)
    for a bad r; ShapeError (call) for fewer than 3 dims or channels not divisible by r^2.
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = _factor(type(self).__name__, "upscale_factor", upscale_factor)

    def forward(self, input):
        check_input(self, input, range(3, 64), "(*, C*r^2, H, W)")
        if input.shape[-3] % self.upscale_factor ** 2:
            raise errors.ShapeError(f"{self!r}: expected input channels (dim -3) divisible by "
                                    f"{self.upscale_factor ** 2}, got shape {input.shape}")
        return F.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H*r, W*r) -> (*, C*r^2, H, W); see :func:`tinynet.nn.functional.pixel_unshuffle`.

    Args: downscale_factor (int r >= 1). Raises: ArgumentError/ArgumentTypeError
    (construction) for a bad r; ShapeError (call) for fewer than 3 dims or H, W not
    divisible by r.
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = _factor(type(self).__name__, "downscale_factor", downscale_factor)

    def forward(self, input):
        check_input(self, input, range(3, 64), "(*, C, H*r, W*r)")
        r = self.downscale_factor
        if input.shape[-2] % r or input.shape[-1] % r:
            raise errors.ShapeError(f"{self!r}: expected height and width divisible by {r}, got shape "
                                    f"{input.shape}")
        return F.pixel_unshuffle(input, r)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"


class Unflatten(Module):
    """Split dimension ``dim`` into ``unflattened_size`` (the inverse of Flatten).

    Args:
        dim (int): the dimension to split.
        unflattened_size (tuple or list of ints): its new shape; one entry may be -1.

    Shape:
        (*, S, *) -> (*, *unflattened_size, *) with ``prod(unflattened_size) == S``.

    Raises:
        ArgumentTypeError (construction): dim not an int, unflattened_size not a tuple/list
            of ints.
        ShapeError / IndexOutOfRangeError (call): the sizes do not fit, dim out of range.
    """

    def __init__(self, dim, unflattened_size):
        super().__init__()
        layer = type(self).__name__
        if isinstance(dim, bool) or not isinstance(dim, numbers.Integral):
            raise errors.ArgumentTypeError(f"{layer}: dim must be an int, got {type(dim).__name__}")
        if not isinstance(unflattened_size, (tuple, list)):
            raise errors.ArgumentTypeError(f"{layer}: unflattened_size must be a tuple of ints, but found type "
                                           f"{type(unflattened_size).__name__}")
        for i, s in enumerate(unflattened_size):
            if isinstance(s, bool) or not isinstance(s, numbers.Integral):
                raise errors.ArgumentTypeError(f"{layer}: unflattened_size must be tuple of ints, but found "
                                               f"element of type {type(s).__name__} at pos {i}")
        self.dim, self.unflattened_size = int(dim), unflattened_size

    def forward(self, input):
        check_input(self, input, range(1, 64), "(*, S, *)")
        try:
            return ops.shape.unflatten(input, self.dim, self.unflattened_size)
        except (errors.ShapeError, errors.IndexOutOfRangeError) as e:
            raise type(e)(f"{self!r}: {e}") from e

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Unfold(Module):
    """Sliding local blocks as columns (see ``F.unfold``). Args: kernel_size, dilation=1,
    padding=0, stride=1. Shape: (N, C, H, W) -> (N, C * kh * kw, L)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation, self.padding, self.stride = kernel_size, dilation, padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, padding={self.padding}, "
                f"stride={self.stride}")


class Fold(Unfold):
    """Columns of blocks summed back into images (see ``F.fold``). Args: output_size,
    kernel_size, dilation=1, padding=0, stride=1. Shape: (N, C * kh * kw, L) -> (N, C, H, W)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return f"output_size={self.output_size}, " + super().extra_repr()


class ChannelShuffle(Module):
    """Interleave channels across ``groups``; see :func:`tinynet.nn.functional.channel_shuffle`.

    Shape: (N, C, *) -> (N, C, *).
    """

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"

