"""Counting ops (not differentiable, as in PyTorch): ``bincount``, ``histc`` and
``unique_consecutive``, on NumPy and CuPy arrays alike.

* ``bincount``: ``out[v]`` counts (or sums ``weights`` of) the entries equal to ``v``; length
  ``max(input) + 1`` or ``minlength``, whichever is larger.
* ``histc``: ``bins`` equal-width bins over ``[min, max]`` (the data's range when both are 0;
  widened by 1 on each side when that range is a single value, as PyTorch does); values
  outside are ignored and ``max`` itself falls in the last bin.
* ``unique_consecutive``: the first of each run of equal consecutive elements (or slices
  along ``dim``), with the run number of every input element and the run lengths.
* ``histogram``/``histogramdd``: counts (or summed ``weight``, or a density) per bin of
  given edges or of equal width over ``range`` (the data's range by default), through
  ``numpy.histogram``/``histogramdd`` (CuPy's on the GPU), with NumPy's rules: the last bin
  includes its right edge, and a range of one value is widened by 0.5 each side.
"""
import builtins
import collections
import contextlib
import math
import numbers

import numpy

from .. import backend
from ..dtypes import is_floating
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, IndexOutOfRangeError, ShapeError
from ..tensor import Tensor
from .util import check_flag, check_int, check_real, check_tensor, dim_index


def bincount(input, weights=None, minlength=0):
    """The number of occurrences of each value in a 1-D tensor of non-negative integers
    (int64), or the sum of ``weights`` per value (in the weights' float dtype).

    Raises:
        ArgumentTypeError: non-Tensors, or a non-int minlength.
        DTypeError: a non-integer input.
        ShapeError: input not 1-D, or weights of another shape.
        ArgumentError: a negative minlength, or (on the CPU) a negative value.
    """
    check_tensor("bincount", "input", input)
    a = input.array
    if a.dtype.kind not in "iu":
        raise DTypeError(f"bincount: only supports integral inputs, got {input.dtype}")
    if a.ndim != 1:
        raise ShapeError(f"bincount: only supports 1-d non-negative integral inputs, got shape {tuple(a.shape)}")
    n = check_int("bincount", "minlength", minlength, 0)
    xp = backend.array_module(a)
    if not backend.is_gpu_array(a) and a.size and int(a.min()) < 0:
        raise ArgumentError(f"bincount: only supports 1-d non-negative integral inputs, got the value {int(a.min())}")
    w = None
    if weights is not None:
        check_tensor("bincount", "weights", weights)
        if tuple(weights.shape) != tuple(a.shape):
            raise ShapeError(f"bincount: weights must have the input's shape {tuple(a.shape)}, got "
                             f"{tuple(weights.shape)}")
        w = weights.array
        if not is_floating(w.dtype):
            w = w.astype("float64")
    if a.size == 0:  # NumPy and CuPy refuse nothing here, but keep PyTorch's dtypes
        return Tensor._wrap(xp.zeros(n, dtype="int64" if w is None else w.dtype))
    out = xp.bincount(a, weights=w, minlength=n)
    return Tensor._wrap(out.astype("int64") if w is None else out.astype(w.dtype))


