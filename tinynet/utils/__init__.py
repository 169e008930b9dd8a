"""``tinynet.utils``: PyTorch's ``torch.utils`` names and the tools around training.

* :mod:`tinynet.utils.data`: the datasets, samplers and the DataLoader.
* :func:`summary`: a model's layers, output shapes, parameters, mult-adds and memory, as
  ``torchinfo.summary`` (:mod:`tinynet.utils.summary`).
* :mod:`tinynet.utils.checkpoint`: activation checkpointing (``checkpoint``,
  ``checkpoint_sequential``), recomputing in backward with the random state replayed.
* :mod:`tinynet.utils.tensorboard`: PyTorch's ``SummaryWriter`` writing TensorBoard event
  files; imported on request, it needs the ``tensorboard`` extra.
"""
from . import checkpoint, data
from .summary import LayerInfo, ModelStatistics, SummaryError, summary

__all__ = ["checkpoint", "data", "summary", "ModelStatistics", "LayerInfo", "SummaryError"]
