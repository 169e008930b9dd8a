"""``tinynet.special``: PyTorch's ``torch.special`` namespace.

Error functions (``erf``, ``erfc``, ``erfcx``, ``erfinv``), the normal distribution
(``ndtr``, ``ndtri``, ``log_ndtr``), gamma functions (``gammaln``, ``digamma``/``psi``,
``polygamma``, ``multigammaln``, ``gammainc``, ``gammaincc``), Bessel functions (``i0``,
``i0e``, ``i1``, ``i1e``, ``bessel_j0``, ``bessel_j1``, ``bessel_y0``, ``bessel_y1``,
``modified_bessel_i0``/``i1``/``k0``/``k1``, ``scaled_modified_bessel_k0``/``k1``), the Hurwitz
``zeta``, ``xlogy``, ``xlog1py``, ``entr``, ``expit``, ``logit``, ``sinc``, ``round``,
``exp2``, ``expm1``, ``log1p``, ``softmax``, ``log_softmax`` and ``logsumexp``, with
PyTorch's signatures, values and gradients. The numbers come from ``scipy.special`` on the
CPU and ``cupyx.scipy.special`` on a GPU; docs/fft_special.md says where tinynet differs
from PyTorch.
"""
from .ops.pointwise_special import logit, sinc, xlogy
from .ops.special_functions import (bessel_j0, bessel_j1, bessel_y0, bessel_y1, entr, erfcx, expit, i0, i0e, i1, i1e,
                                    log_ndtr, log_softmax, modified_bessel_i0, modified_bessel_i1, modified_bessel_k0,
                                    modified_bessel_k1, ndtr, ndtri, scaled_modified_bessel_k0,
                                    scaled_modified_bessel_k1, softmax)
from .ops.special_gamma import digamma, erfinv, polygamma
from .ops.special_gamma import igamma as gammainc, igammac as gammaincc, lgamma as gammaln
from .ops.special_misc import multigammaln, xlog1py, zeta
from .ops.stats import logsumexp
from .ops.unary import erf, erfc, exp2, expm1, log1p, round

psi = digamma

__all__ = ["bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr", "erf", "erfc", "erfcx", "erfinv",
           "exp2", "expit", "expm1", "gammainc", "gammaincc", "gammaln", "i0", "i0e", "i1", "i1e", "log1p",
           "log_ndtr", "log_softmax", "logit", "logsumexp", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "sinc", "softmax", "xlog1py", "xlogy", "zeta"]
