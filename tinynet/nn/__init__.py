"""``tinynet.nn``: Module, Parameter, the layers (:mod:`.modules`), ``functional`` and ``init``."""
from . import functional, init
from .modules import (GELU, AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, Conv2d, Dropout, Dropout2d,
                      Flatten, Identity, LeakyReLU, Linear, LogSoftmax, MaxPool2d, Module, ModuleList, Parameter, ReLU,
                      Sequential, Sigmoid, Softmax, Tanh)

__all__ = ["functional", "init", "Module", "Parameter", "AdaptiveAvgPool2d", "AvgPool2d", "BatchNorm1d",
           "BatchNorm2d", "Conv2d", "Dropout", "Dropout2d", "Flatten", "GELU", "Identity", "LeakyReLU",
           "Linear", "LogSoftmax", "MaxPool2d", "ModuleList", "ReLU", "Sequential", "Sigmoid", "Softmax",
           "Tanh"]
