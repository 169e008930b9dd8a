"""Joining and padding: ``cat``, ``stack``, ``hstack``, ``vstack``, ``pad``.

Backwards split the gradient back into the pieces (``cat``, ``stack``) or cut the
padding off it (``pad``, constant mode).
"""
import numpy

from ..autograd import Op
from ..errors import ArgumentError, ShapeError
from ..tensor import Tensor
from .shape import unsqueeze
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
    name = "pad"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, widths, mode, value):
        self.widths, self.mode, self.value = widths, mode, value

    def forward(self, xp, x):
        self.in_shape = x.shape
        if self.mode == "constant":
            return xp.pad(x, self.widths, mode="constant", constant_values=self.value)
        return xp.pad(x, self.widths, mode=self.mode)

    def backward(self, xp, gy):
        if self.mode != "constant":
            raise NotImplementedError("pad: backward is implemented for mode='constant' only")
        sl = tuple(slice(lo, lo + n) for (lo, _), n in zip(self.widths, self.in_shape))
        return (gy[sl],)


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
    """Concatenate tensors along an existing dimension (dtypes promote).

    Raises:
        ShapeError: ranks or sizes off ``dim`` differ.
    """
    ts = _seq("cat", tensors)
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
    """Concatenate along dim 1 (dim 0 for 1-D tensors)."""
    ts = _seq("hstack", tensors)
    return cat(ts, 0 if ts[0].ndim == 1 else 1)


def vstack(tensors):
    """Concatenate along dim 0 (1-D tensors become rows)."""
    ts = _seq("vstack", tensors)
    return cat([unsqueeze(t, 0) if t.ndim == 1 else t for t in ts], 0)


def pad(input, pad, mode="constant", value=None):
    """Pad ``input``; ``pad`` lists (left, right) pairs from the LAST dimension backwards.

    ``F.pad(x, (1, 1, 2, 2))`` pads the last dim by 1 and the one before by 2, as in
    PyTorch. ``mode``: ``"constant"`` (differentiable), ``"reflect"``, ``"replicate"``.

    Raises:
        ArgumentError: odd length of ``pad``, more pairs than dims, negative widths, or an
            unknown mode.
    """
    check_tensor("pad", "input", input)
    modes = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}
    if mode not in modes:
        raise ArgumentError(f"pad: mode must be one of {sorted(modes)}, got {mode!r}")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ArgumentError(f"pad: expected an even number of at most {2 * input.ndim} values, got {tuple(pad)}")
    if any(int(p) < 0 for p in pad):
        raise ArgumentError(f"pad: negative padding (cropping) is not supported, got {tuple(pad)}")
    widths = [(0, 0)] * input.ndim
    for i in range(len(pad) // 2):
        widths[input.ndim - 1 - i] = (int(pad[2 * i]), int(pad[2 * i + 1]))
    return Pad(tuple(widths), modes[mode], 0.0 if value is None else value).apply(input)
