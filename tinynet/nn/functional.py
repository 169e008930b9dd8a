"""``tinynet.nn.functional`` (PyTorch's ``F``): the layer math as functions, with
PyTorch's names and argument orders. Every name is re-exported from :mod:`tinynet.ops`,
where the op, its backward and its GPU path live.
"""
from ..ops.activation import bias_relu, gelu, leaky_relu, log_softmax, relu, sigmoid, softmax, tanh
from ..ops.arith import add, div, mul, pow, remainder, sub
from ..ops.select import maximum, minimum, where
from ..ops.conv import conv2d
from ..ops.dropout import dropout, dropout2d
from ..ops.linear import linear
from ..ops.loss import cross_entropy, mse_loss, nll_loss
from ..ops.normalization import batch_norm
from ..ops.pooling import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from ..ops.reduction import amax, amin, argmax, argmin, max, mean, min, sum
from ..ops.stats import var
from ..ops.join import cat, pad, stack
from ..ops.shape import expand, flatten, permute, reshape, squeeze, transpose, unsqueeze
from ..ops.unary import abs, clamp, exp, log, sqrt

__all__ = [
    "bias_relu", "gelu", "leaky_relu", "log_softmax", "relu", "sigmoid", "softmax", "tanh", "conv2d", "linear",
    "dropout", "dropout2d", "cross_entropy", "mse_loss", "nll_loss", "batch_norm", "adaptive_avg_pool2d",
    "avg_pool2d", "max_pool2d", "pad",
    # kept for code written against tinynet's earlier F namespace (PyTorch's F does not have these)
    "abs", "add", "amax", "amin", "argmax", "argmin", "cat", "clamp", "div", "exp", "expand", "flatten", "log",
    "max", "maximum", "mean", "min", "minimum", "mul", "permute", "pow", "remainder", "reshape", "sqrt", "squeeze",
    "stack", "sub", "sum", "transpose", "unsqueeze", "var", "where",
]
