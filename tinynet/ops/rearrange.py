"""Rearranging entries: ``repeat``, ``tile``, ``repeat_interleave``, ``flip``, ``fliplr``,
``flipud``, ``rot90`` and ``roll`` (``narrow`` and ``Tensor.unfold``: :mod:`.split`; the
diagonals and triangles: :mod:`.diagonal`).

Each backward is a rearrangement of the gradient, written with ops so it can be
differentiated again: ``flip`` and ``roll`` apply themselves (with the opposite shift for
``roll``); ``repeat`` sums over the copies (reshape + sum). ``tile``, ``fliplr``, ``flipud``
and ``rot90`` are composed of those and of ``transpose``. Each returns a copy.
"""
import numbers

import numpy

from .. import backend
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from .indexing import GetItem
from .shape import flatten, reshape, transpose
from .util import check_int, check_tensor, dim_index, sizes


# ---- ops ------------------------------------------------------------------------------
class Repeat(Op):
    """``x`` tiled ``reps`` times along each dim (leading dims of size 1 added as needed)."""
    name = "repeat"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, reps):
        self.reps = reps

    def forward(self, xp, x):
        self.in_shape = x.shape
        self.padded = (1,) * (len(self.reps) - x.ndim) + x.shape
        return xp.tile(x.reshape(self.padded), self.reps)

    def backward(self, xp, gy):
        inter = tuple(v for r, n in zip(self.reps, self.padded) for v in (r, n))  # copy index outside
        g = xp.sum(xp.reshape(gy, inter), axis=tuple(range(0, len(inter), 2)))
        return (xp.reshape(g, self.in_shape),)


class RepeatInterleave(Op):
    """Each entry along ``axis`` repeated ``reps`` times (an int): backward sums the copies."""
    name = "repeat_interleave"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, axis, reps):
        self.axis, self.reps = axis, reps

    def forward(self, xp, x):
        self.in_shape = x.shape
        return xp.repeat(x, self.reps, axis=self.axis)

    def backward(self, xp, gy):
        d, s = self.axis, self.in_shape
        g = xp.reshape(gy, s[:d] + (s[d], self.reps) + s[d + 1:])
        return (xp.sum(g, axis=d + 1),)


class Flip(Op):
    name = "flip"
    complex_ok = True  # moves data only (Roll too)
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, dims):
        self.dims = dims

    def forward(self, xp, x):
        return xp.flip(x, axis=self.dims).copy() if self.dims else x.copy()

    def backward(self, xp, gy):
        return (Flip(self.dims).call(xp, gy),)


class Roll(Op):
    name = "roll"
    complex_ok = True
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, shifts, dims):
        self.shifts, self.dims = shifts, dims

    def forward(self, xp, x):
        return xp.roll(x, self.shifts, axis=self.dims)

    def backward(self, xp, gy):
        back = tuple(-s for s in self.shifts) if isinstance(self.shifts, tuple) else -self.shifts
        return (Roll(back, self.dims).call(xp, gy),)


class RepeatIndex(GetItem):
    """``x`` indexed by ``repeat(arange(n), repeats)`` along one dim: ``repeat_interleave``
    with a tensor of repeats (backward adds the copies up, :class:`IndexAddInto`)."""
    name = "repeat_interleave"


# ---- public functions ------------------------------------------------------------------
def repeat(input, *sizes_, repeats=None):
    """``input`` tiled: ``x.repeat(2, 3)`` stacks 2 copies along dim 0 and 3 along dim 1
    (PyTorch's ``Tensor.repeat``, NumPy's ``tile``; a copy). With more sizes than dims,
    leading dims of size 1 are added first. Sizes as ``*ints``, one sequence, or
    ``repeats=``.

    Raises:
        ArgumentTypeError: a size is not an int, or no sizes given.
        ShapeError: fewer sizes than ``input`` has dims. ArgumentError: a negative size.
    """
    check_tensor("repeat", "input", input)
    if repeats is not None:
        if sizes_:
            raise ArgumentTypeError("repeat: give the sizes positionally or as repeats=, not both")
        sizes_ = (repeats,)
    if not sizes_:
        raise ArgumentTypeError("repeat: missing the repeats (one int per dimension)")
    reps = sizes("repeat", sizes_, "repeats")
    if len(reps) < input.ndim:
        raise ShapeError(f"repeat: the number of repeats ({len(reps)}) can not be smaller than the number of "
                         f"dimensions of the tensor ({input.ndim})")
    if any(r < 0 for r in reps):
        raise ArgumentError(f"repeat: repeats must be non-negative, got {reps}")
    return Repeat(reps).apply(input)


