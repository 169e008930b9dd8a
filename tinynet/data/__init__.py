"""``tinynet.data``: the MNIST-family and CIFAR-10 loaders (``datasets``), ``transforms``,
and -- as aliases of :mod:`tinynet.utils.data`, where they live -- Dataset, TensorDataset
and DataLoader."""
from ..utils.data import DataLoader, Dataset, TensorDataset
from . import datasets, transforms

__all__ = ["Dataset", "TensorDataset", "DataLoader", "datasets", "transforms"]
