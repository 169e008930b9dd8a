"""Constraints: the region a parameter or a sample must lie in (PyTorch's
``torch.distributions.constraints``, the same names and ``repr``).

A :class:`Constraint` has ``check(value)``, a bool tensor of the value's shape without its
``event_dim`` rightmost dimensions (a vector constraint such as ``simplex`` judges each
vector as a whole), ``is_discrete`` and ``event_dim``. The instances:

``real``, ``real_vector``, ``positive``, ``nonnegative``, ``unit_interval``, ``boolean``,
``nonnegative_integer``, ``positive_integer``, ``simplex``, ``one_hot``, ``lower_triangular``,
``lower_cholesky``, ``positive_definite``, ``positive_semidefinite``, ``symmetric``,
``square``, ``dependent``; and the factories ``greater_than(lb)``, ``greater_than_eq(lb)``,
``less_than(ub)``, ``interval(lb, ub)``, ``half_open_interval(lb, ub)``,
``integer_interval(lb, ub)``, ``independent(base, n)``, ``dependent_property``.

Tolerances: ``simplex`` accepts sums within 1e-6 of 1 and ``symmetric`` entries within
1e-6 of their transpose's (absolute), as PyTorch's; ``positive_definite`` checks symmetry and
positive eigenvalues (``xp.linalg.eigvalsh``), where PyTorch tries a Cholesky factorisation.
"""
import numpy

from .. import backend
from ..errors import ArgumentError, ArgumentTypeError, ShapeError
from ..tensor import Tensor


class Constraint:
    """Base class: a region of valid values. Subclasses implement :meth:`check`."""
    is_discrete = False  # is the region a set of points (integers, booleans, one-hot vectors)?
    event_dim = 0        # how many rightmost dimensions one checked value spans

    def check(self, value):
        """A bool tensor: which values (one per event) lie in the region."""
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__[1:] + "()"


class _Dependent(Constraint):
    """A placeholder for a constraint that depends on other parameters (Uniform's ``low``
    and ``high``); validation skips it. Calling it makes one with other attributes."""

    def __init__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        self._is_discrete, self._event_dim = is_discrete, event_dim

    @property
    def is_discrete(self):
        if self._is_discrete is NotImplemented:
            raise NotImplementedError(".is_discrete cannot be determined statically")
        return self._is_discrete

    @property
    def event_dim(self):
        if self._event_dim is NotImplemented:
            raise NotImplementedError(".event_dim cannot be determined statically")
        return self._event_dim

    def __call__(self, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        return _Dependent(is_discrete=self._is_discrete if is_discrete is NotImplemented else is_discrete,
                          event_dim=self._event_dim if event_dim is NotImplemented else event_dim)

    def check(self, value):
        raise ValueError("Cannot determine validity of dependent constraint")


def is_dependent(constraint):
    """True for ``dependent`` and the constraints made from it (validation skips them)."""
    return isinstance(constraint, _Dependent)


class _DependentProperty(property, _Dependent):
    """A property that is also a dependent constraint: a distribution's ``support`` that
    depends on its parameters (``Uniform.support`` is ``interval(low, high)``)."""

    def __init__(self, fn=None, *, is_discrete=NotImplemented, event_dim=NotImplemented):
        property.__init__(self, fn)
        _Dependent.__init__(self, is_discrete=is_discrete, event_dim=event_dim)

    def __call__(self, fn):  # as a decorator with arguments
        return _DependentProperty(fn, is_discrete=self._is_discrete, event_dim=self._event_dim)


class _IndependentConstraint(Constraint):
    """``base_constraint`` over events of ``reinterpreted_batch_ndims`` more dimensions."""

    def __init__(self, base_constraint, reinterpreted_batch_ndims):
        if not isinstance(base_constraint, Constraint):
            raise ArgumentTypeError(f"independent: base_constraint must be a Constraint, got "
                                    f"{type(base_constraint).__name__}")
        if not isinstance(reinterpreted_batch_ndims, int) or reinterpreted_batch_ndims < 0:
            raise ArgumentError(f"independent: reinterpreted_batch_ndims must be an int >= 0, got "
                                f"{reinterpreted_batch_ndims!r}")
        self.base_constraint, self.reinterpreted_batch_ndims = base_constraint, reinterpreted_batch_ndims

    @property
    def is_discrete(self):
        return self.base_constraint.is_discrete

    @property
    def event_dim(self):
        return self.base_constraint.event_dim + self.reinterpreted_batch_ndims

    def check(self, value):
        result = self.base_constraint.check(value)
        n = self.reinterpreted_batch_ndims
        if n == 0:
            return result
        if result.ndim < n:
            raise ShapeError(f"independent: expected value.dim() >= {self.event_dim}, got shape {tuple(value.shape)}")
        return result.reshape(tuple(result.shape[:result.ndim - n]) + (-1,)).all(-1)

    def __repr__(self):
        return f"IndependentConstraint({self.base_constraint!r}, {self.reinterpreted_batch_ndims})"


def _bounds_repr(self, names):
    return f"{type(self).__name__[1:]}({', '.join(f'{n}={getattr(self, n)}' for n in names)})"


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _OneHot(Constraint):
    is_discrete = True
    event_dim = 1

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class _IntegerInterval(Constraint):
    is_discrete = True

    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self):
        return _bounds_repr(self, ("lower_bound", "upper_bound"))


