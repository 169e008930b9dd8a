"""Convolution layers: ``Conv2d``."""
from ...ops.window import pair
from ... import errors
from .. import functional as F, init
from .linear import _param
from .module import Module, check_input


class Conv2d(Module):
    """2-D convolution over (N, C_in, H, W); see :func:`tinynet.nn.functional.conv2d`.

    Args:
        in_channels, out_channels (int); kernel_size (int or pair);
        stride=1, padding=0 (int, pair, 'same', 'valid'), dilation=1, groups=1, bias=True,
        padding_mode='zeros' (the only mode supported).

    Shape:
        input (N, C_in, H, W) -> output (N, C_out, H_out, W_out),
        ``H_out = floor((H + 2*padding - dilation*(kernel_size-1) - 1) / stride) + 1``.

    Raises:
        ArgumentError: channels not divisible by ``groups`` or an unsupported padding_mode.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros"):
        super().__init__()
        if padding_mode != "zeros":
            raise errors.ArgumentError(f"Conv2d: only padding_mode='zeros' is supported, got {padding_mode!r}")
        if in_channels % groups or out_channels % groups:
            raise errors.ArgumentError(f"Conv2d: in_channels {in_channels} and out_channels {out_channels} must "
                             f"be divisible by groups {groups}")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = pair("Conv2d", "kernel_size", kernel_size)
        self.stride, self.dilation = pair("Conv2d", "stride", stride), pair("Conv2d", "dilation", dilation)
        self.padding = padding if isinstance(padding, str) else pair("Conv2d", "padding", padding)
        self.groups = groups
        self.weight = _param(out_channels, in_channels // groups, *self.kernel_size)
        self.bias = _param(out_channels) if bias else None
        if not bias:
            self.register_parameter("bias", None)
        init.default_layer_init_(self.weight, self.bias)

    def forward(self, input):
        check_input(repr(self), input, (4,), "(N, C, H, W)")
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding not in ((0, 0), "valid"):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        return s + ("" if self.bias is not None else ", bias=False")
