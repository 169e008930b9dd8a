"""Every differentiable op, by family, one module each (see docs/design.md for the layout
and the recipe for adding one).

Importing this package also attaches the Tensor's math methods (:mod:`.methods`) and
gives the autograd engine the graph namespace of ``create_graph`` backwards
(:mod:`.graph_xp`).
"""
from ..autograd import higher_order as _higher_order
from . import (activation, arith, blas, compare, conv, conversion, creation, division, dropout, gather, indexing,
               inplace, join, linear, loss, normalization, pooling, reduction, sampling, select, shape, stats, unary,
               window)
from . import rearrange, split  # noqa: F401  (views along a dim, rearrangements)
from . import scan, sorting  # noqa: F401  (cumulative ops, sorting and order statistics)
from . import einsum  # noqa: F401  (Einstein summation)
from . import attention  # noqa: F401  (scaled dot-product attention)
from . import loss_binary, loss_pointwise  # noqa: F401  (the BCE family, margin, regression and divergence losses)
from . import embedding, layer_norm, local_response_norm  # noqa: F401  (layer/group/instance norm; embedding, one_hot)
from . import piecewise_activations, smooth_activations  # noqa: F401  (hardtanh...prelu; silu...glu)
from . import axis_map, conv_transpose, interpolate, pad  # noqa: F401  (transposed conv, resampling, padding)
from .graph_xp import graph_xp
from . import methods  # noqa: F401  (attaches the Tensor methods)

_higher_order.graph_xp = graph_xp

__all__ = ["activation", "arith", "compare", "division", "conv", "conversion", "creation", "dropout", "gather",
           "indexing",
           "inplace", "join", "blas", "linear", "loss", "normalization", "pooling", "reduction", "sampling",
           "select", "shape", "stats", "unary", "window", "graph_xp", "rearrange", "split", "scan", "sorting",
           "einsum", "attention"]
