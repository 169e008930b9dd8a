"""The rest of PyTorch's ``torch.special`` that is not a one-argument function of
:mod:`.special_functions` nor of the gamma family of :mod:`.special_gamma`: the Hurwitz
``zeta``, ``xlog1py`` and the multivariate log-gamma ``mvlgamma``/``multigammaln``; and the
Tensor methods of the special functions (``x.erfinv()``, ``lgamma()``, ``digamma()``,
``polygamma(n)``, ``i0()``, ``mvlgamma(p)``, ``igamma(other)``, ``igammac(other)`` and their
in-place forms).

Values from ``scipy.special`` / ``cupyx.scipy.special`` (by the arrays' module); gradients
as PyTorch's:

* ``zeta(x, q) = sum_k (k + q)^-x``: ``d/dq = -x zeta(x + 1, q)``; ``d/dx`` is not
  implemented (PyTorch neither): backward raises when ``x`` requires grad;
* ``xlog1py(x, y) = x log1p(y)`` (0 where ``x == 0`` unless ``y`` is NaN): ``d/dx = log1p(y)``
  (0 where ``x == 0`` and ``y <= -1``), ``d/dy = x / (1 + y)``;
* ``mvlgamma(x, p) = p (p - 1) / 4 ln(pi) + sum_{j < p} lgamma(x - j / 2)``, composed of
  ``lgamma`` (so its gradient is the sum of digammas).

The two-argument functions broadcast and take a Python number for either argument (not
both), with PyTorch's type promotion. Complex inputs are refused (DTypeError).
"""
import math
import numbers

import numpy

from .. import dtypes
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, AutogradError, DTypeError, ShapeError
from ..tensor import Tensor
from .arith import add
from .creation import tensor
from .inplace import inplace_apply
from .special_functions import floating, i0, scipy_call
from .special_gamma import digamma, erfinv, igamma, igammac, lgamma, polygamma
from .util import check_int, unbroadcast


class _Binary(Op):
    """``f(x, y)`` of two broadcasting arrays through ``scipy.special``."""
    twice_differentiable = True
    gpu_saves_generic = True
    fn = ""

    def forward(self, xp, x, y):
        if True in self.needs_input_grad:
            self.save_for_backward(x, y)
        return scipy_call(xp, self.fn, x, y)

    def backward(self, xp, gy):
        x, y = self.saved
        gx, gq = self.grads(xp, gy, x, y)
        return (unbroadcast(xp, gx, x.shape) if gx is not None else None,
                unbroadcast(xp, gq, y.shape) if gq is not None else None)


class Zeta(_Binary):
    name, fn = "special.zeta", "zeta"

    def grads(self, xp, gy, x, q):
        if self.needs_input_grad[0]:
            raise AutogradError("special.zeta: the derivative with respect to input (the exponent) is not "
                                "implemented (as in PyTorch); only other (q) is differentiable")
        return None, (gy * -x * Zeta().call(xp, x + 1, q) if self.needs_input_grad[1] else None)


class Xlog1py(_Binary):
    name, fn = "special.xlog1py", "xlog1py"

    def grads(self, xp, gy, x, y):
        gx = gq = None
        if self.needs_input_grad[0]:
            dead = (x == 0) & (y <= -1)
            safe = xp.where(dead, xp.zeros_like(y), y)
            gx = xp.where(dead, xp.zeros_like(gy), gy * xp.log1p(safe))
        if self.needs_input_grad[1]:
            gq = gy * x / (y + 1)
        return gx, gq


# ---- public functions -----------------------------------------------------------------
def mvlgamma(input, p):
    """The multivariate log-gamma function of dimension ``p``:
    ``p (p - 1) / 4 ln(pi) + sum_{j=0}^{p-1} lgamma(x - j / 2)``.

    Args:
        input (Tensor): the function is finite where every element exceeds ``(p - 1) / 2``
            (inf or NaN elsewhere, as PyTorch's, which no longer checks the values). p (int): >= 1.

    Raises:
        ArgumentTypeError: ``p`` not an int or ``input`` not a Tensor. DTypeError: complex.
        ArgumentError: ``p < 1``.

    Source: the sum of ``lgamma`` (``scipy.special.gammaln``); gradient the sum of digammas.
    """
    return _mvlgamma("mvlgamma", input, p)


def _mvlgamma(op, input, p):
    p = check_int(op, "p", p)
    if p < 1:
        raise ArgumentError(f"{op}: p has to be greater than or equal to 1, got {p}")
    x = floating(op, input)
    out = lgamma(x)
    for j in range(1, p):
        out = add(out, lgamma(add(x, -j / 2)))
    return add(out, p * (p - 1) / 4 * math.log(math.pi))


