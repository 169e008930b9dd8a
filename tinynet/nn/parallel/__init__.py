"""``tinynet.nn.parallel``: :class:`DistributedDataParallel`, and :class:`DataParallel` /
:func:`data_parallel` (one device, no replicas: see ``data_parallel.py``) (``torch.nn.parallel``)."""
from .data_parallel import DataParallel, data_parallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]
