"""tinynet.utils.checkpoint: gradients equal to an uncheckpointed run (bit for bit, dropout
inside: the random state is replayed), against torch.utils.checkpoint on the same
inputs, inner activations freed after the forward, both variants' rules."""
import warnings
import weakref

import numpy
import pytest

import tinynet
from tinynet.errors import ArgumentError, AutogradError
from tinynet.utils.checkpoint import checkpoint, checkpoint_sequential

from helpers import assert_close, rng, torch

F = tinynet.nn.functional


def make(device, seed=0):
    r = rng(seed)
    w1 = tinynet.tensor(r.standard_normal((4, 6)), device=device, requires_grad=True)
    w2 = tinynet.tensor(r.standard_normal((6, 3)), device=device, requires_grad=True)
    x = tinynet.tensor(r.standard_normal((5, 4)), device=device, requires_grad=True)
    return x, w1, w2


def block(w1, w2, refs=None, p=0.5):
    def run(x):
        h = (x @ w1).tanh()
        h = F.dropout(h, p, training=True)
        if refs is not None:
            refs.append(weakref.ref(h.array))
        return (h @ w2).sin()
    return run


def grads_of(x, w1, w2, run):
    for t in (x, w1, w2):
        t.grad = None
    tinynet.manual_seed(7)
    out = run(x * 1.0)  # a non-leaf input, as inside a network
    tinynet.rand(3)      # the random state moves on between forward and backward
    out.pow(2).sum().backward()
    after = tinynet.rand(4).numpy(force=True)  # the state after backward
    return [t.grad.numpy(force=True).copy() for t in (x, w1, w2)], after


@pytest.mark.parametrize("reentrant", [True, False])
def test_gradients_equal_uncheckpointed_bit_for_bit(device, reentrant):
    x, w1, w2 = make(device)
    plain, after_plain = grads_of(x, w1, w2, block(w1, w2))
    ckpt, after_ckpt = grads_of(x, w1, w2, lambda v: checkpoint(block(w1, w2), v, use_reentrant=reentrant))
    for a, b in zip(plain, ckpt):
        assert numpy.array_equal(a, b)
    assert numpy.array_equal(after_plain, after_ckpt)  # the recomputation left the random state alone
    # without the state replayed the recomputation draws another mask
    other, _ = grads_of(x, w1, w2, lambda v: checkpoint(block(w1, w2), v, use_reentrant=reentrant,
                                                        preserve_rng_state=False))
    assert not numpy.array_equal(other[1], plain[1])


@pytest.mark.parametrize("reentrant", [True, False])
def test_inner_activations_are_freed(device, reentrant):
    x, w1, w2 = make(device)
    refs = []
    out = checkpoint(block(w1, w2, refs), x * 1.0, use_reentrant=reentrant)
    assert refs and all(r() is None for r in refs), "an inner activation outlived the checkpointed forward"
    assert out.grad_fn is not None and out.grad_fn.saved == ()
    kept = []
    out2 = block(w1, w2, kept)(x * 1.0)  # without checkpointing the graph keeps them
    assert all(r() is not None for r in kept)
    del out, out2


@pytest.mark.skipif(torch is None, reason="PyTorch (the reference) is not installed")
@pytest.mark.parametrize("reentrant", [True, False])
def test_matches_torch_checkpoint(device, reentrant):
    x, w1, w2 = make(device)
    xt, w1t, w2t = (torch.tensor(t.numpy(force=True), requires_grad=True) for t in (x, w1, w2))
    f = lambda M, a, b: lambda v: M.softmax((v @ a).tanh() @ b, dim=-1)  # noqa: E731
    out = checkpoint(f(tinynet, w1, w2), x * 1.0, use_reentrant=reentrant)
    ref = torch.utils.checkpoint.checkpoint(f(torch, w1t, w2t), xt * 1.0, use_reentrant=reentrant)
    assert_close(out, ref, rtol=1e-12, atol=1e-14)
    (out * out).sum().backward()
    (ref * ref).sum().backward()
    for a, b in ((x, xt), (w1, w1t), (w2, w2t)):
        assert_close(a.grad, b.grad, rtol=1e-10, atol=1e-12)


