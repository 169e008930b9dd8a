"""``tinynet.utils``: PyTorch's ``torch.utils`` names; :mod:`tinynet.utils.data` holds the
datasets, samplers and the DataLoader."""
from . import data

__all__ = ["data"]
