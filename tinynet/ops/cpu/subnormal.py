"""Matrix products of a gradient full of subnormal numbers, at the speed of normal ones.

A subnormal float (below ``finfo.tiny``: 1.2e-38 in float32) costs the x86 cores a microcode
assist in every multiply that reads it, about a hundred times a normal multiply-add; neither
NumPy nor PyTorch flushes them by default. They appear when a log-softmax saturates: the
gradient of ``nll_loss(log_softmax(z))`` is ``(softmax(z) - onehot) / rows``, and once the
logits spread over more than ~87 the far-off probabilities are subnormal. On the word-language
model's decoder, (700, 7141) gradients with 50-90% subnormal entries made each of the layer's
two backward products take 1.5-2.3 s instead of 13 ms (OpenBLAS and MKL alike).

Scaling by a power of two is exact for every float that stays in the normal range, and
multiplication commutes with it, so ``(2^k g) @ w`` rounds exactly as ``g @ w`` does, scaled by
``2^k``, wherever the products and partial sums of the unscaled product are normal: those
results come out bit for bit the same after the exact multiply by ``2^-k``. Where the unscaled
product works on subnormal partial sums (a column of the gradient that is tiny throughout),
the scaled one keeps the significand bits the subnormal arithmetic dropped, so those results
differ by less than one subnormal step each (absolute error below ``2^-149`` times the inner
length in float32); both are float32 products of the same operands. ``k`` is the largest
exponent for which no partial sum can overflow: ``|sum| <= inner * max|g| * max|other|``.

Whether to scale is decided from a strided sample of about ``SAMPLE**2`` entries: the assists
cost in proportion to the number of subnormal entries times the other operand's width, the
scaling two passes over the gradient, which pays off from about one subnormal entry in a
thousand (``MIN_FRACTION``).
"""
import math

import numpy

MIN_SIZE = 1 << 16  # gradients of fewer entries are not sampled (ops/linear.py): their products are short anyway
SAMPLE = 64  # the sample is about SAMPLE x SAMPLE entries, evenly strided over the matrix
MIN_FRACTION = 1 / 1024  # scale when at least this share of the sample is subnormal


def _sample_is_subnormal(g):
    rows, cols = g.shape
    s = numpy.abs(g[::-(-rows // SAMPLE), ::-(-cols // SAMPLE)])
    tiny = numpy.finfo(g.dtype).tiny
    subnormal = numpy.count_nonzero(s < tiny) - numpy.count_nonzero(s == 0)
    return subnormal >= MIN_FRACTION * s.size


def lift(g, inner, *others):
    """The power-of-two exponent ``k`` to multiply the 2-D float32/float64 NumPy array ``g``
    by before its products with each of ``others`` (NumPy arrays of its dtype, each product
    over at most ``inner`` shared terms), or 0 when ``g`` holds few subnormal numbers, is not
    finite, or no useful ``k`` is safe from overflow. Raises nothing."""
    if g.ndim != 2 or g.dtype not in (numpy.float32, numpy.float64) or not g.size or not _sample_is_subnormal(g):
        return 0
    info = numpy.finfo(g.dtype)
    widest = max((float(numpy.abs(a).max()) for a in others if a.size), default=0.0)
    bound = float(numpy.abs(g).max()) * max(1, inner) * widest
    if not math.isfinite(bound):
        return 0
    # largest k with bound * 2^k below the largest float, one binade spare; 2^k and 2^-k stay normal
    k = info.maxexp - 2 - (math.frexp(bound)[1] if bound > 0 else 0)
    k = min(k, info.maxexp - 2, -info.minexp - 1)
    return k if k > info.nmant + 1 else 0  # lifting by fewer bits would leave subnormal products


def _times(a, factor, out):
    """``a * factor`` (a power of two) into ``out``. A float32 array is multiplied in float64,
    in NumPy's buffered chunks: the float64 product is exact and rounds to float32 once, so
    every bit equals the float32 product's, without the assist a float32 multiply takes on
    each subnormal operand or result (on (700, 7141) mostly subnormal: 3.2 ms against 15 ms)."""
    if a.dtype == numpy.float32:
        return numpy.multiply(a, factor, out=out, dtype=numpy.float64, casting="same_kind")
    return numpy.multiply(a, a.dtype.type(factor), out=out)


def scaled(a, k):
    """``a * 2**k`` as a new array of ``a``'s dtype (exact while the result is normal)."""
    return _times(a, 2.0 ** k, numpy.empty_like(a))


def unscale_(a, k):
    """Multiply ``a`` in place by ``2**-k`` and return it."""
    return _times(a, 2.0 ** -k, a)
