"""Random activations and regularisers, composed of tinynet's ops and its host generator
(``tinynet.manual_seed``): ``rrelu``, ``alpha_dropout``, ``feature_alpha_dropout`` and
``gumbel_softmax``.

* RReLU (Xu et al., 2015, "Empirical Evaluation of Rectified Activations", arXiv:1505.00853):
  in training a negative element is multiplied by a slope drawn from U(lower, upper) for
  that element; in evaluation by the mean slope ``(lower + upper) / 2``.
* Alpha dropout (Klambauer et al., 2017, "Self-Normalizing Neural Networks"): dropped
  elements take SELU's negative saturation ``-alpha'`` (``alpha' = 1.7580993408473766``) and
  an affine map ``a x + b`` with ``a = ((1 - p)(1 + p alpha'^2))^(-1/2)`` keeps zero mean and
  unit variance; the feature version drops whole channels.
* Gumbel-softmax (Jang et al., 2017; Maddison et al., 2017): ``softmax((logits + g) / tau)``
  with Gumbel(0, 1) noise ``g``; ``hard=True`` returns the one-hot of its argmax with the
  soft sample's gradient (straight-through).

The draws come from tinynet's generator, so values differ from PyTorch's for one seed; the
distributions and the deterministic parts (evaluation mode, p = 0 or 1) are PyTorch's.
"""
import math

from .. import backend
from ..errors import ArgumentError, ShapeError
from ..tensor import Tensor
from .activation import leaky_relu, softmax
from .arith import add, mul, sub
from .division import div
from .sampling import rand
from .select import where
from .unary import log
from .util import check_float, check_flag, check_number

_ALPHA = 1.7580993408473766  # SELU's scale times its alpha: the negative saturation value


def _uniform_like(input, shape=None):
    """Uniform [0, 1) draws of ``input``'s dtype and device (of ``shape``, default the input's)."""
    return rand(*(input.shape if shape is None else shape), dtype=input.dtype, device=input.device)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: ``x`` for ``x >= 0``, else ``a x`` with ``a ~ U(lower, upper)``
    per element in training, ``a = (lower + upper) / 2`` in evaluation (the default).

    Raises:
        ArgumentTypeError / DTypeError: not a float Tensor, or bounds that are not numbers.
        ArgumentError: ``lower > upper``.
    """
    check_float("rrelu", "input", input)
    lower, upper = check_number("rrelu", "lower", lower), check_number("rrelu", "upper", upper)
    if lower > upper:
        raise ArgumentError(f"rrelu: lower bound should be less than or equal to the upper bound, got lower={lower}, "
                            f"upper={upper}")
    if not check_flag("rrelu", "training", training):
        out = leaky_relu(input, (lower + upper) / 2)
    else:
        slope = add(mul(_uniform_like(input), upper - lower), lower)
        out = where(input.detach() >= 0, input, mul(input, slope))
    if inplace:
        input.copy_(out)
        return input
    return out


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place :func:`rrelu`; returns ``input``."""
    return rrelu(input, lower, upper, training, inplace=True)


def _alpha_dropout(op, input, p, training, feature):
    check_float(op, "input", input)
    p = check_number(op, "p", p, 0.0, 1.0)
    if not check_flag(op, "training", training) or p == 0.0:
        return input
    if p == 1.0:
        return mul(input, 0.0)
    if feature and input.ndim < 2:
        raise ShapeError(f"{op}: feature dropout requires at least 2 dimensions in the input, got shape "
                         f"{tuple(input.shape)}")
    shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2) if feature else None
    keep = (_uniform_like(input, shape) >= p).to(input.dtype)  # 1 with probability 1 - p
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    # kept: a x + alpha' a p; dropped: alpha' a (p - 1) (PyTorch's arithmetic)
    return add(mul(input, mul(keep, a)), add(mul(sub(keep, 1.0), _ALPHA * a), _ALPHA * a * p))


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout for SELU networks: keeps zero mean and unit variance of its input.
    Identity unless ``training`` (default False, as PyTorch's ``F.alpha_dropout``).

    Raises:
        ArgumentTypeError / DTypeError: not a float Tensor.
        ArgumentError: ``p`` outside [0, 1].
    """
    return _alpha_dropout("alpha_dropout", input, p, training, False)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Alpha dropout of whole channels (the (n, c) slices of an (N, C, *) input).

    Raises:
        ArgumentTypeError / DTypeError: not a float Tensor.
        ArgumentError: ``p`` outside [0, 1].
        ShapeError: fewer than 2 dims.
    """
    return _alpha_dropout("feature_alpha_dropout", input, p, training, True)


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """A sample from the Gumbel-softmax (concrete) distribution over ``dim``:
    ``softmax((logits + g) / tau)`` with ``g ~ Gumbel(0, 1)``; ``hard=True`` gives the one-hot
    of the sample's argmax, differentiated as the soft sample (straight-through).

    Args:
        logits (Tensor): float, unnormalised log-probabilities. tau (float): temperature > 0.
        hard (bool): one-hot output. Default False. eps: accepted for PyTorch compatibility
            (unused, as in PyTorch). dim (int): the category dim. Default -1.

    Raises:
        ArgumentTypeError / DTypeError: not a float Tensor, a non-number tau.
        ArgumentError: ``tau <= 0``.
        IndexOutOfRangeError: ``dim`` out of range.
    """
    check_float("gumbel_softmax", "logits", logits)
    tau = check_number("gumbel_softmax", "tau", tau)
    if tau <= 0:
        raise ArgumentError(f"gumbel_softmax: tau must be > 0, got {tau}")
    u = _uniform_like(logits)
    gumbels = mul(log(mul(log(u), -1.0)), -1.0)  # -log(E), E = -log(U) ~ Exp(1)
    soft = softmax(div(add(logits, gumbels), tau), dim)
    if not check_flag("gumbel_softmax", "hard", hard):
        return soft
    index = soft.detach().argmax(dim, keepdim=True)
    one_hot = Tensor._wrap(_scatter_one(soft.array, index.array, dim))
    return add(sub(one_hot, soft.detach()), soft)


def _scatter_one(like, index, dim):
    """Zeros like ``like`` with 1 at ``index`` (argmax with keepdim) along ``dim`` (NumPy or CuPy)."""
    xp = backend.array_module(like)
    d = dim % like.ndim
    positions = xp.arange(like.shape[d]).reshape([-1 if k == d else 1 for k in range(like.ndim)])
    return (positions == index).astype(like.dtype)
