"""optim.Rprop and optim.ASGD against PyTorch's: parameters after 50 steps with two parameter
groups (per-group options), maximize and weight decay, float32 and float64, on every backend;
state_dict round trips and argument errors."""
import numpy
import pytest

import tinynet
from helpers import rng, torch
from tinynet import errors

R = rng(161)


def _run(lib, name, device, dtype, steps, group_kw, **kw):
    start = rng(7)
    a, b = start.standard_normal((3, 4)), start.standard_normal(5)
    grads = [(rng(i).standard_normal((3, 4)), rng(100 + i).standard_normal(5)) for i in range(steps)]
    mk = (lambda x: tinynet.tensor(x, dtype=dtype, device=device, requires_grad=True)) if lib is tinynet else (
        lambda x: torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True))
    p, q = mk(a), mk(b)
    opt = getattr(lib.optim, name)([{"params": [p]}, {"params": [q], **group_kw}], **kw)
    for ga, gb in grads:
        for t, gr in ((p, ga), (q, gb)):
            t.grad = (tinynet.tensor(gr, dtype=dtype, device=device) if lib is tinynet
                      else torch.tensor(gr, dtype=getattr(torch, dtype)))
        opt.step()
    return [t.detach().numpy() for t in (p, q)], opt


CASES = [("Rprop", {"lr": 0.05}, {}), ("Rprop", {"etas": (0.3, 1.5)}, dict(lr=0.02, step_sizes=(1e-4, 0.1))),
         ("Rprop", {}, dict(maximize=True)),
         ("ASGD", {"lr": 0.05}, {}), ("ASGD", {"t0": 10}, dict(lr=0.1, lambd=1e-3, alpha=0.5, t0=20)),
         ("ASGD", {"weight_decay": 0.1}, dict(maximize=True))]


@pytest.mark.parametrize("name,group_kw,kw", CASES, ids=[f"{c[0]}{i}" for i, c in enumerate(CASES)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_matches_torch_after_50_steps(name, group_kw, kw, dtype, device):
    ours, _ = _run(tinynet, name, device, dtype, 50, group_kw, **kw)
    theirs, _ = _run(torch, name, device, dtype, 50, group_kw, **kw)
    for x, y in zip(ours, theirs):
        numpy.testing.assert_allclose(x, y, rtol=1e-6 if dtype == "float64" else 2e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["Rprop", "ASGD"])
def test_state_dict_round_trip(name, device):
    _, opt = _run(tinynet, name, device, "float64", 7, {})
    state = opt.state_dict()
    assert sorted(state["state"][0]) == sorted({"Rprop": ["step", "prev", "step_size"],
                                                "ASGD": ["step", "eta", "mu", "ax"]}[name])
    p = tinynet.zeros(3, 4, dtype=tinynet.float64, device=device, requires_grad=True)
    q = tinynet.zeros(5, dtype=tinynet.float64, device=device, requires_grad=True)
    again = getattr(tinynet.optim, name)([{"params": [p]}, {"params": [q]}])
    again.load_state_dict(state)
    assert again.state_dict()["param_groups"] == state["param_groups"]


def test_errors():
    p = [tinynet.zeros(2, requires_grad=True)]
    with pytest.raises(errors.ArgumentError, match="etaminus < 1 < etaplus"):
        tinynet.optim.Rprop(p, etas=(1.5, 1.2))
    with pytest.raises(errors.ArgumentError, match="learning rate"):
        tinynet.optim.Rprop(p, lr=-1)
    with pytest.raises(errors.ArgumentTypeError):
        tinynet.optim.ASGD(p, lambd="a")
    with pytest.raises(errors.ArgumentError, match="weight_decay"):
        tinynet.optim.ASGD(p, weight_decay=-0.1)
