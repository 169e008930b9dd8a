"""The helpers of :mod:`tinynet.fft`: the sample frequencies ``fftfreq``/``rfftfreq`` (from
``numpy.fft`` / ``cupy.fft``) and the reorderings ``fftshift``/``ifftshift`` (cyclic shifts
by ``size // 2`` through :func:`tinynet.roll`, so they take complex tensors and pass
gradients back shifted the other way), with PyTorch's signatures.
"""
import numbers

import numpy

from .. import backend, devices, dtypes
from ..errors import ArgumentError, ArgumentTypeError, DTypeError
from ..tensor import Tensor
from .rearrange import roll
from .spectral import _dim
from .util import check_tensor


def _freqs(op, n, d, dtype, device, requires_grad, half):
    if isinstance(n, bool) or not isinstance(n, (numbers.Integral, numpy.integer)):
        raise ArgumentTypeError(f"{op}: n must be an int, got {type(n).__name__}")
    if n < 0:
        raise ArgumentError(f"{op}: n must be non-negative, got {n}")
    if isinstance(d, bool) or not isinstance(d, (numbers.Real, numpy.floating, numpy.integer)):
        raise ArgumentTypeError(f"{op}: d must be a number, got {type(d).__name__}")
    dt = dtypes.as_dtype(dtype, op) or dtypes.get_default_dtype()
    if not dtypes.is_floating(dt):
        raise DTypeError(f"{op}: requires a floating-point dtype, got {dt}")
    dev = devices.resolve(device, op)
    with numpy.errstate(divide="ignore", invalid="ignore"):  # d = 0 (and rfftfreq(0)) give inf and NaN, as PyTorch
        if n == 0:  # PyTorch: no frequencies, or for rfftfreq the one 0 / 0
            values = numpy.full(1, numpy.nan) if half else numpy.zeros(0)
        else:  # k / n, then divided by d (NumPy's fftfreq(n, d) raises for d = 0)
            values = (numpy.fft.rfftfreq if half else numpy.fft.fftfreq)(int(n)) / float(d)
    out = Tensor._wrap(backend.to_device(values.astype(dt), dev))
    return out.requires_grad_() if requires_grad else out


def fftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The sample frequencies of an ``n``-point FFT with sample spacing ``d``:
    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)``.

    Args:
        n (int): the signal length (0 gives an empty tensor). d (float): the sample spacing
            (0 gives inf and NaN, as PyTorch). Default 1.0.
        dtype: a floating-point dtype; default the default float dtype. layout: accepted
            for PyTorch's sake (strided only). device: default the default device.
        requires_grad (bool): Default False.

    Returns:
        Tensor of shape ``(n,)``.

    Raises:
        ArgumentTypeError: ``n`` not an int or ``d`` not a number. ArgumentError: ``n < 0``.
        DTypeError: a dtype that is not floating-point (PyTorch's refusal).

    Source: ``numpy.fft.fftfreq`` (computed on the host: ``n`` values, then moved).
    """
    return _freqs("fft.fftfreq", n, d, dtype, device, requires_grad, half=False)


def rfftfreq(n, d=1.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The non-negative sample frequencies of an ``n``-point :func:`tinynet.fft.rfft`:
    ``[0, 1, ..., n // 2] / (d * n)``, shape ``(n // 2 + 1,)`` (``[nan]`` for ``n = 0``, as PyTorch).

    Arguments and errors as :func:`fftfreq`. Source: ``numpy.fft.rfftfreq``.
    """
    return _freqs("fft.rfftfreq", n, d, dtype, device, requires_grad, half=True)


def _shift(op, input, dim, sign):
    check_tensor(op, "input", input)
    if dim is None:
        dims = tuple(range(input.ndim))
    elif isinstance(dim, (numbers.Integral, numpy.integer)) and not isinstance(dim, bool):
        dims = (dim,)
    elif isinstance(dim, (tuple, list)):
        dims = tuple(dim)
    else:
        raise ArgumentTypeError(f"{op}: dim must be None, an int or a sequence of ints, got {type(dim).__name__}")
    axes = tuple(_dim(op, d, input.ndim) for d in dims)
    if not axes:
        raise ArgumentError(f"{op}: shifts required: the input has no dims to shift (shape {tuple(input.shape)})")
    shifts = tuple(sign * (input.shape[a] // 2) for a in axes)
    return roll(input, shifts, axes)


def fftshift(input, dim=None):
    """Reorder an FFT's output so the zero frequency is in the middle: a cyclic shift by
    ``size // 2`` along each of ``dim`` (default all dims).

    Raises:
        ArgumentTypeError: not a Tensor, or ``dim`` of the wrong type.
        IndexOutOfRangeError: a dim out of range. ArgumentError: no dims (a 0-d input).
    """
    return _shift("fft.fftshift", input, dim, 1)


def ifftshift(input, dim=None):
    """The inverse of :func:`fftshift`: a cyclic shift by ``-(size // 2)`` along each of
    ``dim`` (default all dims).

    Raises:
        As :func:`fftshift`.
    """
    return _shift("fft.ifftshift", input, dim, -1)
