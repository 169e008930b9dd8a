"""Pooling layers: ``MaxPool1d/2d/3d``, ``AvgPool1d/2d/3d``, ``AdaptiveAvgPool1d/2d/3d``,
``AdaptiveMaxPool1d/2d/3d``, ``LPPool1d/2d/3d``, ``MaxUnpool1d/2d/3d``, ``FractionalMaxPool2d/3d``."""
from ...errors import ArgumentError
from .. import functional as F
from .module import Module


class MaxPool2d(Module):
    """Max pooling; see :func:`tinynet.nn.functional.max_pool2d`.

    Shape: (N, C, H, W) -> (N, C, H_out, W_out).

    Raises:
        ArgumentError / ArgumentTypeError: at ``forward``, as PyTorch, not at construction: a
            ``kernel_size``, ``stride`` or ``dilation`` below 1 (``MaxPool2d(0)`` builds),
            padding over half the kernel, a non-int size.
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.padding = kernel_size, padding
        self.stride = stride if stride is not None else kernel_size
        self.dilation, self.return_indices, self.ceil_mode = dilation, return_indices, ceil_mode

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode,
                          self.return_indices)

    _pool = staticmethod(F.max_pool2d)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    """Average pooling; see :func:`tinynet.nn.functional.avg_pool2d`.

    Shape: (N, C, H, W) -> (N, C, H_out, W_out).

    Raises:
        ArgumentError / ArgumentTypeError: at ``forward``, as PyTorch (see :class:`MaxPool2d`).
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.padding = kernel_size, padding
        self.stride = stride if stride is not None else kernel_size
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                          self.count_include_pad, self.divisor_override)

    _pool = staticmethod(F.avg_pool2d)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average pooling to ``output_size``. Shape: (N, C, H, W) -> (N, C, *output_size)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return self._pool(input, self.output_size)

    _pool = staticmethod(F.adaptive_avg_pool2d)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class MaxPool1d(MaxPool2d):
    """1-D max pooling; see :func:`tinynet.nn.functional.max_pool1d`.

    Shape: (N, C, L) or (C, L) -> (N, C, L_out) or (C, L_out).
    """
    _pool = staticmethod(F.max_pool1d)


