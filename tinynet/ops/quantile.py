"""``quantile`` and ``nanquantile``, composed of :func:`sort`, :func:`gather` and arithmetic, so
the gradient flows to the one or two sorted values each quantile reads.

For a slice of ``n`` values sorted ascending, ``v[0] <= ... <= v[n-1]``, the quantile ``q``
sits at position ``p = q (n - 1)``; with ``lo = floor(p)`` and ``hi = ceil(p)`` the
interpolations are PyTorch's (and NumPy's): ``linear`` ``v[lo] + (p - lo) (v[hi] - v[lo])``,
``lower`` ``v[lo]``, ``higher`` ``v[hi]``, ``midpoint`` ``(v[lo] + v[hi]) / 2`` and
``nearest`` ``v[round(p)]`` (round half to even). ``quantile`` gives NaN for a slice holding
a NaN; ``nanquantile`` drops the NaNs (``n`` counts the rest) and gives NaN for an all-NaN slice.
"""
import numbers

import numpy

from ..dtypes import is_floating
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .creation import tensor as _tensor
from .gather import gather
from .select import where
from .shape import expand, flatten, movedim, reshape, squeeze, unsqueeze
from .sorting import sort
from .util import check_tensor, dim_index

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(op, input, q, dim, keepdim, interpolation, ignore_nan):
    check_tensor(op, "input", input)
    if not is_floating(input.array.dtype):
        raise DTypeError(f"{op}: input tensor must be either float or double dtype, got {input.dtype}")
    if interpolation not in _MODES:
        raise ArgumentError(f"{op}: interpolation must be one of {', '.join(_MODES)}, got {interpolation!r}")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise ShapeError(f"{op}: q must be a scalar or 1-D tensor, got {q.ndim} dims")
        if q.dtype != input.dtype:
            raise DTypeError(f"{op}: q tensor must be of the input's dtype {input.dtype}, got {q.dtype}")
        scalar, qs = q.ndim == 0, q.detach().to(device=input.device).reshape(-1)
    elif isinstance(q, numbers.Real) and not isinstance(q, bool):
        scalar, qs = True, _tensor([float(q)], dtype=input.dtype, device=input.device)
    else:
        raise ArgumentTypeError(f"{op}: q must be a float or a tensor, got {type(q).__name__}")
    values = qs.numpy(force=True) if qs.numel() else numpy.zeros(0)
    if ((values < 0) | (values > 1) | numpy.isnan(values)).any():
        raise ArgumentError(f"{op}: q values must be in the range [0, 1], got {values.tolist()}")
    if input.numel() == 0:
        raise ShapeError(f"{op}: input tensor must be non-empty")
    if dim is None:
        x, out_shape = flatten(input), ((1,) * input.ndim if keepdim else ())
    else:
        d = dim_index(op, dim, input.ndim)
        x = movedim(input, d, -1)
        out_shape = tuple(1 if i == d else s for i, s in enumerate(input.shape)) if keepdim else tuple(
            s for i, s in enumerate(input.shape) if i != d)
    n = x.shape[-1]
    lead = tuple(x.shape[:-1])
    ordered = sort(x, -1).values                                   # NaNs sort last
    nans = x.isnan().sum(-1)                                       # (*lead,)
    count = (n - nans) if ignore_nan else nans * 0 + n             # the values each slice ranks
    shape_q = (qs.numel(),) + (1,) * len(lead)
    pos = reshape(qs, shape_q) * (count.to(input.dtype) - 1).clamp(min=0)   # (Q, *lead)
    last = (count - 1).clamp(min=0).long()
    lo = pos.floor().long().clamp(min=0)
    hi = where(pos.ceil().long() < last, pos.ceil().long(), last)
    if interpolation == "nearest":
        lo = hi = pos.round().long()
    table = expand(unsqueeze(ordered, 0), (qs.numel(),) + lead + (n,))

    def at(i):
        return squeeze(gather(table, -1, unsqueeze(i, -1)), -1)
    if interpolation in ("lower", "nearest"):
        out = at(lo)
    elif interpolation == "higher":
        out = at(hi)
    elif interpolation == "midpoint":
        a = at(lo)
        out = a + (at(hi) - a) * 0.5
    else:
        a = at(lo)
        out = a + (at(hi) - a) * (pos - lo.to(input.dtype))
    bad = (count == 0) if ignore_nan else (nans > 0)               # all-NaN / any-NaN slices
    out = where(unsqueeze(bad, 0), float("nan"), out)
    out = reshape(out, (qs.numel(),) + out_shape)
    return out[0] if scalar else out


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-quantiles of ``input`` along ``dim`` (of all its values when None).

    Args:
        input (Tensor): float.
        q (float or Tensor): in [0, 1]; a 1-D tensor gives one result per entry, stacked
            along a new first dim.
        dim (int, optional): default all values. keepdim (bool): default False.
        interpolation (str): ``linear`` (default), ``lower``, ``higher``, ``midpoint`` or
            ``nearest`` (module docstring).

    Returns:
        Tensor of the input's dtype: the reduced shape, with ``len(q)`` in front for a 1-D q.
        NaN where the slice holds a NaN.

    Raises:
        ArgumentTypeError: not a Tensor, or q neither a number nor a tensor.
        DTypeError: a non-float input, or a q tensor of another dtype.
        ArgumentError: q outside [0, 1], an unknown interpolation.
        ShapeError: an empty input, or q with more than one dim.
        IndexOutOfRangeError: ``dim`` out of range.
    """
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """:func:`quantile` ignoring NaNs (NaN only for an all-NaN slice). Arguments, returns
    and errors as :func:`quantile`."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True)


METHODS = {"quantile": quantile, "nanquantile": nanquantile}
