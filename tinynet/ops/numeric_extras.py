"""Numerical helpers PyTorch scripts use, composed of tinynet's differentiable ops:
``cross``, ``diag_embed``, ``diagflat``, ``trapezoid``/``trapz``, ``cumulative_trapezoid``,
``cov``, ``corrcoef`` and ``vander``.

* ``cov`` (NumPy's and PyTorch's definition): rows are variables, columns observations;
  with frequency weights ``f`` and observation weights ``a``, ``w = f a``,
  ``mean = sum(x w) / sum(w)`` and ``cov = (x - mean) diag(w) (x - mean)^T / norm`` with
  ``norm = sum(w) - correction`` (no ``a``) or ``sum(w) - correction sum(w a) / sum(w)``.
* ``corrcoef``: ``cov`` divided by the outer product of the standard deviations, clipped to
  [-1, 1].
* The trapezoid rule over ``dim``: ``sum((y[1:] + y[:-1]) / 2 * dx)``, with ``dx`` the
  spacing (a number) or ``diff(x)`` for sample points ``x``.
"""
import warnings

from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .arith import mul, sub
from .arrange_extras import broadcast_tensors
from .creation import eye
from .division import div
from .join import stack
from .pad import pad
from .reduction import sum as _sum
from .scan import cumsum
from .shape import flatten, movedim, unsqueeze
from .split import narrow, unbind
from .unary import clamp, sqrt
from .util import check_int, check_tensor, dim_index


def cross(input, other, dim=None):
    """The cross product of 3-vectors along ``dim`` (the two broadcast). ``dim=None`` takes
    the first dim of size 3, with PyTorch's deprecation warning.

    Raises:
        ArgumentTypeError: an argument is not a Tensor.
        ShapeError: the shapes do not broadcast, or ``dim`` is not of size 3.
        IndexOutOfRangeError: ``dim`` out of range.
    """
    check_tensor("cross", "input", input)
    check_tensor("cross", "other", other)
    a, b = broadcast_tensors(input, other)
    if dim is None:
        sizes = [i for i, s in enumerate(a.shape) if s == 3]
        if not sizes:
            raise ShapeError(f"cross: no dimension of size 3 in input of shape {tuple(a.shape)}")
        warnings.warn("cross: using the first dimension of size 3 because dim is not given (PyTorch's deprecated "
                      "default); pass dim explicitly", UserWarning, stacklevel=2)
        d = sizes[0]
    else:
        d = dim_index("cross", dim, a.ndim)
        if a.shape[d] != 3:
            raise ShapeError(f"cross: dimension {dim} does not have size 3, got shape {tuple(a.shape)}")
    a0, a1, a2 = unbind(a, d)
    b0, b1, b2 = unbind(b, d)
    return stack([sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2)), sub(mul(a0, b1), mul(a1, b0))], d)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Matrices whose diagonal ``offset`` (dims ``dim1``, ``dim2`` of the output) holds the
    last dim of ``input``; zeros elsewhere. Output: one dim more than ``input``.

    Raises:
        ArgumentTypeError: not a Tensor, or a non-int offset/dim.
        ArgumentError: ``dim1`` and ``dim2`` are the same dim.
        IndexOutOfRangeError: a dim out of range.
    """
    check_tensor("diag_embed", "input", input)
    k = check_int("diag_embed", "offset", offset)
    nd = input.ndim + 1
    d1, d2 = dim_index("diag_embed", dim1, nd), dim_index("diag_embed", dim2, nd)
    if d1 == d2:
        raise ArgumentError(f"diag_embed: diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input.shape[-1] if input.ndim else 1
    x = input if input.ndim else input.reshape(1)
    m = mul(unsqueeze(x, -1), eye(n, dtype=x.dtype, device=x.device))
    if k:  # shift the diagonal: columns right (k > 0) or rows down (k < 0)
        m = pad(m, (k, 0, 0, k) if k > 0 else (0, -k, -k, 0))
    return movedim(m, (-2, -1), (d1, d2))


def diagflat(input, offset=0):
    """A 2-D tensor with the flattened ``input`` on its diagonal ``offset``.

    Raises:
        ArgumentTypeError: not a Tensor, or a non-int offset.
    """
    check_tensor("diagflat", "input", input)
    return diag_embed(flatten(input), offset)


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


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (a 1-D input is one
    variable: a 0-d result), observations in the columns, with optional integer frequency
    weights and float observation weights (both (N,)); see the module's formula.

    Raises:
        ArgumentTypeError / DTypeError: non-Tensors, integer fweights expected.
        ShapeError: ``input`` with more than 2 dims, or weights of the wrong shape.
    """
    check_tensor("cov", "input", input)
    correction = check_int("cov", "correction", correction)
    if input.ndim > 2:
        raise ShapeError(f"cov: expected input with two or fewer dimensions, got {input.ndim}")
    x = input if input.ndim == 2 else input.reshape(1, -1)
    if not x.is_floating_point() and not x.is_complex():  # (complex reaches matmul, which refuses it)
        x = x.float()
    n = x.shape[1]
    w = None
    for name, v in (("fweights", fweights), ("aweights", aweights)):
        if v is None:
            continue
        check_tensor("cov", name, v)
        if v.ndim != 1 or v.shape[0] != n:
            raise ShapeError(f"cov: expected {name} to have one element per observation ({n}), got shape "
                             f"{tuple(v.shape)}")
        if name == "fweights" and v.array.dtype.kind not in "iu":
            raise DTypeError(f"cov: expected fweights to have an integral dtype, got {v.dtype}")
        w = v if w is None else mul(w, v)
    if w is None:
        mean = _sum(x, 1, keepdim=True) / n
        norm = n - correction
        centred = sub(x, mean)
        c = div(centred @ centred.t(), norm)
    else:
        w = w.to(x.dtype)
        w_sum = _sum(w)
        mean = div(_sum(mul(x, w), 1, keepdim=True), w_sum)
        norm = sub(w_sum, correction) if aweights is None else sub(
            w_sum, div(mul(_sum(mul(w, aweights.to(x.dtype))), correction), w_sum))
        centred = sub(x, mean)
        c = div(centred @ mul(centred, w).t(), norm)
    return c.reshape(()) if input.ndim < 2 else c


def corrcoef(input):
    """Pearson correlation coefficients of the rows of ``input`` (see :func:`cov`), clipped
    to [-1, 1].

    Raises:
        ArgumentTypeError: not a Tensor.
        ShapeError: more than 2 dims.
    """
    c = cov(input)
    if c.ndim == 0:
        return div(c, c)
    std = sqrt(c.diagonal())
    return clamp(div(div(c, unsqueeze(std, 1)), unsqueeze(std, 0)), -1, 1)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D ``x``: column ``j`` is ``x ** (N - 1 - j)`` (or
    ``x ** j`` with ``increasing``); ``N`` defaults to ``len(x)``.

    Raises:
        ArgumentTypeError: not a Tensor, or a non-int N.
        ShapeError: ``x`` not 1-D.
        ArgumentError: a negative N.
    """
    check_tensor("vander", "x", x)
    if x.ndim != 1:
        raise ShapeError(f"vander: x must be a one-dimensional tensor, got shape {tuple(x.shape)}")
    n = x.shape[0] if N is None else check_int("vander", "N", N, 0)
    powers = range(n) if increasing else range(n - 1, -1, -1)
    if n == 0:
        return mul(x.reshape(-1, 1)[:, :0], 1)
    return stack([x ** p if p else x ** 0 for p in powers], 1)
