"""The gamma-function family and ``erfinv`` as differentiable ops, and the implicitly
reparameterised Gamma sample: what ``tinynet.distributions`` needs from special functions.

* ``lgamma`` (log |Gamma(x)|), ``digamma`` (psi), ``polygamma(n, x)``: the values come from
  ``scipy.special`` (``cupyx.scipy.special`` on CuPy: :func:`tinynet.backend.special`); each
  derivative is the next function of the family (lgamma' = digamma, digamma' = polygamma(1),
  polygamma(n)' = polygamma(n + 1)), called as an op, so second derivatives work too.
* ``erfinv``: the inverse error function; erfinv'(x) = sqrt(pi)/2 * exp(erfinv(x)^2).
* ``igamma(a, x)`` / ``igammac(a, x)``: the regularised lower and upper incomplete gamma
  functions P(a, x) and Q(a, x) = 1 - P (PyTorch's ``torch.igamma``/``torch.igammac``, alias
  ``special.gammainc``/``gammaincc``). d/dx P = x^(a-1) e^(-x) / Gamma(a); d/da has no closed
  form: :func:`gamma_cdf_grad_a` differentiates the library's P numerically (PyTorch gives no
  gradient in ``a`` at all; tinynet does).
* ``_standard_gamma(alpha)``: Gamma(alpha, 1) samples, drawn by the host generator
  (:func:`tinynet.random.host_generator`, NumPy's ``standard_gamma``, Marsaglia & Tsang 2000)
  so :func:`tinynet.manual_seed` repeats them on either device, with the implicit
  reparameterisation gradient of Figurnov, Mohamed & Mnih, "Implicit Reparameterization
  Gradients" (NeurIPS 2018), eq. 6: for z = F^-1(u; alpha) with F the CDF,
  dz/dalpha = -(dF/dalpha)(z; alpha) / f(z; alpha).

How dF/dalpha is computed (:func:`gamma_cdf_grad_a`): a central difference in ``a`` of
log P(a, x) (when P <= 1/2) or of log Q(a, x) (when P > 1/2), from ``scipy.special.gammainc``/
``gammaincc`` in float64, with step h = a * 2^-17. Differencing the logarithm of the smaller
tail keeps the relative accuracy in both tails (P and Q are computed to ~1e-15 relative
accuracy, so the rounding part of the error is ~1e-15 / h relative, and the truncation part
h^2/6 * d^3 log P / da^3 is ~1e-11 relative for the parameters seen in practice);
dF/da = P d(log P)/da = -Q d(log Q)/da. The resulting dz/dalpha = -(dF/da) / f is formed in
logarithms, exp(log P - log f) * d(log P)/da, so it does not overflow where f underflows.
Tested against PyTorch's ``torch._standard_gamma_grad`` (which uses series and rational
approximations) and by Monte Carlo (tests/test_distributions_sampling.py).

Integer inputs give the default float dtype; every computation runs in float64 and is
rounded to the input's dtype. None of these has a fused GPU kernel: CuPy runs cupyx's.
"""
import math

import numpy

from ..dtypes import is_floating
from .. import backend, dtypes
from ..autograd import Op
from ..errors import ArgumentError, DTypeError
from ..random import host_generator
from ..tensor import Tensor
from .unary import Pointwise
from .util import check_int, check_tensor, unbroadcast

_SQRT_PI_2 = math.sqrt(math.pi) / 2


def _f64(x):
    return x.astype(numpy.float64, copy=False)


def _special(xp):
    return backend.special(xp)


def _lgamma(xp, x):
    y = _special(xp).gammaln(_f64(x))
    return xp.where(x == -numpy.inf, numpy.inf, y).astype(x.dtype, copy=False)  # PyTorch: lgamma(-inf) = inf


def _polygamma(xp, n, x):
    sp = _special(xp)  # n as an array: cupyx's polygamma broadcasts its arguments as arrays
    y = sp.digamma(_f64(x)) if n == 0 else sp.polygamma(xp.asarray(float(n)), _f64(x))
    return xp.asarray(y).astype(x.dtype, copy=False)


class Digamma(Pointwise):
    """psi(x) = d/dx log Gamma(x); derivative polygamma(1, x)."""
    name = "digamma"

    @staticmethod
    def f(xp, x):
        return _polygamma(xp, 0, x)

    @staticmethod
    def df(xp, x):
        return Polygamma(1).call(xp, x)


class Polygamma(Op):
    """polygamma(n, x), the n-th derivative of digamma; derivative polygamma(n + 1, x)."""
    name = "polygamma"
    twice_differentiable = True

    def __init__(self, n):
        self.n = n

    def forward(self, xp, x):
        if self.needs_input_grad[0]:
            self.save_for_backward(x)
        return _polygamma(xp, self.n, x)

    def backward(self, xp, gy):
        return (gy * Polygamma(self.n + 1).call(xp, self.saved[0]),)


