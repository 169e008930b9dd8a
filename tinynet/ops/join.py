"""Joining and padding: ``cat``, ``stack``, ``hstack``, ``vstack``, ``pad``.

Backwards split the gradient back into the pieces (``cat``, ``stack``) or cut the
padding off it (``pad``, constant mode).
"""
import numpy

from ..autograd import Op
from ..errors import ArgumentError, ShapeError
from ..tensor import Tensor
from .util import check_tensor, dim_index


class Concat(Op):
    name = "cat"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, axis, dtype):
        self.axis, self.dtype = axis, dtype

    def forward(self, xp, *xs):
        self.bounds = [int(b) for b in numpy.cumsum([x.shape[self.axis] for x in xs])[:-1]]
        return xp.concatenate([x.astype(self.dtype, copy=False) for x in xs], axis=self.axis)

    def backward(self, xp, gy):
        return tuple(xp.split(gy, self.bounds, axis=self.axis))


class Stack(Op):
    name = "stack"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, axis, dtype):
        self.axis, self.dtype = axis, dtype

    def forward(self, xp, *xs):
        self.count = len(xs)
        return xp.stack([x.astype(self.dtype, copy=False) for x in xs], axis=self.axis)

    def backward(self, xp, gy):
        return tuple(xp.take(gy, i, axis=self.axis) for i in range(self.count))


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
            return xp.pad(x, grow, mode="constant", constant_values=self.value)
        return xp.pad(x, grow, mode=self.mode)

    def backward(self, xp, gy):
        if self.mode != "constant":
            raise NotImplementedError("pad: backward is implemented for mode='constant' only")
        sl = tuple(slice(max(lo, 0), gn - max(hi, 0)) for (lo, hi), gn in zip(self.widths, gy.shape))
        g = gy[sl]
        cropped = tuple((max(-lo, 0), max(-hi, 0)) for lo, hi in self.widths)
        if any(lo or hi for lo, hi in cropped):
            g = Pad(cropped, "constant", 0).call(xp, g)
        return (g,)


def _seq(op, tensors):
    if isinstance(tensors, Tensor):
        raise ArgumentError(f"{op}: expected a sequence of tensors, got a single Tensor")
    tensors = list(tensors)
    if not tensors:
        raise ArgumentError(f"{op}: expected a non-empty sequence of tensors")
    for t in tensors:
        check_tensor(op, "each element of tensors", t)
    return tensors


def _common_dtype(ts):
    from .. import dtypes
    dt = ts[0].array.dtype
    for t in ts[1:]:
        dt = dtypes.promote_types(dt, t.array.dtype)
    return dt


def cat(tensors, dim=0):
    """Concatenate tensors along an existing dimension (dtypes promote; 1-D empty tensors
    are skipped, as in PyTorch).

    Raises:
        ShapeError: a 0-d tensor, or ranks or sizes off ``dim`` differ.
        ArgumentError: an empty sequence. IndexOutOfRangeError: ``dim`` out of range.
    """
    ts = _seq("cat", tensors)
    for i, t in enumerate(ts):
        if t.ndim == 0:
            raise ShapeError(f"cat: zero-dimensional tensor (at position {i}) cannot be concatenated")
    ts = [t for t in ts if not (t.ndim == 1 and t.shape[0] == 0)] or ts[:1]  # PyTorch skips 1-D empties
    d = dim_index("cat", dim, ts[0].ndim)
    for t in ts[1:]:
        if t.ndim != ts[0].ndim or t.shape[:d] + t.shape[d + 1:] != ts[0].shape[:d] + ts[0].shape[d + 1:]:
            raise ShapeError(f"cat: tensors must match except in dim {dim}, got {ts[0].shape} and {t.shape}")
    return Concat(d, _common_dtype(ts)).apply(*ts)


concat = concatenate = cat


def stack(tensors, dim=0):
    """Stack equal-shaped tensors along a new dimension.

    Raises:
        ShapeError: shapes differ.
    """
    ts = _seq("stack", tensors)
    for t in ts[1:]:
        if t.shape != ts[0].shape:
            raise ShapeError(f"stack: expected all shapes equal to {ts[0].shape}, got {t.shape}")
    return Stack(dim_index("stack", dim, ts[0].ndim + 1), _common_dtype(ts)).apply(*ts)


def hstack(tensors):
    """Concatenate along dim 1 (dim 0 for 1-D tensors; 0-d tensors count as 1-D)."""
    ts = [t.reshape(1) if t.ndim == 0 else t for t in _seq("hstack", tensors)]
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    """Concatenate along dim 0 (0-d and 1-D tensors become rows)."""
    ts = _seq("vstack", tensors)
    return cat([t.reshape(1, -1) if t.ndim < 2 else t for t in ts], 0)


def pad(input, pad, mode="constant", value=None):
    """Pad ``input``; ``pad`` lists (left, right) pairs from the LAST dimension backwards.

    ``F.pad(x, (1, 1, 2, 2))`` pads the last dim by 1 and the one before by 2, as in
    PyTorch. ``mode``: ``"constant"`` (differentiable; a negative width crops), ``"reflect"``,
    ``"replicate"``.

    Raises:
        ArgumentError: odd length of ``pad``, more pairs than dims, negative widths outside
            constant mode or cropping more than a dimension holds, or an unknown mode.
    """
    check_tensor("pad", "input", input)
    modes = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}
    if mode not in modes:
        raise ArgumentError(f"pad: mode must be one of {sorted(modes)}, got {mode!r}")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ArgumentError(f"pad: expected an even number of at most {2 * input.ndim} values, got {tuple(pad)}")
    if mode != "constant" and any(int(p) < 0 for p in pad):
        raise ArgumentError(f"pad: negative padding (cropping) needs mode='constant', got {tuple(pad)}")
    widths = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        d = input.ndim - 1 - i
        lo, hi = int(pad[2 * i]), int(pad[2 * i + 1])
        if input.shape[d] + min(lo, 0) + min(hi, 0) < 0:
            raise ArgumentError(f"pad: padding {(lo, hi)} crops more than dimension {d} of size {input.shape[d]}")
        widths[d] = (lo, hi)
    return Pad(tuple(widths), modes[mode], 0.0 if value is None else value).apply(input)
