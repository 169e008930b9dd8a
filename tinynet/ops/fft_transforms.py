"""The transforms of :mod:`tinynet.fft` (PyTorch's ``torch.fft``): ``fft``, ``ifft``, ``rfft``,
``irfft``, ``hfft``, ``ihfft`` and their two- and n-dimensional forms, with PyTorch's
arguments: ``n`` (1-D) or ``s`` (2-D/n-D) zero-pads or truncates the input along the
transformed dims before the transform (an entry -1 of ``s`` keeps that size), ``dim`` picks
the dims (``-1``; ``(-2, -1)``; all), ``norm`` scales: ``"backward"`` (the default: the
forward transform unscaled, the inverse by ``1/n``), ``"ortho"`` (both by ``1/sqrt(n)``)
or ``"forward"`` (the forward by ``1/n``).

Dtypes: float32 and complex64 give complex64 (float32 for ``irfft``/``hfft``), float64 and
complex128 give complex128 (float64); integer and bool inputs are transformed in the
default float dtype. The numbers come from ``numpy.fft`` / ``cupy.fft``; gradients are the
adjoint transforms (:mod:`tinynet.ops.spectral`), in PyTorch's convention for complex
tensors (docs/complex.md). The Hermitian pair follows NumPy and PyTorch:
``hfft(x, n, norm) = irfft(conj(x), n, dual norm)`` and
``ihfft(x, n, norm) = conj(rfft(x, n, dual norm))``, and likewise in two and n dims.

Differences from PyTorch: no ``out=``; float16 and bfloat16 inputs are refused on both
backends (PyTorch's CUDA FFTs take float16 for power-of-two sizes); zero-size inputs
along a dim that is not transformed work (PyTorch's CPU FFT raises for some of them).

Errors (every function): ArgumentTypeError for an input that is not a Tensor or ``n``,
``s``, ``dim`` of the wrong type; DTypeError for float16/bfloat16 input, or complex input
to ``rfft``/``ihfft`` and their forms; ArgumentError for ``n`` or ``s`` below 1, an
empty transformed dim, an unknown ``norm``, repeated dims, ``s`` and ``dim`` of different
lengths; IndexOutOfRangeError for a dim out of range (a 0-d input has none).
"""
from .complex import conj
from .spectral import c2c, c2r, check_axes, check_input, check_norm, check_size, r2c, _dim

_DUAL = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _one(op, input, n, dim, norm, kind):
    """The checked input, its one axis and size, and the norm of a 1-D transform."""
    x = check_input(op, input, kind)
    return x, (_dim(op, dim, x.ndim),), [check_size(op, "n", n)], check_norm(op, norm)


def _many(op, input, s, dim, norm, kind, default):
    x = check_input(op, input, kind)
    axes, sizes = check_axes(op, x, s, dim, default)
    return x, axes, sizes, check_norm(op, norm)


def fft(input, n=None, dim=-1, norm=None):
    """The one-dimensional discrete Fourier transform ``X[k] = sum_t x[t] exp(-2 pi i k t / n)``
    of ``input`` along ``dim``: complex, ``n`` (default ``input.size(dim)``) frequencies."""
    x, axes, sizes, norm = _one("fft.fft", input, n, dim, norm, "c2c")
    return c2c("fft.fft", x, axes, sizes, norm, inverse=False)


def ifft(input, n=None, dim=-1, norm=None):
    """The inverse of :func:`fft`: ``x[t] = 1/n sum_k X[k] exp(2 pi i k t / n)`` (with the
    default norm) along ``dim``; complex output of length ``n``."""
    x, axes, sizes, norm = _one("fft.ifft", input, n, dim, norm, "c2c")
    return c2c("fft.ifft", x, axes, sizes, norm, inverse=True)


def rfft(input, n=None, dim=-1, norm=None):
    """:func:`fft` of a real input, keeping the ``n//2 + 1`` non-negative frequencies
    (the others are their conjugates)."""
    x, axes, sizes, norm = _one("fft.rfft", input, n, dim, norm, "r2c")
    return r2c("fft.rfft", x, axes, sizes, norm)