class Lgamma(Pointwise):
    """log |Gamma(x)|; derivative digamma(x)."""
    name = "lgamma"

    @staticmethod
    def f(xp, x):
        return _lgamma(xp, x)

    @staticmethod
    def df(xp, x):
        return Digamma().call(xp, x)


class Erfinv(Pointwise):
    """The inverse of erf on (-1, 1) (+-inf at +-1, NaN outside); derivative
    sqrt(pi)/2 * exp(y^2) from the output y."""
    name = "erfinv"
    uses = "y"

    @staticmethod
    def f(xp, x):
        with numpy.errstate(invalid="ignore"):
            return xp.asarray(_special(xp).erfinv(_f64(x))).astype(x.dtype, copy=False)

    @staticmethod
    def df(xp, y):
        return xp.exp(y * y) * _SQRT_PI_2


# ---- the incomplete gamma function and its derivative in a ----------------------------------
def _log_gamma_density(xp, a, x):
    """log of x^(a-1) e^-x / Gamma(a), float64 arrays (x > 0)."""
    sp = _special(xp)
    return (a - 1) * xp.log(x) - x - sp.gammaln(a)


def gamma_cdf_grad_a(xp, a, x):
    """d/da of the regularised lower incomplete gamma function P(a, x), elementwise, float64
    (the method: this module's docstring). Returns ``(dP/da, log P, log Q, dlog, lower)``:
    ``dlog`` is d(log P)/da where ``lower`` (P <= 1/2) and d(log Q)/da elsewhere, so callers
    can form ratios in logarithms."""
    sp = _special(xp)
    a, x = xp.broadcast_arrays(_f64(a), _f64(x))
    h = a * 2.0 ** -17
    with numpy.errstate(divide="ignore", invalid="ignore"):
        p, q = sp.gammainc(a, x), sp.gammaincc(a, x)
        lower = p <= 0.5
        fn = lambda b: xp.log(xp.where(lower, sp.gammainc(b, x), sp.gammaincc(b, x)))  # noqa: E731
        dlog = (fn(a + h) - fn(a - h)) / (2 * h)
        tail = xp.where(lower, p, -q)  # dP/da = P dlogP/da = -Q dlogQ/da
        return tail * dlog, xp.log(p), xp.log(q), dlog, lower


class Igamma(Op):
    """P(a, x) (``upper=False``) or Q(a, x) (``upper=True``) of broadcast ``a``, ``x``."""
    name = "igamma"

    def __init__(self, upper):
        self.upper = upper
        self.name = "igammac" if upper else "igamma"

    def forward(self, xp, a, x):
        if any(self.needs_input_grad):
            self.save_for_backward(a, x)
        sp = _special(xp)
        with numpy.errstate(invalid="ignore"):
            y = (sp.gammaincc if self.upper else sp.gammainc)(_f64(a), _f64(x))
        return xp.asarray(y).astype(dtypes.result_type(a, x), copy=False)

    def backward(self, xp, gy):
        a, x = self.saved
        sign = -1.0 if self.upper else 1.0
        ga = gx = None
        with numpy.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if self.needs_input_grad[0]:
                ga = unbroadcast(xp, gy * (sign * gamma_cdf_grad_a(xp, a, x)[0]).astype(gy.dtype), a.shape)
            if self.needs_input_grad[1]:
                dens = xp.exp(_log_gamma_density(xp, *xp.broadcast_arrays(_f64(a), _f64(x))))
                gx = unbroadcast(xp, gy * (sign * dens).astype(gy.dtype), x.shape)
        return ga, gx


# ---- Gamma samples with implicit reparameterisation ------------------------------------------
def standard_gamma_grad_array(xp, alpha, x):
    """dx/dalpha of a Gamma(alpha, 1) sample ``x`` (arrays, float64 result): Figurnov et al.
    (2018) eq. 6, -(dP/dalpha)(x; alpha) / f(x; alpha), formed in logarithms."""
    alpha, x = xp.broadcast_arrays(_f64(alpha), _f64(x))
    _, logp, logq, dlog, lower = gamma_cdf_grad_a(xp, alpha, x)
    with numpy.errstate(over="ignore", invalid="ignore"):
        logf = _log_gamma_density(xp, alpha, x)
        return xp.where(lower, -xp.exp(logp - logf) * dlog, xp.exp(logq - logf) * dlog)


class StandardGamma(Op):
    """Returns the sample drawn beforehand (``x``); backward gives ``gy * dx/dalpha``."""
    name = "_standard_gamma"

    def forward(self, xp, alpha, x):
        if self.needs_input_grad[0]:
            self.save_for_backward(alpha, x)
        return x.copy()

    def backward(self, xp, gy):
        alpha, x = self.saved
        return gy * standard_gamma_grad_array(xp, alpha, x).astype(gy.dtype), None


def _float_input(op, name, t):
    check_tensor(op, name, t)
    return t if is_floating(t.array.dtype) else t.to(dtypes.float_for(t.array.dtype))


