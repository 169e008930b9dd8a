"""``conv_tbc``: 1-D convolution of a (time, batch, channels) sequence, run as
:func:`~tinynet.nn.functional.conv1d` on the (batch, channels, time) view, so its gradient
and its CPU/GPU paths are conv1d's.

``y[t, b, o] = bias[o] + sum_{k, c} weight[k, c, o] * x_pad[t + k, b, c]``, with ``pad``
zero frames before and after; output length ``T + 2*pad - K + 1``.
"""
from ..errors import ShapeError
from .autocast import autocast_op
from .conv import conv1d
from .shape import permute
from .util import check_float, check_int, check_tensor


@autocast_op
def conv_tbc(input, weight, bias, pad=0):
    """1-D sequence convolution over (Time, Batch, Channels) input.

    Args:
        input (Tensor): float (T, B, C_in).
        weight (Tensor): (K, C_in, C_out), the input's dtype.
        bias (Tensor): (C_out,).
        pad (int): zero frames added before and after the sequence. Default 0.

    Returns:
        Tensor (T + 2*pad - K + 1, B, C_out).

    Raises:
        ArgumentTypeError / DTypeError: non-tensors, non-float or mixed dtypes.
        ShapeError: input or weight not 3-D, bias not 1-D, channel counts that differ, an
            empty output.
        ArgumentError: a negative pad.
    """
    op = "conv_tbc"
    check_float(op, "input", input)
    check_tensor(op, "weight", weight)
    check_tensor(op, "bias", bias)
    pad = check_int(op, "pad", pad, 0)
    if input.ndim != 3:
        raise ShapeError(f"{op}: input must have 3 dims (time, batch, in_channel), got shape {tuple(input.shape)}")
    if weight.ndim != 3:
        raise ShapeError(f"{op}: weight must have 3 dims (kernel_width, in_channels, out_channels), got shape "
                         f"{tuple(weight.shape)}")
    if bias.ndim != 1:
        raise ShapeError(f"{op}: bias must be 1-D, got shape {tuple(bias.shape)}")
    if input.shape[2] != weight.shape[1]:
        raise ShapeError(f"{op}: input has {input.shape[2]} channels but weight expects {weight.shape[1]}")
    if bias.shape[0] != weight.shape[2]:
        raise ShapeError(f"{op}: bias has {bias.shape[0]} entries but weight has {weight.shape[2]} output channels")
    y = conv1d(permute(input, (1, 2, 0)), permute(weight, (2, 1, 0)), bias, 1, pad)
    return permute(y, (2, 0, 1))
