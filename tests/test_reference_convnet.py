"""The reference convnet of shared/REFERENCE.md against PyTorch with the same weights:
outputs, loss and every parameter gradient agree in float64 (relative error <= 1e-6),
and a few SGD steps keep them together."""
import os
import sys

import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from helpers import rel_err

torch = pytest.importorskip("torch")


sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "benchmarks"))
from models import tinynet_model, torch_model  # noqa: E402  (the example's Net and its PyTorch twin)


def _pair(device):
    tinynet.manual_seed(0)
    ours = tinynet_model("convnet").double().to(device)
    theirs = torch_model("convnet").double()
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy()) for k, v in ours.state_dict().items()})
    return ours, theirs


def test_same_outputs_loss_and_gradients(device):
    ours, theirs = _pair(device)
    ours.eval()
    theirs.eval()  # dropout off on both sides: identical maths
    rng = numpy.random.default_rng(3)
    x = (rng.random((16, 1, 28, 28)) - 0.1307) / 0.3081
    y = rng.integers(0, 10, 16)
    out = ours(tinynet.tensor(x, device=device))
    loss = F.nll_loss(out, tinynet.tensor(y, device=device))
    loss.backward()
    tout = theirs(torch.tensor(x))
    tloss = torch.nn.functional.nll_loss(tout, torch.tensor(y))
    tloss.backward()
    assert rel_err(out, tout) <= 1e-6
    assert abs(loss.item() - tloss.item()) <= 1e-6 * abs(tloss.item())
    tparams = dict(theirs.named_parameters())
    names = [n for n, _ in ours.named_parameters()]
    assert names == list(tparams)
    for name, p in ours.named_parameters():
        assert rel_err(p.grad, tparams[name].grad) <= 1e-6, name


def test_sgd_training_steps_stay_together(device):
    ours, theirs = _pair(device)
    ours.eval()
    theirs.eval()
    oa = tinynet.optim.SGD(ours.parameters(), lr=0.01, momentum=0.5)
    ob = torch.optim.SGD(theirs.parameters(), lr=0.01, momentum=0.5)
    rng = numpy.random.default_rng(4)
    for _ in range(5):
        x = rng.standard_normal((8, 1, 28, 28))
        y = rng.integers(0, 10, 8)
        oa.zero_grad()
        ob.zero_grad()
        F.nll_loss(ours(tinynet.tensor(x, device=device)), tinynet.tensor(y, device=device)).backward()
        torch.nn.functional.nll_loss(theirs(torch.tensor(x)), torch.tensor(y)).backward()
        oa.step()
        ob.step()
    tparams = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert rel_err(p, tparams[name]) <= 1e-6, name


def test_train_mode_dropout_is_active(device):
    ours, _ = _pair(device)
    x = tinynet.randn(4, 1, 28, 28, device=device, dtype=tinynet.float64)
    ours.train()
    a, b = ours(x).detach().numpy(), ours(x).detach().numpy()
    assert not numpy.allclose(a, b)
    ours.eval()
    assert numpy.allclose(ours(x).detach().numpy(), ours(x).detach().numpy())
