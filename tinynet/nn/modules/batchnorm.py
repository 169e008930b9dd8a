"""PyTorch's module path ``torch.nn.modules.batchnorm`` (tinynet's batch norm layers live in
:mod:`.normalization`)."""
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, _BatchNorm

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "_BatchNorm"]