class AvgPool1d(Module):
    """1-D average pooling; see :func:`tinynet.nn.functional.avg_pool1d`.

    Shape: (N, C, L) or (C, L) -> (N, C, L_out) or (C, L_out).
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        one = (lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,))
        self.kernel_size, self.padding = one(kernel_size), one(padding)
        self.stride = one(stride if stride is not None else kernel_size)
        self.ceil_mode, self.count_include_pad = ceil_mode, count_include_pad

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool1d(AdaptiveAvgPool2d):
    """Average pooling to ``output_size`` positions. Shape: (N, C, L) -> (N, C, output_size)."""

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveMaxPool2d(Module):
    """Max pooling to ``output_size``; see :func:`tinynet.nn.functional.adaptive_max_pool2d`.

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, *output_size) or (C, *output_size); with
    ``return_indices=True`` a pair (values, int64 flat positions of the maxima).
    """

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size, self.return_indices = output_size, return_indices

    def forward(self, input):
        return self._pool(input, self.output_size, self.return_indices)

    _pool = staticmethod(F.adaptive_max_pool2d)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(AdaptiveMaxPool2d):
    """Max pooling to ``output_size``; see :func:`tinynet.nn.functional.adaptive_max_pool1d`.

    Shape: (N, C, L) or (C, L) -> (N, C, output_size) or (C, output_size).
    """
    _pool = staticmethod(F.adaptive_max_pool1d)


class LPPool2d(Module):
    """Power-average pooling ``(sum_window x^p)^(1/p)``; see
    :func:`tinynet.nn.functional.lp_pool2d`.

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, H_out, W_out) or (C, H_out, W_out).
    """

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size, self.stride, self.ceil_mode = norm_type, kernel_size, stride, ceil_mode

    def forward(self, input):
        return self._pool(input, self.norm_type, self.kernel_size, self.stride, self.ceil_mode)

    _pool = staticmethod(F.lp_pool2d)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride={self.stride}, "
                f"ceil_mode={self.ceil_mode}")


class LPPool1d(LPPool2d):
    """Power-average pooling of (N, C, L) or (C, L) input; see
    :func:`tinynet.nn.functional.lp_pool1d`."""
    _pool = staticmethod(F.lp_pool1d)



class MaxUnpool2d(Module):
    """The inverse of ``MaxPool2d(return_indices=True)``: each value goes back to the place
    its index names, zeros elsewhere; see :func:`tinynet.nn.functional.max_unpool2d`.

    Shape: (N, C, H_in, W_in) and int64 indices of that shape -> (N, C, H_out, W_out) with
    ``H_out = (H_in - 1) * stride - 2 * padding + kernel_size`` unless ``output_size`` is given.
    """

    _dims = 2

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        def spread(v):  # an int stands for every spatial dim (PyTorch keeps tuples, as in its repr)
            return (v,) * self._dims if isinstance(v, int) and not isinstance(v, bool) else v
        self.kernel_size, self.padding = spread(kernel_size), spread(padding)
        self.stride = spread(stride if stride is not None else kernel_size)

    def forward(self, input, indices, output_size=None):
        return self._unpool(input, indices, self.kernel_size, self.stride, self.padding, output_size)

    _unpool = staticmethod(F.max_unpool2d)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(MaxUnpool2d):
    """1-D :class:`MaxUnpool2d`: (N, C, L_in) and its indices -> (N, C, L_out)."""

    _dims = 1
    _unpool = staticmethod(F.max_unpool1d)


class MaxPool3d(MaxPool2d):
    """3-D max pooling; see :func:`tinynet.nn.functional.max_pool3d`.

    Args: kernel_size, stride (default ``kernel_size``), padding=0, dilation=1 (ints or
    triples), return_indices=False, ceil_mode=False.

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out) or unbatched.
    """
    _pool = staticmethod(F.max_pool3d)


class AvgPool3d(AvgPool2d):
    """3-D average pooling; see :func:`tinynet.nn.functional.avg_pool3d`.

    Args: kernel_size, stride (default ``kernel_size``), padding=0 (ints or triples),
    ceil_mode=False, count_include_pad=True, divisor_override=None.

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, D_out, H_out, W_out) or unbatched.
    """
    _pool = staticmethod(F.avg_pool3d)


class AdaptiveAvgPool3d(AdaptiveAvgPool2d):
    """Average pooling to ``output_size`` (an int or (d, h, w), None keeping that size);
    see :func:`tinynet.nn.functional.adaptive_avg_pool3d`.

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, *output_size) or unbatched.
    """
    _pool = staticmethod(F.adaptive_avg_pool3d)


class AdaptiveMaxPool3d(AdaptiveMaxPool2d):
    """Max pooling to ``output_size``; see :func:`tinynet.nn.functional.adaptive_max_pool3d`.

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, *output_size) or unbatched; with
    ``return_indices=True`` a pair (values, int64 flat positions of the maxima).
    """
    _pool = staticmethod(F.adaptive_max_pool3d)


class LPPool3d(LPPool2d):
    """Power-average pooling of (N, C, D, H, W) or (C, D, H, W) input; see
    :func:`tinynet.nn.functional.lp_pool3d`."""
    _pool = staticmethod(F.lp_pool3d)


class MaxUnpool3d(MaxUnpool2d):
    """3-D :class:`MaxUnpool2d`: (N, C, D_in, H_in, W_in) and its indices -> (N, C, D_out,
    H_out, W_out); see :func:`tinynet.nn.functional.max_unpool3d`."""

    _dims = 3
    _unpool = staticmethod(F.max_unpool3d)


class FractionalMaxPool2d(Module):
    """Fractional max pooling (Graham, 2014); see
    :func:`tinynet.nn.functional.fractional_max_pool2d`.

    Args:
        kernel_size (int or pair): the window.
        output_size (int or pair): the output size, or
        output_ratio (float or pair in (0, 1)): the output size as a fraction of the input's.
        return_indices (bool): also return the flat positions of the maxima. Default False.
        _random_samples (Tensor, optional): fixed (N, C, 2) samples (a buffer).

    Shape: (N, C, H, W) or (C, H, W) -> (N, C, oh, ow) or (C, oh, ow).

    Raises:
        ArgumentError: (construction) neither or both of output_size/output_ratio, a ratio
            outside (0, 1).
    """

    _dims = 2
    _pool = staticmethod(F.fractional_max_pool2d)

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False, _random_samples=None):
        super().__init__()
        layer, nd = type(self).__name__, self._dims
        spread = (lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd)
        self.kernel_size, self.return_indices = spread(kernel_size), return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = spread(output_size) if output_size is not None else None
        self.output_ratio = spread(output_ratio) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ArgumentError(f"{layer}: requires specifying either an output size, or a pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ArgumentError(f"{layer}: only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None and not all(isinstance(r, (int, float)) and not isinstance(r, bool)
                                                     and 0 < r < 1 for r in self.output_ratio):
            raise ArgumentError(f"{layer}: output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        return self._pool(input, self.kernel_size, self.output_size, self.output_ratio, self.return_indices,
                          _random_samples=self._random_samples)


class FractionalMaxPool3d(FractionalMaxPool2d):
    """3-D fractional max pooling; see :class:`FractionalMaxPool2d` (triples, samples
    (N, C, 3)) and :func:`tinynet.nn.functional.fractional_max_pool3d`.

    Shape: (N, C, D, H, W) or (C, D, H, W) -> (N, C, od, oh, ow) or unbatched.
    """

    _dims = 3
    _pool = staticmethod(F.fractional_max_pool3d)
