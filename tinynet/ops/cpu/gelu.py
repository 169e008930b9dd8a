"""The CPU's exact GELU: ``y = x Phi(x)`` and its derivative in one blocked pass.

``Phi(x) = (1 + erf(x / sqrt 2)) / 2`` and the derivative

    dy/dx = Phi(x) + x phi(x),    phi(x) = exp(-x^2 / 2) / sqrt(2 pi),

is formed in the same pass while the block is in the cache, so backward is one product
``gy * dy/dx``.

erf: float64 takes ``scipy.special.erf``. For float32 that library evaluates erf in float64 one
element at a time (8-11 ns an element on the 2-core machine, the costly part of the whole
pass), so float32 takes :func:`erf_float32`, a rational approximation evaluated with NumPy's
vector loops (2.6 ns an element; max absolute error 3.3e-7 against the float64 erf, a few
float32 ulps; PyTorch's own vectorised CPU erf is likewise an approximation): the GELU of a
(16, 64, 512) float32 array with its derivative, 2 cores, 3.27 -> 1.79 ms; the GPT of
``benchmarks/transformer.py``'s CPU row (2 x 128, batch 16) 36.6-37.2 -> 33.7-34.2 ms a step.

The flat input is cut into :func:`tinynet.parallel.ranges` items (compute bound: costed at
16x its bytes) spread over tinynet's threads, and each item is walked in blocks of ``BLOCK``
(float32: ``BLOCK_F32``) elements so that the temporaries stay in a core's cache. Before,
the generic code made seven full-size temporaries in forward and seven in backward: the
GPT of ``examples/char_transformer.py`` spent 1.1 ms in forward and 1.65 ms in backward
per (1024, 512) call outside erf itself.
"""
import math

import numpy

from ... import backend, parallel

BLOCK = 1 << 15  # elements per block: the block's x, y and derivative (768 KiB in float64) stay in L2
# float32 (erf_float32: ~30 NumPy calls a block) in larger blocks: with 32 Ki elements two threads
# spent their time handing the GIL to each other between the short calls and ran slower than one
# ((16, 64, 512) forward and derivative, 2 cores: 2.84 ms on two threads, 2.25 on one; 2^17: 1.78)
BLOCK_F32 = 1 << 17
_INV_SQRT2 = 1 / math.sqrt(2)
_INV_SQRT_2PI = 1 / math.sqrt(2 * math.pi)


# erf(z) ~ z P(u) / Q(u), u = z^2 / 16, for |z| <= 4 (beyond, erf rounds to +-1 in float32).
# Coefficients (lowest degree first) fitted in float64 to scipy.special.erf(z) / z on 40,001
# points of (0, 4] by Loeb's iteratively reweighted least squares for the relative error (a
# linear fit of f Q = P, weighted by 1 / (f Q_previous), twelve rounds): tests/test_cpu_fast_paths.py
# refits them and checks the error bound.
ERF_P = (1.1283791566287145, 2.2559855121861836, 11.325558939070655, 6.4607857831703335,
         8.849793166286299, -3.8370319627280334, 1.3468338266134436, -0.22078725472238508)
ERF_Q = (1.0, 7.332643202574216, 23.5449292782203, 41.08927186256087, 36.27123060196575)
_P32 = [numpy.float32(c) for c in ERF_P[::-1]]  # highest degree first, for Horner's rule
_Q32 = [numpy.float32(c) for c in ERF_Q[::-1]]


def erf_float32(z, out, scratch):
    """erf of the float32 array ``z`` into ``out`` (same shape; may be ``z`` itself) by the
    rational approximation above, evaluated by Horner's rule in float32; ``scratch`` is two
    float32 arrays of ``z``'s shape. Max absolute error 3.3e-7 on all of float32."""
    t, zc = scratch
    numpy.clip(z, -4.0, 4.0, out=zc)         # the clamped z (so out may be z itself)
    numpy.multiply(zc, zc, out=t)
    t *= numpy.float32(1 / 16)               # u
    p = numpy.multiply(t, _P32[0], out=out)
    p += _P32[1]
    for c in _P32[2:]:
        p *= t
        p += c
    p *= zc                                  # z P(u)
    numpy.multiply(t, _Q32[0], out=zc)       # zc is no longer needed: Q(u) in its place
    zc += _Q32[1]
    for c in _Q32[2:]:
        zc *= t
        zc += c
    p /= zc
    return numpy.clip(p, -1.0, 1.0, out=p)


def gelu(x, derivative=True):
    """``(y, dy/dx)`` of the exact GELU for a float32/float64 NumPy array ``x`` (``dy/dx`` None
    when ``derivative`` is False); both C-ordered arrays of ``x``'s shape and dtype."""
    erf = backend.special(numpy).erf if x.dtype != numpy.float32 else None
    flat = numpy.ascontiguousarray(x).reshape(-1)
    y = numpy.empty(flat.shape, dtype=x.dtype)
    d = numpy.empty(flat.shape, dtype=x.dtype) if derivative else None
    parts = parallel.ranges(flat.size, 16 * flat.nbytes)

    block = BLOCK if erf is not None else BLOCK_F32

    def piece(i):
        lo, hi = parts[i]
        scratch = None if erf is not None else (numpy.empty(min(block, hi - lo), numpy.float32),
                                                numpy.empty(min(block, hi - lo), numpy.float32))
        for a in range(lo, hi, block):
            b = min(hi, a + block)
            xs, ys = flat[a:b], y[a:b]
            numpy.multiply(xs, _INV_SQRT2, out=ys)
            if d is not None:
                ds = d[a:b]
                numpy.multiply(ys, ys, out=ds)
                numpy.negative(ds, out=ds)
                numpy.exp(ds, out=ds)                # exp(-x^2 / 2)
            if erf is not None:
                erf(ys, out=ys)
            else:
                n = b - a
                erf_float32(ys, ys, (scratch[0][:n], scratch[1][:n]))
            ys += 1
            ys *= 0.5                                # Phi(x)
            if d is not None:
                ds *= xs
                ds *= _INV_SQRT_2PI                  # x phi(x)
                ds += ys
            ys *= xs                                 # x Phi(x)

    parallel.parallel_for(len(parts), piece)
    return y.reshape(x.shape), None if d is None else d.reshape(x.shape)
