"""``tinynet.distributed.algorithms`` (``torch.distributed.algorithms``): the communication
hooks of DistributedDataParallel (:mod:`.ddp_comm_hooks`)."""
from . import ddp_comm_hooks

__all__ = ["ddp_comm_hooks"]
