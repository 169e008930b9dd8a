"""Convolution layers: ``Conv1d``, ``Conv2d``, ``Conv3d`` (and ``_ConvNd``, the base the transposed
layers of :mod:`.conv_transpose` share).

Init is PyTorch's: ``kaiming_uniform_(a=sqrt 5)`` for the weight and
``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` for the bias, ``fan_in = weight.shape[1] * prod(kernel)``.
``padding_mode`` other than ``'zeros'`` pads with :func:`tinynet.nn.functional.pad` first
and convolves without padding, as PyTorch does.
"""
from typing import Any
import numbers

from ... import errors
from .. import functional as F, init
from .linear import _param
from .module import Module, check_input

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


def _tuple(layer, name, v, nd, minimum):
    """An int or a tuple of ``nd`` ints as a tuple, each >= ``minimum``."""
    values = tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd
    if len(values) != nd or any(isinstance(i, bool) or not isinstance(i, numbers.Integral) for i in values):
        raise errors.ArgumentTypeError(f"{layer}: {name} must be an int or a tuple of {nd} ints, got {v!r}")
    if any(i < minimum for i in values):
        raise errors.ArgumentError(f"{layer}: {name} must be >= {minimum}, got {v!r}")
    return tuple(int(i) for i in values)


class _ConvNd(Module):
    """What the convolution layers share: argument checks, parameters, init and repr."""
    _nd = 2
    _transposed = False

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                 padding_mode, output_padding=0, device=None, dtype=None):
        super().__init__()
        layer, nd = type(self).__name__, self._nd
        for name, v in (("in_channels", in_channels), ("out_channels", out_channels), ("groups", groups)):
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise errors.ArgumentError(f"{layer}: {name} must be a positive integer, got {v!r}")
        if in_channels % groups:
            raise errors.ArgumentError(f"{layer}: in_channels must be divisible by groups, got in_channels="
                                       f"{in_channels}, groups={groups}")
        if out_channels % groups:
            raise errors.ArgumentError(f"{layer}: out_channels must be divisible by groups, got out_channels="
                                       f"{out_channels}, groups={groups}")
        if padding_mode not in _PADDING_MODES:
            raise errors.ArgumentError(f"{layer}: padding_mode must be one of {list(_PADDING_MODES)}, got "
                                       f"padding_mode={padding_mode!r}")
        self.kernel_size = _tuple(layer, "kernel_size", kernel_size, nd, 1)
        self.stride = _tuple(layer, "stride", stride, nd, 1)
        self.dilation = _tuple(layer, "dilation", dilation, nd, 1)
        if isinstance(padding, str) and not self._transposed:
            if padding not in ("valid", "same"):
                raise errors.ArgumentError(f"{layer}: invalid padding string {padding!r}, should be one of "
                                           "['valid', 'same']")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise errors.ArgumentError(f"{layer}: padding='same' is not supported for strided convolutions, "
                                           f"got stride={self.stride}")
        else:
            padding = _tuple(layer, "padding", padding, nd, 0)
        self.padding = padding
        self.output_padding = _tuple(layer, "output_padding", output_padding, nd, 0)
        self.in_channels, self.out_channels, self.groups = int(in_channels), int(out_channels), int(groups)
        self.transposed, self.padding_mode = self._transposed, padding_mode
        if padding == "same":  # (left, right) per dim, last dim first: F.pad's order
            totals = [d * (k - 1) for d, k in zip(self.dilation, self.kernel_size)]
            self._reversed_padding_repeated_twice = [v for t in reversed(totals) for v in (t // 2, t - t // 2)]
        elif padding == "valid":
            self._reversed_padding_repeated_twice = [0, 0] * nd
        else:
            self._reversed_padding_repeated_twice = tuple(p for p in reversed(padding) for _ in range(2))
        if self._transposed:
            shape = (self.in_channels, self.out_channels // self.groups) + self.kernel_size
        else:
            shape = (self.out_channels, self.in_channels // self.groups) + self.kernel_size
        self.weight = _param(*shape, layer=layer, device=device, dtype=dtype)
        if bias:
            self.bias = _param(self.out_channels, layer=layer, device=device, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """PyTorch's default init (see the module docstring)."""
        init.default_layer_init_(self.weight, self.bias)

    def _check_input(self, input):
        nd = self._nd
        layout = {1: "(C, L) or (N, C, L)", 2: "(C, H, W) or (N, C, H, W)"}.get(nd, "(C, D, H, W) or (N, C, D, H, W)")
        check_input(self, input, (nd + 1, nd + 2), layout)
        if input.shape[-nd - 1] != self.in_channels:
            raise errors.ShapeError(f"{self!r}: expected input with {self.in_channels} channels (dim "
                                    f"{-nd - 1}), got shape {input.shape}")

    def extra_repr(self):
        nd = self._nd
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0,) * nd:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * nd:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * nd:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    _function: Any = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, device=device, dtype=dtype)

    def _conv_forward(self, input, weight, bias):
        conv = type(self)._function
        if self.padding_mode != "zeros":
            input = F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode)
            return conv(input, weight, bias, self.stride, 0, self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)

    def forward(self, input):
        self._check_input(input)
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over (N, C_in, L) or unbatched (C_in, L); see
    :func:`tinynet.nn.functional.conv1d`.

    Args:
        in_channels (int): channels of the input.
        out_channels (int): channels of the output.
        kernel_size (int or 1-tuple): size of the kernel.
        stride (int or 1-tuple): default 1.
        padding (int, 1-tuple, 'same' or 'valid'): default 0.
        dilation (int or 1-tuple): default 1.
        groups (int): default 1.
        bias (bool): default True.
        padding_mode (str): 'zeros' (default), 'reflect', 'replicate' or 'circular'.
        device, dtype: where and in which float dtype the parameters are made (PyTorch's
            factory kwargs); default the default device and float32.

    Shape:
        (N, C_in, L) -> (N, C_out, L_out),
        ``L_out = floor((L + 2*padding - dilation*(kernel_size-1) - 1) / stride) + 1``.

    Raises:
        ArgumentError (construction): non-positive channels/groups/kernel_size/stride/
            dilation, channels not divisible by ``groups``, negative padding, an unknown
            padding string or padding_mode, 'same' with a stride.
        ShapeError (call): input not 2-D/3-D or with the wrong number of channels.
    """
    _nd = 1
    _function = staticmethod(F.conv1d)


class Conv2d(_Conv):
    """2-D convolution over (N, C_in, H, W) or unbatched (C_in, H, W); see
    :func:`tinynet.nn.functional.conv2d`.

    Args:
        in_channels (int): channels of the input.
        out_channels (int): channels of the output.
        kernel_size (int or pair): size of the kernel.
        stride (int or pair): default 1.
        padding (int, pair, 'same' or 'valid'): default 0.
        dilation (int or pair): default 1.
        groups (int): default 1.
        bias (bool): default True.
        padding_mode (str): 'zeros' (default), 'reflect', 'replicate' or 'circular'.
        device, dtype: where and in which float dtype the parameters are made (PyTorch's
            factory kwargs); default the default device and float32.

    Shape:
        input (N, C_in, H, W) -> output (N, C_out, H_out, W_out),
        ``H_out = floor((H + 2*padding - dilation*(kernel_size-1) - 1) / stride) + 1``.

    Raises:
        ArgumentError (construction): as Conv1d.
        ShapeError (call): input not 3-D/4-D or with the wrong number of channels.
    """
    _nd = 2
    _function = staticmethod(F.conv2d)


class Conv3d(_Conv):
    """3-D convolution over (N, C_in, D, H, W) or unbatched (C_in, D, H, W); see
    :func:`tinynet.nn.functional.conv3d`.

    Args:
        in_channels (int): channels of the input.
        out_channels (int): channels of the output.
        kernel_size (int or triple): size of the kernel.
        stride (int or triple): default 1.
        padding (int, triple, 'same' or 'valid'): default 0.
        dilation (int or triple): default 1.
        groups (int): default 1.
        bias (bool): default True.
        padding_mode (str): 'zeros' (default), 'reflect', 'replicate' or 'circular'.
        device, dtype: where and in which float dtype the parameters are made (PyTorch's
            factory kwargs); default the default device and float32.

    Shape:
        (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out),
        ``D_out = floor((D + 2*padding - dilation*(kernel_size-1) - 1) / stride) + 1`` (likewise H, W).

    Raises:
        ArgumentError (construction): as Conv1d.
        ShapeError (call): input not 4-D/5-D or with the wrong number of channels.
    """
    _nd = 3
    _function = staticmethod(F.conv3d)
