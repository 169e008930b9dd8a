"""cuDNN convolution (cuDNN Frontend): it really runs, agrees with PyTorch over a grid of
configurations (float64-referenced, TF32 off), honours its settings, and falls back."""
import os
import subprocess
import sys

import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet import backend
from tinynet.kernels import cudnn as impl

gpu = pytest.mark.gpu


def test_cudnn_always_without_gpu_raises_backend_error():
    if backend.cupy is not None and tinynet.backends.cudnn.is_available():
        pytest.skip("cuDNN is usable here")
    r = subprocess.run([sys.executable, "-c", "import tinynet"], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, TINYNET_CUDNN="always"))
    assert r.returncode != 0 and "BackendError" in r.stderr and "TINYNET_CUDNN=always" in r.stderr


def test_bad_cudnn_policy_value():
    r = subprocess.run([sys.executable, "-c", "import tinynet"], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, TINYNET_CUDNN="sometimes"))
    assert r.returncode != 0 and "TINYNET_CUDNN" in r.stderr and "'sometimes'" in r.stderr


@pytest.fixture
def no_tf32(monkeypatch):
    monkeypatch.setattr(tinynet.backends.cudnn, "allow_tf32", False)
    import torch
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    return torch


GRID = {
    # name: (x shape, w shape, conv kwargs)
    **{f"conv1_b{n}": ((n, 1, 28, 28), (10, 1, 5, 5), {}) for n in (1, 64, 200, 1024)},
    **{f"conv2_b{n}": ((n, 10, 12, 12), (20, 10, 5, 5), {}) for n in (1, 64, 200, 1024)},
    "stride2": ((8, 3, 17, 15), (6, 3, 3, 3), dict(stride=2)),
    "padding1": ((8, 4, 13, 11), (5, 4, 3, 3), dict(padding=1)),
    "same": ((8, 4, 13, 11), (5, 4, 4, 3), dict(padding="same")),
    "dilation2": ((8, 4, 15, 13), (5, 4, 3, 3), dict(dilation=2, padding=2)),
    "groups2": ((8, 6, 11, 9), (8, 3, 3, 3), dict(groups=2, padding=1)),
    "depthwise": ((8, 6, 11, 9), (6, 1, 3, 3), dict(groups=6, padding=1)),
    "odd": ((3, 5, 19, 7), (4, 5, 5, 3), dict(stride=(2, 1), padding=(2, 1))),
}


def _rel(a, b):
    return float(numpy.abs(a - b).max() / max(numpy.abs(b).max(), 1e-30))


@gpu
@pytest.mark.parametrize("name", sorted(GRID))
def test_cudnn_matches_torch_float64_reference(name, no_tf32):
    torch = no_tf32
    xs, ws, kw = GRID[name]
    rng = numpy.random.default_rng(0)
    x, w = rng.standard_normal(xs).astype(numpy.float32), rng.standard_normal(ws).astype(numpy.float32)
    before = dict(impl.stats)
    xt = tinynet.tensor(x, device="cuda", requires_grad=True)
    wt = tinynet.tensor(w, device="cuda", requires_grad=True)
    y = F.conv2d(xt, wt, **kw)
    gy = rng.standard_normal(y.shape).astype(numpy.float32)
    y.backward(tinynet.tensor(gy, device="cuda"))
    assert impl.stats["fprop"] > before["fprop"], "cuDNN fprop did not run"
    assert impl.stats["dgrad"] > before["dgrad"] and impl.stats["wgrad"] > before["wgrad"]
    tx = torch.tensor(x, dtype=torch.float64, device="cuda", requires_grad=True)
    tw = torch.tensor(w, dtype=torch.float64, device="cuda", requires_grad=True)
    ty = torch.nn.functional.conv2d(tx, tw, **kw)
    ty.backward(torch.tensor(gy, dtype=torch.float64, device="cuda"))
    for ours, ref in ((y, ty), (xt.grad, tx.grad), (wt.grad, tw.grad)):
        assert _rel(ours.detach().numpy().astype(numpy.float64), ref.detach().cpu().numpy()) <= 1e-5


@gpu
def test_engine_is_observable_and_info_reports_cudnn():
    x = tinynet.randn(2, 3, 8, 8, device="cuda")
    F.conv2d(x, tinynet.randn(4, 3, 3, 3, device="cuda"))
    assert impl.engines and all(set(v) == {"fprop", "dgrad", "wgrad"} for v in impl.engines.values())
    line = tinynet.backends.cudnn.status_line()
    assert "cuDNN" in line and str(impl.version()) in line
    assert tinynet.backends.cudnn.is_available()


