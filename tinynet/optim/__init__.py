"""``tinynet.optim``: SGD, Adam, AdamW, Adadelta, Adagrad, RMSprop, NAdam, RAdam, Adamax,
Rprop, ASGD, LBFGS and learning-rate schedulers."""
from . import lr_scheduler
from .adam_variants import Adamax, NAdam, RAdam
from .adaptive import Adadelta, Adagrad, RMSprop
from .classic import ASGD, Rprop
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .sgd import SGD, Adam, AdamW

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adadelta", "Adagrad", "RMSprop", "NAdam", "RAdam", "Adamax",
           "Rprop", "ASGD", "LBFGS", "lr_scheduler"]
