"""The discrete Fourier transforms behind :mod:`tinynet.fft`: complex-to-complex (``FFT``),
real-to-complex (``RFFT``, the one-sided half spectrum) and complex-to-real (``IRFFT``)
over any set of axes, the zero-padding/truncation of ``n``/``s`` (``Resize``), and the
argument checks the public functions share.

The numbers come from ``xp.fft`` (``numpy.fft``: pocketfft; ``cupy.fft``: cuFFT). Each
transform is linear, so its backward is the adjoint map (PyTorch's convention for complex
gradients, docs/complex.md): with ``norm`` "backward" (no scaling forward), "ortho"
(``1/sqrt(n)`` both ways) or "forward" (``1/n`` forward), the adjoint of a forward
transform is the inverse transform with the *dual* norm (backward <-> forward, ortho
stays):

* ``FFT``: ``dx = ifftn(gy, norm=dual)`` (``fftn`` for the inverse transform);
* ``RFFT``: ``dx = Re(ifftn(pad(gy), norm=dual))``, ``gy`` zero-padded from ``n//2 + 1``
  to ``n`` bins on the halved axis;
* ``IRFFT`` (output length ``n`` on the last axis, input exactly ``n//2 + 1`` bins): the
  output reads bins ``1 .. ceil(n/2) - 1`` twice (``k`` and ``n - k``) and the real parts
  of the zero and Nyquist bins once, so ``dX = rfftn(gy, norm=dual) * w`` with ``w = 2``
  on the bins read twice and 1 on the others;
* ``Resize``: zero-padding and truncation are each other's adjoints.

Several axes of ``IRFFT`` run as the inverse complex transform over all but the last
axis, then the one-dimensional complex-to-real one (NumPy's definition), on CuPy too, so
that inputs which are not Hermitian-consistent give the same numbers on both backends.
Every backward is written with ops of its own, so second derivatives work.
"""
import numbers

import numpy

from .. import dtypes
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, IndexOutOfRangeError
from ..tensor import Tensor
from .util import check_tensor

NORMS = ("backward", "ortho", "forward")
_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


class Resize(Op):
    """Zero-pad or truncate (at the end) every axis to ``shape``."""
    name = "fft_resize"
    complex_ok = True
    twice_differentiable = True

    def __init__(self, shape):
        self.shape = tuple(shape)

    def forward(self, xp, x):
        self.in_shape = x.shape
        keep = tuple(slice(0, min(a, b)) for a, b in zip(x.shape, self.shape))
        if all(b <= a for a, b in zip(x.shape, self.shape)):  # only truncation: one copy
            return x[keep].copy()
        out = xp.zeros(self.shape, x.dtype)
        out[keep] = x[keep]
        return out

    def backward(self, xp, gy):
        return (Resize(self.in_shape).call(xp, gy),)


class FFT(Op):
    """``fftn`` (or ``ifftn`` with ``inverse``) over ``axes``; complex output of the
    input's width (complex64 for float32/complex64)."""
    name = "fft"
    complex_ok = True
    twice_differentiable = True

    def __init__(self, axes, norm, inverse=False):
        self.axes, self.norm, self.inverse = axes, norm, inverse

    def forward(self, xp, x):
        cdt = dtypes.complex_for(x.dtype)
        if len(self.axes) == 1:
            f = xp.fft.ifft if self.inverse else xp.fft.fft
            y = f(x, axis=self.axes[0], norm=self.norm)
        else:
            f = xp.fft.ifftn if self.inverse else xp.fft.fftn
            y = f(x, axes=self.axes, norm=self.norm)
        return y.astype(cdt, copy=False)

    def backward(self, xp, gy):
        return (FFT(self.axes, _DUAL[self.norm], not self.inverse).call(xp, gy),)


