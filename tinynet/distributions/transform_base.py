"""The transform machinery (PyTorch's ``torch.distributions.transforms.Transform``,
``ComposeTransform`` and the inverse): the base class with its one-pair cache, the inverse
of any transform, and composition. The concrete transforms are in :mod:`.transforms`.
"""
from ..errors import ArgumentError, ArgumentTypeError
from . import constraints
from .utils import _sum_rightmost


class Transform:
    """The base class: subclasses define ``_call`` (forward), ``_inverse`` and
    ``log_abs_det_jacobian(x, y)``, and ``domain``/``codomain`` constraints.

    Args:
        cache_size (int): 0 (no cache) or 1 (the last pair).

    Raises:
        ArgumentError: another cache size.
    """
    bijective = False
    domain: constraints.Constraint = constraints.real
    codomain: constraints.Constraint = constraints.real

    def __init__(self, cache_size=0):
        if isinstance(cache_size, bool) or not isinstance(cache_size, int) or cache_size not in (0, 1):
            raise ArgumentError(f"{type(self).__name__}: cache_size must be 0 or 1, got {cache_size!r}")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None

    @property
    def event_dim(self):
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ArgumentError(f"{type(self).__name__}: please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform (one object per transform)."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self):
        """+1 or -1 (or a tensor of them): whether the transform increases or decreases."""
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self).__name__}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = object.__hash__

    def __call__(self, x):
        return self._cached(x, 0, self._call)

    def _inv_call(self, y):
        return self._cached(y, 1, self._inverse)

    def _cached(self, value, side, compute):
        """``compute(value)`` through the one-pair cache: ``value`` is the pair's x (side 0,
        the forward map) or its y (side 1, the inverse); the same object again returns the
        other member of the pair without computing."""
        if self._cache_size == 0:
            return compute(value)
        pair = self._cached_x_y
        if value is pair[side]:
            return pair[1 - side]
        out = compute(value)
        self._cached_x_y = (value, out) if side == 0 else (out, value)
        return out

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """log |det dy/dx| at the pair (x, y = self(x))."""
        raise NotImplementedError

    def forward_shape(self, shape):
        """The shape of ``self(x)`` for an ``x`` of ``shape``."""
        return tuple(shape)

    def inverse_shape(self, shape):
        """The shape of ``self.inv(y)`` for a ``y`` of ``shape``."""
        return tuple(shape)

    def __repr__(self):
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """The inverse of a transform: calls its ``_inv_call`` and negates its log-Jacobian."""

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __call__(self, x):
        return self._inv._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)

    def __repr__(self):
        return f"_InverseTransform({self._inv!r})"


class ComposeTransform(Transform):
    """``parts`` applied in order (``parts[0]`` first); an empty list is the identity.

    Raises:
        ArgumentTypeError: ``parts`` is not a list of Transforms.
    """

    def __init__(self, parts, cache_size=0):
        if not isinstance(parts, (list, tuple)) or not all(isinstance(p, Transform) for p in parts):
            raise ArgumentTypeError(f"ComposeTransform: parts must be a list of Transforms, got {parts!r}")
        super().__init__(cache_size=cache_size)
        self.parts = [p.with_cache(cache_size) for p in parts] if cache_size else list(parts)

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        domain, event_dim = self.parts[0].domain, self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim = max(event_dim + part.domain.event_dim - part.codomain.event_dim, part.domain.event_dim)
        return constraints.independent(domain, event_dim - domain.event_dim) if event_dim > domain.event_dim \
            else domain

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain, event_dim = self.parts[-1].codomain, self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim = max(event_dim + part.codomain.event_dim - part.domain.event_dim, part.codomain.event_dim)
        return constraints.independent(codomain, event_dim - codomain.event_dim) \
            if event_dim > codomain.event_dim else codomain

    @property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        if self._inv is None:
            self._inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv._inv = self
        return self._inv

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return x * 0
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        total, event_dim = 0, self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            total = total + _sum_rightmost(part.log_abs_det_jacobian(a, b), event_dim - part.domain.event_dim)
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return total

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return tuple(shape)

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return tuple(shape)

    def __repr__(self):
        return "ComposeTransform(\n    " + ",\n    ".join(repr(p) for p in self.parts) + "\n)"


identity_transform = ComposeTransform([])


__all__ = ["ComposeTransform", "Transform", "identity_transform"]
