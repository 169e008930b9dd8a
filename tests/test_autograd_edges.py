"""Ops whose backward reads no input value (casts, additions) keep edges, not input tensors
(tinynet/autograd/edges.py): an intermediate the program drops is freed before backward, and
every gradient, hook, in-place rule, checkpoint and second derivative stays as before
(each case checked against PyTorch on the same inputs)."""
import gc
import weakref

import numpy
import pytest

import tinynet
from helpers import assert_close, torch
from tinynet.autograd import edges

R = numpy.random.default_rng(11)


@pytest.fixture(autouse=True)
def every_size(monkeypatch):
    """Edges for inputs of any size here (the small test arrays are below edges.MIN_BYTES)."""
    monkeypatch.setattr(edges, "MIN_BYTES", 0)


def _pair(device, shape=(4, 5)):
    a = R.standard_normal(shape)
    return (tinynet.tensor(a, device=device, requires_grad=True),
            torch.tensor(a, requires_grad=True))


@pytest.mark.parametrize("kind", ["cast", "add", "sub"])
def test_dropped_intermediate_is_freed_and_gradients_hold(device, kind):
    """The input of a cast/add that the program no longer holds is freed after forward."""
    def run(lib, x):
        y = x * 3  # an intermediate: only the next op holds it
        ref = weakref.ref(y) if lib is tinynet else None
        if kind == "cast":
            z = y.to(lib.float32).to(lib.float64)
        elif kind == "add":
            z = y + x
        else:
            z = x - y
        del y
        gc.collect()
        return z, ref
    x, xt = _pair(device)
    z, ref = run(tinynet, x)
    assert ref() is None, "the op kept its input tensor alive"
    zt, _ = run(torch, xt)
    g = R.standard_normal(z.shape)
    z.backward(tinynet.tensor(g, device=device))
    zt.backward(torch.tensor(g))
    assert_close(x.grad.numpy(force=True), xt.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_hooks_and_retain_grad_after_forward(device):
    """register_hook / retain_grad on a tensor consumed by an add still see its gradient."""
    results = []
    for lib, x in zip((tinynet, torch), _pair(device)):
        y = x.sin()
        z = (y + 1) * x
        seen = []
        y.register_hook(lambda g, seen=seen: seen.append(g.detach().clone()))
        y.retain_grad()
        z.sum().backward()
        results.append((seen[0], y.grad, x.grad))
    for ours, theirs in zip(results[0], results[1]):
        assert_close(ours.numpy(force=True), theirs.numpy(), rtol=1e-6, atol=1e-7)


def test_in_place_change_after_an_add_consumed_it(device):
    """y changed in place after y + 1 was recorded: the add's gradient still reaches y's old history."""
    grads = []
    for lib, x in zip((tinynet, torch), _pair(device)):
        y = x * 2
        z = y + 1
        y.mul_(3)  # y's history now ends in the in-place mul; z consumed the y from before
        (z.sum() + (y * y).sum()).backward()
        grads.append(x.grad)
    assert_close(grads[0].numpy(force=True), grads[1].numpy(), rtol=1e-6, atol=1e-6)


def test_second_derivative_through_add_and_cast(device):
    """create_graph=True through an add and a cast of intermediates (double backward)."""
    out = []
    for lib, x in zip((tinynet, torch), _pair(device)):
        y = (x * x + x.exp()).to(lib.float32).to(lib.float64)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (g * x).sum().backward()
        out.append((g, x.grad))
    for ours, theirs in zip(out[0], out[1]):
        assert_close(ours.numpy(force=True), theirs.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_checkpoint_whose_input_an_add_consumes(device):
    """A checkpointed function adds to a non-leaf made outside it: the boundary is that tensor."""
    from tinynet.utils.checkpoint import checkpoint
    w = R.standard_normal((5, 5))
    out = []
    for lib, x in zip((tinynet, torch), _pair(device)):
        wt = lib.tensor(w, requires_grad=True) if lib is torch else tinynet.tensor(w, device=device,
                                                                                    requires_grad=True)
        h = x.tanh()  # non-leaf, made before the region

        def region(h):
            return (h + 1) @ wt

        run = checkpoint if lib is tinynet else torch.utils.checkpoint.checkpoint
        y = run(region, h, use_reentrant=False)
        (y * y).sum().backward()
        out.append((x.grad, wt.grad))
    for ours, theirs in zip(out[0], out[1]):
        assert_close(ours.numpy(force=True), theirs.numpy(), rtol=1e-6, atol=1e-6)


def test_edges_keep_shapes_for_broadcast_gradients(device):
    """An add of broadcast operands reduces each gradient to its input's shape from the edge."""
    a, at = _pair(device, (4, 1, 3))
    b, bt = _pair(device, (5, 3))
    for x, y in ((a, b), (at, bt)):
        ((x.cos() + y.sin()) ** 2).sum().backward()
    assert_close(a.grad.numpy(force=True), at.grad.numpy(), rtol=1e-6, atol=1e-6)
    assert_close(b.grad.numpy(force=True), bt.grad.numpy(), rtol=1e-6, atol=1e-6)
    edge = (a.cos() + b.sin()).grad_fn.inputs[0]
    assert "edge to output 0" in repr(edge) and tuple(edge.shape) == (4, 1, 3)


def test_small_inputs_stay_tensors(device, monkeypatch):
    """Below MIN_BYTES an input stays the tensor itself (an edge's host cost is not worth it)."""
    monkeypatch.setattr(edges, "MIN_BYTES", 1 << 18)
    x = tinynet.ones(8, 8, device=device, requires_grad=True)
    y = x * 2
    assert (y + 1).grad_fn.inputs[0] is y
    big = x.repeat(128, 64) * 2  # 1024 x 512 float32: 2 MiB
    assert edges.is_edge((big + 1).grad_fn.inputs[0])
