"""Running (cumulative) ops along one dim: ``cumsum``, ``cumprod``, ``cummax``, ``cummin``,
``logcumsumexp``.

Gradients (``g`` the output gradient, ``rev`` a cumulative sum from the end):

- ``cumsum``: ``rev(g)``, i.e. ``flip(cumsum(flip(g)))``.
- ``cumprod``: ``rev(g * y) / x`` where no zero comes at or before ``x_k`` in its slice;
  at the slice's first zero ``z``, ``rev(g * cumprod(x with x_z = 1))``; after it, 0 (each
  product there holds ``x_z = 0``). Exact with zeros, as PyTorch. Differentiated again
  (``create_graph``) with a zero in the input, it uses the O(n^2) form
  ``d_k = sum_{i >= k} g_i prod_{j <= i, j != k} x_j``, whose derivative is exact too.
- ``cummax``/``cummin``: the gradient goes to the index each output came from.
- ``logcumsumexp``: ``d x_j = sum_{i >= j} g_i exp(x_j - y_i)``, computed in log space
  for positive and negative ``g`` apart (PyTorch's, after TensorFlow's).

Everything is twice differentiable. Running maxima and log-add-exp use NumPy's
``ufunc.accumulate``; on CuPy (which lacks it) a doubling scan (Hillis-Steele,
``log2(n)`` passes).
"""
import collections

import numpy

from ..dtypes import is_floating
from .. import backend, dtypes
from ..autograd import Op
from ..errors import DTypeError
from ..tensor import Tensor
from .autocast import autocast_op
from .conversion import to
from .sorting import Pick
from .util import check_tensor, dim_index, is_graph

# torch.return_types.<name>: (values, indices)
CummaxResult = collections.namedtuple("cummax", ["values", "indices"])  # type: ignore[name-match]  # (torch.return_types names)
CumminResult = collections.namedtuple("cummin", ["values", "indices"])  # type: ignore[name-match]  # (torch.return_types names)


def scan(xp, name, x, axis):
    """Inclusive scan of the binary ufunc ``xp.<name>`` along ``axis``."""
    f = getattr(xp, name)
    if xp is numpy:
        return f.accumulate(x, axis=axis)
    y = x.copy()
    n, s = x.shape[axis], 1
    while s < n:  # each pass combines every element with the one s places before
        hi = (slice(None),) * axis + (slice(s, None),)
        lo = (slice(None),) * axis + (slice(0, n - s),)
        y[hi] = f(y[hi], y[lo])
        s *= 2
    return y


def _acc(dtype):
    """The accumulation dtype: float32 for float16 (PyTorch's acc_type), else ``dtype``."""
    return numpy.dtype(numpy.float32) if dtype == numpy.float16 else dtype


class Flip(Op):
    """``x`` reversed along ``axis`` (a copy); its own gradient."""
    name = "flip"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, axis):
        self.axis = axis

    def forward(self, xp, x):
        return xp.ascontiguousarray(xp.flip(x, self.axis))

    def backward(self, xp, gy):
        return (Flip(self.axis).call(xp, gy),)


def reverse_cumsum(xp, g, axis):
    """``out_k = sum_{i >= k} g_i`` along ``axis`` (arrays or, in a graph backward, tensors)."""
    if g.ndim == 0:
        return g
    return Flip(axis).call(xp, Cumsum(axis).call(xp, Flip(axis).call(xp, g)))


class Cumsum(Op):
    name = "cumsum"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, axis):
        self.axis = axis

    def forward(self, xp, x):
        if x.ndim == 0:
            return x.copy()
        return xp.cumsum(x, axis=self.axis, dtype=_acc(x.dtype)).astype(x.dtype, copy=False)

    def backward(self, xp, gy):
        return (reverse_cumsum(xp, gy, self.axis),)


class Cumprod(Op):
    name = "cumprod"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, axis):
        self.axis = axis

    def forward(self, xp, x):
        y = x.copy() if x.ndim == 0 else xp.cumprod(x, axis=self.axis, dtype=_acc(x.dtype)).astype(x.dtype, copy=False)
        if self.needs_input_grad[0] and x.ndim:
            zero = x == 0
            if bool(zero.any()):
                nz = xp.cumsum(zero, axis=self.axis)
                self.save_for_backward(x, y, nz == 0, zero & (nz == 1))  # before the first zero; it
            else:
                self.save_for_backward(x, y, None, None)
        return y

    def backward(self, xp, gy):
        if gy.ndim == 0:
            return (gy,)
        x, y, before, first = self.saved
        axis = self.axis
        if before is None:  # no zeros
            return (reverse_cumsum(xp, gy * y, axis) / x,)
        if is_graph(xp):
            return (self._quadratic(xp, gy, x),)
        one, zero = xp.ones_like(x), xp.zeros_like(x)
        a = reverse_cumsum(xp, gy * y, axis) / xp.where(before, x, one)
        b = reverse_cumsum(xp, gy * Cumprod(axis).call(xp, xp.where(first, one, x)), axis)
        return (xp.where(before, a, xp.where(first, b, zero)),)

    def _quadratic(self, xp, gy, x):
        """``d_k = sum_{i >= k} g_i prod_{j <= i, j != k} x_j`` through an (n, n) matrix per
        slice: row k is x with x_k = 1, cumulated; differentiable everywhere."""
        axis, n = self.axis, x.shape[self.axis]
        am = backend.array_module(x.array)
        xs, gs = xp.swapaxes(x, axis, -1), xp.swapaxes(gy, axis, -1)
        shape = tuple(xs.shape[:-1]) + (n, n)
        eye = Tensor._wrap(am.eye(n, dtype=bool))
        upper = Tensor._wrap(am.triu(am.ones((n, n), dtype=bool)))  # i >= k
        rows = xp.broadcast_to(xp.expand_dims(xs, -2), shape)
        c = Cumprod(len(shape) - 1).call(xp, xp.where(eye, xp.ones_like(rows), rows))
        terms = xp.broadcast_to(xp.expand_dims(gs, -2), shape) * c
        d = xp.sum(xp.where(upper, terms, xp.zeros_like(terms)), axis=len(shape) - 1)
        return xp.swapaxes(d, axis, -1)


