"""``MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None)``:
the n-dimensional Gaussian N(loc, Sigma) (PyTorch's
``torch.distributions.MultivariateNormal``).

Everything goes through the lower Cholesky factor L of Sigma (given as ``scale_tril``, or
``cholesky(covariance_matrix)``, or from the precision matrix P without inverting it: with
J the reversal permutation, cholesky(J P J) = Lf gives P = U U^T for U = J Lf J upper
triangular, so L = U^-T):

* log p(x) = -(n log(2 pi) + |L^-1 (x - loc)|^2) / 2 - sum log diag(L) (a triangular solve);
* entropy = n (1 + log(2 pi)) / 2 + sum log diag(L);
* ``rsample`` = loc + L eps with eps from ``tinynet.randn`` (gradients reach loc and L).

The factor is kept unbroadcast (``_unbroadcasted_scale_tril``), as PyTorch's, and the other
two matrices are derived lazily.
"""
import math

from ..errors import ArgumentError, ShapeError
from ..tensor import Tensor
from . import constraints
from ._ops import broadcast_shapes, cholesky, eye, log, randn, solve_triangular
from .distribution import Distribution, _shape, _SymmetricAboutLoc
from .utils import lazy_property

_LOG_2PI = math.log(2 * math.pi)


def _batch_mv(bmat, bvec):
    """Matrix-vector products over broadcast batch dims: (..., n, n) @ (..., n)."""
    return (bmat @ bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """|L^-1 x|^2 over broadcast batch dims, for lower-triangular L (..., n, n), x (..., n)."""
    return solve_triangular(bL, bx.unsqueeze(-1), upper=False).squeeze(-1).pow(2).sum(-1)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1 (see the module docstring)."""
    lf = cholesky(P.flip((-2, -1)))
    l_inv = lf.flip((-2, -1)).mT
    identity = eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return solve_triangular(l_inv, identity, upper=False)


def _half_log_det(L):
    return log(L.diagonal(dim1=-2, dim2=-1)).sum(-1)


class MultivariateNormal(_SymmetricAboutLoc):
    """A batch of multivariate normal distributions, event shape (n,); mean = mode = loc
    (``distribution._SymmetricAboutLoc``).

    Args:
        loc (Tensor): the means (..., n).
        covariance_matrix (Tensor): positive-definite (..., n, n); or
        precision_matrix (Tensor): its inverse, positive-definite; or
        scale_tril (Tensor): the lower Cholesky factor, positive diagonal. Exactly one of
            the three; batch dims broadcast with loc's.
        validate_args (bool, optional): check the parameters and the values given to ``log_prob``.

    Raises:
        ArgumentError: not exactly one matrix, loc not a Tensor, or (with validation on) a
            matrix outside its constraint. LinAlgError (a RuntimeError, as PyTorch's): without
            validation, a covariance or precision matrix that is not positive-definite (the
            Cholesky factorisation fails). ShapeError: a 0-d loc, a matrix of fewer than 2
            dims, or shapes that do not broadcast.
    """
    arg_constraints = {"loc": constraints.real_vector, "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite, "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None, validate_args=None):
        if not isinstance(loc, Tensor):
            raise ArgumentError(f"MultivariateNormal: loc must be a Tensor, got {type(loc).__name__}")
        if loc.ndim < 1:
            raise ShapeError("MultivariateNormal: loc must be at least one-dimensional")
        given = {k: v for k, v in (("covariance_matrix", covariance_matrix), ("precision_matrix", precision_matrix),
                                   ("scale_tril", scale_tril)) if v is not None}
        if len(given) != 1:
            raise ArgumentError("MultivariateNormal: exactly one of covariance_matrix or precision_matrix or "
                                "scale_tril may be specified")
        ((name, matrix),) = given.items()
        if not isinstance(matrix, Tensor):
            raise ArgumentError(f"MultivariateNormal: {name} must be a Tensor, got {type(matrix).__name__}")
        if matrix.ndim < 2:
            raise ShapeError(f"MultivariateNormal: {name} matrix must be at least two-dimensional, with optional "
                             f"leading batch dimensions, got shape {tuple(matrix.shape)}")
        n = loc.shape[-1]
        if tuple(matrix.shape[-2:]) != (n, n):
            raise ShapeError(f"MultivariateNormal: {name} must be (..., {n}, {n}) for loc (..., {n}), got "
                             f"{tuple(matrix.shape)}")
        try:
            batch_shape = broadcast_shapes(tuple(matrix.shape[:-2]), tuple(loc.shape[:-1]))
        except ShapeError:
            raise ShapeError(f"MultivariateNormal: batch shapes of loc {tuple(loc.shape)} and {name} "
                             f"{tuple(matrix.shape)} do not broadcast") from None
        setattr(self, name, matrix.expand(batch_shape + (n, n)))
        self.loc = loc.expand(batch_shape + (n,))
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = _shape(f"{type(self).__name__}.expand: batch_shape", batch_shape)
        n = self._event_shape[0]
        new.loc = self.loc.expand(batch_shape + (n,))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, getattr(self, name).expand(batch_shape + (n, n)))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape * 2)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.mT).expand(self._batch_shape + self._event_shape * 2)

    @lazy_property
    def precision_matrix(self):
        L = self._unbroadcasted_scale_tril
        identity = eye(L.shape[-1], dtype=L.dtype, device=L.device)
        l_inv = solve_triangular(L, identity, upper=False)
        return (l_inv.mT @ l_inv).expand(self._batch_shape + self._event_shape * 2)

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        eps = randn(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        L = self._unbroadcasted_scale_tril
        m = _batch_mahalanobis(L, value - self.loc)
        return -0.5 * (self._event_shape[0] * _LOG_2PI + m) - _half_log_det(L)

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + _LOG_2PI) + _half_log_det(self._unbroadcasted_scale_tril)
        return h if not self._batch_shape else h.expand(self._batch_shape)


__all__ = ["MultivariateNormal"]
