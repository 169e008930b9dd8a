"""PyTorch's module path ``torch.nn.parameter`` (tinynet's Parameter lives in
:mod:`tinynet.nn.modules.parameter`)."""
from .modules.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter, is_lazy

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter", "is_lazy"]
