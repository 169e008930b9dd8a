"""Parameter initialisation, in place, with PyTorch's formulas, names and defaults.

* ``calculate_gain``: 1 for linear/conv/sigmoid, 5/3 for tanh, sqrt 2 for relu,
  ``sqrt(2 / (1 + slope^2))`` for leaky_relu (slope 0.01 by default), 3/4 for selu.
* ``xavier_uniform_``/``xavier_normal_``: Glorot & Bengio 2010,
  ``std = gain * sqrt(2 / (fan_in + fan_out))``, uniform bound ``sqrt(3) * std``.
* ``kaiming_uniform_``/``kaiming_normal_``: He et al. 2015 (arXiv:1502.01852),
  ``std = gain / sqrt(fan)``, uniform bound ``sqrt(3) * std``.
* ``trunc_normal_``: N(mean, std^2) restricted to ``[a, b]`` by rejection.
* ``orthogonal_``: Saxe et al. 2013 (arXiv:1312.6120), Q of the QR decomposition of a
  normal matrix, columns' signs fixed by ``sign(diag(R))``.
* ``sparse_``: Martens 2010, a normal matrix with a ``sparsity`` fraction of each column zeroed.

``fan_in = size(1) * receptive field``, ``fan_out = size(0) * receptive field`` (the
product of the dims after the first two). Every function works outside autograd, bumps
the tensor's version counter and returns the tensor. Values are drawn on the host from
tinynet's generator (``generator`` when given, else the default one, repeatable under
``manual_seed``), so a seed gives the same values on the CPU and the GPU; they differ
from PyTorch's draws for the same seed.
"""
import math
import numbers
import warnings

import numpy

from ..dtypes import is_floating
from .. import backend
from ..autograd.node import bump_version
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..random import host_generator
from ..tensor import Tensor

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def _check(op, tensor, floating=False):
    if not isinstance(tensor, Tensor):
        raise ArgumentTypeError(f"{op}: expected a Tensor, got {type(tensor).__name__}")
    if floating and not is_floating(tensor.dtype):
        raise DTypeError(f"{op}: expected a floating-point tensor, got {tensor.dtype}")


def _fill(tensor, values):
    """Write ``values`` (host array) into ``tensor``'s memory; returns the tensor."""
    tensor.array[...] = backend.to_device(numpy.asarray(values), tensor.device).astype(tensor.dtype, copy=False)
    bump_version(tensor)
    return tensor


def _calculate_fan_in_and_fan_out(tensor, op="init"):
    """``(fan_in, fan_out)`` of a weight of shape (out, in, *kernel).

    Raises:
        ShapeError: fewer than 2 dims.
    """
    _check(op, tensor)
    if tensor.ndim < 2:
        raise ShapeError(f"{op}: fan in and fan out can not be computed for a tensor with fewer than 2 dimensions, "
                         f"got shape {tuple(tensor.shape)}")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode, op="init"):
    if not isinstance(mode, str) or mode.lower() not in ("fan_in", "fan_out"):
        raise ArgumentError(f"{op}: mode {mode!r} not supported, please use one of ['fan_in', 'fan_out']")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, op)
    return fan_in if mode.lower() == "fan_in" else fan_out


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for ``nonlinearity``.

    Args:
        nonlinearity (str): 'linear', 'conv1d', 'conv2d', 'conv3d', 'conv_transpose1d',
            'conv_transpose2d', 'conv_transpose3d', 'sigmoid' (gain 1), 'tanh' (5/3),
            'relu' (sqrt 2), 'leaky_relu' (``sqrt(2 / (1 + param^2))``), 'selu' (3/4).
        param (float, optional): leaky_relu's negative slope (default 0.01).

    Raises:
        ArgumentError: an unknown nonlinearity, or a slope that is not a number.
    """
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, numbers.Real) and not isinstance(param, bool):
            slope = param
        else:
            raise ArgumentError(f"calculate_gain: negative_slope {param!r} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ArgumentError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}; expected one of "
                        f"{list(_LINEAR) + ['sigmoid', 'tanh', 'relu', 'leaky_relu', 'selu']}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill with values drawn from U(a, b)."""
    _check("uniform_", tensor, floating=True)
    return _fill(tensor, host_generator(generator, "uniform_").uniform(a, b, tensor.shape))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill with values drawn from N(mean, std^2)."""
    _check("normal_", tensor, floating=True)
    return _fill(tensor, host_generator(generator, "normal_").normal(mean, std, tensor.shape))


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill with values drawn from N(mean, std^2) restricted to ``[a, b]`` (redrawing
    those outside; with a narrow window, uniform proposals accepted with the normal's
    density ratio, as PyTorch).

    Raises:
        ArgumentError: ``a > b`` or ``std <= 0``.
    """
    _check("trunc_normal_", tensor, floating=True)
    if not a <= b or not std > 0:
        raise ArgumentError(f"trunc_normal_: expected a <= b and std > 0, got a={a}, b={b}, std={std}")
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)
    rng = host_generator(generator, "trunc_normal_")

    def cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    n = math.prod(tensor.shape)
    out = numpy.empty(n)
    todo = numpy.arange(n)
    if cdf((b - mean) / std) - cdf((a - mean) / std) > 0.3:
        while todo.size:
            draw = rng.normal(mean, std, todo.size)
            ok = (draw >= a) & (draw <= b)
            out[todo[ok]] = draw[ok]
            todo = todo[~ok]
    else:
        mode = max(a, min(mean, b))
        log_peak = -0.5 * ((mode - mean) / std) ** 2
        while todo.size:
            draw = rng.uniform(a, b, todo.size)
            ok = numpy.log(rng.uniform(0.0, 1.0, todo.size)) <= -0.5 * ((draw - mean) / std) ** 2 - log_peak
            out[todo[ok]] = draw[ok]
            todo = todo[~ok]
    return _fill(tensor, out.reshape(tensor.shape))


