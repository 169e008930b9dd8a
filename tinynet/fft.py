"""``tinynet.fft``: PyTorch's ``torch.fft`` namespace.

The discrete Fourier transforms ``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``, ``ihfft``
and their two- (``fft2``, ...) and n-dimensional (``fftn``, ...) forms, with PyTorch's
arguments (``n``/``s``, ``dim``, ``norm`` = "backward", "ortho" or "forward"), outputs
and gradients; the helpers ``fftfreq``, ``rfftfreq``, ``fftshift`` and ``ifftshift``.
The numbers come from ``numpy.fft`` on the CPU and ``cupy.fft`` (cuFFT) on a GPU; the
transforms produce and take complex tensors (docs/complex.md). docs/fft_special.md says
where tinynet differs from PyTorch.

Arguments of the transforms: ``n`` (1-D) or ``s`` (2-D, n-D) zero-pads or truncates the
input along the transformed dims first (an entry -1 of ``s`` keeps that size; for
``irfft``/``hfft`` and their forms the last size is the real output's length, default
``2 * (m - 1)``); ``dim`` picks the dims (-1; (-2, -1); all, or the last ``len(s)``);
``norm`` is ``"backward"`` (None: forward unscaled, inverse by ``1/n``), ``"ortho"`` or
``"forward"``. Dtypes: float32/complex64 give complex64 (float32 from the complex-to-real
transforms), float64/complex128 give complex128 (float64); integers and bool are
transformed in the default float dtype. Gradients: the adjoint transforms.

Errors: ArgumentTypeError (an input that is not a Tensor; ``n``, ``s``, ``dim`` of the
wrong type), DTypeError (float16/bfloat16, or a complex input to ``rfft``/``ihfft`` and
their forms), ArgumentError (``n`` or ``s`` below 1, an empty transformed dim, an unknown
``norm``, repeated dims, ``s`` and ``dim`` of different lengths), IndexOutOfRangeError (a
dim out of range); each names the function (``fft.rfft: ...``).
"""
from .ops.fft_helpers import fftfreq, fftshift, ifftshift, rfftfreq
from .ops.fft_transforms import (fft, fft2, fftn, hfft, hfft2, hfftn, ifft, ifft2, ifftn, ihfft, ihfft2, ihfftn, irfft,
                                 irfft2, irfftn, rfft, rfft2, rfftn)

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
