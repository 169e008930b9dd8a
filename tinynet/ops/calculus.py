"""Differences and integrals along a dimension: ``diff`` (the ``n``-th forward
difference), ``trapezoid``/``trapz`` and ``cumulative_trapezoid``, composed of tinynet's
differentiable ops.

The trapezoid rule over ``dim``: ``sum((y[1:] + y[:-1]) / 2 * dx)``, with ``dx`` the
spacing (a number) or ``diff(x)`` for sample points ``x``; the cumulative form is the
running sum of the same terms.

``gradient`` estimates derivatives by second-order central differences inside and first- or
second-order one-sided differences at the edges (``numpy.gradient``'s formulas, which
PyTorch's follow), for uniform spacing or given sample coordinates.
"""
import numbers

import numpy

from .. import backend, dtypes
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..tensor import Tensor
from .arith import add, mul, sub
from .division import div
from .join import cat
from .reduction import sum as _sum
from .scan import cumsum
from .split import narrow
from .util import check_int, check_tensor, dim_index


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``dim``: ``x[i+1] - x[i]``, after joining
    ``prepend`` and ``append`` to ``input``. Differentiable.

    Raises:
        ArgumentTypeError: not a Tensor.
        ArgumentError: ``n < 0``.
        ShapeError: a 0-d input.
        IndexOutOfRangeError: ``dim`` outside the input.
    """
    check_tensor("diff", "input", input)
    if input.ndim == 0:
        raise ShapeError("diff: expects input to be at least one-dimensional, got a 0-d tensor")
    n = check_int("diff", "n", n, 0)
    d = dim_index("diff", dim, input.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[d]
        if length == 0:
            break
        x = sub(x.narrow(d, 1, length - 1), x.narrow(d, 0, length - 1))
    return x


def _trapezoid_terms(op, y, x, dx, dim):
    check_tensor(op, "y", y)
    if y.ndim == 0:
        raise ShapeError(f"{op}: y must have at least one dimension")
    d = dim_index(op, dim, y.ndim)
    n = y.shape[d]
    if n < 2:
        return None, d
    mid = div(narrow(y, d, 1, n - 1) + narrow(y, d, 0, n - 1), 2)
    if x is not None and dx is not None:
        raise ArgumentError(f"{op}: give either x or dx, not both")
    if x is None:
        step = 1.0 if dx is None else dx
        if isinstance(step, bool) or not isinstance(step, (int, float)):
            raise ArgumentTypeError(f"{op}: dx must be a number, got {type(step).__name__}")
        return mul(mid, step), d
    if not isinstance(x, Tensor):
        raise ArgumentTypeError(f"{op}: x must be a Tensor, got {type(x).__name__}")
    if x.ndim == 1:
        if x.shape[0] != n:
            raise ShapeError(f"{op}: x has {x.shape[0]} points, y has {n} along dim {dim}")
        spacing = x[1:] - x[:-1]
        spacing = spacing.reshape([n - 1 if i == d else 1 for i in range(y.ndim)])
    else:
        if x.ndim != y.ndim or x.shape[d] != n:
            raise ShapeError(f"{op}: x of shape {tuple(x.shape)} does not match y of shape {tuple(y.shape)}")
        spacing = narrow(x, d, 1, n - 1) - narrow(x, d, 0, n - 1)
    return mul(mid, spacing), d


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of ``y`` over ``dim`` by the trapezoid rule, with sample points ``x``
    (1-D, or of ``y``'s shape) or a constant spacing ``dx`` (default 1).

    Raises:
        ArgumentTypeError: non-Tensors, a non-number dx.
        ArgumentError: both x and dx given.
        ShapeError: a 0-d ``y`` or sample points that do not match it.
    """
    terms, d = _trapezoid_terms("trapezoid", y, x, dx, dim)
    if terms is None:  # fewer than two samples: an empty sum
        return _sum(mul(narrow(y, d, 0, 0), 1.0), d)
    return _sum(terms, d)


def trapz(y, x=None, *, dx=None, dim=-1):
    """An alias of :func:`trapezoid` (NumPy's old name, kept by PyTorch)."""
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid-rule integral of ``y`` over ``dim``: one value fewer than ``y``
    along ``dim``. Arguments and errors as :func:`trapezoid`."""
    terms, d = _trapezoid_terms("cumulative_trapezoid", y, x, dx, dim)
    if terms is None:
        return mul(narrow(y, d, 0, 0), 1.0)
    return cumsum(terms, d)


def _spacings(input, spacing, dims):
    """Per dim in ``dims``: a number (uniform spacing) or (float64 coordinate array, the coordinates' dtype)."""
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (numbers.Real, Tensor)) and not isinstance(spacing, bool) and not (
            isinstance(spacing, Tensor) and spacing.ndim):
        return [float(spacing.item() if isinstance(spacing, Tensor) else spacing)] * len(dims)
    if not isinstance(spacing, (list, tuple)):
        raise ArgumentTypeError(f"gradient: spacing must be a number, or a list of numbers or of 1-D tensors, got "
                                f"{type(spacing).__name__}")
    if len(spacing) != len(dims):
        raise ArgumentError(f"gradient: expected spacing to be unspecified, a scalar, or a list of length {len(dims)} "
                            f"(one per dimension), got a list of length {len(spacing)}")
    out = []
    for d, h in zip(dims, spacing):
        if isinstance(h, Tensor) and h.ndim == 1:
            if h.shape[0] != input.shape[d]:
                raise ShapeError(f"gradient: the coordinates of dimension {d} must have {input.shape[d]} entries, got "
                                 f"{h.shape[0]}")
            out.append((backend.to_device(h.numpy(force=True).astype(numpy.float64), input.device), h.dtype))
        elif isinstance(h, (numbers.Real, Tensor)) and not isinstance(h, bool):
            out.append(float(h.item() if isinstance(h, Tensor) else h))
        else:
            raise ArgumentTypeError(f"gradient: each spacing must be a number or a 1-D tensor, got {type(h).__name__}")
    return out


