"""The inference path: BatchNorm folding against torch.nn.utils.fusion on the same weights,
the model-level fuse_conv_bn, half/bfloat16 inference of the reference nets, and
inference_mode recording nothing."""
import gc
import os
import sys

import numpy
import pytest

import tinynet
import tinynet.nn as nn
from tinynet.autograd import Op
from tinynet.nn.utils import fuse_conv_bn, fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval
from tinynet.nn.utils.fusion import FusionError

torch = pytest.importorskip("torch")
from torch.nn.utils import fusion as tfusion  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
import models  # noqa: E402


def _stats(bn, tbn, rng):
    """Give both BatchNorms the same non-trivial running statistics and affine parameters."""
    c = bn.num_features
    vals = {"running_mean": rng.standard_normal(c), "running_var": rng.random(c) + 0.5,
            "weight": rng.standard_normal(c), "bias": rng.standard_normal(c)}
    for k, v in vals.items():
        v = v.astype(numpy.float32)
        getattr(bn, k).data = tinynet.tensor(v)
        getattr(tbn, k).data = torch.tensor(v)


def _copy(mod, tmod):
    for k, v in tmod.state_dict().items():
        if v.dtype.is_floating_point:
            getattr(mod, k).data = tinynet.tensor(v.numpy())


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("kind", ["conv2d", "conv1d", "conv_transpose2d"])
def test_fuse_conv_bn_eval_matches_torch(kind, bias, cpu_default_device):
    rng = numpy.random.default_rng(0)
    make = {"conv2d": (nn.Conv2d, torch.nn.Conv2d, nn.BatchNorm2d, torch.nn.BatchNorm2d, (2, 3, 7, 7)),
            "conv1d": (nn.Conv1d, torch.nn.Conv1d, nn.BatchNorm1d, torch.nn.BatchNorm1d, (2, 3, 9)),
            "conv_transpose2d": (nn.ConvTranspose2d, torch.nn.ConvTranspose2d, nn.BatchNorm2d, torch.nn.BatchNorm2d,
                                 (2, 3, 5, 5))}[kind]
    Conv, TConv, BN, TBN, shape = make
    tconv, tbn = TConv(3, 4, 3, bias=bias).eval(), TBN(4).eval()
    conv, bn = Conv(3, 4, 3, bias=bias).eval(), BN(4).eval()
    _copy(conv, tconv)
    _stats(bn, tbn, rng)
    transpose = kind.startswith("conv_transpose")
    fused = fuse_conv_bn_eval(conv, bn, transpose=transpose)
    tfused = tfusion.fuse_conv_bn_eval(tconv, tbn, transpose=transpose)
    numpy.testing.assert_allclose(fused.weight.detach().numpy(), tfused.weight.detach().numpy(), rtol=1e-6, atol=1e-7)
    numpy.testing.assert_allclose(fused.bias.detach().numpy(), tfused.bias.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert fused.weight.requires_grad and fused is not conv and conv.weight is not fused.weight
    x = rng.standard_normal(shape).astype(numpy.float32)
    with tinynet.no_grad():
        want = bn(conv(tinynet.tensor(x))).numpy()
        numpy.testing.assert_allclose(fused(tinynet.tensor(x)).numpy(), want, rtol=1e-5, atol=1e-5)


def test_fuse_weights_and_linear_match_torch(cpu_default_device):
    rng = numpy.random.default_rng(1)
    w, b = rng.standard_normal((4, 3, 2, 2)).astype(numpy.float32), rng.standard_normal(4).astype(numpy.float32)
    rm, rv = rng.standard_normal(4).astype(numpy.float32), (rng.random(4) + 0.5).astype(numpy.float32)
    g, beta = rng.standard_normal(4).astype(numpy.float32), rng.standard_normal(4).astype(numpy.float32)
    for cb, bw, bb in ((b, g, beta), (None, None, None)):
        T = lambda a: None if a is None else tinynet.tensor(a)  # noqa: E731
        P = lambda a: None if a is None else torch.tensor(a)  # noqa: E731
        mine = fuse_conv_bn_weights(T(w), T(cb), T(rm), T(rv), 1e-3, T(bw), T(bb))
        theirs = tfusion.fuse_conv_bn_weights(P(w), P(cb), P(rm), P(rv), 1e-3, P(bw), P(bb))
        for m, t in zip(mine, theirs):
            assert isinstance(m, nn.Parameter)
            numpy.testing.assert_allclose(m.detach().numpy(), t.detach().numpy(), rtol=1e-6, atol=1e-7)
    tlin, tbn = torch.nn.Linear(3, 4).eval(), torch.nn.BatchNorm1d(4).eval()
    lin, bn = nn.Linear(3, 4).eval(), nn.BatchNorm1d(4).eval()
    _copy(lin, tlin)
    _stats(bn, tbn, rng)
    fused, tfused = fuse_linear_bn_eval(lin, bn), tfusion.fuse_linear_bn_eval(tlin, tbn)
    numpy.testing.assert_allclose(fused.weight.detach().numpy(), tfused.weight.detach().numpy(), rtol=1e-6, atol=1e-7)
    numpy.testing.assert_allclose(fused.bias.detach().numpy(), tfused.bias.detach().numpy(), rtol=1e-6, atol=1e-7)


def test_fusion_refuses_training_mode_and_bad_pairs(cpu_default_device):
    conv, bn = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)
    with pytest.raises(ValueError, match="eval") as e:
        fuse_conv_bn_eval(conv, bn)
    assert isinstance(e.value, FusionError)
    with pytest.raises(FusionError):
        fuse_linear_bn_eval(nn.Linear(3, 4), nn.BatchNorm1d(4))
    with pytest.raises(FusionError, match="output channels"):
        fuse_conv_bn_eval(conv.eval(), nn.BatchNorm2d(5).eval())
    with pytest.raises(FusionError, match="running statistics"):
        fuse_conv_bn_eval(conv.eval(), nn.BatchNorm2d(4, track_running_stats=False).eval())
    with pytest.raises(TypeError):
        fuse_conv_bn_eval(nn.Linear(3, 4).eval(), bn.eval())
    model = models.bn_convnet()
    with pytest.raises(FusionError, match="eval"):
        fuse_conv_bn(model)
    with pytest.raises(ValueError):
        fuse_conv_bn(model.eval(), pairs=[("nope", "0.1")])


