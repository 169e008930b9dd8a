"""PyTorch's module path ``torch.nn.modules.flatten`` (tinynet's Flatten lives in
:mod:`.container`, Unflatten in :mod:`.resample`)."""
from .container import Flatten
from .resample import Unflatten

__all__ = ["Flatten", "Unflatten"]
