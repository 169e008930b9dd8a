"""Padding: ``pad`` (PyTorch's ``F.pad``) in the modes constant, reflect, replicate, circular.

``pad`` lists (left, right) pairs from the last dimension backwards. Along one dimension of
size ``n`` padded by ``(lo, hi)``, output position ``j`` reads input position ``i = j - lo``
(constant mode: the value outside ``[0, n)``), folded back into range by the mode:

* ``reflect``: ``|i|``, then ``2(n-1) - i`` past the end (the edge is not repeated);
  needs ``lo, hi < n``.
* ``replicate``: ``clip(i, 0, n-1)``.
* ``circular``: ``i mod n``; needs ``lo, hi <= n``.

The constant mode is :class:`Pad` (an array filled with the value, the input copied in; a
negative width crops; backward cuts the padding off). The other modes are one
:class:`~tinynet.ops.axis_map.AxisMap` per padded dimension, whose backward adds each
output's gradient back to the position it read, so they are differentiable any number of
times.

Differences from PyTorch: PyTorch raises ``NotImplementedError`` for a padding length that
does not fit the input's dims in a non-constant mode (tinynet: ``ArgumentError``, a
``ValueError``), and ``RuntimeError`` for the other bad values (tinynet: ``ArgumentError``);
non-constant modes do not crop (negative widths raise; PyTorch crops).
"""
import functools

import numpy

from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError
from .axis_map import AxisMap, transpose_table
from .util import check_number, check_tensor, sizes


class Pad(Op):
    """Pad with ``widths`` ((before, after) per dim); in constant mode a negative width
    crops instead (as PyTorch). Backward cuts the padding off the gradient and puts zeros
    where the input was cropped."""
    name = "pad"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, widths, mode, value):
        self.widths, self.mode, self.value = widths, mode, value

    def forward(self, xp, x):
        self.in_shape = x.shape
        crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(self.widths, x.shape))
        if any(lo < 0 or hi < 0 for lo, hi in self.widths):
            x = x[crop]
        grow = tuple((max(lo, 0), max(hi, 0)) for lo, hi in self.widths)
        if self.mode == "constant":
            # filled, then the input copied in: two launches, where numpy/cupy.pad writes each
            # side's padding on its own (CuPy's pad took ~0.2 ms of host time per call)
            y = xp.full(tuple(n + lo + hi for n, (lo, hi) in zip(x.shape, grow)), self.value, dtype=x.dtype)
            y[tuple(slice(lo, lo + n) for n, (lo, _) in zip(x.shape, grow))] = x
            return y
        return xp.pad(x, grow, mode=self.mode)

    def backward(self, xp, gy):
        if self.mode != "constant":
            raise NotImplementedError("pad: Pad's backward is for mode='constant'; the other modes use AxisMap")
        sl = tuple(slice(max(lo, 0), gn - max(hi, 0)) for (lo, hi), gn in zip(self.widths, gy.shape))
        g = gy[sl]
        cropped = tuple((max(-lo, 0), max(-hi, 0)) for lo, hi in self.widths)
        if any(lo or hi for lo, hi in cropped):
            g = Pad(cropped, "constant", 0).call(xp, g)
        return (g,)


@functools.lru_cache(maxsize=512)
def _tables(mode, n, lo, hi, dtype):
    """The forward and transposed AxisMap tables of one padded dimension."""
    i = numpy.arange(n + lo + hi) - lo
    if mode == "reflect":
        i = numpy.abs(i)
        i = numpy.where(i > n - 1, 2 * (n - 1) - i, i)
    elif mode == "replicate":
        i = numpy.clip(i, 0, n - 1)
    else:  # circular
        i = i % n
    table = (i[None].astype(numpy.int64), None)
    return table, transpose_table(table[0], None, n, numpy.dtype(dtype))


_MODES = ("constant", "reflect", "replicate", "circular")


