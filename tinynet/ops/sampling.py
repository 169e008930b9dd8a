"""Random tensors: ``rand``, ``randn``, ``randint``, ``randperm``, ``normal``, ``bernoulli``,
``multinomial`` and the ``*_like`` forms.

Every draw comes from a :class:`tinynet.Generator` (the default one unless
``generator=`` is given), made on the host and copied to the tensor's device, so one seed
gives the same values on the CPU and the GPU. Draws are float64 and then rounded to the
target dtype. None of these is differentiable.
"""
import numpy

from .. import backend, dtypes
from ..errors import ArgumentError, DTypeError, ShapeError
from ..random import host_generator
from ..tensor import Tensor
from .creation import _make
from .util import check_int, check_tensor


def _host(dev, values):
    """Host ``values`` as a tensor on ``dev``."""
    return Tensor._wrap(backend.to_device(values, dev))


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Uniform samples from [0, 1) in a tensor of shape ``size`` (default float dtype)."""
    g = host_generator(generator)
    return _make("rand", lambda xp, s, d: xp.asarray(g.random(s, dtype=numpy.float64).astype(d)),
                 size, dtype, device, requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    """Standard normal samples in a tensor of shape ``size`` (default float dtype)."""
    g = host_generator(generator)
    return _make("randn", lambda xp, s, d: xp.asarray(g.standard_normal(s).astype(d)),
                 size, dtype, device, requires_grad)


def randint(*args, size=None, generator=None, dtype=None, device=None, requires_grad=False):
    """Integers drawn uniformly from ``[low, high)``: ``randint(high, size)`` or
    ``randint(low, high, size)``; int64 by default.

    Raises:
        ArgumentError: ``high <= low``, or the arguments do not fit either form.
    """
    args = list(args)
    if size is None and args and isinstance(args[-1], (tuple, list)):
        size = args.pop()
    if len(args) == 1:
        low, high = 0, args[0]
    elif len(args) == 2:
        low, high = args
    else:
        raise ArgumentError("randint: expected randint(high, size) or randint(low, high, size)")
    if size is None:
        raise ArgumentError("randint: size is required")
    low, high = check_int("randint", "low", low), check_int("randint", "high", high)
    if high <= low:
        raise ArgumentError(f"randint: expected low < high, got low={low}, high={high}")
    g = host_generator(generator)
    dt = dtypes.as_dtype(dtype, "randint") or dtypes.int64
    return _make("randint", lambda xp, s, d: xp.asarray(g.integers(low, high, size=s).astype(d)),
                 tuple(size), dt, device, requires_grad)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    """A random permutation of ``0 .. n-1`` (int64 by default).

    Raises:
        ArgumentError: ``n`` is negative.
    """
    n = check_int("randperm", "n", n, 0)
    g = host_generator(generator)
    dt = dtypes.as_dtype(dtype, "randperm") or dtypes.int64
    return _make("randperm", lambda xp, s, d: xp.asarray(g.permutation(n).astype(d)), (n,), dt, device,
                 requires_grad)


def _like(name, maker):
    def like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
        check_tensor(name, "input", input)
        return maker(*input.shape, dtype=dtype or input.dtype, device=device or input.device,
                     requires_grad=requires_grad)
    like.__name__ = like.__qualname__ = name
    like.__doc__ = f"Like :func:`{name[:-5]}` with the shape (and, by default, dtype and device) of ``input``."
    return like


rand_like = _like("rand_like", rand)
randn_like = _like("randn_like", randn)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    """``randint(low, high, input.shape)`` with ``input``'s dtype and device by default;
    ``randint_like(input, high)`` draws from ``[0, high)``."""
    check_tensor("randint_like", "input", input)
    if high is None:
        low, high = 0, low
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device or input.device,
                   requires_grad=requires_grad)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    """Normal samples: ``normal(mean_tensor, std_tensor)`` elementwise (shapes broadcast),
    ``normal(mean_tensor, std=1.0)``, ``normal(mean=0.0, std_tensor)``, or
    ``normal(mean, std, size)`` with numbers.

    Raises:
        ArgumentError: a negative ``std``, or numbers without ``size``.
        ShapeError: mean and std do not broadcast.
    """
    g = host_generator(generator)
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise ArgumentError("normal: with a number mean and std, size is required")
        if std < 0:
            raise ArgumentError(f"normal: std must be >= 0, got {std}")
        return _make("normal", lambda xp, s, d: xp.asarray((mean + std * g.standard_normal(s)).astype(d)),
                     tuple(size) if not isinstance(size, int) else (size,), dtype, device, requires_grad)
    ref = mean if isinstance(mean, Tensor) else std
    m = mean.numpy(force=True) if isinstance(mean, Tensor) else mean
    s = std.numpy(force=True) if isinstance(std, Tensor) else std
    if numpy.any(numpy.asarray(s) < 0):
        raise ArgumentError("normal: std must be >= 0 everywhere")
    try:
        shape = numpy.broadcast_shapes(numpy.shape(m), numpy.shape(s))
    except ValueError:
        raise ShapeError(f"normal: mean {numpy.shape(m)} and std {numpy.shape(s)} do not broadcast") from None
    values = (m + s * g.standard_normal(shape)).astype(dtypes.float_for(ref.dtype))
    return _host(ref.device, values)


def bernoulli(input, p=None, *, generator=None):
    """0/1 samples with probabilities ``input`` (or the number ``p``), in ``input``'s dtype.

    Raises:
        ArgumentError: probabilities outside [0, 1].
    """
    check_tensor("bernoulli", "input", input)
    probs = numpy.full(input.shape, p) if p is not None else input.numpy(force=True)
    if numpy.any((probs < 0) | (probs > 1)):
        raise ArgumentError("bernoulli: probabilities must be in [0, 1]")
    g = host_generator(generator)
    values = (g.random(input.shape) < probs).astype(input.dtype if input.dtype.kind == "f" else numpy.float32)
    return _host(input.device, values)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Category indices drawn with probabilities proportional to the rows of ``input``
    (1-D or 2-D, non-negative weights); int64 of shape (num_samples,) or (rows, num_samples).

    Raises:
        ShapeError: input not 1-D or 2-D. ArgumentError: negative weights, a row summing
            to 0, or more samples than nonzero categories without replacement.
    """
    check_tensor("multinomial", "input", input)
    if input.ndim not in (1, 2):
        raise ShapeError(f"multinomial: input must be 1-D or 2-D, got shape {input.shape}")
    if input.dtype.kind != "f":
        raise DTypeError(f"multinomial: input must be a float tensor of weights, got {input.dtype}")
    n = check_int("multinomial", "num_samples", num_samples, 1)
    w = input.numpy(force=True).astype(numpy.float64).reshape(-1, input.shape[-1])
    if numpy.any(w < 0) or not numpy.all(numpy.isfinite(w)):
        raise ArgumentError("multinomial: weights must be finite and non-negative")
    g = host_generator(generator)
    rows = []
    for row in w:
        total = row.sum()
        if total <= 0:
            raise ArgumentError("multinomial: a row of weights sums to 0")
        if not replacement and n > int((row > 0).sum()):
            raise ArgumentError(f"multinomial: cannot draw {n} samples without replacement from "
                                f"{int((row > 0).sum())} categories with nonzero weight")
        rows.append(g.choice(row.size, size=n, replace=bool(replacement), p=row / total))
    out = numpy.stack(rows).astype(numpy.int64)
    return _host(input.device, out if input.ndim == 2 else out[0])


def poisson(input, generator=None):
    """Poisson samples with rates ``input`` (same shape and float dtype)."""
    check_tensor("poisson", "input", input)
    g = host_generator(generator)
    return _host(input.device, g.poisson(input.numpy(force=True)).astype(input.dtype))


__all__ = ["rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal",
           "bernoulli", "multinomial", "poisson"]