def constant_(tensor, val):
    """Fill with ``val``."""
    _check("constant_", tensor)
    return _fill(tensor, numpy.full(tensor.shape, val))


def ones_(tensor):
    """Fill with 1."""
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill with 0."""
    return constant_(tensor, 0.0)


def eye_(tensor):
    """Fill a 2-D tensor with the identity (ones on the diagonal of a rectangle too).

    Raises:
        ShapeError: not 2-D.
    """
    _check("eye_", tensor)
    if tensor.ndim != 2:
        raise ShapeError(f"eye_: only tensors with 2 dimensions are supported, got shape {tuple(tensor.shape)}")
    return _fill(tensor, numpy.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    """Fill a 3/4/5-D convolution weight with the Dirac delta: a convolution with it returns
    its input's first channels (per group of output channels).

    Raises:
        ShapeError: not 3, 4 or 5 dims. ArgumentError: dim 0 not divisible by ``groups``.
    """
    _check("dirac_", tensor)
    if tensor.ndim not in (3, 4, 5):
        raise ShapeError(f"dirac_: only tensors with 3, 4, or 5 dimensions are supported, got shape "
                         f"{tuple(tensor.shape)}")
    if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups < 1:
        raise ArgumentError(f"dirac_: groups must be a positive int, got {groups!r}")
    sizes = tensor.shape
    if sizes[0] % groups:
        raise ArgumentError(f"dirac_: dim 0 ({sizes[0]}) must be divisible by groups ({groups})")
    per_group = sizes[0] // groups
    values = numpy.zeros(sizes)
    centre = tuple(s // 2 for s in sizes[2:])
    for g in range(groups):
        for d in range(min(per_group, sizes[1])):
            values[(g * per_group + d, d) + centre] = 1
    return _fill(tensor, values)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Glorot-uniform: U(-b, b) with ``b = gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, "xavier_uniform_")
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Glorot-normal: N(0, std^2) with ``std = gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor, "xavier_normal_")
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(op, tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode, op)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He-uniform: U(-b, b) with ``b = gain * sqrt(3 / fan)``, ``gain =
    calculate_gain(nonlinearity, a)``; ``mode`` picks fan_in (default) or fan_out.

    Raises:
        ShapeError: fewer than 2 dims. ArgumentError: an unknown mode or nonlinearity.
    """
    _check("kaiming_uniform_", tensor)
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std("kaiming_uniform_", tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """He-normal: N(0, std^2) with ``std = gain / sqrt(fan)`` (see :func:`kaiming_uniform_`)."""
    _check("kaiming_normal_", tensor)
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std("kaiming_normal_", tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """Fill with a (semi-)orthogonal matrix times ``gain``: the tensor viewed as (size(0), rest)
    gets orthonormal rows or columns, whichever are fewer.

    Raises:
        ShapeError: fewer than 2 dims.
    """
    _check("orthogonal_", tensor, floating=True)
    if tensor.ndim < 2:
        raise ShapeError(f"orthogonal_: only tensors with 2 or more dimensions are supported, got shape "
                         f"{tuple(tensor.shape)}")
    if tensor.array.size == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.array.size // rows
    flat = host_generator(generator, "orthogonal_").normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = numpy.linalg.qr(flat)
    q = q * numpy.sign(numpy.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, (q * gain).reshape(tensor.shape))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """Fill a 2-D tensor from N(0, std^2), then zero ``ceil(sparsity * rows)`` random
    elements of every column.

    Raises:
        ShapeError: not 2-D.
    """
    _check("sparse_", tensor, floating=True)
    if tensor.ndim != 2:
        raise ShapeError(f"sparse_: only tensors with 2 dimensions are supported, got shape {tuple(tensor.shape)}")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    rng = host_generator(generator, "sparse_")
    values = rng.normal(0.0, std, (rows, cols))
    for c in range(cols):
        values[rng.permutation(rows)[:num_zeros], c] = 0
    return _fill(tensor, values)


def _deprecated(fn):
    old = fn.__name__[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{fn.__name__}`.", FutureWarning,
                      stacklevel=2)
        return fn(*args, **kwargs)
    deprecated_init.__name__ = old
    deprecated_init.__doc__ = f"Deprecated spelling of :func:`{fn.__name__}`."
    return deprecated_init


uniform, normal, constant, eye, dirac = (_deprecated(f) for f in (uniform_, normal_, constant_, eye_, dirac_))
xavier_uniform, xavier_normal = _deprecated(xavier_uniform_), _deprecated(xavier_normal_)
kaiming_uniform, kaiming_normal = _deprecated(kaiming_uniform_), _deprecated(kaiming_normal_)
orthogonal, sparse = _deprecated(orthogonal_), _deprecated(sparse_)


def default_layer_init_(weight, bias):
    """PyTorch's Linear/Conv default: kaiming_uniform_(a=sqrt 5) for the weight, and
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for the bias."""
    kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = _calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        uniform_(bias, -bound, bound)
