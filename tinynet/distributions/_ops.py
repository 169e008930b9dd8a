"""Every tinynet op the distributions use, imported here from the module it lives in, so
the rest of the package imports from one place (and a regrouping of ``tinynet.ops`` is
followed by editing this file alone)."""
from ..autograd import enable_grad, grad, no_grad
from ..ops.activation import log_softmax, sigmoid, softmax, tanh
from ..ops.broadcast import broadcast_shapes, broadcast_tensors
from ..ops.creation import arange, eye, full, tensor, zeros, zeros_like
from ..ops.embedding import one_hot
from ..ops.join import stack
from ..ops.pointwise_special import xlogy
from ..ops.sampling import bernoulli, multinomial, poisson, rand, randn
from ..ops.select import where
from ..ops.smooth_activations import softplus
from ..ops.special_gamma import _standard_gamma, digamma, erfinv, igamma, lgamma
# tinynet.linalg's Cholesky and triangular solve (LAPACK potrf/trsm, as PyTorch's): an infinite value gives
# PyTorch's infinite Mahalanobis distance, a covariance that is not positive-definite its LinAlgError
from ..ops.lapack_det import cholesky
from ..ops.lapack_solve import solve_triangular
from ..ops.unary import abs, clamp, erf, exp, expm1, floor, log, log1p, sign, sqrt

__all__ = ["enable_grad", "grad", "no_grad", "log_softmax", "sigmoid", "softmax", "tanh", "broadcast_shapes",
           "broadcast_tensors", "arange", "eye", "full", "tensor", "zeros", "zeros_like", "one_hot", "stack", "xlogy",
           "bernoulli", "multinomial", "poisson", "rand", "randn", "where", "softplus", "_standard_gamma",
           "digamma", "erfinv", "igamma", "lgamma", "cholesky", "solve_triangular", "abs", "clamp", "erf", "exp",
           "expm1", "floor", "log", "log1p", "sign", "sqrt"]