def _repeats_tensor(repeats):
    if repeats.array.dtype.kind not in "iu":
        raise DTypeError(f"repeat_interleave: repeats must be an integer (int64) tensor, got {repeats.dtype}")
    if repeats.ndim > 1:
        raise ShapeError(f"repeat_interleave: repeats must be a 0-dim or 1-dim tensor, got {repeats.ndim} dims")
    a = repeats.array
    reps = (backend.cupy.asnumpy(a) if repeats.is_cuda else numpy.asarray(a)).reshape(-1)
    if (reps < 0).any():
        raise ArgumentError(f"repeat_interleave: repeats can not be negative, got {reps.tolist()}")
    return reps.astype(numpy.int64)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Repeat each entry of ``input`` along ``dim`` (``None``: of the flattened input)
    ``repeats`` times (NumPy's ``repeat``; a copy).

    ``repeats``: an int, or an int tensor (0-d, or 1-d with one count per entry along
    ``dim``). ``repeat_interleave(counts)`` with one int tensor alone gives
    ``repeat_interleave(arange(len(counts)), counts)``. ``output_size``, when given, must be
    the size of the result along ``dim``.

    Raises:
        ArgumentTypeError: ``repeats`` is neither an int nor a tensor. DTypeError: float
        repeats. ShapeError: repeats of the wrong shape. ArgumentError: negative repeats, a
        wrong ``output_size``. IndexOutOfRangeError: ``dim`` out of range.
    """
    check_tensor("repeat_interleave", "input", input)
    if repeats is None:  # repeat_interleave(counts)
        reps = _repeats_tensor(input)
        idx = numpy.repeat(numpy.arange(reps.size, dtype=numpy.int64), reps)
        xp = backend.array_module(input.array)
        out = Tensor._wrap(xp.asarray(idx))
        if output_size is not None and check_int("repeat_interleave", "output_size", output_size) != idx.size:
            raise ArgumentError(f"repeat_interleave: invalid output_size, expected {idx.size} but got {output_size}")
        return out
    if isinstance(repeats, Tensor):
        reps = _repeats_tensor(repeats)
    elif isinstance(repeats, bool) or not isinstance(repeats, (numbers.Integral, numpy.integer)):
        raise ArgumentTypeError(f"repeat_interleave: repeats must be an int or an integer tensor, "
                                f"got {type(repeats).__name__}")
    else:
        reps = int(repeats)
        if reps < 0:
            raise ArgumentError(f"repeat_interleave: repeats must be non-negative, got {reps}")
    if dim is None:
        input = flatten(input)
        d = 0
    else:
        d = dim_index("repeat_interleave", dim, input.ndim)
        if input.ndim == 0:
            input = reshape(input, 1)
    n = input.shape[d]
    if isinstance(reps, numpy.ndarray):
        if reps.size == 1:
            reps = int(reps[0])
        elif reps.size != n:
            raise ShapeError(f"repeat_interleave: repeats must have the same size as input along dim, but got "
                             f"repeats.size(0) = {reps.size} and input.size({d}) = {n}")
    total = n * reps if isinstance(reps, int) else int(reps.sum())
    if output_size is not None and check_int("repeat_interleave", "output_size", output_size) != total:
        raise ArgumentError(f"repeat_interleave: invalid output_size, expected {total} but got {output_size}")
    if isinstance(reps, int):
        return RepeatInterleave(d, reps).apply(input)
    xp = backend.array_module(input.array)
    idx = xp.asarray(numpy.repeat(numpy.arange(n, dtype=numpy.int64), reps))
    return RepeatIndex((slice(None),) * d + (idx,)).apply(input)


def _dim_list(op, name, value, ndim):
    """An int or a sequence of ints as a tuple of normalised dims (0-d tensors take 0 and -1)."""
    items = (value,) if isinstance(value, (numbers.Integral, numpy.integer)) else value
    if not isinstance(items, (tuple, list)):
        raise ArgumentTypeError(f"{op}: {name} must be an int or a sequence of ints, got {type(value).__name__}")
    return tuple(dim_index(op, check_int(op, name, d), ndim) for d in items)


def flip(input, dims, *more_dims):
    """``input`` with the order of entries reversed along ``dims`` (a copy, as PyTorch's).
    ``dims``: a sequence of ints (the method also takes them as ``x.flip(0, 1)``).

    Raises:
        ArgumentError: a dim given twice. IndexOutOfRangeError: a dim out of range.
    """
    check_tensor("flip", "input", input)
    given = (dims,) + more_dims if more_dims else dims
    norm = _dim_list("flip", "dims", given, input.ndim)
    if len(set(norm)) != len(norm):
        dup = next(d for d in norm if norm.count(d) > 1)
        raise ArgumentError(f"flip: dim {dup} appears multiple times in the list of dims {tuple(given)}")
    return Flip(norm if input.ndim else ()).apply(input)


def roll(input, shifts, dims=None):
    """Shift the entries of ``input`` cyclically by ``shifts`` along ``dims`` (ints or
    sequences of equal length; a dim given twice adds its shifts). Without ``dims`` the
    flattened tensor is rolled and the shape restored.

    Raises:
        ArgumentError: ``shifts`` and ``dims`` differ in length, or no shifts.
        IndexOutOfRangeError: a dim out of range. ArgumentTypeError: a non-int shift.
    """
    check_tensor("roll", "input", input)
    sh = (shifts,) if isinstance(shifts, (numbers.Integral, numpy.integer, Tensor)) else shifts
    if not isinstance(sh, (tuple, list)):
        raise ArgumentTypeError(f"roll: shifts must be an int or a sequence of ints, got {type(shifts).__name__}")
    sh = tuple(check_int("roll", "shifts", s) for s in sh)
    if not sh:
        raise ArgumentError("roll: shifts required (got an empty sequence)")
    if dims is None or (isinstance(dims, (tuple, list)) and not dims):
        if len(sh) != 1:
            raise ArgumentError(f"roll: shifts and dimensions must align, got {len(sh)} shifts and no dims")
        return Roll(sh[0], None).apply(input)
    if input.ndim == 0:
        raise IndexOutOfRangeError(f"roll: dimension specified as {dims} but the tensor has no dimensions")
    dl = _dim_list("roll", "dims", dims, input.ndim)
    if len(dl) != len(sh):
        raise ArgumentError(f"roll: shifts and dimensions must align, got {len(sh)} shifts and {len(dl)} dims")
    return Roll(sh, dl).apply(input)


def fliplr(input):
    """``input`` with its columns (dim 1) reversed.

    Raises:
        ShapeError: fewer than 2 dims.
    """
    check_tensor("fliplr", "input", input)
    if input.ndim < 2:
        raise ShapeError(f"fliplr: input tensor must be >= 2-d, got {input.ndim}-d")
    return flip(input, (1,))


def flipud(input):
    """``input`` with its rows (dim 0) reversed.

    Raises:
        ShapeError: a 0-d input.
    """
    check_tensor("flipud", "input", input)
    if input.ndim < 1:
        raise ShapeError("flipud: input tensor must be >= 1-d, got 0-d")
    return flip(input, (0,))


def rot90(input, k=1, dims=(0, 1)):
    """``input`` rotated by ``k`` quarter turns in the plane of ``dims``, from the first
    towards the second (counter-clockwise for ``dims=(0, 1)``).

    Raises:
        ArgumentError: ``dims`` is not two different dims.
        ArgumentTypeError: ``dims`` is not a tuple or list.
        ShapeError: fewer than 2 dims.
    """
    check_tensor("rot90", "input", input)
    k = check_int("rot90", "k", k)
    if not isinstance(dims, (tuple, list)):
        raise ArgumentTypeError(f"rot90: dims must be a tuple of two ints, got {type(dims).__name__}")
    dims = tuple(dims)
    if len(dims) != 2:
        raise ArgumentError(f"rot90: expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise ShapeError(f"rot90: expected total dims >= 2, but got total dims = {input.ndim}")
    a, b = (check_int("rot90", "dims", d) % input.ndim for d in dims)
    if a == b:
        raise ArgumentError(f"rot90: expected rotation dims to be different, but got dim0 = {dims[0]} and "
                            f"dim1 = {dims[1]}")
    k %= 4
    if k == 1:
        return transpose(flip(input, (b,)), a, b)
    if k == 2:
        return flip(input, (a, b))
    if k == 3:
        return flip(transpose(input, a, b), (b,))
    return input.clone()


def tile(input, dims):
    """``input`` repeated ``dims[i]`` times along dimension ``i``; with fewer ``dims`` than
    dimensions, leading 1s are assumed (NumPy's ``tile``; ``Tensor.repeat`` with more
    leading dims otherwise). Differentiable.

    Raises:
        ArgumentTypeError: not a Tensor, or dims that are not ints.
        ArgumentError: a negative size.
    """
    check_tensor("tile", "input", input)
    if isinstance(dims, numbers.Integral) and not isinstance(dims, bool):
        dims = (dims,)
    elif not isinstance(dims, (tuple, list)):
        raise ArgumentTypeError(f"tile: dims must be a tuple of ints, got {type(dims).__name__}")
    dims = (1,) * (input.ndim - len(dims)) + tuple(check_int("tile", "dims", d) for d in dims)
    if not dims:  # a 0-d input and no dims: the input itself, copied
        return input.clone()
    return repeat(input, dims)