class RFFT(Op):
    """``rfftn`` over ``axes`` of a real input: the last axis of ``axes`` keeps its
    ``n//2 + 1`` non-negative frequencies."""
    name = "rfft"
    complex_ok = True  # (a complex result)
    twice_differentiable = True

    def __init__(self, axes, norm):
        self.axes, self.norm = axes, norm

    def forward(self, xp, x):
        self.n = x.shape[self.axes[-1]]
        if len(self.axes) == 1:
            y = xp.fft.rfft(x, axis=self.axes[0], norm=self.norm)
        else:
            y = xp.fft.rfftn(x, axes=self.axes, norm=self.norm)
        return y.astype(dtypes.complex_for(x.dtype), copy=False)

    def backward(self, xp, gy):
        full = list(gy.shape)
        full[self.axes[-1]] = self.n
        g = FFT(self.axes, _DUAL[self.norm], inverse=True).call(xp, Resize(full).call(xp, gy))
        return (xp.real(g),)


class IRFFT(Op):
    """The real signal of length ``n`` on the last axis of ``axes`` whose half spectrum is
    the input (exactly ``n//2 + 1`` bins there): the imaginary parts of the zero and
    Nyquist bins are ignored."""
    name = "irfft"
    complex_ok = True
    twice_differentiable = True

    def __init__(self, axes, norm, n):
        self.axes, self.norm, self.n = axes, norm, n

    def forward(self, xp, x):
        rdt = dtypes.real_for(dtypes.complex_for(x.dtype))
        if len(self.axes) > 1:
            x = xp.fft.ifftn(x, axes=self.axes[:-1], norm=self.norm)
        return xp.fft.irfft(x, n=self.n, axis=self.axes[-1], norm=self.norm).astype(rdt, copy=False)

    def backward(self, xp, gy):
        g = RFFT(self.axes, _DUAL[self.norm]).call(xp, gy)
        a, m = self.axes[-1], g.shape[self.axes[-1]]
        hi = m - 1 if self.n % 2 == 0 else m  # bins 1 .. hi-1 stand for two frequencies
        if hi > 1:
            pre = (slice(None),) * a
            g = xp.concatenate([g[pre + (slice(0, 1),)], g[pre + (slice(1, hi),)] * 2, g[pre + (slice(hi, m),)]],
                               axis=a)
        return (g,)


# ---- argument checks shared by the public functions ------------------------------------
def check_input(op, input, kind):
    """``input`` ready for a transform: a Tensor; integers and bool in the default float
    dtype (PyTorch promotes them); for ``kind`` "r2c" a real tensor, for "c2r" a complex one
    (real floats become complex of their width).

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: float16/bfloat16 (PyTorch's CPU FFTs
        refuse them too), or a complex input to a real-input transform.
    """
    check_tensor(op, "input", input)
    dt = input.array.dtype
    if dt in (dtypes.float16, dtypes.bfloat16):
        raise DTypeError(f"{op}: unsupported dtype {dt} (float32, float64, complex64, complex128, integer and bool "
                         "inputs)")
    if dt.kind == "c" and kind == "r2c":
        raise DTypeError(f"{op}: expects a real input tensor, got {dt}")
    if dt.kind in "biu":
        input = input.to(dtypes.get_default_dtype())
    if kind == "c2r" and input.array.dtype.kind != "c":
        input = input.to(dtypes.complex_for(input.array.dtype))
    dtypes.note_complex()
    return input


def check_norm(op, norm):
    """``norm`` (None, "backward", "ortho" or "forward") as one of the three names."""
    if norm is None:
        return "backward"
    if not isinstance(norm, str) or norm not in NORMS:
        raise ArgumentError(f"{op}: norm must be None or one of {list(NORMS)}, got {norm!r}")
    return norm


def _int(op, name, v):
    if isinstance(v, bool) or not isinstance(v, (numbers.Integral, numpy.integer)):
        raise ArgumentTypeError(f"{op}: {name} must be an int, got {type(v).__name__}")
    return int(v)


def check_size(op, name, n):
    """A number of data points: None, or an int >= 1."""
    if n is None:
        return None
    n = _int(op, name, n)
    if n < 1:
        raise ArgumentError(f"{op}: {name} must be a positive number of data points, got {n}")
    return n


def _dim(op, d, ndim):
    d = _int(op, "dim", d)
    if not -ndim <= d < ndim:
        if ndim == 0:
            raise IndexOutOfRangeError(f"{op}: dimension specified as {d} but the tensor has no dimensions")
        raise IndexOutOfRangeError(f"{op}: dimension out of range (expected to be in range of [{-ndim}, "
                                   f"{ndim - 1}], but got {d})")
    return d % ndim