def irfft(input, n=None, dim=-1, norm=None):
    """The inverse of :func:`rfft`: the real signal of length ``n`` (default
    ``2 * (input.size(dim) - 1)``) whose non-negative frequencies are ``input`` (its first
    ``n//2 + 1`` entries, zero-padded if fewer); the imaginary parts of the zero and
    Nyquist frequencies are ignored."""
    x, axes, sizes, norm = _one("fft.irfft", input, n, dim, norm, "c2r")
    return c2r("fft.irfft", x, axes, sizes, norm)


def hfft(input, n=None, dim=-1, norm=None):
    """The FFT of a Hermitian-symmetric signal given by its first half: the real output of
    length ``n`` (default ``2 * (input.size(dim) - 1)``); ``irfft(conj(input))`` with the
    dual norm."""
    x, axes, sizes, norm = _one("fft.hfft", input, n, dim, norm, "c2r")
    return c2r("fft.hfft", conj(x), axes, sizes, _DUAL[norm])


def ihfft(input, n=None, dim=-1, norm=None):
    """The inverse of :func:`hfft` for a real input: ``n//2 + 1`` complex values,
    ``conj(rfft(input))`` with the dual norm."""
    x, axes, sizes, norm = _one("fft.ihfft", input, n, dim, norm, "r2c")
    return conj(r2c("fft.ihfft", x, axes, sizes, _DUAL[norm]))


def fft2(input, s=None, dim=(-2, -1), norm=None):
    """:func:`fftn` over two dims (default the last two)."""
    x, axes, sizes, norm = _many("fft.fft2", input, s, dim, norm, "c2c", (-2, -1))
    return c2c("fft.fft2", x, axes, sizes, norm, inverse=False)


def ifft2(input, s=None, dim=(-2, -1), norm=None):
    """:func:`ifftn` over two dims (default the last two)."""
    x, axes, sizes, norm = _many("fft.ifft2", input, s, dim, norm, "c2c", (-2, -1))
    return c2c("fft.ifft2", x, axes, sizes, norm, inverse=True)


def rfft2(input, s=None, dim=(-2, -1), norm=None):
    """:func:`rfftn` over two dims (default the last two)."""
    x, axes, sizes, norm = _many("fft.rfft2", input, s, dim, norm, "r2c", (-2, -1))
    return r2c("fft.rfft2", x, axes, sizes, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None):
    """:func:`irfftn` over two dims (default the last two)."""
    x, axes, sizes, norm = _many("fft.irfft2", input, s, dim, norm, "c2r", (-2, -1))
    return c2r("fft.irfft2", x, axes, sizes, norm)


def hfft2(input, s=None, dim=(-2, -1), norm=None):
    """:func:`hfftn` over two dims (default the last two)."""
    x, axes, sizes, norm = _many("fft.hfft2", input, s, dim, norm, "c2r", (-2, -1))
    return c2r("fft.hfft2", conj(x), axes, sizes, _DUAL[norm])


def ihfft2(input, s=None, dim=(-2, -1), norm=None):
    """:func:`ihfftn` over two dims (default the last two)."""
    x, axes, sizes, norm = _many("fft.ihfft2", input, s, dim, norm, "r2c", (-2, -1))
    return conj(r2c("fft.ihfft2", x, axes, sizes, _DUAL[norm]))


def fftn(input, s=None, dim=None, norm=None):
    """The n-dimensional discrete Fourier transform over ``dim`` (default: the last
    ``len(s)`` dims when ``s`` is given, else all), each resized to ``s`` first; over no
    dims, the input as a complex tensor."""
    x, axes, sizes, norm = _many("fft.fftn", input, s, dim, norm, "c2c", None)
    return c2c("fft.fftn", x, axes, sizes, norm, inverse=False)


def ifftn(input, s=None, dim=None, norm=None):
    """The inverse of :func:`fftn` over ``dim``."""
    x, axes, sizes, norm = _many("fft.ifftn", input, s, dim, norm, "c2c", None)
    return c2c("fft.ifftn", x, axes, sizes, norm, inverse=True)


def rfftn(input, s=None, dim=None, norm=None):
    """:func:`fftn` of a real input; the last dim of ``dim`` keeps its ``s[-1]//2 + 1``
    non-negative frequencies."""
    x, axes, sizes, norm = _many("fft.rfftn", input, s, dim, norm, "r2c", None)
    return r2c("fft.rfftn", x, axes, sizes, norm)