class CumExtreme(Pick):
    """Running max (``largest``) or min along ``axis``; each index is the latest position
    holding the running value (``>=``/``<=``, PyTorch's), and a NaN, once seen, stays."""
    name = "cummax"

    def __init__(self, axis, largest):
        super().__init__(axis)
        self.largest = largest
        self.name = "cummax" if largest else "cummin"

    def choose(self, xp, x):
        axis = self.axis
        run = scan(xp, "maximum" if self.largest else "minimum", x, axis)
        mark = x == run
        if is_floating(x.dtype):
            mark |= xp.isnan(x)
        shape = [1] * x.ndim
        shape[axis] = x.shape[axis]
        pos = xp.arange(x.shape[axis]).reshape(shape)
        return scan(xp, "maximum", xp.where(mark, pos, 0), axis)


class LogCumSumExp(Op):
    name = "logcumsumexp"
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, axis):
        self.axis = axis

    def forward(self, xp, x):
        y = x.copy() if x.ndim == 0 else scan(xp, "logaddexp", x.astype(_acc(x.dtype)), self.axis).astype(x.dtype)
        self.save_for_backward(x, y)
        return y

    def backward(self, xp, gy):
        x, y = self.saved
        if gy.ndim == 0:
            return (gy,)
        axis = self.axis
        lowest = float(numpy.finfo(gy.dtype).min)  # log(0) without -inf, as PyTorch
        floor = xp.zeros_like(gy) + lowest
        log_abs = xp.log(xp.abs(xp.where(gy == 0, xp.ones_like(gy), gy)))

        def part(log_g):  # exp(x_j + log sum_{i >= j} exp(log_g_i - y_i))
            rev = Flip(axis).call(xp, LogCumSumExp(axis).call(xp, Flip(axis).call(xp, log_g - y)))
            return xp.exp(rev + x)
        with numpy.errstate(over="ignore"):  # lowest + x may round to -inf: exp gives the 0 it stands for
            return (part(xp.where(gy > 0, log_abs, floor)) - part(xp.where(gy < 0, log_abs, floor)),)


# ---- public functions -----------------------------------------------------------------
def _accumulate(op, cls, input, dim, dtype):
    check_tensor(op, "input", input)
    d = dim_index(op, dim, input.ndim)
    dt = dtypes.as_dtype(dtype, op)
    if dt is None and input.dtype.kind in "biu":
        dt = dtypes.int64  # PyTorch accumulates bool and integers as int64
    if dt is not None and dt != input.dtype:
        input = to(input, dtype=dt)
    return cls(d).apply(input)


@autocast_op
def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along ``dim``: ``out_i = input_0 + ... + input_i``.

    Args:
        input: a tensor. dim (int). dtype (keyword-only): the input is cast to it first;
            by default floats keep their dtype and bool/integer inputs accumulate as int64.

    Raises:
        ArgumentTypeError: dim not an int. IndexOutOfRangeError: dim out of range.
        DTypeError: an unknown dtype.
    """
    return _accumulate("cumsum", Cumsum, input, dim, dtype)


@autocast_op
def cumprod(input, dim, *, dtype=None):
    """Cumulative product along ``dim``: ``out_i = input_0 * ... * input_i``; dtypes as
    :func:`cumsum`. The gradient is exact where the input has zeros (module docstring).

    Raises:
        as :func:`cumsum`.
    """
    return _accumulate("cumprod", Cumprod, input, dim, dtype)


def _extreme(op, result, input, dim, largest):
    check_tensor(op, "input", input)
    d = dim_index(op, dim, input.ndim)
    fn = CumExtreme(d, largest)
    values = fn.apply(input)
    return result(values, Tensor._wrap(fn.indices.astype(numpy.int64, copy=False)))


def cummax(input, dim):
    """Running maximum along ``dim`` and where it was found, as a ``(values, indices)``
    named tuple. Ties take the latest index; a NaN propagates (at the latest NaN's index).

    Raises:
        ArgumentTypeError: dim not an int. IndexOutOfRangeError: dim out of range.
    """
    return _extreme("cummax", CummaxResult, input, dim, True)


def cummin(input, dim):
    """Running minimum along ``dim`` and where it was found (as :func:`cummax`)."""
    return _extreme("cummin", CumminResult, input, dim, False)


def logcumsumexp(input, dim):
    """``out_i = log(exp(input_0) + ... + exp(input_i))`` along ``dim``, computed stably
    (running log-add-exp).

    Raises:
        DTypeError: a bool or integer input (as PyTorch).
        ArgumentTypeError: dim not an int. IndexOutOfRangeError: dim out of range.
    """
    check_tensor("logcumsumexp", "input", input)
    d = dim_index("logcumsumexp", dim, input.ndim)
    if not is_floating(input.dtype):
        raise DTypeError(f"logcumsumexp: expected a floating-point input, got {input.dtype}")
    return LogCumSumExp(d).apply(input)
