"""cuDNN's fused flash attention (tinynet/kernels/cudnn_attention.py) on the GPU: output and
q/k/v gradients against the math path on the same bfloat16/float16 inputs (computed in
float32 from the same values), for no mask, causal, bool and additive masks, grouped-query
heads and the transposed (B, L, H, E) views a transformer makes; the path taken; the
fallbacks (dropout, a float mask that needs its gradient, float32); the backend switches.
The other kernels of the transformer step: tests/test_transformer_kernels_gpu.py."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet.backends import cuda as cuda_settings
from tinynet.kernels import cudnn_attention
from tinynet.nn.attention import SDPBackend, sdpa_kernel

pytestmark = pytest.mark.gpu
TOL = {"bfloat16": 2e-2, "float16": 4e-3}  # relative to the largest reference value


def _rel(a, b):
    a, b = numpy.asarray(a, numpy.float64), numpy.asarray(b, numpy.float64)
    assert a.shape == b.shape
    return float(numpy.abs(a - b).max(initial=0) / max(numpy.abs(b).max(initial=0), 1e-30))


def _run(arrays, dtype, mask=None, transposed=False, **kw):
    """Forward + backward in ``dtype`` (or float32 for the reference); (path, [out, dq, dk, dv])."""
    ts = [tinynet.tensor(a, dtype=dtype, device="cuda", requires_grad=True) for a in arrays]
    ins = [t.transpose(1, 2) for t in ts] if transposed else ts  # (B, L, H, E) storage read as (B, H, L, E)
    m = None if mask is None else tinynet.tensor(mask, dtype=None if mask.dtype == numpy.bool_ else dtype,
                                                 device="cuda")
    y = F.scaled_dot_product_attention(*ins, attn_mask=m, **kw)
    path = getattr(y.grad_fn, "path", None)
    gy = numpy.random.default_rng(9).standard_normal(y.shape)
    y.backward(tinynet.tensor(gy, dtype=dtype, device="cuda"))
    return path, [y.float().numpy(force=True)] + [t.grad.float().numpy(force=True) for t in ts]


def _inputs(shapes, dtype=None, seed=0):
    """float64 arrays holding values exact in ``dtype`` (a tinynet dtype; None: float32)."""
    r = numpy.random.default_rng(seed)
    dt = dtype or tinynet.float32
    return [tinynet.tensor(r.standard_normal(s), dtype=dt).double().numpy() for s in shapes]


CASES = [
    dict(shapes=[(2, 4, 64, 64)] * 3, kw={}),
    dict(shapes=[(2, 4, 128, 64)] * 3, kw={"is_causal": True}),
    dict(shapes=[(2, 4, 100, 32), (2, 4, 77, 32), (2, 4, 77, 32)], kw={}),           # L != S, odd lengths
    dict(shapes=[(2, 8, 64, 64), (2, 2, 64, 64), (2, 2, 64, 64)], kw={"enable_gqa": True}),
    dict(shapes=[(2, 64, 4, 64)] * 3, kw={"is_causal": True}, transposed=True),      # the GPT's views
    dict(shapes=[(1, 2, 256, 128)] * 3, kw={"is_causal": True, "scale": 0.3}),
]


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_cudnn_attention_matches_math(case, dtype):
    c = CASES[case]
    if not cudnn_attention.available():
        pytest.skip("cuDNN Frontend not loadable here")
    arrays = _inputs(c["shapes"], getattr(tinynet, dtype))
    path, got = _run(arrays, getattr(tinynet, dtype), transposed=c.get("transposed", False), **c["kw"])
    assert path == "cudnn", cudnn_attention.stats
    _, ref = _run(arrays, tinynet.float32, transposed=c.get("transposed", False), **c["kw"])
    for name, a, b in zip(("out", "dq", "dk", "dv"), got, ref):
        assert _rel(a, b) < TOL[dtype], (name, _rel(a, b))


@pytest.mark.parametrize("kind", ["bool", "float", "bool_2d"])
def test_cudnn_attention_masks(kind):
    if not cudnn_attention.available():
        pytest.skip("cuDNN Frontend not loadable here")
    r = numpy.random.default_rng(1)
    arrays = _inputs([(2, 4, 64, 64)] * 3, tinynet.bfloat16)
    if kind == "bool":
        mask = r.random((2, 1, 64, 64)) > 0.3
        mask[..., 0] = True
    elif kind == "bool_2d":
        mask = numpy.tril(numpy.ones((64, 64), bool))
    else:
        mask = r.standard_normal((1, 4, 64, 64))
    path, got = _run(arrays, tinynet.bfloat16, mask=mask)
    assert path == "cudnn"
    _, ref = _run(arrays, tinynet.float32, mask=mask)
    for name, a, b in zip(("out", "dq", "dk", "dv"), got, ref):
        assert _rel(a, b) < TOL["bfloat16"], (name, _rel(a, b))


def test_fully_masked_row_matches_math():
    """A query row with no key left: the math path gives zeros; cuDNN's answer is compared."""
    if not cudnn_attention.available():
        pytest.skip("cuDNN Frontend not loadable here")
    arrays = _inputs([(1, 2, 64, 64)] * 3, tinynet.bfloat16)
    mask = numpy.ones((1, 1, 64, 64), bool)
    mask[..., 5, :] = False
    _, got = _run(arrays, tinynet.bfloat16, mask=mask)
    with sdpa_kernel(SDPBackend.MATH):
        _, ref = _run(arrays, tinynet.bfloat16, mask=mask)
    assert numpy.isfinite(got[0]).all() and numpy.abs(got[0][0, :, 5]).max() == 0
    assert _rel(got[0], ref[0]) < TOL["bfloat16"]


