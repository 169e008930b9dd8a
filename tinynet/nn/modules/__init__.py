"""The layers of ``tinynet.nn``, by family (PyTorch's ``torch.nn.modules``)."""
from .activation import GELU, LeakyReLU, LogSoftmax, ReLU, Sigmoid, Softmax, Tanh
from .container import Flatten, ModuleList, Sequential
from .conv import Conv2d
from .dropout import Dropout, Dropout2d
from .linear import Identity, Linear
from .module import Module, Parameter
from .normalization import BatchNorm1d, BatchNorm2d
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d

__all__ = ["GELU", "LeakyReLU", "LogSoftmax", "ReLU", "Sigmoid", "Softmax", "Tanh", "Flatten", "ModuleList",
           "Sequential", "Conv2d", "Dropout", "Dropout2d", "Identity", "Linear", "Module", "Parameter",
           "BatchNorm1d", "BatchNorm2d", "AdaptiveAvgPool2d", "AvgPool2d", "MaxPool2d"]
