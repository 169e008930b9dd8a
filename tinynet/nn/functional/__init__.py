"""``tinynet.nn.functional``: the differentiable ops, PyTorch's names and argument orders."""
from .activation import bias_relu, gelu, leaky_relu, log_softmax, relu, sigmoid, softmax, tanh
from .conv import conv2d, linear
from .dropout import dropout, dropout2d
from .loss import cross_entropy, mse_loss, nll_loss
from .math import (abs, add, clamp, div, exp, floor_divide, log, matmul, maximum, minimum, mul, pow, remainder,
                   sqrt, sub, where)
from .reduction import amax, amin, argmax, argmin, max, mean, min, sum, var
from .normalization import batch_norm
from .pooling import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from .shape import cat, expand, flatten, pad, permute, reshape, squeeze, stack, transpose, unsqueeze

__all__ = [
    "bias_relu", "gelu", "leaky_relu", "log_softmax", "relu", "sigmoid", "softmax", "tanh", "conv2d", "linear",
    "dropout", "dropout2d", "cross_entropy", "mse_loss", "nll_loss", "abs", "add", "amax", "amin",
    "argmax", "argmin", "clamp", "div", "exp", "floor_divide", "log", "matmul", "max", "maximum", "mean", "min",
    "minimum", "mul", "pow", "remainder", "sqrt", "sub", "sum", "var", "where", "batch_norm",
    "adaptive_avg_pool2d", "avg_pool2d", "max_pool2d", "cat", "expand", "flatten", "pad",
    "permute", "reshape", "squeeze", "stack", "transpose", "unsqueeze",
]