@pytest.mark.skipif(torch is None, reason="PyTorch (the reference) is not installed")
def test_checkpoint_sequential_matches_torch(device):
    tinynet.manual_seed(0)
    layers = [tinynet.nn.Linear(4, 8), tinynet.nn.Tanh(), tinynet.nn.Linear(8, 8), tinynet.nn.GELU(),
              tinynet.nn.Linear(8, 3)]
    net = tinynet.nn.Sequential(*layers).double().to(device)
    ref = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 8), torch.nn.GELU(),
                              torch.nn.Linear(8, 3)).double()
    with torch.no_grad():
        for a, b in zip(ref.parameters(), net.parameters()):
            a.copy_(torch.tensor(b.numpy(force=True)))
    a = rng(3).standard_normal((6, 4))
    for segments in (1, 2, 3, 5):
        for reentrant in (True, False):
            net.zero_grad()
            ref.zero_grad()
            x = tinynet.tensor(a, device=device, requires_grad=True)
            xt = torch.tensor(a, requires_grad=True)
            out = checkpoint_sequential(net, segments, x, use_reentrant=reentrant)
            outt = torch.utils.checkpoint.checkpoint_sequential(ref, segments, xt, use_reentrant=reentrant)
            assert_close(out, outt, rtol=1e-12, atol=1e-14)
            out.sum().backward()
            outt.sum().backward()
            assert_close(x.grad, xt.grad, rtol=1e-10, atol=1e-12)
            for p, q in zip(net.parameters(), ref.parameters()):
                assert_close(p.grad, q.grad, rtol=1e-10, atol=1e-12)
    with pytest.raises(ArgumentError, match="segments"):
        checkpoint_sequential(net, 0, x, use_reentrant=False)
    with pytest.raises(ArgumentError, match="at most the number of functions"):  # PyTorch: a ValueError too
        checkpoint_sequential(net, 6, x, use_reentrant=False)
    with pytest.raises(ArgumentError, match="unexpected keyword"):
        checkpoint_sequential(net, 2, x, use_reentrant=False, foo=1)


def test_non_reentrant_grad_kwargs_pytrees_and_double_backward(device):
    x, w1, w2 = make(device)
    outside = w2 * 2.0  # a non-leaf tensor the function closes over (made before the checkpoint)

    def f(v, scale=1.0):
        h = (v @ w1).tanh() @ outside
        return {"out": h * scale, "aux": [h.sum(), 3]}
    ref = f(x * 1.0, scale=0.5)
    got = checkpoint(f, x * 1.0, use_reentrant=False, scale=0.5)
    assert got["aux"][1] == 3
    assert_close(got["out"], ref["out"], rtol=0, atol=0)
    g_ref = tinynet.autograd.grad((ref["out"] ** 2).sum() + ref["aux"][0], [x, w1, w2], retain_graph=True)
    g_got = tinynet.autograd.grad((got["out"] ** 2).sum() + got["aux"][0], [x, w1, w2])
    for a, b in zip(g_got, g_ref):  # w2 reached once through `outside`, not twice
        assert_close(a, b, rtol=1e-12, atol=1e-14)
    # double backward through the checkpoint
    s = tinynet.tensor(rng(5).standard_normal(4), device=device, requires_grad=True)
    y = checkpoint(lambda v: (v.sin() * v).sum(), s, use_reentrant=False)
    (g,) = tinynet.autograd.grad(y, s, create_graph=True)
    (gg,) = tinynet.autograd.grad(g.sum(), s)
    v = s.detach()
    assert_close(g, v.sin() + v * v.cos(), rtol=1e-12, atol=1e-14)
    assert_close(gg, 2 * v.cos() - v * v.sin(), rtol=1e-12, atol=1e-14)


def test_reentrant_rules(device):
    x, w1, w2 = make(device)
    out = checkpoint(block(w1, w2, p=0.0), x * 1.0, use_reentrant=True)
    with pytest.raises(AutogradError, match="use_reentrant=True.*autograd.grad"):
        tinynet.autograd.grad(out.sum(), [x])
    with pytest.raises(ArgumentError, match="keyword"):
        checkpoint(lambda v, k=1: v, x, use_reentrant=True, k=2)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        y = checkpoint(block(w1, w2, p=0.0), x.detach(), use_reentrant=True)
    assert not y.requires_grad  # as PyTorch: the parameters alone do not make it require grad
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert checkpoint(block(w1, w2, p=0.0), x.detach(), use_reentrant=False).requires_grad
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(lambda v: v * 2, x)
    out = checkpoint(lambda v: (v * 2, "label"), x, use_reentrant=True)
    assert out[1] == "label" and out[0].requires_grad


def test_recomputation_must_match(device):
    x, _, _ = make(device)
    calls = []

    def shifty(v):
        calls.append(1)
        return v * 2 if len(calls) == 1 else v[:2] * 2
    out = checkpoint(shifty, x, use_reentrant=False)
    with pytest.raises(AutogradError, match="recomputation"):
        out.sum().backward()
    calls.clear()
    with pytest.raises(ArgumentError, match="determinism_check"):
        checkpoint(shifty, x, use_reentrant=False, determinism_check="strict")


@pytest.mark.parametrize("reentrant", [True, False])
def test_input_changed_in_place_is_refused(device, reentrant):
    x, w1, w2 = make(device)
    h = x * 1.0
    out = checkpoint(block(w1, w2, p=0.0), h, use_reentrant=reentrant)
    with tinynet.no_grad():
        h.add_(1.0)  # the recomputation would read the new values
    with pytest.raises(AutogradError, match="modified by an in-place operation"):
        out.sum().backward()
