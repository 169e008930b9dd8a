"""Random tensors: ``rand``, ``randn``, ``randint``, ``randperm``, ``normal``, ``bernoulli``,
``multinomial`` and the ``*_like`` forms.

Every draw comes from a :class:`tinynet.Generator` (the default one unless
``generator=`` is given), made on the host and copied to the tensor's device, so one seed
gives the same values on the CPU and the GPU. Draws are float64 and then rounded to the
target dtype. None of these is differentiable.

Differences from PyTorch: the streams are NumPy's PCG64, so a seed gives other values than
in PyTorch (the distributions, dtypes, shapes and errors are PyTorch's). ``multinomial``
without replacement draws by exponential keys (Efraimidis & Spirakis, 2006), which is the
same distribution as successive draws.
"""
import numpy

from ..dtypes import is_floating
from .. import backend, dtypes
from ..errors import ArgumentError, DTypeError, ShapeError
from ..random import host_generator
from ..tensor import Tensor
from .creation import _like, _make
from .util import check_int, check_number, check_tensor


def _host(dev, values):
    """Host ``values`` as a tensor on ``dev``."""
    return Tensor._wrap(backend.to_device(values, dev))


def _float_dtype(op, dtype):
    """The dtype of a float-valued draw (default float); DTypeError for integer/bool ones."""
    dt = dtypes.as_dtype(dtype, op) or dtypes.get_default_dtype()
    if not is_floating(dt):
        raise DTypeError(f"{op}: needs a floating-point dtype (as in PyTorch), got {dt}")
    return dt


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples from [0, 1) in a tensor of shape ``size`` (default float dtype).

    Raises:
        DTypeError: a non-float dtype. ArgumentError: a negative size.
    """
    g = host_generator(generator, "rand")
    return _make("rand", lambda xp, s, d: xp.asarray(g.random(s, dtype=numpy.float64).astype(d)),
                 size, _float_dtype("rand", dtype), device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples in a tensor of shape ``size`` (default float dtype).

    Raises:
        DTypeError: a non-float dtype. ArgumentError: a negative size.
    """
    g = host_generator(generator, "randn")
    return _make("randn", lambda xp, s, d: xp.asarray(g.standard_normal(s).astype(d)),
                 size, _float_dtype("randn", dtype), device, requires_grad)


def _check_fits(op, low, high, dt):
    """Raise when ``[low, high)`` does not fit in integer (or bool) dtype ``dt``."""
    if dt.kind in "biu":
        lo, hi = (0, 1) if dt.kind == "b" else (int(numpy.iinfo(dt).min), int(numpy.iinfo(dt).max))
        if low < lo or high - 1 > hi:
            raise ArgumentError(f"{op}: the range [{low}, {high}) does not fit in {dt} ([{lo}, {hi}])")


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Integers drawn uniformly from ``[low, high)``: ``randint(high, size)``,
    ``randint(low, high, size)`` (or the same by keyword); int64 by default.

    Raises:
        ArgumentError: ``high <= low``, a range that does not fit ``dtype``, or arguments
            that fit neither form. ArgumentTypeError: a bound that is not an int.
    """
    args = list(args)
    if size is None and args and isinstance(args[-1], (tuple, list)):
        size = args.pop()
    if len(args) == 2 and low is None and high is None:
        low, high = args
    elif len(args) == 1 and high is None:
        high = args[0]
    elif args:
        raise ArgumentError("randint: expected randint(high, size) or randint(low, high, size)")
    if size is None or high is None:
        raise ArgumentError("randint: high and size are required (randint(high, size) or randint(low, high, size))")
    low, high = check_int("randint", "low", 0 if low is None else low), check_int("randint", "high", high)
    if high <= low:
        raise ArgumentError(f"randint: expected low < high, got low={low}, high={high}")
    g = host_generator(generator, "randint")
    dt = dtypes.as_dtype(dtype, "randint") or dtypes.int64
    _check_fits("randint", low, high, dt)
    return _make("randint", lambda xp, s, d: xp.asarray(g.integers(low, high, size=s).astype(d)),
                 (size,), dt, device, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of ``0 .. n-1`` (int64 by default).

    Raises:
        ArgumentError: ``n`` is negative, or ``n - 1`` does not fit ``dtype``.
    """
    n = check_int("randperm", "n", n, 0)
    g = host_generator(generator, "randperm")
    dt = dtypes.as_dtype(dtype, "randperm") or dtypes.int64
    _check_fits("randperm", 0, n, dt)
    return _make("randperm", lambda xp, s, d: xp.asarray(g.permutation(n).astype(d)), (n,), dt, device,
                 requires_grad)


