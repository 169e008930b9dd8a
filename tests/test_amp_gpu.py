"""Mixed precision on the GPU (gpu marker; skipped without CuPy and a GPU): float16 and
bfloat16 convolutions (cuDNN, float32 accumulation) and linear layers (cuBLAS) against
float32 references, forward and backward; autocast("cuda") output dtypes by the CUDA
table; an autocast + GradScaler training run of the reference convnet; GradScaler's
overflow skip on the GPU; bfloat16 either working or refused with a typed error."""
import os
import sys

import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet.errors import AutocastError, UnsupportedDTypeError
from tinynet.ops import autocast_lists

pytestmark = pytest.mark.gpu
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))

HALF = ["float16", "bfloat16"]
TOL = {"float16": 5e-3, "bfloat16": 3e-2}  # relative to the output's scale


def _needs(dtype):
    if dtype == "bfloat16" and not tinynet.backend.cupy_has_bfloat16():
        pytest.skip("this CuPy has no bfloat16 (test_bfloat16_refused_without_cupy_support covers it)")
    return getattr(tinynet, dtype)


def _rel(a, b):
    a, b = numpy.asarray(a, numpy.float64), numpy.asarray(b, numpy.float64)
    return float(numpy.abs(a - b).max() / max(numpy.abs(b).max(), 1e-12))


def _pair(rng, *shape):
    return rng.standard_normal(shape).astype(numpy.float32)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("bias", [True, False])
def test_half_conv2d_matches_float32(dtype, bias):
    """cuDNN in float16/bfloat16 (float32 accumulation): forward, input, weight and bias
    gradients within the half type's rounding of the float32 results."""
    dt = _needs(dtype)
    rng = numpy.random.default_rng(0)
    x, w, b = _pair(rng, 16, 32, 14, 14), _pair(rng, 64, 32, 3, 3) * 0.1, _pair(rng, 64)
    g = _pair(rng, 16, 64, 14, 14)
    outs = {}
    for d in (tinynet.float32, dt):
        xt = tinynet.tensor(x, device="cuda").to(d).requires_grad_()
        wt = tinynet.tensor(w, device="cuda").to(d).requires_grad_()
        bt = tinynet.tensor(b, device="cuda").to(d).requires_grad_() if bias else None
        y = F.conv2d(xt, wt, bt, padding=1)
        assert y.dtype == d
        y.backward(tinynet.tensor(g, device="cuda").to(d))
        outs[d] = [y, xt.grad, wt.grad] + ([bt.grad] if bias else [])
    for ref, low in zip(outs[tinynet.float32], outs[dt]):
        assert low.dtype == dt
        assert _rel(low.detach().float().cpu().numpy(), ref.detach().cpu().numpy()) < TOL[dtype]


@pytest.mark.parametrize("dtype", HALF)
def test_half_linear_matches_float32(dtype):
    dt = _needs(dtype)
    rng = numpy.random.default_rng(1)
    x, w, b, g = _pair(rng, 512, 256), _pair(rng, 128, 256) * 0.05, _pair(rng, 128), _pair(rng, 512, 128)
    outs = {}
    for d in (tinynet.float32, dt):
        xt, wt, bt = (tinynet.tensor(a, device="cuda").to(d).requires_grad_() for a in (x, w, b))
        y = F.linear(xt, wt, bt)
        y.backward(tinynet.tensor(g, device="cuda").to(d))
        outs[d] = [y, xt.grad, wt.grad, bt.grad]
    for ref, low in zip(outs[tinynet.float32], outs[dt]):
        assert low.dtype == dt
        assert _rel(low.detach().float().cpu().numpy(), ref.detach().cpu().numpy()) < TOL[dtype]


