"""PyTorch's module path ``torch.nn.modules.instancenorm`` (tinynet's instance norm layers
live in :mod:`.norm_layers`)."""
from .norm_layers import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"]
