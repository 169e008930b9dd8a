"""``tinynet.data``: Dataset, TensorDataset, DataLoader, transforms and datasets."""
from . import datasets, transforms
from .dataset import DataLoader, Dataset, TensorDataset

__all__ = ["Dataset", "TensorDataset", "DataLoader", "datasets", "transforms"]
