"""optim.lr_scheduler.CyclicLR against PyTorch's: learning rates and momentum (SGD momentum
and Adam's beta1) over 60 steps with two parameter groups, in every mode, with a custom
scale_fn, after a state_dict round trip, and its errors."""
import pytest

import tinynet
from helpers import torch
from tinynet import errors
from tinynet.optim import lr_scheduler


def _pair(opt_name, **sched_kw):
    mods = []
    for lib in (tinynet, torch):
        p1, p2 = lib.zeros(2, requires_grad=True), lib.zeros(3, requires_grad=True)
        groups = [{"params": [p1]}, {"params": [p2], "lr": 0.5}]
        opt = (lib.optim.SGD(groups, lr=0.1, momentum=0.9) if opt_name == "SGD"
               else lib.optim.Adam(groups, lr=0.1, betas=(0.9, 0.99)))
        mods.append((opt, lib.optim.lr_scheduler.CyclicLR(opt, **sched_kw)))
    return mods


def _trace(opt, sched, steps, beta):
    rows = []
    for _ in range(steps):
        opt.step()
        sched.step()
        rows.append([(g["lr"], g["betas"][0] if beta else g["momentum"]) for g in opt.param_groups])
    return rows


@pytest.mark.parametrize("opt_name", ["SGD", "Adam"])
@pytest.mark.parametrize("kw", [dict(mode="triangular"), dict(mode="triangular2", step_size_down=3),
                                dict(mode="exp_range", gamma=0.97), dict(scale_fn=lambda x: 0.5 ** x),
                                dict(scale_fn=lambda x: 1 / (1 + x), scale_mode="iterations"),
                                dict(cycle_momentum=False)])
def test_matches_torch(opt_name, kw):
    sched_kw = dict(base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=5, **kw)
    (o1, s1), (o2, s2) = _pair(opt_name, **sched_kw)
    beta = opt_name == "Adam"
    assert s1.get_last_lr() == pytest.approx(s2.get_last_lr(), rel=1e-12)
    ours, theirs = _trace(o1, s1, 60, beta), _trace(o2, s2, 60, beta)
    for a, b in zip(ours, theirs):
        for (lr1, m1), (lr2, m2) in zip(a, b):
            assert lr1 == pytest.approx(lr2, rel=1e-12, abs=1e-15) and m1 == pytest.approx(m2, rel=1e-12)


def test_state_dict_resumes_the_schedule():
    (o1, s1), _ = _pair("SGD", base_lr=0.01, max_lr=0.1, step_size_up=4, mode="triangular2")
    _trace(o1, s1, 7, False)
    state = s1.state_dict()
    (o2, s2), _ = _pair("SGD", base_lr=0.01, max_lr=0.1, step_size_up=4, mode="triangular2")
    s2.load_state_dict(state)
    o2.load_state_dict(o1.state_dict())
    assert _trace(o1, s1, 10, False) == _trace(o2, s2, 10, False)
    custom = _pair("SGD", base_lr=0.01, max_lr=0.1, scale_fn=lambda x: 1.0)[0][1]
    assert "_scale_fn_custom" not in custom.state_dict()  # a function cannot be saved


def test_errors():
    p = tinynet.zeros(2, requires_grad=True)
    with pytest.raises(errors.ArgumentError, match="mode is invalid and scale_fn is None"):
        lr_scheduler.CyclicLR(tinynet.optim.SGD([p], lr=0.1, momentum=0.9), 0.01, 0.1, mode="x")
    with pytest.raises(errors.ArgumentError, match="must support momentum or beta1"):
        lr_scheduler.CyclicLR(tinynet.optim.Adagrad([p], lr=0.1), 0.01, 0.1)
    with pytest.raises(errors.ArgumentError, match="one value per parameter group"):
        lr_scheduler.CyclicLR(tinynet.optim.SGD([p], lr=0.1, momentum=0.9), [0.01, 0.02], 0.1)
    with pytest.raises(errors.ArgumentError, match="step sizes must be positive"):
        lr_scheduler.CyclicLR(tinynet.optim.SGD([p], lr=0.1, momentum=0.9), 0.01, 0.1, step_size_up=0)
