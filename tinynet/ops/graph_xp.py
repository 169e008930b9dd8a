"""The graph namespace: NumPy's names for the functions a backward uses, on tensors.

An op's ``backward(self, xp, gy)`` is written against ``xp``. Normally ``xp`` is ``numpy``
or ``cupy`` and ``gy`` an array. In a ``create_graph=True`` backward the engine passes this
namespace instead, with tensors for ``gy`` and the saved values: the same code then runs
tinynet's differentiable ops and is itself recorded, which is how second derivatives work.
Only the NumPy functions that backward code uses are here; an op whose backward needs
others does not declare ``twice_differentiable``.
"""
from . import complex as complex_ops
from . import blas, compare, compare_extrema, conversion, creation, indexing, join, reduction, select, shape, unary


def _axes(axis, ndim):
    if axis is None:
        return None
    return (axis,) if isinstance(axis, int) else tuple(axis)


class GraphNamespace:
    """NumPy-style functions on tensors; an instance (not a module) is what marks a
    create_graph backward to :meth:`Op.call` and :func:`tinynet.ops.util.is_graph`."""

    # ---- elementwise ------------------------------------------------------------------
    exp = staticmethod(unary.exp)
    log = staticmethod(unary.log)
    log1p = staticmethod(unary.log1p)
    expm1 = staticmethod(unary.expm1)
    sqrt = staticmethod(unary.sqrt)
    abs = staticmethod(unary.abs)
    sign = staticmethod(unary.sign)
    sin = staticmethod(unary.sin)
    cos = staticmethod(unary.cos)
    erf = staticmethod(unary.erf)
    floor = staticmethod(unary.floor)
    maximum = staticmethod(compare_extrema.maximum)
    minimum = staticmethod(compare_extrema.minimum)
    isfinite = staticmethod(compare.isfinite)
    conj = staticmethod(complex_ops.conj)
    real = staticmethod(complex_ops.real)
    imag = staticmethod(complex_ops.imag)

    @staticmethod
    def tanh(a):
        from .activation import tanh
        return tanh(a)

    @staticmethod
    def where(cond, a, b):
        return select.where(cond, a, b)

    @staticmethod
    def zeros_like(a, dtype=None):
        return creation.zeros_like(a, dtype=dtype)

    @staticmethod
    def ones_like(a, dtype=None):
        return creation.ones_like(a, dtype=dtype)

    @staticmethod
    def astype(a, dtype):
        return conversion.to(a, dtype=dtype)

    # ---- reductions ---------------------------------------------------------------------
    @staticmethod
    def sum(a, axis=None, keepdims=False):
        return reduction.sum(a, _axes(axis, a.ndim), keepdims)

    @staticmethod
    def mean(a, axis=None, keepdims=False):
        return reduction.mean(a, _axes(axis, a.ndim), keepdims)

    @staticmethod
    def prod(a, axis=None, keepdims=False):
        return reduction.prod(a, _axes(axis, a.ndim), keepdims)

    @staticmethod
    def amax(a, axis=None, keepdims=False):
        return reduction.amax(a, _axes(axis, a.ndim) or (), keepdims)

    # ---- shapes -------------------------------------------------------------------------
    @staticmethod
    def reshape(a, shape):
        return shape_reshape(a, shape)

    @staticmethod
    def expand_dims(a, axis):
        axes = sorted(d % (a.ndim + len(_axes(axis, 0))) for d in _axes(axis, 0))
        for d in axes:
            a = shape.unsqueeze(a, d)
        return a

    @staticmethod
    def broadcast_to(a, shp):
        return shape.expand(a, tuple(shp))

    @staticmethod
    def swapaxes(a, i, j):
        return shape.transpose(a, i, j)

    @staticmethod
    def transpose(a, axes=None):
        return shape.permute(a, tuple(axes) if axes is not None else tuple(range(a.ndim - 1, -1, -1)))

    @staticmethod
    def concatenate(arrays, axis=0):
        return join.cat(list(arrays), axis)

    @staticmethod
    def stack(arrays, axis=0):
        return join.stack(list(arrays), axis)

    @staticmethod
    def split(a, indices, axis=0):
        """NumPy's ``split`` at the given indices (boundaries), as getitem views."""
        bounds = [0] + [int(i) for i in indices] + [a.shape[axis]]
        d = axis % a.ndim
        return [indexing.getitem(a, (slice(None),) * d + (slice(lo, hi),)) for lo, hi in zip(bounds, bounds[1:])]

    @staticmethod
    def take(a, i, axis=0):
        return indexing.getitem(a, (slice(None),) * (axis % a.ndim) + (i,))

    matmul = staticmethod(blas.matmul)


def shape_reshape(a, shp):
    return shape.reshape(a, tuple(shp) if not isinstance(shp, int) else (shp,))


graph_xp = GraphNamespace()