def _check_non_constant(input, pad, mode, value):
    """PyTorch's rules for the reflect/replicate/circular modes; returns the (lo, hi) pairs
    from the last dim backwards."""
    if value is not None and value != 0:
        raise ArgumentError(f"pad: padding mode {mode!r} doesn't take a value argument, got value={value}")
    k = len(pad) // 2
    if not 1 <= k <= 3 or input.ndim not in (k + 1, k + 2):
        raise ArgumentError(
            f"pad: mode={mode!r} pads the last 1, 2 or 3 dims of an unbatched or batched input (padding of length "
            f"2, 4 or 6 for a 2-3-D, 3-4-D or 4-5-D input); got padding of length {len(pad)} for a "
            f"{input.ndim}-D input of shape {input.shape}")
    pairs = [(int(pad[2 * i]), int(pad[2 * i + 1])) for i in range(k)]
    if any(lo < 0 or hi < 0 for lo, hi in pairs):
        raise ArgumentError(f"pad: negative padding (cropping) needs mode='constant', got {tuple(pad)}")
    for i, (lo, hi) in enumerate(pairs):
        d = input.ndim - 1 - i
        n = input.shape[d]
        if n == 0:
            raise ArgumentError(f"pad: mode={mode!r} needs non-empty padded dims, got dimension {d} of size 0 "
                                f"in input of shape {input.shape}")
        if mode == "reflect" and (lo >= n or hi >= n):
            raise ArgumentError(f"pad: reflect padding {(lo, hi)} of dimension {d} must be smaller than its size "
                                f"{n} (input of shape {input.shape})")
        if mode == "circular" and (lo > n or hi > n):
            raise ArgumentError(f"pad: circular padding {(lo, hi)} of dimension {d} wraps around more than once: "
                                f"it must be at most its size {n} (input of shape {input.shape})")
    return pairs


def pad(input, pad, mode="constant", value=None):
    """Pad ``input``; ``pad`` lists (left, right) pairs from the LAST dimension backwards.

    ``F.pad(x, (1, 1, 2, 2))`` pads the last dim by 1 and the one before by 2, as in
    PyTorch. Every mode is differentiable (twice and more).

    Args:
        input (Tensor): any shape in constant mode; reflect/replicate/circular pad the last
            1, 2 or 3 dims of an unbatched or batched input: ``len(pad)`` 2 for 2-D/3-D
            input, 4 for 3-D/4-D, 6 for 4-D/5-D.
        pad (sequence of ints): even length, at most ``2 * input.ndim``.
        mode (str): ``'constant'`` (default; a negative width crops), ``'reflect'``
            (mirror without repeating the edge; widths < the dim's size), ``'replicate'``
            (repeat the edge), ``'circular'`` (wrap around; widths <= the dim's size).
        value (float): the fill of constant mode (default 0); other modes accept only
            None or 0.

    Returns:
        Tensor of ``input``'s dtype; each padded dim grows by its ``lo + hi``.

    Raises:
        ArgumentTypeError: ``input`` is not a Tensor.
        ArgumentError: odd length of ``pad``, more pairs than dims, an unknown mode, cropping
            more than a dimension holds; outside constant mode: a value, negative widths,
            a padding length that does not fit the input's dims, an empty padded dim,
            reflect widths >= the size, circular widths > the size.
    """
    check_tensor("pad", "input", input)
    if not isinstance(mode, str) or mode not in _MODES:
        raise ArgumentError(f"pad: mode must be one of {list(_MODES)}, got {mode!r}")
    if not isinstance(pad, (tuple, list)):
        raise ArgumentTypeError(f"pad: pad must be a tuple of ints, got {type(pad).__name__}")
    pad = sizes("pad", (tuple(pad),), "pad")
    if value is not None:
        check_number("pad", "value", value)
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ArgumentError(f"pad: expected an even number of at most {2 * input.ndim} values, got {tuple(pad)}")
    if input.ndim == 0:  # nothing to pad (pad is empty here): a copy
        from .conversion import clone
        return clone(input)
    if mode != "constant":
        out = input
        for i, (lo, hi) in enumerate(_check_non_constant(input, pad, mode, value)):
            d = input.ndim - 1 - i
            if lo or hi:
                table, transposed = _tables(mode, input.shape[d], lo, hi, str(input.dtype))
                out = AxisMap("pad", d, table, transposed).apply(out)
        return out if out is not input else Pad(((0, 0),) * input.ndim, "constant", 0.0).apply(input)  # a copy
    widths = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        d = input.ndim - 1 - i
        lo, hi = int(pad[2 * i]), int(pad[2 * i + 1])
        if input.shape[d] + min(lo, 0) + min(hi, 0) < 0:
            raise ArgumentError(f"pad: padding {(lo, hi)} crops more than dimension {d} of size {input.shape[d]}")
        widths[d] = (lo, hi)
    return Pad(tuple(widths), "constant", 0.0 if value is None else value).apply(input)
