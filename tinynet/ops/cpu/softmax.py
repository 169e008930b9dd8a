"""The CPU's ``log_softmax`` over the last axis, forward and backward, in row blocks.

Forward, per row, with ``m`` the row's maximum (Goodfellow, Bengio & Courville, *Deep
Learning*, 2016, sec. 4.1: the shift keeps ``exp`` from overflowing)::

    y = (x - m) - log(sum(exp(x - m)))

and backward, from the saved output (``softmax = exp(y)``)::

    dx = dy - exp(y) * sum(dy)

The generic code (``ops/softmax.py``) makes three full-size temporaries in forward and
two in backward, each a pass through main memory; on the word-language model's decoder
output, (700, 7141) float32, forward + backward took 63-71 ms against PyTorch's 36-38 ms.
Here the rows are cut into :func:`tinynet.parallel.ranges` items spread over tinynet's
threads, and each item is walked in blocks of about ``BLOCK_BYTES``, so that a block's rows
and its one scratch buffer stay in a core's L2 cache (2 MiB on the development machine)
between the passes. On that (700, 7141) input, forward + backward: 20.7 ms generic, 6.7 ms
here on 2 threads (blocks of 256 KiB: 9.4 ms; of 4 MiB: 7.3 ms). The sums are
NumPy's (pairwise, as the generic path's), so the results equal the generic path's.

A saturated row (a trained-out or diverged language model: logits spread over more than ~87 in
float32) has many ``y`` whose ``exp`` is subnormal, and NumPy's ``exp`` takes 4-12x longer on
those (a microcode assist per subnormal result): on (350, 7141) inputs with a fifth of the
row in that band, 14 ms against 3.4 ms. In the forward pass those ``exp`` values only enter the
row's sum, which is at least 1 (the maximum contributes ``exp(0)``): a term below ``finfo.tiny``
(1.2e-38) lies under half a unit in the last place of any partial sum it could change, so
a block whose strided sample has at least ``BAND_SHARE`` of its values in the band maps them
below ``exp``'s underflow first (``y + BIG * min(y - T, 0)``, exact for ``y >= T``) and sums
zeros instead. The output ``y`` itself is never changed; the backward pass, whose results are
those subnormal numbers, keeps them, and multiplies them by the row sums through float64
(exact, then rounded once: the float32 product's bits, without the assists).
"""
import numpy

from ... import parallel

BLOCK_BYTES = 1 << 20  # bytes per block of rows: a block and its scratch stay in a core's L2
SATURATION_MIN = 1 << 16  # values of a block below which _saturated does not look
BAND_SHARE = 1 / 32  # a block's sample with this share of subnormal exp(y) takes them as 0
BIG = 1e30


def _band_floor(dtype):
    """The least ``T`` of ``dtype`` with ``exp(T) >= finfo.tiny``: below it ``exp`` is subnormal or 0."""
    tiny, down, up = numpy.finfo(dtype).tiny, dtype.type(-numpy.inf), dtype.type(numpy.inf)
    t = dtype.type(numpy.log(tiny))
    while numpy.exp(numpy.nextafter(t, down)) >= tiny:
        t = numpy.nextafter(t, down)
    while numpy.exp(t) < tiny:
        t = numpy.nextafter(t, up)
    return t


FLOOR = {dt: _band_floor(dt) for dt in (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64))}


def _saturated(ys):
    """Whether a strided sample of the block ``ys`` has ``BAND_SHARE`` of its values below
    ``FLOOR`` (where ``exp`` is subnormal or 0). Blocks under ``SATURATION_MIN`` values are not
    sampled (the check took 17 us, 2 % of the reference MLP's batch-64 step, on a (64, 10) block
    whose ``exp`` costs little either way)."""
    if ys.size < SATURATION_MIN:
        return False
    sample = ys[::8, ::32]
    return numpy.count_nonzero(sample < FLOOR[ys.dtype]) >= BAND_SHARE * sample.size


def _exp_of_sum(ys, ts):
    """``exp(ys)`` into ``ts`` for a row sum: where many ``exp`` values would be subnormal
    (a strided sample decides), those are computed as 0 (see the module docstring)."""
    floor = FLOOR[ys.dtype]
    if _saturated(ys):
        numpy.subtract(ys, floor, out=ts)
        numpy.minimum(ts, 0, out=ts)
        ts *= ys.dtype.type(BIG)  # 0 from y >= T on; at least BIG * ulp(T) below
        ts += ys
        numpy.exp(ts, out=ts)
    else:
        numpy.exp(ys, out=ts)


def _plan(rows, cols, itemsize, nbytes):
    parts = parallel.ranges(rows, 4 * nbytes)  # a few passes over the data: costed at 4x its bytes
    return parts, max(1, BLOCK_BYTES // max(cols * itemsize, 1))


def log_softmax(x):
    """``log_softmax`` of a float32/float64 NumPy array over its last axis: a new C-ordered
    array of ``x``'s shape and dtype."""
    n = x.shape[-1]
    flat = numpy.ascontiguousarray(x).reshape(-1, n)
    y = numpy.empty_like(flat)
    parts, step = _plan(flat.shape[0], n, flat.itemsize, flat.nbytes)

    def piece(i):
        lo, hi = parts[i]
        scratch = numpy.empty((min(step, hi - lo), n), dtype=flat.dtype)
        for a in range(lo, hi, step):
            b = min(hi, a + step)
            xs, ys, ts = flat[a:b], y[a:b], scratch[:b - a]
            numpy.subtract(xs, xs.max(axis=1, keepdims=True), out=ys)
            _exp_of_sum(ys, ts)
            s = ts.sum(axis=1, keepdims=True)
            numpy.log(s, out=s)
            ys -= s

    parallel.parallel_for(len(parts), piece)
    return y.reshape(x.shape)


def log_softmax_backward(y, gy):
    """``dy - exp(y) * sum(dy)`` over the last axis, for the saved output ``y`` and the
    gradient ``gy`` (NumPy arrays of one shape and float dtype): a new C-ordered array."""
    n = y.shape[-1]
    ys_all = numpy.ascontiguousarray(y).reshape(-1, n)
    gs_all = numpy.ascontiguousarray(gy, dtype=y.dtype).reshape(-1, n)
    gx = numpy.empty_like(ys_all)
    parts, step = _plan(ys_all.shape[0], n, ys_all.itemsize, ys_all.nbytes)

    def piece(i):
        lo, hi = parts[i]
        for a in range(lo, hi, step):
            b = min(hi, a + step)
            out, gys = gx[a:b], gs_all[a:b]
            s = gys.sum(axis=1, keepdims=True)
            numpy.exp(ys_all[a:b], out=out)
            if out.dtype == numpy.float32 and _saturated(ys_all[a:b]):
                # exp(y) * s through float64: exact there, one rounding to float32 as the float32
                # multiply's, without its assist on each subnormal factor (1.1 -> 0.3 ms a block)
                numpy.multiply(out, s, out=out, dtype=numpy.float64, casting="same_kind")
            else:
                out *= s
            numpy.subtract(gys, out, out=out)

    parallel.parallel_for(len(parts), piece)
    return gx.reshape(y.shape)