def _standard_gamma(concentration, generator=None):
    """Gamma(concentration, 1) samples, one per element of ``concentration`` (same shape,
    dtype and device), differentiable in ``concentration`` by implicit reparameterisation
    (Figurnov et al. 2018; see the module docstring). Samples are drawn by the host
    generator (``generator`` or the default one) and clamped below at the dtype's smallest
    normal number, as PyTorch's.

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: an integer tensor.
        ArgumentError: a concentration that is not > 0.
    """
    check_tensor("_standard_gamma", "concentration", concentration)
    if not is_floating(concentration.array.dtype):
        raise DTypeError(f"_standard_gamma: concentration must be a floating-point tensor, got {concentration.dtype}")
    alpha = concentration.detach().numpy(force=True).astype(numpy.float64)
    if not numpy.all(alpha > 0):
        raise ArgumentError("_standard_gamma: concentration must be > 0 everywhere")
    g = host_generator(generator, "_standard_gamma")
    dt = concentration.array.dtype
    draw = numpy.maximum(numpy.asarray(g.standard_gamma(alpha)), numpy.finfo(dt).tiny).astype(dt)
    x = Tensor._wrap(backend.to_device(draw, concentration.device))
    return StandardGamma().apply(concentration, x)


def _standard_gamma_grad(input, output):
    """dx/dalpha of Gamma(alpha, 1) samples ``output`` at ``alpha = input`` (PyTorch's
    ``torch._standard_gamma_grad``); not differentiable.

    Raises:
        ArgumentTypeError: not Tensors. ShapeError-free: the two broadcast (a ValueError
        from NumPy becomes ArgumentError).
    """
    a, x = _float_input("_standard_gamma_grad", "input", input), _float_input("_standard_gamma_grad", "output", output)
    xp = backend.common_module("_standard_gamma_grad", (a.array, x.array))
    try:
        out = standard_gamma_grad_array(xp, a.array, x.array)
    except ValueError:
        raise ArgumentError(f"_standard_gamma_grad: shapes {a.shape} and {x.shape} do not broadcast") from None
    return Tensor._wrap(out.astype(dtypes.result_type(a.array, x.array), copy=False))


# ---- public functions ------------------------------------------------------------------------
def lgamma(input):
    """Elementwise log |Gamma(input)| (``scipy.special.gammaln``); integers give the default
    float. Gradient digamma(input).

    Raises:
        ArgumentTypeError: ``input`` is not a Tensor.
    """
    return Lgamma().apply(_float_input("lgamma", "input", input))


def digamma(input):
    """Elementwise psi(input) = d/dx log Gamma (``scipy.special.digamma``; -inf at 0 as PyTorch's);
    integers give the default float. Gradient polygamma(1, input).

    Raises:
        ArgumentTypeError: ``input`` is not a Tensor.
    """
    return Digamma().apply(_float_input("digamma", "input", input))


def polygamma(n, input):
    """Elementwise polygamma(n, input), the n-th derivative of digamma
    (``scipy.special.polygamma``); integers give the default float. Gradient polygamma(n+1).

    Raises:
        ArgumentTypeError: ``input`` is not a Tensor or ``n`` not an int.
        ArgumentError: ``n < 0``.
    """
    n = check_int("polygamma", "n", n, 0)
    return Polygamma(n).apply(_float_input("polygamma", "input", input))


def erfinv(input):
    """Elementwise inverse error function (``scipy.special.erfinv``): NaN outside [-1, 1],
    +-inf at +-1; integers give the default float. Gradient sqrt(pi)/2 exp(erfinv(x)^2).

    Raises:
        ArgumentTypeError: ``input`` is not a Tensor.
    """
    return Erfinv().apply(_float_input("erfinv", "input", input))


def _incomplete(op, upper, input, other):
    a, x = _float_input(op, "input", input), _float_input(op, "other", other)
    try:
        return Igamma(upper).apply(a, x)
    except ValueError:
        raise ArgumentError(f"{op}: shapes {a.shape} and {x.shape} do not broadcast") from None


def igamma(input, other):
    """The regularised lower incomplete gamma function P(input, other) elementwise
    (``scipy.special.gammainc``; PyTorch's ``torch.igamma`` = ``special.gammainc``). The shapes
    broadcast; NaN where ``input < 0`` or ``other < 0``. Gradients: in ``other`` the Gamma
    density; in ``input`` a numerical derivative (see the module docstring).

    Raises:
        ArgumentTypeError: not Tensors. ArgumentError: shapes that do not broadcast.
    """
    return _incomplete("igamma", False, input, other)


def igammac(input, other):
    """The regularised upper incomplete gamma function Q(input, other) = 1 - P elementwise
    (``scipy.special.gammaincc``); as :func:`igamma` otherwise.

    Raises:
        ArgumentTypeError: not Tensors. ArgumentError: shapes that do not broadcast.
    """
    return _incomplete("igammac", True, input, other)


__all__ = ["lgamma", "digamma", "polygamma", "erfinv", "igamma", "igammac"]
