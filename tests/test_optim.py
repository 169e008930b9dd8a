"""Optimizers and schedulers: steps match PyTorch's exactly (float64)."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
from tinynet import optim

torch = pytest.importorskip("torch")

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.01, momentum=0.5)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-2)),
    ("SGD", dict(lr=0.05, momentum=0.9, dampening=0.3, weight_decay=1e-3)),
    ("SGD", dict(lr=0.05, momentum=0.9, maximize=True)),
    ("Adam", dict(lr=1e-2)),
    ("Adam", dict(lr=1e-2, betas=(0.8, 0.99), weight_decay=0.1, eps=1e-6)),
    ("Adam", dict(lr=1e-2, amsgrad=True)),
    ("AdamW", dict(lr=1e-2)),
    ("AdamW", dict(lr=1e-2, weight_decay=0.5, betas=(0.5, 0.9))),
]


@pytest.mark.parametrize("name,kw", CONFIGS, ids=[f"{n}-{i}" for i, (n, _) in enumerate(CONFIGS)])
def test_optimizer_matches_torch(name, kw, device):
    rng = numpy.random.default_rng(0)
    w0 = rng.standard_normal((4, 3))
    ours = tinynet.tensor(w0, device=device, requires_grad=True)
    theirs = torch.tensor(w0, requires_grad=True)
    opt_a = getattr(optim, name)([ours], **kw)
    opt_b = getattr(torch.optim, name)([theirs], **kw)
    for step in range(6):
        g = rng.standard_normal((4, 3))
        ours.grad = tinynet.tensor(g, device=device)
        theirs.grad = torch.tensor(g)
        opt_a.step()
        opt_b.step()
        numpy.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-12, atol=1e-14,
                                      err_msg=f"after step {step}")


def test_param_groups_and_zero_grad(device):
    a = nn.Linear(2, 2).to(device)
    b = nn.Linear(2, 1).to(device)
    opt = optim.SGD([{"params": a.parameters()}, {"params": b.parameters(), "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.9
    b(a(tinynet.ones(1, 2, device=device))).sum().backward()
    opt.step()
    opt.zero_grad(set_to_none=False)
    assert not a.weight.grad.numpy().any()
    opt.zero_grad()
    assert a.weight.grad is None
    assert "Parameter Group 1" in repr(opt)


def test_optimizer_state_dict_roundtrip(tmp_path, device):
    m = nn.Linear(3, 2).to(device)
    opt = optim.Adam(m.parameters(), lr=0.1)
    for _ in range(2):
        m(tinynet.ones(4, 3, device=device)).sum().backward()
        opt.step()
    path = tmp_path / "opt.npz"
    tinynet.save(opt.state_dict(), path)
    opt2 = optim.Adam(m.parameters(), lr=0.5)
    opt2.load_state_dict(tinynet.load(path, map_location=device))
    assert opt2.param_groups[0]["lr"] == 0.1
    st = opt2.state[id(m.weight)]
    assert st["step"] == 2
    numpy.testing.assert_allclose(tinynet.tensor(st["exp_avg"]).detach().numpy(),
                                  tinynet.tensor(opt.state[id(m.weight)]["exp_avg"]).detach().numpy())


def test_optimizer_bad_arguments():
    p = [tinynet.zeros(2, requires_grad=True)]
    with pytest.raises(ValueError, match="learning rate"):
        optim.SGD(p, lr=-1)
    with pytest.raises(ValueError, match="nesterov"):
        optim.SGD(p, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="betas"):
        optim.Adam(p, betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="empty"):
        optim.SGD([], lr=0.1)
    with pytest.raises(TypeError):
        optim.SGD(tinynet.zeros(2, requires_grad=True), lr=0.1)
    with pytest.raises(ValueError, match="does not require grad"):
        optim.SGD([tinynet.zeros(2)], lr=0.1)


SCHEDULES = [
    ("StepLR", dict(step_size=3, gamma=0.5), 10),
    ("CosineAnnealingLR", dict(T_max=8, eta_min=0.001), 8),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=20), 19),
    ("OneCycleLR", dict(max_lr=0.5, epochs=2, steps_per_epoch=7, anneal_strategy="linear", three_phase=True), 13),
]


@pytest.mark.parametrize("name,kw,steps", SCHEDULES, ids=[s[0] + str(i) for i, s in enumerate(SCHEDULES)])
@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
def test_schedulers_match_torch(name, kw, steps, opt_name):
    ours = tinynet.zeros(2, requires_grad=True)
    theirs = torch.zeros(2, requires_grad=True)
    extra = {"momentum": 0.9} if opt_name == "SGD" else {}
    oa = getattr(optim, opt_name)([ours], lr=0.1, **extra)
    ob = getattr(torch.optim, opt_name)([theirs], lr=0.1, **extra)
    sa = getattr(optim.lr_scheduler, name)(oa, **kw)
    sb = getattr(torch.optim.lr_scheduler, name)(ob, **kw)
    for _ in range(steps):
        assert sa.get_last_lr() == pytest.approx(sb.get_last_lr(), rel=1e-12)
        key = "momentum" if opt_name == "SGD" else "betas"
        assert oa.param_groups[0][key] == pytest.approx(ob.param_groups[0][key], rel=1e-12)
        ob.step()
        sa.step()
        sb.step()


def test_onecycle_past_end_raises():
    o = optim.SGD([tinynet.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    s = optim.lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=2)
    s.step()
    with pytest.raises(ValueError, match="total_steps"):
        s.step()
