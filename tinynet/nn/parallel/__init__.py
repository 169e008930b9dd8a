"""``tinynet.nn.parallel``: :class:`DistributedDataParallel` (``torch.nn.parallel``)."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