@gpu
@pytest.mark.parametrize("setting", ["benchmark", "deterministic"])
def test_settings_keep_results(setting, monkeypatch, no_tf32):
    rng = numpy.random.default_rng(1)
    x = tinynet.tensor(rng.standard_normal((16, 4, 12, 12)), dtype="float32", device="cuda")
    w = tinynet.tensor(rng.standard_normal((8, 4, 3, 3)), dtype="float32", device="cuda")
    plain = F.conv2d(x, w, padding=1).detach().numpy()
    monkeypatch.setattr(tinynet.backends.cudnn, setting, True)
    n = len(impl.engines)
    tuned = F.conv2d(x, w, padding=1).detach().numpy()
    assert len(impl.engines) == n + 1  # a separate cached configuration
    numpy.testing.assert_allclose(tuned, plain, rtol=1e-5, atol=1e-5)


@gpu
def test_fallback_when_cudnn_declines(monkeypatch):
    rng = numpy.random.default_rng(2)
    x = rng.standard_normal((4, 3, 9, 9)).astype(numpy.float32)
    w = rng.standard_normal((5, 3, 3, 3)).astype(numpy.float32)
    monkeypatch.setattr(impl, "plans", lambda *a, **k: None)
    before = dict(impl.stats)
    xt = tinynet.tensor(x, device="cuda", requires_grad=True)
    y = F.conv2d(xt, tinynet.tensor(w, device="cuda"), stride=2)
    y.sum().backward()
    assert impl.stats == before  # nothing ran through cuDNN
    cpu_x = tinynet.tensor(x, device="cpu", requires_grad=True)
    cy = F.conv2d(cpu_x, tinynet.tensor(w, device="cpu"), stride=2)
    cy.sum().backward()
    numpy.testing.assert_allclose(y.detach().numpy(), cy.detach().numpy(), rtol=1e-4, atol=1e-4)
    numpy.testing.assert_allclose(xt.grad.numpy(), cpu_x.grad.numpy(), rtol=1e-4, atol=1e-4)


@gpu
def test_disabled_setting_uses_im2col(monkeypatch):
    monkeypatch.setattr(tinynet.backends.cudnn, "enabled", False)
    before = dict(impl.stats)
    F.conv2d(tinynet.randn(2, 3, 8, 8, device="cuda"), tinynet.randn(4, 3, 3, 3, device="cuda"))
    assert impl.stats == before


@gpu
def test_float16_conv(no_tf32):
    torch = no_tf32
    rng = numpy.random.default_rng(3)
    x = rng.standard_normal((8, 4, 12, 12)).astype(numpy.float16)
    w = rng.standard_normal((8, 4, 3, 3)).astype(numpy.float16)
    y = F.conv2d(tinynet.tensor(x, device="cuda"), tinynet.tensor(w, device="cuda"), padding=1)
    assert y.dtype == numpy.float16
    ref = torch.nn.functional.conv2d(torch.tensor(x, dtype=torch.float64), torch.tensor(w, dtype=torch.float64),
                                     padding=1)
    assert _rel(y.detach().numpy().astype(numpy.float64), ref.detach().numpy()) <= 2e-3


@gpu
def test_benchmark_limit_times_at_most_that_many_candidates(monkeypatch, no_tf32):
    """PyTorch's ``cudnn.benchmark_limit``: candidates timed in cuDNN's heuristic order up to the
    limit (0: all); every limit keeps the result."""
    rng = numpy.random.default_rng(3)
    x = tinynet.tensor(rng.standard_normal((8, 3, 20, 20)), dtype="float32", device="cuda")
    w = tinynet.tensor(rng.standard_normal((6, 3, 5, 5)), dtype="float32", device="cuda")
    plain = F.conv2d(x, w, stride=2).detach().numpy()
    timed = []
    original = impl._time_candidate
    monkeypatch.setattr(impl, "_time_candidate", lambda *a, **k: timed.append(a[3]) or original(*a, **k))
    monkeypatch.setattr(tinynet.backends.cudnn, "benchmark", True)
    counts = {}
    for limit in (1, 3, 0):
        monkeypatch.setattr(tinynet.backends.cudnn, "benchmark_limit", limit)
        timed.clear()
        out = F.conv2d(x, w, stride=2).detach().numpy()
        counts[limit] = len(timed)
        numpy.testing.assert_allclose(out, plain, rtol=1e-5, atol=1e-5)
    assert counts[1] == 3 and 3 <= counts[3] <= 9 and counts[0] >= counts[3]  # fprop, dgrad, wgrad each
    monkeypatch.setattr(tinynet.backends.cudnn, "benchmark_limit", -1)
    with pytest.raises(tinynet.errors.ArgumentError, match="benchmark_limit"):
        F.conv2d(x, w, stride=3)