def _along(c, d, ndim, dtype):
    """Coefficient array ``c`` shaped to broadcast along dim ``d``, in ``dtype``, as a tensor."""
    return Tensor._wrap(c.reshape((-1,) + (1,) * (ndim - d - 1)).astype(dtype))


def _gradient_1d(f, d, h, edge_order):
    """The derivative estimate of ``f`` along dim ``d`` for spacing ``h`` (number or coordinates)."""
    n, nd = f.shape[d], f.ndim

    def part(start, length):
        return narrow(f, d, start, length)
    xp = backend.array_module(f.array)
    if isinstance(h, float):
        inner = div(sub(part(2, n - 2), part(0, n - 2)), 2 * h)
        if edge_order == 1:
            first, last = div(sub(part(1, 1), part(0, 1)), h), div(sub(part(n - 1, 1), part(n - 2, 1)), h)
        else:
            first = div(sub(sub(mul(part(1, 1), 4.0), mul(part(0, 1), 3.0)), part(2, 1)), 2 * h)
            last = div(sub(add(mul(part(n - 1, 1), 3.0), part(n - 3, 1)), mul(part(n - 2, 1), 4.0)), 2 * h)
        return cat([first, inner, last], d)
    x = h
    d1, d2 = x[1:-1] - x[:-2], x[2:] - x[1:-1]
    coef = [-d2 / (d1 * (d1 + d2)), (d2 - d1) / (d1 * d2), d1 / (d2 * (d1 + d2))]
    inner = _combine([part(0, n - 2), part(1, n - 2), part(2, n - 2)], coef, d, nd, f.dtype)
    if edge_order == 1:
        first = div(sub(part(1, 1), part(0, 1)), float(x[1] - x[0]))
        last = div(sub(part(n - 1, 1), part(n - 2, 1)), float(x[n - 1] - x[n - 2]))
    else:
        a, b = float(x[1] - x[0]), float(x[2] - x[1])
        first = _combine([part(0, 1), part(1, 1), part(2, 1)], [xp.asarray([v]) for v in (
            -(2 * a + b) / (a * (a + b)), (a + b) / (a * b), -a / (b * (a + b)))], d, nd, f.dtype)
        a, b = float(x[n - 2] - x[n - 3]), float(x[n - 1] - x[n - 2])
        last = _combine([part(n - 3, 1), part(n - 2, 1), part(n - 1, 1)], [xp.asarray([v]) for v in (
            b / (a * (a + b)), -(a + b) / (a * b), (2 * b + a) / (b * (a + b)))], d, nd, f.dtype)
    return cat([first, inner, last], d)


def _combine(parts, coefs, d, nd, dtype):
    out = None
    for p, c in zip(parts, coefs):
        term = mul(p, _along(c, d, nd, dtype))
        out = term if out is None else add(out, term)
    return out


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates of the partial derivatives of the function sampled by ``input``, one tensor per
    dim in ``dim`` (default every dim): central differences inside, one-sided ones of order
    ``edge_order`` (1 or 2) at the edges. ``spacing``: a number (the same step for every dim),
    a list of numbers (one per dim), or a list of 1-D coordinate tensors. Integer inputs give
    the default float dtype. Differentiable in ``input``.

    Raises:
        ArgumentError: ``edge_order`` not 1 or 2, a dim shorter than ``edge_order + 1``, or a
            spacing list of the wrong length. ShapeError: coordinates of the wrong length.
    """
    check_tensor("gradient", "input", input)
    edge_order = check_int("gradient", "edge_order", edge_order)
    if edge_order not in (1, 2):
        raise ArgumentError(f"gradient: only supports edge_order=1 and edge_order=2, got {edge_order}")
    if input.ndim == 0:
        raise ShapeError("gradient: expected a tensor of at least one dimension, got a 0-d tensor")
    dims = (tuple(range(input.ndim)) if dim is None else
            (dim_index("gradient", dim, input.ndim),) if isinstance(dim, numbers.Integral) else
            tuple(dim_index("gradient", k, input.ndim) for k in dim) if isinstance(dim, (list, tuple)) else None)
    if dims is None:
        raise ArgumentTypeError(f"gradient: dim must be an int, a list of ints or None, got {type(dim).__name__}")
    steps = _spacings(input, spacing, dims)
    if any(input.shape[d] < edge_order + 1 for d in dims):
        raise ArgumentError(f"gradient: expected each dimension size to be at least edge_order+1 = {edge_order + 1}, "
                            f"got shape {tuple(input.shape)}")
    f = input if dtypes.is_floating(input.dtype) else input.to(dtypes.float_for(input.dtype))
    out = []
    for d, h in zip(dims, steps):
        if isinstance(h, tuple):  # coordinates: the result in the dtype promoted with theirs (PyTorch's)
            h, dt = h
            promoted = dtypes.promote_types(f.dtype, dt if dtypes.is_floating(dt) else f.dtype)
            out.append(_gradient_1d(f.to(promoted), d, h, edge_order))
        else:
            out.append(_gradient_1d(f, d, h, edge_order))
    return tuple(out)
