"""``tinynet.optim``: SGD, Adam, AdamW, Adadelta, Adagrad, RMSprop, NAdam, RAdam, Adamax,
Rprop, ASGD and learning-rate schedulers."""
from . import lr_scheduler
from .adam_variants import Adamax, NAdam, RAdam
from .adaptive import Adadelta, Adagrad, RMSprop
from .classic import ASGD, Rprop
from .optimizer import Optimizer
from .sgd import SGD, Adam, AdamW

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adadelta", "Adagrad", "RMSprop", "NAdam", "RAdam", "Adamax",
           "Rprop", "ASGD", "lr_scheduler"]
