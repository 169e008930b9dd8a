"""The fused scaled-dot-product-attention kernels (tinynet/kernels/attention.cu) on the GPU:
output and q/k/v gradients against the generic xp code on the same GPU (tinynet's kernels
switched off per call) and against PyTorch's CUDA SDPA where torch has CUDA; float32 and
float16 (compared with float32 references of the same float16 inputs); the fallbacks to the
generic code (float64, head dims over 128, a float mask's gradient) and second derivatives
through the fused forward; dropout inside the fused kernels against the float64 math path with
the documented Philox mask."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet import backend

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def own_kernels():
    """These tests are about tinynet's own kernels: cuDNN's attention (tests/test_attention_cudnn_gpu.py)
    is switched off, as with ``sdpa_kernel([EFFICIENT_ATTENTION, MATH])``."""
    from tinynet.nn.attention import SDPBackend, sdpa_kernel
    with sdpa_kernel([SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH]):
        yield


def _fused(y):
    """True when the attention op ``y`` came from ran tinynet's fused kernels."""
    return getattr(y.grad_fn, "path", None) == "fused"

try:
    import torch
except ImportError:
    torch = None
TORCH_CUDA = torch is not None and torch.cuda.is_available()
TOL = {"float32": 1e-5, "float16": 2e-3}  # relative to the largest reference value


def _rel(a, b):
    a, b = numpy.asarray(a, numpy.float64), numpy.asarray(b, numpy.float64)
    assert a.shape == b.shape
    return float(numpy.abs(a - b).max(initial=0) / max(numpy.abs(b).max(initial=0), 1e-30))


def _bool_mask(shape, seed=3, empty_row=False):
    m = numpy.random.default_rng(seed).random(shape) > 0.4
    m[..., :, 0] = True  # every row keeps a key unless asked otherwise
    if empty_row:
        m[..., 1, :] = False
    return m


def _float_mask(shape, seed=4):
    return numpy.random.default_rng(seed).standard_normal(shape)


def _inputs(qs, ks, vs, dtype, seed=0):
    """q, k and v as float64 arrays holding values exact in ``dtype``."""
    r = numpy.random.default_rng(seed)
    return [r.standard_normal(s).astype(dtype).astype(numpy.float64) for s in (qs, ks, vs)]


def _run(monkeypatch, arrays, mask, kw, dtype, kernels, gy_seed=5):
    """Forward + backward with tinynet's kernels on or off; (fused path taken, [out, dq, dk, dv])."""
    monkeypatch.setattr(backend, "kernels_enabled", kernels)
    ts = [tinynet.tensor(a, dtype=dtype, device="cuda", requires_grad=True) for a in arrays]
    m = None
    if mask is not None:
        m = tinynet.tensor(mask, dtype=None if mask.dtype == numpy.bool_ else dtype, device="cuda")
    y = F.scaled_dot_product_attention(*ts, attn_mask=m, **kw)
    fused = _fused(y)
    gy = numpy.random.default_rng(gy_seed).standard_normal(y.shape).astype(dtype)
    y.backward(tinynet.tensor(gy, device="cuda"))
    monkeypatch.setattr(backend, "kernels_enabled", True)
    return fused, [y.numpy(force=True)] + [t.grad.numpy(force=True) for t in ts]


def _torch_run(arrays, mask, kw, dtype, gy_seed=5):
    ts = [torch.tensor(a, dtype=getattr(torch, dtype), device="cuda", requires_grad=True) for a in arrays]
    m = None
    if mask is not None:
        m = torch.tensor(mask, device="cuda")
        if m.dtype != torch.bool:
            m = m.to(getattr(torch, dtype))
    y = torch.nn.functional.scaled_dot_product_attention(*ts, attn_mask=m, **kw)
    gy = numpy.random.default_rng(gy_seed).standard_normal(tuple(y.shape)).astype(dtype)
    y.backward(torch.tensor(gy, device="cuda"))
    return [y.detach().cpu().float().numpy()] + [t.grad.cpu().float().numpy() for t in ts]