def multigammaln(input, p):
    """``torch.special.multigammaln``: :func:`mvlgamma` (the same function and errors)."""
    return _mvlgamma("special.multigammaln", input, p)


def _pair(op, input, other):
    """The two arguments as tensors of the promoted float dtype (a Python number becomes a
    0-d tensor on the other's device)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise ArgumentTypeError(f"{op}: expected at least one Tensor, got {type(input).__name__} and "
                                f"{type(other).__name__}")
    for name, v in (("input", input), ("other", other)):
        if isinstance(v, Tensor):
            if v.array.dtype.kind == "c":
                raise DTypeError(f"{op}: not implemented for complex tensors, got {name} of dtype {v.dtype}")
        elif isinstance(v, bool) or not isinstance(v, (numbers.Real, numpy.floating, numpy.integer)):
            raise ArgumentTypeError(f"{op}: {name} must be a Tensor or a real number, got {type(v).__name__}")
    like = input if isinstance(input, Tensor) else other
    dt = dtypes.float_for(dtypes.result_type(*(v.array if isinstance(v, Tensor) else v for v in (input, other))))
    a, b = (v.to(dt) if isinstance(v, Tensor) else tensor(v, dtype=dt, device=like.device) for v in (input, other))
    try:
        numpy.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ShapeError(f"{op}: shapes {tuple(a.shape)} and {tuple(b.shape)} cannot be broadcast together") from None
    return a, b


def zeta(input, other):
    """The Hurwitz zeta function ``zeta(x, q) = sum_{k >= 0} (k + q)^-x`` of ``x = input`` and
    ``q = other`` (broadcast; either may be a number). Gradient only for ``other``:
    ``-x zeta(x + 1, q)``; backward raises AutogradError when ``input`` requires grad (as
    PyTorch's NotImplementedError).

    Raises:
        ArgumentTypeError: neither is a Tensor, or a non-number. DTypeError: complex.
        ShapeError: the shapes do not broadcast.

    Source: ``scipy.special.zeta`` / ``cupyx.scipy.special.zeta``.
    """
    return Zeta().apply(*_pair("special.zeta", input, other))


def xlog1py(input, other):
    """``input * log1p(other)``, and 0 where ``input`` is 0 unless ``other`` is NaN
    (broadcast; either may be a number). Gradients in the module docstring.

    Raises:
        As :func:`zeta`. Source: ``scipy.special.xlog1py`` / ``cupyx.scipy.special.xlog1py``.
    """
    return Xlog1py().apply(*_pair("special.xlog1py", input, other))


def _method_polygamma(self, n):
    """``tinynet.polygamma(n, self)`` (PyTorch's ``Tensor.polygamma(n)``)."""
    return polygamma(n, self)


def erfinv_(self):
    """In-place :func:`erfinv`; returns the tensor."""
    return inplace_apply("erfinv_", self, erfinv)


def lgamma_(self):
    """In-place :func:`lgamma`; returns the tensor."""
    return inplace_apply("lgamma_", self, lgamma)


def digamma_(self):
    """In-place :func:`digamma`; returns the tensor."""
    return inplace_apply("digamma_", self, digamma)


def polygamma_(self, n):
    """In-place ``polygamma(n, self)``; returns the tensor."""
    return inplace_apply("polygamma_", self, lambda t: polygamma(n, t))


def i0_(self):
    """In-place :func:`i0`; returns the tensor."""
    return inplace_apply("i0_", self, i0)


def mvlgamma_(self, p):
    """In-place :func:`mvlgamma`; returns the tensor."""
    return inplace_apply("mvlgamma_", self, lambda t: _mvlgamma("mvlgamma_", t, p), composed=True)


def igamma_(self, other):
    """In-place :func:`igamma`; returns the tensor."""
    return inplace_apply("igamma_", self, lambda t: igamma(t, other))


def igammac_(self, other):
    """In-place :func:`igammac`; returns the tensor."""
    return inplace_apply("igammac_", self, lambda t: igammac(t, other))


METHODS = {"erfinv": erfinv, "lgamma": lgamma, "digamma": digamma, "polygamma": _method_polygamma, "i0": i0,
           "mvlgamma": mvlgamma, "igamma": igamma, "igammac": igammac, "erfinv_": erfinv_, "lgamma_": lgamma_,
           "digamma_": digamma_, "polygamma_": polygamma_, "i0_": i0_, "mvlgamma_": mvlgamma_, "igamma_": igamma_,
           "igammac_": igammac_}
