"""A weighted gather along one axis, and its transpose: the op under ``interpolate`` and the
non-constant modes of ``pad``.

A map from an input axis of length ``n_in`` to an output axis of length ``n_out`` is a table
of ``M`` rows: ``idx`` (M, n_out) source positions and ``w`` (M, n_out) weights (or None for
ones), and

    ``y[..., j, ...] = sum_m w[m, j] * x[..., idx[m, j], ...]``

(nearest resampling and the padding modes have M = 1 and no weights; linear resampling has
M = 2). Its gradient is the transposed map: for each input position ``i`` the output
positions that read it, padded to the largest count with weight 0. The backward therefore
is the same op with the two tables swapped, so it is differentiable again (and again) and
needs neither ``add.at`` nor atomics: every step is ``M`` ``take``s and multiply-adds,
generic NumPy/CuPy code. The tables are built once on the host (:func:`transpose_table`)
and copied to the device per call (they are O(n_out) integers).
"""
import numpy

from ..autograd import Op


class AxisMap(Op):
    """``y = sum_m w[m] * take(x, idx[m], axis)`` with the transposed table as backward.

    Args:
        name (str): the public op's name (error messages, ``grad_fn``).
        axis (int): the axis mapped, counted from 0.
        table: ``(idx, w)``, ``idx`` an int64 (M, n_out) array, ``w`` (M, n_out) weights of
            the input's dtype or None (all ones).
        transposed: the table of the transpose (:func:`transpose_table`), (M', n_in).
    """
    twice_differentiable = True
    gpu_saves_generic = True

    def __init__(self, name, axis, table, transposed):
        self.name, self.axis, self.table, self.transposed = name, axis, table, transposed

    def forward(self, xp, x):
        return apply_table(xp, x, self.axis, self.table)

    def backward(self, xp, gy):
        return (AxisMap(self.name, self.axis, self.transposed, self.table).call(xp, gy),)


def apply_table(xp, x, axis, table):
    """The weighted gather of ``x`` along ``axis`` by ``table = (idx, w)`` (see AxisMap)."""
    idx, w = table
    index = xp.asarray(idx)
    weights = None if w is None else xp.asarray(w.astype(x.dtype, copy=False))
    shape = (-1,) + (1,) * (x.ndim - axis - 1)  # a weight row broadcast along the later axes
    y = None
    for m in range(idx.shape[0]):
        part = xp.take(x, index[m], axis=axis)
        if weights is not None:
            part *= weights[m].reshape(shape)
        if y is None:
            y = part
        else:
            y += part
    return y


def transpose_table(idx, w, n_in, dtype):
    """The table of the transposed map: for each of the ``n_in`` input positions, the output
    positions whose entry reads it and the weights, ordered by output position and padded
    with (0, weight 0) to the largest count. Entries of weight 0 are dropped. Weights come
    back as None when every entry is a real one of weight 1 (a permutation-like map)."""
    m, n_out = idx.shape
    src = idx.ravel()
    dst = numpy.tile(numpy.arange(n_out), m)
    wt = numpy.ones(src.shape, dtype=dtype) if w is None else w.ravel().astype(dtype)
    keep = wt != 0
    src, dst, wt = src[keep], dst[keep], wt[keep]
    order = numpy.lexsort((dst, src))
    src, dst, wt = src[order], dst[order], wt[order]
    counts = numpy.bincount(src, minlength=n_in)
    rows = max(int(counts.max()) if counts.size else 0, 1)
    rank = numpy.arange(src.size) - numpy.repeat(numpy.cumsum(counts) - counts, counts)
    tidx = numpy.zeros((rows, n_in), dtype=numpy.int64)
    tw = numpy.zeros((rows, n_in), dtype=dtype)
    tidx[rank, src] = dst
    tw[rank, src] = wt
    return tidx, (None if bool((tw == 1).all()) else tw)


def is_identity(table, n_in):
    """True when ``table`` maps an axis of ``n_in`` onto itself unchanged."""
    idx, w = table
    return (idx.shape == (1, n_in) and bool((idx[0] == numpy.arange(n_in)).all())
            and (w is None or bool((w == 1).all())))
