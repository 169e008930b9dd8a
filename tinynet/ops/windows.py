"""The window functions of spectral analysis (``hann_window``, ``hamming_window``,
``blackman_window``, ``bartlett_window``, ``kaiser_window``), PyTorch's signatures.

A *periodic* window of length N (the default, for ``stft``) is the symmetric window of length
N + 1 without its last value; a symmetric one (``periodic=False``) is NumPy's
(``numpy.hanning``, ``blackman``, ``bartlett``, ``kaiser``). The Hamming window with its
coefficients is ``alpha - beta cos(2 pi n / (N - 1))`` (Hann: 0.5/0.5). Length 0 gives an empty
window, length 1 ``[1]``. Values are computed on the host by NumPy in float64, cast, then moved to
the device: CuPy's ``hanning`` agrees with PyTorch's float64 window only to ~1.5e-7.
"""
import math

import numpy

from .. import backend, devices, dtypes
from ..errors import ArgumentError, DTypeError
from ..layouts import strided
from ..tensor import Tensor
from .util import check_flag, check_int, check_number


def _window(op, window_length, periodic, dtype, layout, device, requires_grad, make):
    """The window ``make(numpy, M)`` (a symmetric window of M float64 values) of ``window_length``
    values, periodic or symmetric, as a tensor of ``dtype`` on ``device``."""
    n = check_int(op, "window_length", window_length, 0)
    periodic = check_flag(op, "periodic", periodic)
    if layout is not None and layout is not strided:
        raise ArgumentError(f"{op}: only the strided layout is supported, got {layout!r}")
    dt = dtypes.as_dtype(dtype, op) or dtypes.get_default_dtype()
    if not dtypes.is_floating(dt):
        raise DTypeError(f"{op}: expected a floating-point dtype, got {dt}")
    dev = devices.resolve(device, op)
    if n <= 1:
        values = numpy.ones(n, dtype="float64")
    else:
        values = make(numpy, n + 1)[:-1] if periodic else make(numpy, n)
    out = Tensor._wrap(backend.to_device(values.astype(dt), dev))
    return out.requires_grad_() if requires_grad else out


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The Hann window ``0.5 - 0.5 cos(2 pi n / (N - 1))``, n = 0 .. N - 1 (N = ``window_length``,
    or ``window_length + 1`` and the last value dropped when ``periodic``), default float dtype.

    Raises:
        ArgumentError: a negative length. DTypeError: a dtype that is not floating-point.
    """
    return _window("hann_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda xp, m: xp.hanning(m))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None, layout=None, device=None,
                   requires_grad=False):
    """The generalised Hamming window ``alpha - beta cos(2 pi n / (N - 1))`` (N as in
    :func:`hann_window`); the defaults give Hamming's window.

    Raises:
        ArgumentError: a negative length. DTypeError: a dtype that is not floating-point.
        ArgumentTypeError: ``alpha`` or ``beta`` is not a number.
    """
    a, b = check_number("hamming_window", "alpha", alpha), check_number("hamming_window", "beta", beta)
    return _window("hamming_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda xp, m: a - b * xp.cos(2 * math.pi * xp.arange(m, dtype="float64") / (m - 1)))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``
    (``numpy.blackman``; N as in :func:`hann_window`)."""
    return _window("blackman_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda xp, m: xp.blackman(m))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None, requires_grad=False):
    """The triangular Bartlett window ``1 - |2 n / (N - 1) - 1|`` (``numpy.bartlett``; N as in
    :func:`hann_window`)."""
    return _window("bartlett_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda xp, m: xp.bartlett(m))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None, device=None,
                  requires_grad=False):
    """The Kaiser window ``I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta)`` (``numpy.kaiser``,
    I0 the modified Bessel function of order 0; N as in :func:`hann_window`).

    Raises:
        ArgumentTypeError: ``beta`` is not a number.
    """
    b = check_number("kaiser_window", "beta", beta)
    return _window("kaiser_window", window_length, periodic, dtype, layout, device, requires_grad,
                   lambda xp, m: xp.kaiser(m, b))