def test_cuda_autocast_follows_the_cuda_table():
    """Under autocast("cuda") a float32 input to a "lower" op gives float16, to an "fp32" op
    float32, and float16 inputs to "fp32" ops are widened; binary_cross_entropy raises."""
    rng = numpy.random.default_rng(2)
    x = tinynet.tensor(_pair(rng, 8, 16), device="cuda")
    w = tinynet.tensor(_pair(rng, 4, 16), device="cuda")
    img = tinynet.tensor(_pair(rng, 2, 3, 8, 8), device="cuda")
    k = tinynet.tensor(_pair(rng, 5, 3, 3, 3), device="cuda")
    with tinynet.autocast("cuda"):
        h = F.linear(x, w)
        assert autocast_lists.CUDA["linear"] == "lower" and h.dtype == tinynet.float16
        assert F.conv2d(img, k).dtype == tinynet.float16
        assert (x @ x.T).dtype == tinynet.float16
        for fn in (lambda t: F.softmax(t, 1), lambda t: F.log_softmax(t, 1), tinynet.exp, tinynet.sum,
                   lambda t: F.layer_norm(t, (4,)), lambda t: t.pow(2)):
            assert fn(h).dtype == tinynet.float32
        assert F.relu(h).dtype == tinynet.float16  # not listed: runs in its input's dtype
        y = tinynet.tensor([0, 1, 2, 3, 0, 1, 2, 3], device="cuda")
        assert F.cross_entropy(h, y).dtype == tinynet.float32
        assert tinynet.dot(x[0], x[1].half()).dtype == tinynet.float32  # promote: the widest
        with pytest.raises(RuntimeError) as e:
            F.binary_cross_entropy(h.sigmoid(), h.sigmoid().detach())
        assert isinstance(e.value, AutocastError)
        bn = F.batch_norm(F.conv2d(img, k), tinynet.zeros(5, device="cuda"), tinynet.ones(5, device="cuda"))
        assert bn.dtype == tinynet.float16  # not listed for CUDA: float16 in, float16 out (float32 inside)


def test_autocast_grad_scaler_trains_the_reference_convnet():
    """30 steps of the reference convnet under autocast("cuda") + GradScaler on learnable
    synthetic data: the loss falls, parameters and gradients stay float32."""
    import models
    tinynet.manual_seed(0)
    model = models.tinynet_model("convnet").to("cuda")
    opt = tinynet.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    scaler = tinynet.amp.GradScaler("cuda")
    x = tinynet.randn(256, 1, 28, 28, device="cuda")
    y = (x.mean((1, 2, 3)) > 0).long() + 2 * (x[:, 0, :14].mean((1, 2)) > 0).long()
    losses = []
    for _ in range(30):
        opt.zero_grad()
        with tinynet.autocast("cuda"):
            loss = F.nll_loss(model(x), y)
        assert loss.dtype == tinynet.float32
        scaler.scale(loss).backward()
        assert all(p.grad.dtype == tinynet.float32 for p in model.parameters())
        scaler.step(opt)
        scaler.update()
        losses.append(loss.item())
    assert losses[-1] < 0.7 * losses[0], losses
    assert scaler.get_scale() >= 1.0


def test_grad_scaler_skips_an_overflowing_step_on_the_gpu():
    w = tinynet.ones(4, device="cuda", requires_grad=True)
    opt = tinynet.optim.SGD([w], lr=0.1)
    scaler = tinynet.amp.GradScaler("cuda", init_scale=2.0**10)
    scaler.scale((w * tinynet.tensor([1.0, float("inf"), 1.0, 1.0], device="cuda")).sum()).backward()
    scaler.step(opt)
    scaler.update()
    assert w.detach().cpu().numpy().tolist() == [1.0] * 4
    assert scaler.get_scale() == 2.0**9
    assert tinynet.backend.is_gpu_array(scaler._scale)  # the scale lives on the device


def test_bfloat16_refused_without_cupy_support():
    if tinynet.backend.cupy_has_bfloat16():
        x = tinynet.randn(3, device="cuda").to(tinynet.bfloat16)
        assert x.dtype == tinynet.bfloat16 and (x * 2).dtype == tinynet.bfloat16
        return
    with pytest.raises(UnsupportedDTypeError):
        tinynet.autocast("cuda", dtype=tinynet.bfloat16)
    with pytest.raises(UnsupportedDTypeError):
        tinynet.randn(3, device="cuda").to(tinynet.bfloat16)


@pytest.mark.parametrize("dtype", HALF)
def test_fused_half_inference_on_the_gpu(dtype):
    """fuse_conv_bn + .to(half) on the GPU: close to the unfused float32 model."""
    import models
    dt = _needs(dtype)
    model = models.bn_convnet().to("cuda")
    x = tinynet.randn(64, 1, 28, 28, device="cuda")
    with tinynet.no_grad():
        model(x)  # running statistics
    model.eval()
    with tinynet.inference_mode():
        want = model(x).cpu().numpy()
        fused = tinynet.nn.utils.fuse_conv_bn(model).to(dt)
        got = fused(x.to(dt)).float().cpu().numpy()
    assert _rel(got, want) < 5 * TOL[dtype]