N, H = 2, 3
CASES = [
    # (id, query, key, value shapes, mask, keyword arguments, also against PyTorch)
    ("plain_E64", (N, H, 128, 64), (N, H, 128, 64), (N, H, 128, 64), None, {}, True),
    ("odd_37_53_E16", (N, H, 37, 16), (N, H, 53, 16), (N, H, 53, 16), None, {}, True),
    ("E100", (N, H, 70, 100), (N, H, 90, 100), (N, H, 90, 100), None, {}, True),
    ("E128", (N, H, 65, 128), (N, H, 129, 128), (N, H, 129, 128), None, {}, True),
    ("E64_Ev100", (N, H, 37, 64), (N, H, 53, 64), (N, H, 53, 100), None, {}, True),
    ("E128_Ev8", (N, H, 37, 128), (N, H, 53, 128), (N, H, 53, 8), None, {}, False),
    ("E5_Ev3", (N, H, 37, 5), (N, H, 53, 5), (N, H, 53, 3), None, {"scale": 0.9}, False),
    ("causal_square", (N, H, 130, 64), (N, H, 130, 64), (N, H, 130, 64), None, {"is_causal": True}, True),
    ("causal_L_lt_S", (N, H, 37, 32), (N, H, 53, 32), (N, H, 53, 32), None, {"is_causal": True}, True),
    ("causal_L_gt_S", (N, H, 150, 32), (N, H, 70, 32), (N, H, 70, 16), None, {"is_causal": True}, True),
    ("bool_LS", (N, H, 37, 16), (N, H, 53, 16), (N, H, 53, 16), _bool_mask((37, 53)), {}, True),
    ("bool_N1LS", (N, H, 37, 16), (N, H, 53, 16), (N, H, 53, 16), _bool_mask((N, 1, 37, 53)), {}, True),
    ("float_LS", (N, H, 37, 16), (N, H, 53, 16), (N, H, 53, 16), _float_mask((37, 53)), {}, True),
    ("float_N1LS", (N, H, 70, 64), (N, H, 90, 64), (N, H, 90, 64), _float_mask((N, 1, 70, 90)), {}, True),
    ("float_key_row", (N, H, 37, 16), (N, H, 53, 16), (N, H, 53, 16), _float_mask((N, 1, 1, 53)), {}, False),
    ("gqa", (N, 4, 40, 32), (N, 2, 50, 32), (N, 1, 50, 32), None, {"enable_gqa": True}, False),
    ("broadcast_batch", (1, H, 20, 16), (N, H, 30, 16), (N, 1, 30, 8), None, {}, False),
    ("unbatched", (20, 16), (30, 16), (30, 8), None, {}, False),
    ("empty_rows", (N, H, 37, 16), (N, H, 53, 16), (N, H, 53, 16), _bool_mask((37, 53), empty_row=True), {}, False),
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_fused_matches_generic_and_torch(monkeypatch, case, dtype):
    _, qs, ks, vs, mask, kw, vs_torch = case
    arrays = _inputs(qs, ks, vs, dtype)
    if mask is not None and mask.dtype != numpy.bool_:
        mask = mask.astype(dtype).astype(numpy.float64)  # values exact in dtype
    fused, ours = _run(monkeypatch, arrays, mask, kw, dtype, kernels=True)
    assert fused, "the fused kernels did not run"
    # the reference: the generic code in float32 on the same values (float16 inputs included)
    generic, ref = _run(monkeypatch, arrays, mask, kw, "float32", kernels=False)
    assert not generic
    for name, a, b in zip(("out", "dq", "dk", "dv"), ours, ref):
        assert a.dtype == numpy.dtype(dtype)
        assert numpy.isfinite(a).all(), name
        assert _rel(a, b) < TOL[dtype], f"{name}: relative error {_rel(a, b):.2e} against the generic code"
    if vs_torch and TORCH_CUDA:
        theirs = _torch_run(arrays, mask, kw, dtype)
        for name, a, b, r in zip(("out", "dq", "dk", "dv"), ours, theirs, ref):
            if dtype == "float32":
                assert _rel(a, b) < 1e-4, f"{name}: relative error {_rel(a, b):.2e} against PyTorch"
            else:  # float16: no further from the float32 reference than twice PyTorch's own error
                assert _rel(a, r) <= 2 * _rel(b, r) + 1e-3, \
                    f"{name}: error {_rel(a, r):.2e}, PyTorch's {_rel(b, r):.2e} (against float32)"


def test_fully_masked_rows_give_zeros(monkeypatch):
    arrays = _inputs((N, H, 37, 16), (N, H, 53, 16), (N, H, 53, 16), "float32")
    mask = numpy.zeros((37, 53), dtype=bool)
    mask[5:, :7] = True  # rows 0-4 see no key
    fused, (out, dq, dk, dv) = _run(monkeypatch, arrays, mask, {}, "float32", kernels=True)
    assert fused
    assert not out[..., :5, :].any() and not dq[..., :5, :].any()
    assert not dk[..., 7:, :].any() and not dv[..., 7:, :].any()
    float_mask = numpy.where(mask, 0.0, -numpy.inf)
    fused, ours = _run(monkeypatch, arrays, float_mask, {}, "float32", kernels=True)
    _, ref = _run(monkeypatch, arrays, float_mask, {}, "float32", kernels=False)
    assert fused
    for a, b in zip(ours, ref):
        assert numpy.isfinite(a).all() and _rel(a, b) < 1e-5


def test_transposed_head_layout(monkeypatch):
    # multi-head attention's (N, L, H, E) -> (N, H, L, E) views: rows strided, no copies needed
    r = numpy.random.default_rng(1)
    x = [r.standard_normal((N, L, 4, 32)) for L in (37, 53, 53)]
    results = []
    for kernels in (True, False):
        monkeypatch.setattr(backend, "kernels_enabled", kernels)
        ts = [tinynet.tensor(a, dtype="float32", device="cuda", requires_grad=True) for a in x]
        y = F.scaled_dot_product_attention(*(t.transpose(1, 2) for t in ts), is_causal=True)
        assert _fused(y) == kernels
        y.transpose(1, 2).sum().backward()
        results.append([y.numpy(force=True)] + [t.grad.numpy(force=True) for t in ts])
    for a, b in zip(*results):
        assert _rel(a, b) < 1e-5


@pytest.mark.parametrize("causal", [False, True])
def test_second_derivatives_through_the_fused_forward(monkeypatch, causal):
    arrays = _inputs((N, H, 37, 16), (N, H, 53, 16), (N, H, 53, 8), "float32")
    results = []
    for kernels in (True, False):
        monkeypatch.setattr(backend, "kernels_enabled", kernels)
        q, k, v = (tinynet.tensor(a, dtype="float32", device="cuda", requires_grad=True) for a in arrays)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        assert _fused(y) == kernels
        (gq,) = tinynet.autograd.grad((y * y).sum(), [q], create_graph=True)
        (gq * gq).sum().backward()
        results.append([gq.numpy(force=True), q.grad.numpy(force=True), k.grad.numpy(force=True),
                        v.grad.numpy(force=True)])
    for a, b in zip(*results):
        assert _rel(a, b) < 1e-4


def test_float_mask_gradient_uses_the_generic_backward(monkeypatch):
    arrays = _inputs((N, H, 37, 16), (N, H, 53, 16), (N, H, 53, 16), "float32")
    mask = _float_mask((H, 37, 53))
    results = []
    for kernels in (True, False):
        monkeypatch.setattr(backend, "kernels_enabled", kernels)
        ts = [tinynet.tensor(a, dtype="float32", device="cuda", requires_grad=True) for a in arrays + [mask]]
        y = F.scaled_dot_product_attention(*ts[:3], attn_mask=ts[3])
        assert _fused(y) == kernels
        y.backward(tinynet.ones_like(y))
        results.append([y.numpy(force=True)] + [t.grad.numpy(force=True) for t in ts])
    for a, b in zip(*results):
        assert _rel(a, b) < 1e-5


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_dropout_runs_in_the_fused_kernels_with_the_philox_mask(dtype):
    """dropout_p > 0 takes the fused kernels: output and gradients equal the float64 math path
    with the mask the op's Philox draw gives (tests/test_attention_kernels_emulated.py holds the
    mask's definition and checks every kernel path on the CPU); no double backward."""
    from test_attention_kernels_emulated import _keep_reference, _reference_dropout
    arrays = _inputs((N, H, 70, 32), (N, H, 90, 32), (N, H, 90, 32), dtype)
    gout = numpy.random.default_rng(9).standard_normal((N, H, 70, 32)).astype(dtype).astype(numpy.float64)
    ts = [tinynet.tensor(a, dtype=dtype, device="cuda", requires_grad=True) for a in arrays]
    y = F.scaled_dot_product_attention(*ts, dropout_p=0.3, is_causal=True)
    assert _fused(y)
    p, factor, seed, offset, cells = y.grad_fn.drop
    assert (p, cells) == (0.3, 0) and factor == pytest.approx(1 / 0.7)
    y.backward(tinynet.tensor(gout, dtype=dtype, device="cuda"))
    keep = _keep_reference((N, H), 70, 90, 0.3, seed, offset)
    ref = _reference_dropout(*arrays, None, 1 / numpy.sqrt(32), True, gout, keep / 0.7)
    for name, a, b in zip(("out", "dq", "dk", "dv"), [y] + [t.grad for t in ts], ref):
        assert _rel(a.numpy(force=True), b) < TOL[dtype], name
    y2 = F.scaled_dot_product_attention(*ts, dropout_p=0.3, is_causal=True)
    (gq,) = tinynet.autograd.grad((y2 * y2).sum(), [ts[0]], create_graph=True)
    with pytest.raises(tinynet.errors.AutogradError):
        gq.sum().backward()


@pytest.mark.parametrize("what", ["float64", "head_dim_160", "dropout_float_mask_grad"])
def test_fallbacks_to_the_generic_code(monkeypatch, what):
    dtype, E, p = {"dropout_float_mask_grad": ("float32", 16, 0.3), "float64": ("float64", 16, 0.0),
                   "head_dim_160": ("float32", 160, 0.0)}[what]
    arrays = _inputs((N, H, 37, E), (N, H, 53, E), (N, H, 53, E), dtype)
    results = []
    for kernels in (True, False):
        monkeypatch.setattr(backend, "kernels_enabled", kernels)
        ts = [tinynet.tensor(a, dtype=dtype, device="cuda", requires_grad=True) for a in arrays]
        mask = [tinynet.tensor(_float_mask((53,)), dtype=dtype, device="cuda", requires_grad=True)] if p else []
        tinynet.manual_seed(0)  # the same dropout mask on both paths
        y = F.scaled_dot_product_attention(*ts, *mask, dropout_p=p, is_causal=not p)
        ts += mask
        assert not _fused(y)
        y.sum().backward()
        results.append([y.numpy(force=True)] + [t.grad.numpy(force=True) for t in ts])
    for a, b in zip(*results):
        assert numpy.isfinite(a).all()
        numpy.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


# The tile paths of the kernels (attention.cu): interior tiles without per-element tests (whole
# 64 x 64 tiles, no mask, below the causal diagonal), edge tiles (lengths not multiples of 64,
# causal with L != S, masks), the narrow kernels (..._d64: both head dims <= 64, the fixed
# operand kept in shared memory) and the wide ones (a head dim over 64: Q/K kept only when E <= 64),
# 16-byte loads (rows 4-element aligned) and scalar ones (odd head dims).
TILE_CASES = [
    ("interior_256_E64", (N, H, 256, 64), (N, H, 256, 64), (N, H, 256, 64), None, {}),
    ("interior_causal_256_E64", (N, H, 256, 64), (N, H, 256, 64), (N, H, 256, 64), None, {"is_causal": True}),
    ("edge_causal_200_300", (N, H, 200, 64), (N, H, 300, 64), (N, H, 300, 64), None, {"is_causal": True}),
    ("edge_causal_300_130", (N, H, 300, 32), (N, H, 130, 32), (N, H, 130, 48), None, {"is_causal": True}),
    ("bool_mask_whole_tiles", (N, H, 128, 64), (N, H, 192, 64), (N, H, 192, 64), _bool_mask((128, 192)), {}),
    # PyTorch refuses attn_mask with is_causal: the causal pattern is in the additive mask (-inf above the diagonal)
    ("float_mask_lower", (N, H, 130, 64), (N, H, 130, 64), (N, H, 130, 64),
     numpy.where(numpy.tri(130, dtype=bool), _float_mask((130, 130)), -numpy.inf), {}),
    ("wide_E64_Ev128", (N, H, 128, 64), (N, H, 200, 64), (N, H, 200, 128), None, {"is_causal": True}),
    ("wide_E96_Ev40", (N, H, 130, 96), (N, H, 70, 96), (N, H, 70, 40), None, {}),
    ("odd_E45_Ev33_mask", (3, 5, 77, 45), (3, 5, 77, 45), (3, 5, 77, 33), _bool_mask((77, 77)), {}),
    ("gqa_interior", (N, 4, 128, 64), (N, 2, 128, 64), (N, 2, 128, 64), None, {"enable_gqa": True,
                                                                              "is_causal": True}),
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("case", TILE_CASES, ids=[c[0] for c in TILE_CASES])
def test_tile_paths_match_the_float64_math_path(monkeypatch, case, dtype):
    _, qs, ks, vs, mask, kw = case
    arrays = _inputs(qs, ks, vs, dtype)
    if mask is not None and mask.dtype != numpy.bool_:
        mask = mask.astype(dtype).astype(numpy.float64)
    fused, ours = _run(monkeypatch, arrays, mask, kw, dtype, kernels=True)
    assert fused, "the fused kernels did not run"
    generic, ref = _run(monkeypatch, arrays, mask, kw, "float64", kernels=False)  # the math path, float64
    assert not generic
    for name, a, b in zip(("out", "dq", "dk", "dv"), ours, ref):
        assert a.dtype == numpy.dtype(dtype) and numpy.isfinite(a).all(), name
        assert _rel(a, b) < TOL[dtype], f"{name}: relative error {_rel(a, b):.2e} against float64"


def test_the_gpt_shape_is_deterministic(monkeypatch):
    """Every gradient element is written by one thread in a fixed order: two runs agree bit for bit."""
    arrays = _inputs((8, 6, 256, 64), (8, 6, 256, 64), (8, 6, 256, 64), "float32")
    first = _run(monkeypatch, arrays, None, {"is_causal": True}, "float32", kernels=True)
    second = _run(monkeypatch, arrays, None, {"is_causal": True}, "float32", kernels=True)
    assert first[0] and second[0]
    for a, b in zip(first[1], second[1]):
        assert numpy.array_equal(a, b)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_aligned_rows_with_odd_head_dims(monkeypatch, dtype):
    """Views whose rows are 4-element aligned (16-byte loads) with head dims ending inside a group of 4."""
    r = numpy.random.default_rng(6)
    arrays = [r.standard_normal(s).astype(dtype).astype(numpy.float64) for s in
              ((N, H, 77, 48), (N, H, 90, 48), (N, H, 90, 36))]
    results = []
    for kernels, dt in ((True, dtype), (False, "float64")):
        monkeypatch.setattr(backend, "kernels_enabled", kernels)
        ts = [tinynet.tensor(a, dtype=dt, device="cuda", requires_grad=True) for a in arrays]
        y = F.scaled_dot_product_attention(ts[0][..., :47], ts[1][..., :47], ts[2][..., :35], is_causal=True)
        assert _fused(y) == kernels
        y.sum().backward()
        results.append([y.numpy(force=True)] + [t.grad.numpy(force=True) for t in ts])
    monkeypatch.setattr(backend, "kernels_enabled", True)
    for a, b in zip(*results):
        assert numpy.isfinite(a).all() and _rel(a, b) < TOL[dtype]
