"""``ExponentialFamily``: distributions with density
p(x; theta) = exp(<t(x), theta> - F(theta) + k(x)) (PyTorch's
``torch.distributions.ExponentialFamily``).

Subclasses give ``_natural_params`` (theta), ``_log_normalizer(*theta)`` (F) and
``_mean_carrier_measure`` (E[k(x)]); the generic :meth:`ExponentialFamily.entropy` is then
-E[k] + F(theta) - <theta, grad F(theta)> (the Bregman-divergence form of Nielsen & Nock,
"Entropies and cross-entropies of exponential families", 2010), with grad F from tinynet's
autograd. Every family here also has a closed-form ``entropy`` that overrides it.
"""
from ._ops import enable_grad, grad
from .distribution import Distribution


class ExponentialFamily(Distribution):
    """The base class of exponential-family distributions (see the module docstring)."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """-E[k(x)] + F(theta) - <theta, grad F(theta)>, batched."""
        result = -self._mean_carrier_measure
        params = [p.detach().requires_grad_() for p in self._natural_params]
        with enable_grad():
            lg = self._log_normalizer(*params)
            grads = grad(lg.sum(), params, create_graph=True)
        result = result + lg
        for p, g in zip(params, grads):
            result = result - (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result


__all__ = ["ExponentialFamily"]