def test_fallbacks_and_switches():
    arrays = _inputs([(2, 4, 64, 64)] * 3, tinynet.bfloat16)
    path, _ = _run(arrays, tinynet.bfloat16, dropout_p=0.1)
    assert path == "fused"  # dropout: tinynet's kernels (bfloat16 widened), not cuDNN's
    path, _ = _run(arrays, tinynet.float16)
    assert path == ("cudnn" if cudnn_attention.available() else "fused")
    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        assert _run(arrays, tinynet.float16)[0] == "fused"
        assert _run(arrays, tinynet.bfloat16)[0] == "fused"  # bfloat16 widened to float32 for tinynet's kernels
    with sdpa_kernel(SDPBackend.EFFICIENT_ATTENTION):  # tinynet's kernels take dropout, not float64
        assert _run(arrays, tinynet.bfloat16, dropout_p=0.1)[0] == "fused"
        with pytest.raises(RuntimeError, match="no available kernel"):
            _run(arrays, tinynet.float64)
    assert cuda_settings.sdp_state() == {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}
    q = tinynet.tensor(arrays[0], dtype=tinynet.bfloat16, device="cuda")
    m = tinynet.randn(64, 64, device="cuda", dtype=tinynet.bfloat16, requires_grad=True)
    y = F.scaled_dot_product_attention(q, q, q, attn_mask=m)
    assert y.grad_fn.path != "cudnn"  # the mask's gradient: not from cuDNN


@pytest.mark.parametrize("flat", [False, True])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_fused_projection_split_gets_one_gradient_buffer(dtype, flat):
    """q, k, v split from one projection (the GPT's ``c_attn(x).split(C, dim=2)``, viewed as
    heads): the cuDNN backward writes dQ, dK, dV into one array laid out like the projection
    and the split's backward returns it whole (kernels/grad_buffers.py, no concatenation);
    the projection's gradient equals the float32 path's, whose own kernels do the same (checked
    against PyTorch's float64 attention). ``flat``: the projection made as
    (B*T, 3C) and viewed as (B, T, 3C), as a linear layer on a 3-D input does."""
    from tinynet.kernels import grad_buffers
    B, T, H, E = 2, 64, 4, 32
    C = H * E
    g = numpy.random.default_rng(4)
    proj = g.standard_normal((B * T, 3 * C) if flat else (B, T, 3 * C))
    gy = g.standard_normal((B, T, C))
    grads = {}
    for dt in (dtype, "float32"):
        p = tinynet.tensor(proj, dtype=getattr(tinynet, dt), device="cuda", requires_grad=True)
        q, k, v = (a.view(B, T, H, E).transpose(1, 2) for a in (p * 1).view(B, T, 3 * C).split(C, dim=2))
        before = dict(grad_buffers.stats)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        assert dt == "float32" or y.grad_fn.path == "cudnn"
        y.transpose(1, 2).reshape(B, T, C).backward(tinynet.tensor(gy, dtype=p.dtype, device="cuda"))
        # cuDNN's backward and, in float32, tinynet's own kernels (attention.cu's gstrided stores)
        assert grad_buffers.stats["made"] == before["made"] + 1
        assert grad_buffers.stats["joined"] == before["joined"] + 1
        grads[dt] = p.grad.float().numpy(force=True)
    assert _rel(grads[dtype], grads["float32"]) < TOL[dtype]
    import torch
    tp = torch.tensor(proj, requires_grad=True)
    tq, tk, tv = (a.view(B, T, H, E).transpose(1, 2) for a in (tp * 1).view(B, T, 3 * C).split(C, dim=2))
    ty = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    ty.transpose(1, 2).reshape(B, T, C).backward(torch.tensor(gy))
    assert _rel(grads["float32"], tp.grad.numpy()) < 1e-5