rand_like = _like("rand_like", rand, _float_dtype)
randn_like = _like("randn_like", randn, _float_dtype)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """``randint(low, high, input.shape)`` with ``input``'s dtype and device by default;
    ``randint_like(input, high)`` draws from ``[0, high)``."""
    check_tensor("randint_like", "input", input)
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=input.dtype if dtype is None else dtype,
                   device=input.device if device is None else device, requires_grad=requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Normal samples: ``normal(mean_tensor, std_tensor)`` elementwise (shapes broadcast),
    ``normal(mean_tensor, std=1.0)``, ``normal(mean=0.0, std_tensor)``, or
    ``normal(mean, std, size)`` with numbers.

    The result has the dtype of ``mean`` when it is a tensor, else of ``std`` (PyTorch's
    choice), with numbers only ``dtype`` or the default float dtype.

    Raises:
        ArgumentError: a negative ``std``, numbers without ``size``, or ``size`` with tensors.
        DTypeError: an integer tensor or a non-float ``dtype``.
        ShapeError: mean and std do not broadcast.
    """
    g = host_generator(generator, "normal")
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise ArgumentError("normal: with a number mean and std, size is required")
        mean, std = check_number("normal", "mean", mean), check_number("normal", "std", std)
        if std < 0:
            raise ArgumentError(f"normal: std must be >= 0, got {std}")
        return _make("normal", lambda xp, s, d: xp.asarray((mean + std * g.standard_normal(s)).astype(d)),
                     (size,), _float_dtype("normal", dtype), device, requires_grad)
    if size is not None:
        raise ArgumentError("normal: size is only for a number mean and std; the tensors give the shape")
    ref = mean if isinstance(mean, Tensor) else std
    for name, v in (("mean", mean), ("std", std)):
        if not isinstance(v, Tensor):
            check_number("normal", name, v)
        elif not is_floating(v.dtype):
            raise DTypeError(f"normal: {name} must be a floating-point tensor, got {v.dtype}")
    m = mean.numpy(force=True) if isinstance(mean, Tensor) else mean
    s = std.numpy(force=True) if isinstance(std, Tensor) else std
    if numpy.any(numpy.asarray(s) < 0):
        raise ArgumentError("normal: std must be >= 0 everywhere")
    try:
        shape = numpy.broadcast_shapes(numpy.shape(m), numpy.shape(s))
    except ValueError:
        raise ShapeError(f"normal: mean {numpy.shape(m)} and std {numpy.shape(s)} do not broadcast") from None
    values = (m + s * g.standard_normal(shape)).astype(ref.dtype)
    out = _host(ref.device, values)
    return out.requires_grad_() if requires_grad else out


def bernoulli(input, p=None, *, generator=None):
    """0/1 samples with probabilities ``input`` (or the number ``p``), in ``input``'s dtype.

    Raises:
        ArgumentError: probabilities outside [0, 1].
    """
    check_tensor("bernoulli", "input", input)
    if p is None and not is_floating(input.dtype):
        raise DTypeError(f"bernoulli: probabilities must be a floating-point tensor, got {input.dtype}")
    probs = numpy.full(input.shape, check_number("bernoulli", "p", p)) if p is not None else input.numpy(force=True)
    if numpy.any((probs < 0) | (probs > 1)) or numpy.any(numpy.isnan(probs)):
        raise ArgumentError("bernoulli: probabilities must be in [0, 1]")
    g = host_generator(generator, "bernoulli")
    return _host(input.device, (g.random(input.shape) < probs).astype(input.dtype))


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Category indices drawn with probabilities proportional to the rows of ``input``
    (1-D or 2-D, non-negative weights); int64 of shape (num_samples,) or (rows, num_samples).

    Raises:
        ShapeError: input not 1-D or 2-D. DTypeError: integer weights. ArgumentError:
            negative or non-finite weights, a row summing to 0, or more samples than
            categories without replacement.
    """
    check_tensor("multinomial", "input", input)
    if input.ndim not in (1, 2):
        raise ShapeError(f"multinomial: input must be 1-D or 2-D, got shape {input.shape}")
    if not is_floating(input.dtype):
        raise DTypeError(f"multinomial: input must be a float tensor of weights, got {input.dtype}")
    n = check_int("multinomial", "num_samples", num_samples, 1)
    w = input.numpy(force=True).astype(numpy.float64).reshape(input.shape[0] if input.ndim == 2 else 1,
                                                                input.shape[-1])
    if numpy.any(w < 0) or not numpy.all(numpy.isfinite(w)):
        raise ArgumentError("multinomial: weights must be finite and non-negative")
    if not replacement and n > w.shape[1]:
        raise ArgumentError(f"multinomial: cannot draw {n} samples without replacement from {w.shape[1]} "
                            "categories")
    g = host_generator(generator, "multinomial")
    if numpy.any(w.sum(axis=1) <= 0):
        raise ArgumentError("multinomial: a row of weights sums to 0")
    if replacement:
        cdf = numpy.cumsum(w / w.sum(axis=1, keepdims=True), axis=1)
        u = g.random((w.shape[0], n))
        out = numpy.stack([numpy.searchsorted(c, v, side="right") for c, v in zip(cdf, u)])
        out = numpy.minimum(out, w.shape[1] - 1)  # u just below 1 past a rounded-down cdf
    else:  # exponential keys log(u)/w, largest first: successive draws without replacement
        # (Efraimidis & Spirakis 2006); weight-0 categories come last, as in PyTorch
        with numpy.errstate(divide="ignore"):
            keys = numpy.log(g.random(w.shape)) / w
        out = numpy.argsort(-keys, axis=1, kind="stable")[:, :n]
    out = out.astype(numpy.int64)
    return _host(input.device, out if input.ndim == 2 else out[0])


