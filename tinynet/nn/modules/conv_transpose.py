"""Transposed convolution layers: ``ConvTranspose1d``, ``ConvTranspose2d``, ``ConvTranspose3d``.

The weight is (in_channels, out_channels / groups, *kernel_size), initialised as PyTorch
does (the convolution layers' init on that shape, so ``fan_in = out_channels/groups *
prod(kernel_size)``). ``forward(input, output_size=None)``: ``output_size`` picks the
output padding that gives that size, as in PyTorch.

Difference from PyTorch: ``output_padding`` is checked at construction (< stride or
dilation per dim); PyTorch checks it at the first call.
"""
from typing import Any
from ... import errors
from .. import functional as F
from .conv import _ConvNd


class _ConvTransposeNd(_ConvNd):
    _transposed = True
    _function: Any = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        layer = type(self).__name__
        if padding_mode != "zeros":
            raise errors.ArgumentError(f'{layer}: only "zeros" padding mode is supported, got '
                                       f"padding_mode={padding_mode!r}")
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                         padding_mode, output_padding, device=device, dtype=dtype)
        if any(o >= s and o >= d for o, s, d in zip(self.output_padding, self.stride, self.dilation)):
            raise errors.ArgumentError(f"{layer}: output padding must be smaller than either stride or dilation, "
                                       f"got output_padding={self.output_padding}, stride={self.stride}, "
                                       f"dilation={self.dilation}")

    def _output_padding(self, input, output_size):
        """The output padding giving ``output_size`` (PyTorch's rule), or the layer's own."""
        if output_size is None:
            return self.output_padding
        nd = self._nd
        batch = input.ndim == nd + 2
        if not isinstance(output_size, (tuple, list)):
            raise errors.ArgumentTypeError(f"{self!r}: output_size must be a tuple of ints, got "
                                           f"{type(output_size).__name__}")
        size = tuple(output_size)
        if len(size) == nd + (2 if batch else 1):
            size = size[-nd:]
        if len(size) != nd:
            raise errors.ArgumentError(f"{self!r}: for {input.ndim}-D input, output_size must have {nd} or "
                                       f"{nd + (2 if batch else 1)} elements, got {tuple(output_size)}")
        spatial = input.shape[-nd:]
        low = [(n - 1) * s - 2 * p + d * (k - 1) + 1
               for n, s, p, d, k in zip(spatial, self.stride, self.padding, self.dilation, self.kernel_size)]
        high = [lo + s - 1 for lo, s in zip(low, self.stride)]
        if any(not lo <= int(n) <= hi for n, lo, hi in zip(size, low, high)):
            raise errors.ArgumentError(f"{self!r}: requested an output size of {tuple(output_size)}, but valid "
                                       f"sizes range from {low} to {high} (for an input of {spatial})")
        return tuple(int(n) - lo for n, lo in zip(size, low))

    def forward(self, input, output_size=None):
        self._check_input(input)
        output_padding = self._output_padding(input, output_size)
        return type(self)._function(input, self.weight, self.bias, self.stride, self.padding, output_padding,
                                    self.groups, self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution over (N, C_in, L) or unbatched (C_in, L); see
    :func:`tinynet.nn.functional.conv_transpose1d`.

    Args:
        in_channels (int): channels of the input.
        out_channels (int): channels of the output.
        kernel_size (int or 1-tuple): size of the kernel.
        stride (int or 1-tuple): default 1.
        padding (int or 1-tuple): default 0.
        output_padding (int or 1-tuple): default 0; below stride or dilation.
        groups (int): default 1.
        bias (bool): default True.
        dilation (int or 1-tuple): default 1.
        padding_mode (str): 'zeros' (the only mode).
        device, dtype: where and in which float dtype the parameters are made (PyTorch's
            factory kwargs); default the default device and float32.

    Shape:
        (N, C_in, L) -> (N, C_out, L_out),
        ``L_out = (L - 1)*stride - 2*padding + dilation*(kernel_size - 1) + output_padding + 1``.

    Raises:
        ArgumentError (construction): non-positive channels/groups/kernel_size/stride/
            dilation, channels not divisible by groups, negative padding, output_padding
            not below stride or dilation, a padding_mode other than 'zeros'.
        ShapeError (call): input not 2-D/3-D or with the wrong number of channels.
        ArgumentError (call): an ``output_size`` out of the reachable range.
    """
    _nd = 1
    _function = staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution over (N, C_in, H, W) or unbatched (C_in, H, W); see
    :func:`tinynet.nn.functional.conv_transpose2d`.

    Args:
        in_channels (int): channels of the input.
        out_channels (int): channels of the output.
        kernel_size (int or pair): size of the kernel.
        stride (int or pair): default 1.
        padding (int or pair): default 0.
        output_padding (int or pair): default 0; below stride or dilation per dim.
        groups (int): default 1.
        bias (bool): default True.
        dilation (int or pair): default 1.
        padding_mode (str): 'zeros' (the only mode).
        device, dtype: where and in which float dtype the parameters are made (PyTorch's
            factory kwargs); default the default device and float32.

    Shape:
        (N, C_in, H, W) -> (N, C_out, H_out, W_out),
        ``H_out = (H - 1)*stride - 2*padding + dilation*(kernel_size - 1) + output_padding + 1``.

    Raises:
        ShapeError: (at call) input not 3-D/4-D; otherwise as ConvTranspose1d.
    """
    _nd = 2
    _function = staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution over (N, C_in, D, H, W) or unbatched (C_in, D, H, W); see
    :func:`tinynet.nn.functional.conv_transpose3d`.

    Args:
        in_channels (int): channels of the input.
        out_channels (int): channels of the output.
        kernel_size (int or triple): size of the kernel.
        stride (int or triple): default 1.
        padding (int or triple): default 0.
        output_padding (int or triple): default 0; below stride or dilation per dim.
        groups (int): default 1.
        bias (bool): default True.
        dilation (int or triple): default 1.
        padding_mode (str): 'zeros' (the only mode).
        device, dtype: where and in which float dtype the parameters are made (PyTorch's
            factory kwargs); default the default device and float32.

    Shape:
        (N, C_in, D, H, W) -> (N, C_out, D_out, H_out, W_out),
        ``D_out = (D - 1)*stride - 2*padding + dilation*(kernel_size - 1) + output_padding + 1``.

    Raises:
        ShapeError: (at call) input not 4-D/5-D; otherwise as ConvTranspose1d.
    """
    _nd = 3
    _function = staticmethod(F.conv_transpose3d)
