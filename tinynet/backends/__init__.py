"""Backend settings in PyTorch's spelling: ``tinynet.backends.cudnn``, plus the host
heap setting of the NumPy backend, ``tinynet.backends.cpu``."""
from . import cpu, cudnn

__all__ = ["cpu", "cudnn"]
