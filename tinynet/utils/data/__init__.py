"""``tinynet.utils.data``: PyTorch's ``torch.utils.data`` -- datasets, samplers, collation
and the DataLoader with worker processes.

tinynet's additions: batches land on a device (``DataLoader(device=...)``, default
tinynet's default device) through pinned memory and a side CUDA stream on a GPU, or gather
from a GPU-resident copy of the dataset (``resident=``); a dataset's ``__getitems__`` may
return the batch already stacked (see :mod:`tinynet.utils.data.dataset`); ``ResidentBatches``
gathers batches on the device from a device-side counter, for steps replayed from CUDA graphs.
"""
from ._worker import WorkerInfo, get_worker_info
from .collate import default_collate, default_convert
from .dataloader import DataLoader
from .distributed import DistributedSampler
from .resident import ResidentBatches
from .dataset import ChainDataset, ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
                      WeightedRandomSampler)

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset", "Subset", "random_split",
           "DataLoader", "default_collate", "default_convert", "Sampler", "SequentialSampler", "RandomSampler",
           "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler", "DistributedSampler", "get_worker_info",
           "WorkerInfo", "ResidentBatches"]
