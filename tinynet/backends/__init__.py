"""Backend settings in PyTorch's spelling: ``tinynet.backends.cudnn``, ``tinynet.backends.mps``
(never available), plus the host heap setting of the NumPy backend, ``tinynet.backends.cpu``."""
from . import cpu, cudnn, mps

__all__ = ["cpu", "cudnn", "mps"]
