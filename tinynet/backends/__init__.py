"""Backend settings in PyTorch's spelling: ``tinynet.backends.cudnn``, ``tinynet.backends.cuda`` (TF32 and the attention
kernels), ``tinynet.backends.mps``
(never available), plus the host heap setting of the NumPy backend, ``tinynet.backends.cpu``."""
from . import cpu, cuda, cudnn, mps

__all__ = ["cpu", "cuda", "cudnn", "mps"]
