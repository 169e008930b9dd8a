"""Backend settings in PyTorch's spelling: ``tinynet.backends.cudnn``."""
from . import cudnn

__all__ = ["cudnn"]
