"""float16 and bfloat16 through tinynet's GEMM path on the GPU (gpu marker: skipped without CuPy
and a GPU). ``gemm.matmul`` in its three regimes (the tiled kernel unsplit, the tiled kernel split
along K, cuBLAS's ``cublasGemmEx`` above ``SMALL_GEMM``), for every transpose, with and without the
bias, against a float64 NumPy product of the same half-rounded values; ``F.linear`` forward and
backward on the direct path in half against float32; a half ``nn.Linear`` captured in a CUDA graph
replays the eager bits.

Tolerances: float32 accumulation then one rounding to the half type puts a result within half a
unit in the last place of the exact one, so the check is one ulp relative (``ULP``: 2^-10 for
float16, 2^-7 for bfloat16, the spacing at the bottom of a binade over its value), plus an allowance
for the float32 sums themselves (``_ACC``) and, on cuBLAS, for what cuBLAS may round on the way
(see ``_cublas_slack``)."""
import math

import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet import nn

pytestmark = pytest.mark.gpu

HALF = ["float16", "bfloat16"]
ULP = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}
TINY = {"float16": 2.0 ** -25, "bfloat16": 0.0}  # half the spacing of float16's subnormals
# float32 sums of k terms: 16 sqrt(k) float32 unit roundoffs of sum |terms|. The worst case is k unit
# roundoffs (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., section 3.1); rounding
# errors of random sign grow like sqrt(k) (ibid., section 2.8), and this keeps the check near one ulp
_ACC = 2.0 ** -20
TILED = [(37, 29, 50), (300, 200, 100)]      # (M, N, K): K too short to split, or enough tiles
SPLIT = [(64, 10, 784), (33, 17, 3000)]      # few output tiles and a long K: split-K
CUBLAS = [(256, 256, 512), (300, 130, 520)]  # M*N*K > SMALL_GEMM (14 x 2^20): cublasGemmEx
CASES = [("tiled", s) for s in TILED] + [("split", s) for s in SPLIT] + [("cublas", s) for s in CUBLAS]


def _needs(dtype):
    if dtype == "bfloat16" and not tinynet.backend.cupy_has_bfloat16():
        pytest.skip("this CuPy has no bfloat16 (tests/test_amp_gpu.py checks the refusal)")
    return getattr(tinynet, dtype)


def _host64(a, dtype):
    """CuPy array ``a`` of the half type ``dtype`` as float64 on the host, read through its bits."""
    bits = a.view(numpy.uint16).get()
    if dtype == "bfloat16":
        return (bits.astype(numpy.uint32) << 16).view(numpy.float32).astype(numpy.float64)
    return bits.view(numpy.float16).astype(numpy.float64)


def _half(rng, shape, dtype):
    """A standard-normal tensor of ``dtype`` on the GPU and its exact (rounded) values in float64."""
    t = tinynet.tensor(rng.standard_normal(shape), dtype=dtype, device="cuda")
    return t, t.double().numpy()


def _cublas_slack(absprod, k, dtype):
    """What cuBLAS may round besides the result: with its default math mode (PyTorch's default
    too) it may add split-K partials in the half type, each within half an ulp of a partial sum,
    whose size is about the sum's root-mean-square, ~ sum |terms| / sqrt(k) for random terms."""
    return ULP[dtype] * 2 * absprod / math.sqrt(k)


