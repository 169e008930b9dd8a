"""``tinynet.distributed.optim`` (``torch.distributed.optim``): :class:`ZeroRedundancyOptimizer`."""
from .zero_redundancy_optimizer import ZeroRedundancyOptimizer

__all__ = ["ZeroRedundancyOptimizer"]