def poisson(input, generator=None):
    """Poisson samples with rates ``input`` (same shape and float dtype)."""
    check_tensor("poisson", "input", input)
    g = host_generator(generator, "poisson")
    rates = input.numpy(force=True)
    if not numpy.all(rates >= 0):  # NaN fails too
        raise ArgumentError("poisson: invalid Poisson rate, expected rate to be non-negative (and not NaN)")
    return _host(input.device, numpy.asarray(g.poisson(rates)).astype(input.dtype))


def binomial(count, prob, generator=None):
    """Samples of the binomial distribution: successes in ``count`` trials of probability
    ``prob`` (float tensors broadcasting together), in the promoted float dtype.

    Raises:
        DTypeError: an integer ``count`` or ``prob`` (as PyTorch). ArgumentError: a probability
            outside [0, 1] or a negative count. ShapeError: shapes that do not broadcast.
    """
    for name, t in (("count", count), ("prob", prob)):
        check_tensor("binomial", name, t)
        if not is_floating(t.dtype):
            raise DTypeError(f"binomial: only supports floating-point dtypes for {name}, got {t.dtype}")
    n, p = count.numpy(force=True).astype(numpy.float64), prob.numpy(force=True).astype(numpy.float64)
    try:
        shape = numpy.broadcast_shapes(n.shape, p.shape)
    except ValueError:
        raise ShapeError(f"binomial: count {n.shape} and prob {p.shape} do not broadcast") from None
    if numpy.any((p < 0) | (p > 1) | numpy.isnan(p)) or numpy.any(n < 0):
        raise ArgumentError("binomial: expects counts >= 0 and probabilities in [0, 1]")
    g = host_generator(generator, "binomial")
    draws = g.binomial(numpy.broadcast_to(n, shape).astype(numpy.int64), numpy.broadcast_to(p, shape))
    return _host(count.device, numpy.asarray(draws).astype(dtypes.result_type(count.array, prob.array)))


__all__ = ["rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal",
           "bernoulli", "multinomial", "poisson", "binomial"]