def _trained_stats(model, x):
    """A few training-mode forwards so the running statistics are not the initial ones."""
    model.train()
    with tinynet.no_grad():
        for k in range(3):
            model(x * (1 + k))
    return model.eval()


def test_fuse_conv_bn_model_equals_unfused(cpu_default_device):
    x = tinynet.randn(16, 1, 28, 28)
    model = _trained_stats(models.bn_convnet(), x)
    with tinynet.inference_mode():
        want = model(x).numpy()
        fused = fuse_conv_bn(model)
        got = fused(x).numpy()
    assert fused is model
    kinds = [type(m).__name__ for m in model[0]]
    assert kinds.count("BatchNorm2d") == 0 and kinds.count("Identity") == 2, kinds
    numpy.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_fuse_named_pairs(cpu_default_device):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.bn1 = nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3)
            self.block = nn.Sequential(nn.Conv2d(3, 3, 1), nn.BatchNorm2d(3), nn.ReLU())

        def forward(self, x):
            return self.block(self.bn1(self.conv1(x)).relu())

    x = tinynet.randn(4, 2, 6, 6)
    net = _trained_stats(Net(), x)
    with tinynet.no_grad():
        want = net(x).numpy()
        fuse_conv_bn(net, pairs=[("conv1", "bn1")])
        assert isinstance(net.bn1, nn.Identity) and isinstance(net.block[1], nn.Identity)
        numpy.testing.assert_allclose(net(x).numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["convnet", "mlp", "bn_convnet"])
def test_low_precision_inference_of_reference_nets(name, dtype, device):
    """model.half() / .to(bfloat16) inference on the device: the outputs stay close to float32's."""
    dt = getattr(tinynet, dtype)
    if device == "cuda" and dtype == "bfloat16" and not tinynet.backend.cupy_has_bfloat16():
        pytest.skip("this CuPy has no bfloat16")
    build = models.bn_convnet if name == "bn_convnet" else (lambda: models.tinynet_model(name))
    x = tinynet.randn(8, 1, 28, 28, device=device)
    model = build().to(device)
    if name == "bn_convnet":
        model = _trained_stats(model, x)
    model.eval()
    low = build().to(device).eval()
    low.load_state_dict(model.state_dict())
    low = low.half() if dtype == "float16" else low.to(dt)
    with tinynet.inference_mode():
        want = model(x).cpu().numpy()
        got = low(x.to(dt))
    assert got.dtype == dt
    tol = 0.02 if dtype == "float16" else 0.1
    numpy.testing.assert_allclose(got.float().cpu().numpy(), want, rtol=tol, atol=tol)


def test_inference_mode_records_and_saves_nothing(device):
    model = models.bn_convnet().to(device).eval()
    x = tinynet.randn(4, 1, 28, 28, device=device)
    seen = []
    original = Op.save_for_backward

    def spy(self, *values):
        seen.append((type(self).__name__, tuple(self.needs_input_grad)))
        return original(self, *values)

    gc.collect()
    Op.save_for_backward = spy
    try:
        with tinynet.inference_mode():
            assert tinynet.is_inference_mode_enabled()
            y = model(x)
    finally:
        Op.save_for_backward = original
    assert y.grad_fn is None and not y.requires_grad
    assert all(not any(needs) for _, needs in seen), seen  # forward was told no input needs a gradient
    gc.collect()
    alive = [o for o in gc.get_objects() if issubclass(type(o), Op) and o.saved]
    assert alive == []  # no op (and nothing it saved) outlives the forward
    y2 = model(x)  # the same model with recording on keeps its tape
    assert y2.grad_fn is not None
