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


@pytest.mark.parametrize("params", ["float16", "float32"])
@pytest.mark.parametrize("shape", [(64, 16, 12, 12), (5, 7, 3, 3), (40, 6)])
def test_float16_batch_norm_kernels_compute_in_float32(shape, params):
    """float16 data with float16 parameters (``model.half()``) or float32 ones (autocast's
    case): statistics and sums in float32 against float64 NumPy of the same float16 values,
    y and gx rounded once to float16, the running statistics and the parameter gradients in
    the parameters' dtype. Both reduction paths: rows of >= 32 values and short rows."""
    import cupy
    from tinynet.kernels import batchnorm
    rng = numpy.random.default_rng(6)
    x = (rng.standard_normal(shape) * 3 + 2).astype(numpy.float16)
    gy = rng.standard_normal(shape).astype(numpy.float16)
    c = shape[1]
    axes = (0,) + tuple(range(2, len(shape)))
    m = x.size // c
    x64, gy64 = x.astype(numpy.float64), gy.astype(numpy.float64)
    mean64, var64 = x64.mean(axis=axes), x64.var(axis=axes)
    invstd64 = 1 / numpy.sqrt(var64 + 1e-5)
    bshape = (1, c) + (1,) * (len(shape) - 2)
    w = rng.uniform(0.5, 2, c).astype(params)
    b = rng.standard_normal(c).astype(params)
    xhat64 = (x64 - mean64.reshape(bshape)) * invstd64.reshape(bshape)
    y64 = xhat64 * w.astype(numpy.float64).reshape(bshape) + b.astype(numpy.float64).reshape(bshape)
    sum_gy64, sum_gy_xhat64 = gy64.sum(axis=axes), (gy64 * xhat64).sum(axis=axes)
    gx64 = (w.astype(numpy.float64) * invstd64).reshape(bshape) * (
        gy64 - sum_gy64.reshape(bshape) / m - xhat64 * sum_gy_xhat64.reshape(bshape) / m)
    rm, rv = cupy.full(c, 0.5, dtype=params), cupy.full(c, 2.0, dtype=params)
    xd, wd, bd = cupy.asarray(x), cupy.asarray(w), cupy.asarray(b)
    y, mean, invstd = batchnorm.batch_norm_fwd(xd, wd, bd, rm, rv, True, 0.1, 1e-5)
    gx, gw, gb = batchnorm.batch_norm_bwd(xd, cupy.asarray(gy), mean, invstd, wd, True, True)
    assert y.dtype == gx.dtype == numpy.float16 and mean.dtype == invstd.dtype == numpy.float32
    assert gw.dtype == gb.dtype == rm.dtype == numpy.dtype(params)
    numpy.testing.assert_allclose(cupy.asnumpy(mean), mean64, rtol=1e-5, atol=1e-5)
    numpy.testing.assert_allclose(cupy.asnumpy(invstd), invstd64, rtol=1e-5)
    half = 2.0 ** -10  # float16's unit roundoff is 2^-11; allow one rounding of each operand's size
    numpy.testing.assert_allclose(cupy.asnumpy(y).astype(numpy.float64), y64, rtol=half, atol=half * 4)
    p_tol = half if params == "float16" else 1e-5
    numpy.testing.assert_allclose(cupy.asnumpy(rm).astype(numpy.float64), 0.9 * 0.5 + 0.1 * mean64, rtol=p_tol,
                                  atol=p_tol)
    numpy.testing.assert_allclose(cupy.asnumpy(rv).astype(numpy.float64), 0.9 * 2 + 0.1 * var64 * m / (m - 1),
                                  rtol=p_tol)
    scale = numpy.abs(gy64).sum(axis=axes)  # float32 sums of m terms: relative to the terms' size
    numpy.testing.assert_allclose(cupy.asnumpy(gb).astype(numpy.float64), sum_gy64, atol=float((scale * p_tol).max()))
    numpy.testing.assert_allclose(cupy.asnumpy(gw).astype(numpy.float64), sum_gy_xhat64,
                                  atol=float((scale * 4 * p_tol).max()))
    gx_scale = float(numpy.abs(gx64).max())
    numpy.testing.assert_allclose(cupy.asnumpy(gx).astype(numpy.float64), gx64, rtol=4 * half, atol=4 * half * gx_scale)


def test_float16_batch_norm_module_takes_the_kernels_with_float32_parameters(monkeypatch):
    """nn.BatchNorm2d with its float32 parameters on float16 input (autocast's case) runs the
    kernels (``_pf32``), gives float16 output and float32 parameter gradients, and agrees with
    the generic code (tinynet's kernels off) within float16 rounding."""
    import tinynet
    from tinynet import backend, nn
    x = numpy.random.default_rng(8).standard_normal((32, 8, 10, 10)) * 2 + 1
    out = []
    for enabled in (True, False):
        monkeypatch.setattr(backend, "kernels_enabled", enabled)
        tinynet.manual_seed(0)
        bn = nn.BatchNorm2d(8).to("cuda")
        t = tinynet.tensor(x, dtype="float16", device="cuda", requires_grad=True)
        y = bn(t)
        assert y.dtype == tinynet.float16 and getattr(y.grad_fn, "kernel", False) == enabled
        (y.float() * tinynet.arange(y.numel(), device="cuda").reshape(y.shape).float().sin()).sum().backward()
        assert bn.weight.grad.dtype == tinynet.float32
        out.append([y.float().detach().numpy(), t.grad.float().numpy(), bn.weight.grad.numpy(), bn.bias.grad.numpy(),
                    bn.running_mean.numpy(), bn.running_var.numpy()])
    for ours, generic in zip(*out):
        scale = max(1.0, float(numpy.abs(generic).max()))
        numpy.testing.assert_allclose(ours / scale, generic / scale, rtol=2e-3, atol=2e-3)
