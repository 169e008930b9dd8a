"""PyTorch's module path ``torch.nn.parameter`` (tinynet's Parameter lives in
:mod:`tinynet.nn.modules.parameter`)."""
from .modules.parameter import Parameter

__all__ = ["Parameter"]