def irfftn(input, s=None, dim=None, norm=None):
    """The inverse of :func:`rfftn`: a real output whose last transformed dim has length
    ``s[-1]`` (default ``2 * (m - 1)`` for ``m`` input bins); the inverse complex transform
    over the other dims, then :func:`irfft` over the last (NumPy's definition)."""
    x, axes, sizes, norm = _many("fft.irfftn", input, s, dim, norm, "c2r", None)
    return c2r("fft.irfftn", x, axes, sizes, norm)


def hfftn(input, s=None, dim=None, norm=None):
    """The n-dimensional FFT of a Hermitian-symmetric signal given by its half along the
    last dim of ``dim``: ``irfftn(conj(input))`` with the dual norm, a real output."""
    x, axes, sizes, norm = _many("fft.hfftn", input, s, dim, norm, "c2r", None)
    return c2r("fft.hfftn", conj(x), axes, sizes, _DUAL[norm])


def ihfftn(input, s=None, dim=None, norm=None):
    """The inverse of :func:`hfftn` for a real input: ``conj(rfftn(input))`` with the dual norm."""
    x, axes, sizes, norm = _many("fft.ihfftn", input, s, dim, norm, "r2c", None)
    return conj(r2c("fft.ihfftn", x, axes, sizes, _DUAL[norm]))


_ARGS = {
    1: ("n (int, optional): the signal length: the input is zero-padded or truncated to it along ``dim`` "
        "first{c2r}. Default: {n_default}.\n        dim (int): the dim to transform. Default -1."),
    2: ("s (sequence of 2 ints, optional): the signal size per dim (-1: unchanged){c2r}. Default: the input's."
        "\n        dim (sequence of 2 ints): the dims to transform. Default (-2, -1)."),
    0: ("s (sequence of ints, optional): the signal size per dim (-1: unchanged){c2r}. Default: the input's."
        "\n        dim (int or sequence of ints, optional): the dims to transform. Default: the last len(s) "
        "when s is given, else all."),
}
_OUT = {"c2c": "complex64 (float32, complex64, integer and bool input) or complex128 (float64, complex128)",
        "r2c": "complex64 (float32, integer and bool input) or complex128 (float64); the last transformed dim "
               "holds n//2 + 1 values",
        "c2r": "float32 (complex64, float32, integer and bool input) or float64 (complex128, float64); the last "
               "transformed dim has the output length"}
_RAISES = ("ArgumentTypeError: ``input`` is not a Tensor, or n/s/dim of the wrong type.\n"
           "        DTypeError: float16/bfloat16 input{r2c}.\n"
           "        ArgumentError: a size below 1 or an empty transformed dim, an unknown norm, repeated dims, s and "
           "dim of different lengths.\n"
           "        IndexOutOfRangeError: a dim out of range.")


def _doc(f, kind, ndims):
    c2r = " (for the last transformed dim, the length of the real output)" if kind == "c2r" else ""
    args = _ARGS[ndims].format(c2r=c2r, n_default="``2 * (input.size(dim) - 1)``" if kind == "c2r"
                               else "``input.size(dim)``")
    f.__doc__ = (f"{f.__doc__}\n\n    Args:\n        input (Tensor): the signal.\n        {args}\n"
                 f"        norm (str, optional): \"backward\" (None), \"ortho\" or \"forward\" (module docstring).\n\n"
                 f"    Returns:\n        Tensor: {_OUT[kind]}.\n\n    Raises:\n        "
                 + _RAISES.format(r2c=", or a complex input" if kind == "r2c" else "")
                 + "\n\n    Source: ``numpy.fft`` / ``cupy.fft``; the gradient is the adjoint transform "
                   "(:mod:`tinynet.ops.spectral`).\n")


for _f, _kind, _n in ((fft, "c2c", 1), (ifft, "c2c", 1), (rfft, "r2c", 1), (irfft, "c2r", 1), (hfft, "c2r", 1),
                      (ihfft, "r2c", 1), (fft2, "c2c", 2), (ifft2, "c2c", 2), (rfft2, "r2c", 2), (irfft2, "c2r", 2),
                      (hfft2, "c2r", 2), (ihfft2, "r2c", 2), (fftn, "c2c", 0), (ifftn, "c2c", 0), (rfftn, "r2c", 0),
                      (irfftn, "c2r", 0), (hfftn, "c2r", 0), (ihfftn, "r2c", 0)):
    _doc(_f, _kind, _n)