class _IntegerGreaterThan(Constraint):
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value % 1 == 0) & (value >= self.lower_bound)

    def __repr__(self):
        return _bounds_repr(self, ("lower_bound",))


class _Real(Constraint):
    def check(self, value):
        return value == value  # False for NaN only


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return value > self.lower_bound

    def __repr__(self):
        return _bounds_repr(self, ("lower_bound",))


class _GreaterThanEq(_GreaterThan):
    def check(self, value):
        return value >= self.lower_bound


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return _bounds_repr(self, ("upper_bound",))


class _Interval(Constraint):
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self):
        return _bounds_repr(self, ("lower_bound", "upper_bound"))


class _HalfOpenInterval(_Interval):
    def check(self, value):
        return (value >= self.lower_bound) & (value < self.upper_bound)


class _Simplex(Constraint):
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _Square(Constraint):
    event_dim = 2

    def check(self, value):
        ok = value.shape[-2] == value.shape[-1] if value.ndim >= 2 else False
        out = numpy.full(tuple(value.shape[:-2]), ok)
        return Tensor._wrap(backend.to_device(out, value.device))


class _Symmetric(_Square):
    def check(self, value):
        if value.ndim < 2 or value.shape[-2] != value.shape[-1]:
            return _Square.check(self, value)
        return ((value - value.mT).abs() <= 1e-6).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)


class _LowerTriangular(Constraint):
    event_dim = 2

    def check(self, value):
        return (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)


class _LowerCholesky(Constraint):
    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).reshape(tuple(value.shape[:-2]) + (-1,)).all(-1)
        return lower & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _PositiveDefinite(_Symmetric):
    strict = True

    def check(self, value):
        sym = _Symmetric.check(self, value)
        if value.ndim < 2 or value.shape[-2] != value.shape[-1]:
            return sym
        a = value.detach().array
        xp = backend.array_module(a)
        finite = xp.all(xp.isfinite(a), axis=(-2, -1))
        safe = xp.where(finite[..., None, None], a, xp.zeros_like(a))
        eig = xp.linalg.eigvalsh(safe) if safe.size else xp.zeros(safe.shape[:-1], dtype=a.dtype)
        pos = xp.all(eig > 0 if self.strict else eig >= 0, axis=-1) & finite
        return sym & Tensor._wrap(pos)


class _PositiveSemidefinite(_PositiveDefinite):
    strict = False


dependent = _Dependent()
dependent_property = _DependentProperty
independent = _IndependentConstraint
boolean = _Boolean()
one_hot = _OneHot()
nonnegative_integer = _IntegerGreaterThan(0)
positive_integer = _IntegerGreaterThan(1)
integer_interval = _IntegerInterval
real = _Real()
real_vector = independent(real, 1)
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
unit_interval = _Interval(0.0, 1.0)
interval = _Interval
half_open_interval = _HalfOpenInterval
simplex = _Simplex()
lower_triangular = _LowerTriangular()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
positive_semidefinite = _PositiveSemidefinite()
symmetric = _Symmetric()
square = _Square()

__all__ = ["Constraint", "boolean", "dependent", "dependent_property", "greater_than", "greater_than_eq",
           "half_open_interval", "independent", "integer_interval", "interval", "is_dependent", "less_than",
           "lower_cholesky", "lower_triangular", "nonnegative", "nonnegative_integer", "one_hot", "positive",
           "positive_definite", "positive_integer", "positive_semidefinite", "real", "real_vector", "simplex",
           "square", "symmetric", "unit_interval"]
