"""tinynet.distributions: PyTorch's ``torch.distributions`` (docs/distributions.md).

Probability distributions with PyTorch's class names, arguments and semantics: shapes
(``batch_shape``, ``event_shape``), ``sample``/``rsample`` (reparameterised, so gradients
reach the parameters), ``log_prob``, ``entropy``, moments, ``cdf``/``icdf`` where PyTorch has
them, ``expand``, constraints and argument validation, transforms, and ``kl_divergence``
with its registry. Random draws come from tinynet's generators (``tinynet.manual_seed``).
"""
from . import constraints, transforms
from .bernoulli import Bernoulli
from .beta import Beta
from .categorical import Categorical
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .independent import Independent
from .kl import kl_divergence, register_kl
from .laplace import Laplace
from .log_normal import LogNormal
from .multivariate_normal import MultivariateNormal
from .normal import Normal
from .one_hot_categorical import OneHotCategorical, OneHotCategoricalStraightThrough
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .transforms import (AffineTransform, ComposeTransform, ExpTransform, PowerTransform, SigmoidTransform,
                         TanhTransform, Transform, identity_transform)
from .uniform import Uniform

__all__ = ["AffineTransform", "Bernoulli", "Beta", "Categorical", "ComposeTransform", "Dirichlet", "Distribution",
           "ExpTransform", "Exponential", "ExponentialFamily", "Gamma", "Independent", "Laplace", "LogNormal",
           "MultivariateNormal", "Normal", "OneHotCategorical", "OneHotCategoricalStraightThrough", "Poisson",
           "PowerTransform", "SigmoidTransform", "TanhTransform", "Transform", "TransformedDistribution", "Uniform",
           "constraints", "identity_transform", "kl_divergence", "register_kl", "transforms"]
