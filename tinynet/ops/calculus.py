"""Differences and integrals along a dimension: ``diff`` (the ``n``-th forward
difference), ``trapezoid``/``trapz`` and ``cumulative_trapezoid``, composed of tinynet's
differentiable ops.

The trapezoid rule over ``dim``: ``sum((y[1:] + y[:-1]) / 2 * dx)``, with ``dx`` the
spacing (a number) or ``diff(x)`` for sample points ``x``; the cumulative form is the
running sum of the same terms.
"""
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..tensor import Tensor
from .arith import mul, sub
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
