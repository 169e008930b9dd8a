"""Every differentiable op, by family, one module each (see docs/design.md for the layout
and the recipe for adding one).

Importing this package also attaches the Tensor's math methods (:mod:`.methods`) and
gives the autograd engine the graph namespace of ``create_graph`` backwards
(:mod:`.graph_xp`).
"""
from ..autograd import higher_order as _higher_order
from . import (activation, arith, compare, conv, conversion, creation, dropout, gather, indexing, inplace, join, linalg,
               linear, loss, normalization, pooling, reduction, sampling, select, shape, stats, unary, window)
from . import rearrange, split  # noqa: F401  (views along a dim, rearrangements)
from . import scan, sorting  # noqa: F401  (cumulative ops, sorting and order statistics)
from . import einsum  # noqa: F401  (Einstein summation)
from .graph_xp import graph_xp
from . import methods  # noqa: F401  (attaches the Tensor methods)

_higher_order.graph_xp = graph_xp

__all__ = ["activation", "arith", "compare", "conv", "conversion", "creation", "dropout", "gather", "indexing",
           "inplace", "join", "linalg", "linear", "loss", "normalization", "pooling", "reduction", "sampling",
           "select", "shape", "stats", "unary", "window", "graph_xp", "rearrange", "split", "scan", "sorting",
           "einsum"]
