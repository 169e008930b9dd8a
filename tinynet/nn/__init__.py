"""``tinynet.nn``: Module, Parameter, layers, ``functional`` and ``init``."""
from . import functional, init
from .layers import (AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, Conv2d, Dropout, Dropout2d,
                     Flatten, GELU, Identity, LeakyReLU, Linear, LogSoftmax, MaxPool2d, ModuleList, ReLU,
                     Sequential, Sigmoid, Softmax, Tanh)
from .module import Module, Parameter

__all__ = ["functional", "init", "Module", "Parameter", "AdaptiveAvgPool2d", "AvgPool2d", "BatchNorm1d",
           "BatchNorm2d", "Conv2d", "Dropout", "Dropout2d", "Flatten", "GELU", "Identity", "LeakyReLU",
           "Linear", "LogSoftmax", "MaxPool2d", "ModuleList", "ReLU", "Sequential", "Sigmoid", "Softmax",
           "Tanh"]
