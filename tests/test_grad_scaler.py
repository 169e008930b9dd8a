"""tinynet.amp.GradScaler against torch.amp.GradScaler("cpu"): the scale trajectory over steps
with injected infs/NaNs, the parameters, unscale_ before clipping, the order errors,
state_dict and the disabled pass-through (one body per device)."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet.errors import ArgumentError, GradScalerError

torch = pytest.importorskip("torch")


def _models(device):
    rng = numpy.random.default_rng(0)
    w = rng.standard_normal((3, 4)).astype(numpy.float32)
    b = rng.standard_normal(3).astype(numpy.float32)
    tm = tinynet.nn.Linear(4, 3)
    tm.weight.data = tinynet.tensor(w)
    tm.bias.data = tinynet.tensor(b)
    tm.to(device)
    pm = torch.nn.Linear(4, 3)
    with torch.no_grad():
        pm.weight.copy_(torch.tensor(w))
        pm.bias.copy_(torch.tensor(b))
    return tm, pm


def _scalers(device, **kw):
    kind = "cuda" if device == "cuda" else "cpu"
    return tinynet.amp.GradScaler(kind, **kw), torch.amp.GradScaler("cpu", **kw)


BAD = {2: float("inf"), 3: float("nan"), 9: float("-inf")}  # step -> value injected into a gradient


def test_scale_trajectory_and_parameters_match_torch(device):
    tm, pm = _models(device)
    ts, ps = _scalers(device, init_scale=2.0**10, growth_interval=3)
    topt = tinynet.optim.SGD(tm.parameters(), lr=0.1, momentum=0.9)
    popt = torch.optim.SGD(pm.parameters(), lr=0.1, momentum=0.9)
    rng = numpy.random.default_rng(1)
    scales = []
    for step in range(14):
        x = rng.standard_normal((5, 4)).astype(numpy.float32)
        y = rng.standard_normal((5, 3)).astype(numpy.float32)
        topt.zero_grad()
        popt.zero_grad()
        ts.scale(F.mse_loss(tm(tinynet.tensor(x, device=device)), tinynet.tensor(y, device=device))).backward()
        ps.scale(torch.nn.functional.mse_loss(pm(torch.tensor(x)), torch.tensor(y))).backward()
        if step in BAD:
            tm.weight.grad[0, 1] = BAD[step]
            pm.weight.grad[0, 1] = BAD[step]
        ts.step(topt)
        ps.step(popt)
        ts.update()
        ps.update()
        scales.append((ts.get_scale(), ps.get_scale(), ts._get_growth_tracker(), ps._get_growth_tracker()))
    for mine, theirs, t1, t2 in scales:
        assert mine == theirs and t1 == t2, scales
    assert len({s[0] for s in scales}) > 2  # it backed off and grew
    numpy.testing.assert_allclose(tm.weight.detach().cpu().numpy(), pm.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(tm.bias.detach().cpu().numpy(), pm.bias.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert ts.state_dict() == ps.state_dict()


def test_unscale_before_clipping_and_order_errors(device):
    tm, pm = _models(device)
    ts, ps = _scalers(device)
    topt = tinynet.optim.SGD(tm.parameters(), lr=0.1)
    popt = torch.optim.SGD(pm.parameters(), lr=0.1)
    x = numpy.ones((2, 4), numpy.float32)
    with pytest.raises(GradScalerError):  # nothing scaled yet
        ts.step(topt)
    ts.scale(tm(tinynet.tensor(x, device=device)).sum()).backward()
    ps.scale(pm(torch.tensor(x)).sum()).backward()
    ts.unscale_(topt)
    ps.unscale_(popt)
    numpy.testing.assert_allclose(tm.weight.grad.cpu().numpy(), pm.weight.grad.numpy(), rtol=1e-6)
    tinynet.nn.utils.clip_grad_norm_(tm.parameters(), 0.5)
    torch.nn.utils.clip_grad_norm_(pm.parameters(), 0.5)
    with pytest.raises(RuntimeError, match="already been called") as e:
        ts.unscale_(topt)
    assert isinstance(e.value, GradScalerError)
    with pytest.raises(GradScalerError, match="closure"):
        ts.step(topt, closure=lambda: 0)
    ts.step(topt)  # does not unscale a second time
    ps.step(popt)
    numpy.testing.assert_allclose(tm.weight.detach().cpu().numpy(), pm.weight.detach().numpy(), rtol=1e-5)
    with pytest.raises(GradScalerError, match="after step"):
        ts.unscale_(topt)
    with pytest.raises(GradScalerError, match="already been called since the last update"):
        ts.step(topt)
    ts.update()
    with pytest.raises(GradScalerError, match="No inf checks|no inf checks"):
        ts.update()


def test_state_dict_roundtrip_new_scale_and_errors(device):
    ts, ps = _scalers(device, init_scale=8.0, growth_interval=5)
    x = tinynet.ones(2, device=device, requires_grad=True)
    ts.scale(x.sum())
    ts.update(new_scale=4.0)
    assert ts.get_scale() == 4.0
    ts.update(new_scale=tinynet.tensor(2.0, device=device))
    assert ts.get_scale() == 2.0
    sd = ts.state_dict()
    assert set(sd) == set(ps.state_dict())
    other = tinynet.amp.GradScaler("cuda" if device == "cuda" else "cpu")
    other.load_state_dict(sd)
    assert other.get_scale() == 2.0 and other.get_growth_interval() == 5
    with pytest.raises(GradScalerError):
        other.load_state_dict({})
    with pytest.raises(ArgumentError):
        tinynet.amp.GradScaler("cpu", growth_factor=1.0)
    with pytest.raises(ArgumentError):
        tinynet.amp.GradScaler("cpu", backoff_factor=1.5)
    with pytest.raises(TypeError):
        ts.scale("loss")
    lst = ts.scale([x.sum(), (x * 2).sum()])
    assert isinstance(lst, list) and lst[1].item() == 8.0


def test_fp16_gradients_refused_and_loss_dtype_kept(device):
    w = tinynet.ones(3, dtype=tinynet.float16, device=device, requires_grad=True)
    opt = tinynet.optim.SGD([w], lr=0.1)
    ts, ps = _scalers(device, init_scale=1024.0)  # 2**16 overflows float16 (as in PyTorch)
    scaled = ts.scale((w * 2).sum())
    pw = torch.ones(3, dtype=torch.float16, requires_grad=True)
    assert str(scaled.dtype) == str(ps.scale((pw * 2).sum()).dtype).replace("torch.", "")
    assert ts.scale(w * 2).dtype == tinynet.float16  # a 0-d float32 scale does not widen a float16 tensor
    scaled.backward()
    with pytest.raises(ValueError, match="FP16"):
        ts.unscale_(opt)


def test_disabled_is_a_pass_through(device):
    ts = tinynet.amp.GradScaler("cpu", enabled=False)
    ps = torch.amp.GradScaler("cpu", enabled=False)
    w = tinynet.ones(2, device=device, requires_grad=True)
    opt = tinynet.optim.SGD([w], lr=1.0)
    loss = (w * 3).sum()
    assert ts.scale(loss) is loss
    loss.backward()
    ts.step(opt)
    ts.update()
    assert w.detach().cpu().numpy().tolist() == [-2.0, -2.0]
    assert ts.get_scale() == ps.get_scale() == 1.0 and ts.state_dict() == ps.state_dict() == {}
    assert not ts.is_enabled() and tinynet.amp.GradScaler("cpu").is_enabled()


@pytest.mark.skipif(tinynet.cuda.is_available(), reason="checks the no-GPU behaviour")
def test_cuda_scaler_without_gpu_disables_itself():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        s = tinynet.amp.GradScaler()
    assert not s.is_enabled()


def test_failed_capture_puts_the_scaler_state_back(device):
    """Under a CUDA graph capture, step() with an optimizer that reads the inf flag on the host
    (Adagrad; SGD/Adam/AdamW read it on the device: test_grad_scaler_graphs.py) raises
    GraphCaptureError and the capture's abort restores the scaler's bookkeeping: the eager re-run of the
    step (tinynet.compile's fallback) then unscales and steps as PyTorch does. The capture here
    is tinynet's capture state without a graph (tinynet.capture), so it runs on both backends."""
    from tinynet import capture
    from tinynet.errors import GraphCaptureError
    tm, pm = _models(device)
    ts, ps = _scalers(device)
    topt = tinynet.optim.Adagrad(tm.parameters(), lr=0.1)
    popt = torch.optim.Adagrad(pm.parameters(), lr=0.1)
    x = numpy.ones((2, 4), numpy.float32)
    ts.scale(tm(tinynet.tensor(x, device=device)).sum()).backward()
    ps.scale(pm(torch.tensor(x)).sum()).backward()
    grads = [p.grad.clone() for p in tm.parameters()]
    cap = capture.Capture(numpy)
    with pytest.raises(GraphCaptureError, match="GradScaler.step"):
        with capture.capturing(cap):
            ts.unscale_(topt)
            ts.step(topt)
    cap.abort()
    for p, g in zip(tm.parameters(), grads):  # (the real capture recorded the unscale without running it)
        p.grad = g
    ts.unscale_(topt)  # not "already been called": the bookkeeping is back
    ts.step(topt)
    ts.update()
    ps.unscale_(popt)
    ps.step(popt)
    ps.update()
    numpy.testing.assert_allclose(tm.weight.detach().cpu().numpy(), pm.weight.detach().numpy(), rtol=1e-5)
    assert ts.get_scale() == ps.get_scale()