def _assert_rounded_once(got, exact, absprod, k, dtype, what, slack=0.0):
    """Elementwise ``|got - exact| <= ULP |exact| + _ACC sqrt(k) absprod + TINY + slack``, where
    ``absprod`` is the sum of the absolute values of the terms each result adds up."""
    tol = ULP[dtype] * numpy.abs(exact) + _ACC * math.sqrt(k) * absprod + TINY[dtype] + slack
    err = numpy.abs(got - exact)
    bad = err > tol
    if bad.any():
        i = numpy.unravel_index(numpy.argmax(err - tol), err.shape)
        pytest.fail(f"{what}: {int(bad.sum())} of {bad.size} values off; worst at {i}: got {got[i]!r}, "
                    f"exact {exact[i]!r}, tolerance {tol[i]!r}")


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("trans_a,trans_b", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("path,mnk", CASES, ids=[f"{p}-{'x'.join(map(str, s))}" for p, s in CASES])
def test_half_gemm_matches_float64_of_the_rounded_inputs(path, mnk, trans_a, trans_b, dtype):
    """gemm.matmul on float16/bfloat16 operands: the result has the operands' dtype and is the
    exact product of the rounded inputs (plus the bias) rounded once, within the float32 sums'
    error; the same call gives the same bits again (split-K adds its partials in a fixed order)."""
    import cupy
    from tinynet.kernels import gemm
    _needs(dtype)
    m, n, k = mnk
    rng = numpy.random.default_rng(11)
    a, a64 = _half(rng, (k, m) if trans_a else (m, k), dtype)
    b, b64 = _half(rng, (n, k) if trans_b else (k, n), dtype)
    bias, bias64 = _half(rng, (n,), dtype)
    splits = gemm.plan(m, n, k, gemm._split_workspace(cupy)[2])[2]
    assert (m * n * k > gemm.SMALL_GEMM) == (path == "cublas")
    assert path == "cublas" or (splits > 1) == (path == "split"), (mnk, splits)
    op_a, op_b = (a64.T if trans_a else a64), (b64.T if trans_b else b64)
    prod, absprod = op_a @ op_b, numpy.abs(op_a) @ numpy.abs(op_b)
    for with_bias in (False, True):
        outs = [gemm.matmul(a.array, b.array, trans_a, trans_b, bias=bias.array if with_bias else None)
                for _ in range(2)]
        out = outs[0]
        assert out.dtype == a.array.dtype and out.shape == (m, n) and out.flags.c_contiguous
        got = _host64(out, dtype)
        exact = prod + bias64 if with_bias else prod
        slack = 0.0
        if path == "cublas":  # and the bias is added after cuBLAS rounded the product: a second rounding
            slack = _cublas_slack(absprod, k, dtype) + (ULP[dtype] * numpy.abs(prod) if with_bias else 0.0)
        terms = absprod + numpy.abs(bias64) if with_bias else absprod
        _assert_rounded_once(got, exact, terms, k, dtype, f"{path} {mnk} bias={with_bias}", slack)
        assert numpy.array_equal(_host64(outs[1], dtype), got)


LINEAR = [("tiled", (16, 40, 24)), ("split", (64, 784, 10)), ("cublas", (512, 256, 256))]  # (batch, in, out)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("path,shape", LINEAR, ids=[p for p, _ in LINEAR])
def test_half_linear_takes_the_direct_path_and_matches_float32(path, shape, dtype):
    """F.linear on float16/bfloat16 CUDA tensors runs the direct GEMM path (gemm.matmul, the
    bias-gradient kernel) and gives, forward and backward, the float32 results on the same
    rounded values within one rounding to the half type."""
    dt = _needs(dtype)
    batch, fin, fout = shape
    rng = numpy.random.default_rng(12)
    x, w, b, g = (_half(rng, s, dtype)[1] for s in ((batch, fin), (fout, fin), (fout,), (batch, fout)))
    res = {}
    for d in (dt, tinynet.float32):
        ts = [tinynet.tensor(v, dtype=d, device="cuda").requires_grad_() for v in (x, w, b)]
        y = F.linear(*ts)
        assert y.dtype == d and y.grad_fn.gpu_path and y.grad_fn.direct
        y.backward(tinynet.tensor(g, dtype=d, device="cuda"))
        res[d] = [y.detach()] + [t.grad for t in ts]
    for t in res[dt]:
        assert t.dtype == dt
    half = [_host64(t.array, dtype) for t in res[dt]]
    single = [t.double().numpy() for t in res[tinynet.float32]]
    ax, aw, ag = numpy.abs(x), numpy.abs(w), numpy.abs(g)
    checks = [("y", ax @ aw.T + numpy.abs(b), fin), ("x.grad", ag @ aw, fout), ("w.grad", ag.T @ ax, batch),
              ("b.grad", ag.sum(axis=0), batch)]
    for (what, absprod, k), got, ref in zip(checks, half, single):
        # the float32 run's own sums are off by up to _ACC sqrt(k) absprod too: twice the allowance
        slack = _ACC * math.sqrt(k) * absprod
        if path == "cublas" and what != "b.grad":  # b.grad: the bias-gradient kernel, not cuBLAS
            slack = slack + _cublas_slack(absprod, k, dtype) + (ULP[dtype] * numpy.abs(ref) if what == "y" else 0.0)
        _assert_rounded_once(got, ref, absprod, k, dtype, f"{path} linear {what}", slack)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("features", [(784, 10, 64), (1024, 1024, 512)], ids=["split-k", "cublas"])
def test_half_linear_captures_and_replays_the_eager_result(dtype, features):
    """A float16/bfloat16 nn.Linear forward (tiled split-K kernel with the bias; cublasGemmEx and
    the bias kernel) records into a CUDA graph, which CuPy's ``@`` on half types refuses, and each
    replay gives the eager result bit for bit, also after the input is overwritten."""
    dt = _needs(dtype)
    tinynet.manual_seed(0)
    fin, fout, batch = features
    lin = nn.Linear(fin, fout).to("cuda").to(dt)
    x = tinynet.randn(batch, fin, device="cuda").to(dt)
    x2 = tinynet.randn(batch, fin, device="cuda").to(dt)
    g = tinynet.cuda.CUDAGraph()
    with tinynet.no_grad():
        want = lin(x)  # also makes the split-K workspace, which a capture cannot
        assert want.dtype == dt
        with tinynet.cuda.graph(g):
            out = lin(x)
    g.replay()
    assert numpy.array_equal(out.array.view(numpy.uint16).get(), want.array.view(numpy.uint16).get())
    x.array[...] = x2.array
    g.replay()
    with tinynet.no_grad():
        want2 = lin(x)
    assert numpy.array_equal(out.array.view(numpy.uint16).get(), want2.array.view(numpy.uint16).get())
