"""Batch normalisation's GPU kernels (``tinynet/kernels/batchnorm.cu``, launched by
``tinynet/kernels/batchnorm.py``) against float64 NumPy. The op itself (``BatchNorm`` in
``tinynet/ops/normalization.py``) is checked against PyTorch and its generic code in
tests/test_ops_nn.py and tests/test_gpu.py."""
import numpy
import pytest

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,offset", [((256, 32, 28, 28), 0.0), ((64, 20, 8, 8), 0.0), ((3, 7, 5, 9), 0.0),
                                          ((1, 4, 33, 1), 0.0), ((200, 50), 0.0), ((9, 3, 1000), 1e3)])
def test_batch_norm_kernels_match_float64(shape, offset, dtype):
    """Batch statistics (the (C, parts) kernel for rows of >= 32 values, one block per channel
    otherwise), running statistics and the backward's per-channel sums against float64 NumPy;
    values far from zero (offset 1e3) check the Welford merges; a second run gives the same
    bits (the parts are merged in a fixed order), and the channel counters are left at zero."""
    import cupy
    from tinynet.kernels import batchnorm
    rng = numpy.random.default_rng(5)
    x = (rng.standard_normal(shape) * 2 + offset).astype(dtype)
    gy = rng.standard_normal(shape).astype(dtype)
    axes = (0,) + tuple(range(2, len(shape)))
    c, m = shape[1], x.size // shape[1]
    mean64, var64 = x.astype(numpy.float64).mean(axis=axes), x.astype(numpy.float64).var(axis=axes)
    invstd64 = 1 / numpy.sqrt(var64 + 1e-5)
    bshape = (1, c) + (1,) * (len(shape) - 2)
    xhat64 = (x - mean64.reshape(bshape)) * invstd64.reshape(bshape)
    w, b = cupy.asarray(rng.uniform(0.5, 2, c).astype(dtype)), cupy.zeros(c, dtype=dtype)
    runs = []
    for _ in range(2):
        rm, rv = cupy.full(c, 0.5, dtype=dtype), cupy.full(c, 2.0, dtype=dtype)
        xd = cupy.asarray(x)
        y, mean, invstd = batchnorm.batch_norm_fwd(xd, w, b, rm, rv, True, 0.1, 1e-5)
        gx, sum_gy_xhat, sum_gy = batchnorm.batch_norm_bwd(xd, cupy.asarray(gy), mean, invstd, w, True, True)
        runs.append([cupy.asnumpy(a) for a in (mean, invstd, rm, rv, sum_gy, sum_gy_xhat, y, gx)])
    for a, b2 in zip(*runs):
        numpy.testing.assert_array_equal(a, b2)
    mean, invstd, rm, rv, sum_gy, sum_gy_xhat = runs[0][:6]
    tol = 1e-12 if dtype == "float64" else 2e-5
    numpy.testing.assert_allclose(mean, mean64, rtol=tol, atol=tol * (1 + offset))
    numpy.testing.assert_allclose(invstd, invstd64, rtol=tol * (1 + offset))
    numpy.testing.assert_allclose(rm, 0.9 * 0.5 + 0.1 * mean64, rtol=tol, atol=tol * (1 + offset))
    numpy.testing.assert_allclose(rv, 0.9 * 2.0 + 0.1 * var64 * m / (m - 1), rtol=tol * (1 + offset))
    numpy.testing.assert_allclose(sum_gy, gy.astype(numpy.float64).sum(axis=axes), rtol=tol, atol=tol * m ** 0.5)
    numpy.testing.assert_allclose(sum_gy_xhat, (gy * xhat64).sum(axis=axes), rtol=tol,
                                  atol=tol * m ** 0.5 * (1 + offset))
    counters = batchnorm._counters.get(cupy.cuda.runtime.getDevice())
    if counters is not None:
        left = cupy.ndarray((batchnorm.COUNTERS,), dtype=cupy.uint32, memptr=cupy.cuda.MemoryPointer(counters, 0))
        assert int(left.max()) == 0
