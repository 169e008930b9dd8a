"""``tinynet.utils``: PyTorch's ``torch.utils`` names and the tools around training.

* :mod:`tinynet.utils.data`: the datasets, samplers and the DataLoader.
* :func:`summary`: a model's layers, output shapes, parameters, mult-adds and memory, as
  ``torchinfo.summary`` (:mod:`tinynet.utils.summary`).
* :mod:`tinynet.utils.tensorboard`: PyTorch's ``SummaryWriter`` writing TensorBoard event
  files; imported on request, it needs the ``tensorboard`` extra.
"""
from . import data
from .summary import LayerInfo, ModelStatistics, SummaryError, summary

__all__ = ["data", "summary", "ModelStatistics", "LayerInfo", "SummaryError"]