def histc(input, bins=100, min=0, max=0):
    """A histogram of the values of a float tensor: ``bins`` counts (in the input's dtype).

    Raises:
        ArgumentTypeError: not a Tensor, or non-number bounds.
        DTypeError: a non-float input (as PyTorch).
        ArgumentError: bins < 1, min > max, or non-finite bounds.
    """
    check_tensor("histc", "input", input)
    a = input.array
    if not is_floating(a.dtype):
        raise DTypeError(f"histc: not implemented for {input.dtype} tensors")
    nb = check_int("histc", "bins", bins, 1)
    for name, v in (("min", min), ("max", max)):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise ArgumentTypeError(f"histc: {name} must be a number, got {type(v).__name__}")
    xp = backend.array_module(a)
    lo, hi = float(min), float(max)
    if lo == hi and a.size:
        lo, hi = float(a.min()), float(a.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise ArgumentError(f"histc: max must be larger than min, got min={min}, max={max}")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ArgumentError(f"histc: range of [{lo}, {hi}] is not finite")
    flat = a.reshape(-1).astype("float64")
    inside = flat[(flat >= lo) & (flat <= hi)]
    index = xp.minimum(xp.floor((inside - lo) * nb / (hi - lo)).astype("int64"), nb - 1)
    return Tensor._wrap(xp.bincount(index, minlength=nb).astype(a.dtype))


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The first element (or slice along ``dim``) of each run of equal consecutive ones;
    with ``return_inverse`` also each input element's run number (input's shape, or
    ``(input.shape[dim],)``), with ``return_counts`` the run lengths (both int64).

    Returns:
        Tensor, or a tuple (output, inverse?, counts?) with the ones asked for.

    Raises:
        ArgumentTypeError: not a Tensor, or non-bool flags.
        IndexOutOfRangeError: ``dim`` out of range, or given for a 0-d tensor.
    """
    check_real("unique_consecutive", "input", check_tensor("unique_consecutive", "input", input))
    want_inverse = check_flag("unique_consecutive", "return_inverse", return_inverse)
    want_counts = check_flag("unique_consecutive", "return_counts", return_counts)
    a = input.array
    xp = backend.array_module(a)
    if dim is None:
        flat = a.reshape(-1)
        change = flat[1:] != flat[:-1]
        along, shape = flat, a.shape
        take = lambda keep: flat[keep]  # noqa: E731
    else:
        if a.ndim == 0:
            raise IndexOutOfRangeError(f"unique_consecutive: dim {dim} given for a 0-d tensor")
        d = dim_index("unique_consecutive", dim, a.ndim)
        moved = xp.moveaxis(a, d, 0)
        rest = int(numpy.prod(moved.shape[1:]))
        change = (moved[1:] != moved[:-1]).reshape(max(moved.shape[0] - 1, 0), rest).any(axis=1)
        along, shape = moved, (a.shape[d],)
        take = lambda keep: xp.moveaxis(moved[keep], 0, d)  # noqa: E731
    n = along.shape[0]
    keep = xp.concatenate([xp.ones(min(n, 1), dtype=bool), change])
    out = [Tensor._wrap(take(keep))]
    if want_inverse:
        out.append(Tensor._wrap((xp.cumsum(keep) - 1).astype("int64").reshape(shape)))
    if want_counts:
        starts = xp.nonzero(keep)[0]
        out.append(Tensor._wrap(xp.diff(xp.concatenate([starts, xp.asarray([n])])).astype("int64")))
    return out[0] if len(out) == 1 else tuple(out)


HistogramResult = collections.namedtuple("histogram", ["hist", "bin_edges"])  # type: ignore[name-match]
HistogramddResult = collections.namedtuple("histogramdd", ["hist", "bin_edges"])  # type: ignore[name-match]


def _hist_range(op, range, d):
    """``range`` as ``d`` (low, high) pairs, or None."""
    if range is None:
        return None
    values = list(range) if isinstance(range, (list, tuple)) else None
    if values is None or len(values) != 2 * d or not all(
            isinstance(v, numbers.Real) and not isinstance(v, bool) and math.isfinite(v) for v in values):
        raise ArgumentError(f"{op}: range must be {2 * d} finite numbers (low, high per dimension), got {range!r}")
    pairs = [(float(values[2 * k]), float(values[2 * k + 1])) for k in builtins.range(d)]
    if any(lo > hi for lo, hi in pairs):
        raise ArgumentError(f"{op}: range's lows must not exceed its highs, got {range!r}")
    return pairs


def _hist_weight(op, weight, shape, dtype):
    if weight is None:
        return None
    check_tensor(op, "weight", weight)
    if tuple(weight.shape) != tuple(shape) or weight.dtype != dtype:
        raise ShapeError(f"{op}: weight must have shape {tuple(shape)} and dtype {dtype}, got {tuple(weight.shape)} "
                         f"{weight.dtype}")
    return weight.array


def _bins(op, bins, d, xp, dtype):
    """``bins`` per dimension: ints, or 1-D increasing edge arrays."""
    items = list(bins) if isinstance(bins, (list, tuple)) else [bins] * d
    if len(items) != d:
        raise ShapeError(f"{op}: expected {d} bin counts or edge tensors, got {len(items)}")
    out = []
    for b in items:
        if isinstance(b, Tensor):
            if b.ndim != 1 or b.numel() < 2 or b.dtype != dtype or bool((b.array[1:] < b.array[:-1]).any()):
                raise ArgumentError(f"{op}: bin edges must be a 1-D increasing {dtype} tensor of 2 or more values")
            out.append(b.array)
        else:
            out.append(check_int(op, "bins", b, 1))
    return out


@contextlib.contextmanager
def _numpy_errors(op):
    """NumPy's/CuPy's ValueError (a range that is not finite: NaN or inf in the data) as ArgumentError."""
    try:
        yield
    except ValueError as exc:
        raise ArgumentError(f"{op}: {exc}") from None


def histogram(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """The histogram of the values of a float tensor: ``(hist, bin_edges)``, ``hist`` in the
    input's dtype. ``bins`` is a count of equal-width bins over ``range`` (low, high; default
    the data's min and max) or a 1-D tensor of increasing edges. ``weight`` (the input's shape)
    sums weights instead of counting; ``density`` divides by the total times the bin width.

    Raises:
        DTypeError: a non-float input. ArgumentError: a bad range, bins < 1 or bad edges.
        ShapeError: a weight of another shape.
    """
    check_tensor("histogram", "input", input)
    if not is_floating(input.dtype):
        raise DTypeError(f"histogram: not implemented for {input.dtype} (floating-point inputs only)")
    xp = backend.array_module(input.array)
    (b,) = _bins("histogram", bins, 1, xp, input.dtype)
    pairs = _hist_range("histogram", range, 1)
    w = _hist_weight("histogram", weight, input.shape, input.dtype)
    density = check_flag("histogram", "density", density)
    with _numpy_errors("histogram"):
        hist, edges = xp.histogram(input.array.reshape(-1), bins=b, range=pairs[0] if pairs else None,
                                   weights=None if w is None else w.reshape(-1), density=density)
    return HistogramResult(Tensor._wrap(hist.astype(input.dtype)), Tensor._wrap(edges.astype(input.dtype)))


def histogramdd(input, bins, *, range=None, weight=None, density=False):  # noqa: A002
    """The histogram of ``N`` points of ``D`` dimensions (the input's last dim is ``D``):
    ``(hist, bin_edges)``, ``hist`` of shape (bins_0, ..., bins_{D-1}) in the input's float
    dtype and one edge tensor per dimension. ``bins``: an int for every dimension, a list of
    ints, or a list of edge tensors; ``range``: ``2 D`` numbers (low, high per dimension).

    Raises:
        DTypeError: a non-float input. ShapeError: a 0-d input or bins of the wrong length.
        ArgumentError: a bad range or bins.
    """
    check_tensor("histogramdd", "input", input)
    if not is_floating(input.dtype):
        raise DTypeError(f"histogramdd: not implemented for {input.dtype} (floating-point inputs only)")
    if input.ndim == 0 or input.shape[-1] == 0:
        raise ShapeError(f"histogramdd: input must be points x dims with at least one dim, got shape "
                         f"{tuple(input.shape)}")
    d = input.shape[-1]
    xp = backend.array_module(input.array)
    points = input.array.reshape(-1, d)
    b = _bins("histogramdd", bins, d, xp, input.dtype)
    pairs = _hist_range("histogramdd", range, d)
    w = _hist_weight("histogramdd", weight, input.shape[:-1], input.dtype)
    density = check_flag("histogramdd", "density", density)
    with _numpy_errors("histogramdd"):
        hist, edges = xp.histogramdd(points, bins=b, range=pairs, weights=None if w is None else w.reshape(-1),
                                     density=density)
    return HistogramddResult(Tensor._wrap(hist.astype(input.dtype)),
                             tuple(Tensor._wrap(e.astype(input.dtype)) for e in edges))


