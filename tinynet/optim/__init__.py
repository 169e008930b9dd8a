"""``tinynet.optim``: SGD, Adam, AdamW and learning-rate schedulers."""
from . import lr_scheduler
from .optimizer import Optimizer
from .sgd import SGD, Adam, AdamW

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler"]
