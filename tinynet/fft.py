"""``tinynet.fft``: PyTorch's ``torch.fft`` namespace.

The discrete Fourier transforms ``fft``, ``ifft``, ``rfft``, ``irfft``, ``hfft``, ``ihfft``
and their two- (``fft2``, ...) and n-dimensional (``fftn``, ...) forms, with PyTorch's
arguments (``n``/``s``, ``dim``, ``norm`` = "backward", "ortho" or "forward"), outputs
and gradients; the helpers ``fftfreq``, ``rfftfreq``, ``fftshift`` and ``ifftshift``.
The numbers come from ``numpy.fft`` on the CPU and ``cupy.fft`` (cuFFT) on a GPU; the
transforms produce and take complex tensors (docs/complex.md). docs/fft_special.md says
where tinynet differs from PyTorch.
"""
from .ops.fft_helpers import fftfreq, fftshift, ifftshift, rfftfreq
from .ops.fft_transforms import (fft, fft2, fftn, hfft, hfft2, hfftn, ifft, ifft2, ifftn, ihfft, ihfft2, ihfftn, irfft,
                                 irfft2, irfftn, rfft, rfft2, rfftn)

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