def check_axes(op, input, s, dim, default):
    """The axes and the sizes ``s`` of an n-dimensional transform, PyTorch's way: ``dim``
    None takes the last ``len(s)`` dims when ``s`` is given, else ``default`` (None: all
    dims); an entry -1 of ``s`` keeps that dim's size (returned as None).

    Raises:
        ArgumentTypeError: ``s`` or ``dim`` of the wrong type. ArgumentError: ``s`` and
        ``dim`` of different lengths, a repeated dim, a size below 1.
        IndexOutOfRangeError: a dim out of range.
    """
    ndim = input.ndim
    if s is not None:
        if isinstance(s, Tensor) or not isinstance(s, (tuple, list)):
            raise ArgumentTypeError(f"{op}: s must be a sequence of ints, got {type(s).__name__}")
        s = [_int(op, "s", v) for v in s]
    if dim is None:
        if s is not None:
            if len(s) > ndim:
                raise ArgumentError(f"{op}: got shape s with {len(s)} values but the input has only {ndim} dims")
            axes = tuple(range(ndim - len(s), ndim))
        else:
            axes = tuple(range(ndim)) if default is None else tuple(_dim(op, d, ndim) for d in default)
    else:
        dims = [dim] if isinstance(dim, (numbers.Integral, numpy.integer)) and not isinstance(dim, bool) else dim
        if isinstance(dims, Tensor) or not isinstance(dims, (tuple, list)):
            raise ArgumentTypeError(f"{op}: dim must be an int or a sequence of ints, got {type(dim).__name__}")
        axes = tuple(_dim(op, d, ndim) for d in dims)
        if len(set(axes)) != len(axes):
            raise ArgumentError(f"{op}: FFT dims must be unique, got {tuple(dims)}")
    if s is not None and len(s) != len(axes):
        raise ArgumentError(f"{op}: when given, dim and s must have the same length, got s={tuple(s)} and dim "
                            f"{tuple(axes)}")
    sizes = [None] * len(axes) if s is None else [None if v == -1 else v for v in s]
    for v in sizes:
        if v is not None and v < 1:
            raise ArgumentError(f"{op}: s must hold positive numbers of data points (or -1), got {tuple(s)}")
    return axes, sizes


def _resize(op, x, axes, sizes):
    """``x`` padded/truncated to ``sizes`` on ``axes`` (None: unchanged)."""
    shape = list(x.shape)
    for a, n in zip(axes, sizes):
        if n is not None:
            shape[a] = n
    for a in axes:
        if shape[a] < 1:
            raise ArgumentError(f"{op}: invalid number of data points ({shape[a]}) along dim {a} of an input of "
                                f"shape {tuple(x.shape)}")
    return x if tuple(shape) == tuple(x.shape) else Resize(shape).apply(x)


def c2c(op, input, axes, sizes, norm, inverse):
    """``fftn``/``ifftn`` of a checked input over ``axes`` with sizes ``sizes``."""
    if not axes:  # no dims: the input as complex, as PyTorch
        return input.to(dtypes.complex_for(input.array.dtype), copy=True)
    return FFT(axes, norm, inverse).apply(_resize(op, input, axes, sizes))


def r2c(op, input, axes, sizes, norm):
    """``rfftn`` of a checked real input over ``axes`` (the last one halved)."""
    if not axes:
        raise ArgumentError(f"{op}: must transform at least one axis")
    return RFFT(axes, norm).apply(_resize(op, input, axes, sizes))


def c2r(op, input, axes, sizes, norm):
    """``irfftn`` of a checked complex input over ``axes``; the output length on the last
    axis is ``sizes[-1]``, or ``2 * (m - 1)`` for ``m`` input bins."""
    if not axes:
        raise ArgumentError(f"{op}: must transform at least one axis")
    last = axes[-1]
    n = sizes[-1] if sizes[-1] is not None else 2 * (input.shape[last] - 1)
    if n < 1:
        raise ArgumentError(f"{op}: invalid number of data points ({n}) specified: an input of {input.shape[last]} "
                            f"bins along dim {last} needs n")
    return IRFFT(axes, norm, n).apply(_resize(op, input, axes, list(sizes[:-1]) + [n // 2 + 1]))
