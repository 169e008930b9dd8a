"""optim.LBFGS against PyTorch's: parameters and losses after several steps (float64,
several settings, a parameter without a gradient), state keys, and errors."""
import numpy
import pytest

import tinynet
from helpers import rng, torch
from tinynet import errors

R = rng(107)
A, B = R.standard_normal((8, 5)), R.standard_normal(8)
W0, C0 = R.standard_normal(5), R.standard_normal(3)


def _run(lib, device, steps=4, **kw):
    dev = {"device": device} if lib is tinynet else {}
    w = lib.tensor(W0.copy(), requires_grad=True, **dev)
    c = lib.tensor(C0.copy(), requires_grad=True, **dev)
    unused = lib.tensor([1.0, 2.0], requires_grad=True, **dev)   # never gets a gradient
    a, b = lib.tensor(A, **dev), lib.tensor(B, **dev)
    opt = lib.optim.LBFGS([w, c, unused], **kw)

    def closure():
        opt.zero_grad()
        loss = ((a @ w - b) ** 2).sum() + (c ** 4).sum() + (w[:3] * c).sum()
        loss.backward()
        return loss
    losses = [float(opt.step(closure).detach()) for _ in range(steps)]
    params = numpy.concatenate([t.detach().cpu().numpy() if lib is torch else t.detach().numpy()
                                for t in (w, c, unused)])
    return params, losses, opt


@pytest.mark.parametrize("kw", [{}, dict(lr=0.5, max_iter=7, history_size=3), dict(max_iter=3, max_eval=2),
                                dict(tolerance_change=1e-3)])
def test_lbfgs_matches_torch(kw, device):
    ours, our_losses, opt = _run(tinynet, device, **kw)
    theirs, their_losses, topt = _run(torch, "cpu", **kw)
    # float64 to 1e-8: sums in another order (a GPU reduction, another BLAS or PyTorch build) move the
    # last digits, and tolerance_change=1e-3 ends the iterations on a difference of such values
    numpy.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-10)
    numpy.testing.assert_allclose(our_losses, their_losses, rtol=1e-8, atol=1e-10)
    first = opt.param_groups[0]["params"][0]
    tfirst = topt.param_groups[0]["params"][0]
    assert sorted(opt.state[id(first)]) == sorted(topt.state[tfirst])
    assert opt.state[id(first)]["func_evals"] == topt.state[tfirst]["func_evals"]
    assert opt.state[id(first)]["n_iter"] == topt.state[tfirst]["n_iter"]


def test_lbfgs_errors():
    w = tinynet.zeros(2, requires_grad=True)
    with pytest.raises(errors.ArgumentError, match="line_search_fn='strong_wolfe' is not implemented"):
        tinynet.optim.LBFGS([w], line_search_fn="strong_wolfe")
    with pytest.raises(errors.ArgumentError, match="doesn't support per-parameter options"):
        tinynet.optim.LBFGS([{"params": [w]}, {"params": [tinynet.zeros(1, requires_grad=True)]}])
    with pytest.raises(errors.ArgumentError, match="invalid learning rate"):
        tinynet.optim.LBFGS([w], lr=-1)
    with pytest.raises(errors.ArgumentError, match="a closure that re-evaluates the model"):
        tinynet.optim.LBFGS([w]).step(None)
    assert tinynet.optim.LBFGS([w]).param_groups[0]["max_eval"] == 25  # max_iter * 5 // 4, as PyTorch
