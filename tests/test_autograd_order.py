"""The order of the backward walk (tinynet/autograd/order.py): ops run newest first by
their sequence numbers; in-place ops that rewrite a tensor's history are renumbered to run
after the tensor's earlier consumers, or, when no number fits, walks fall back to a
depth-first search. Each case is checked against the search-ordered walk."""
import gc

import numpy as np
import pytest

import tinynet
from tinynet.autograd import Op, order


class _TwoOutputs(Op):
    """(2x, 3x): two float outputs of one op, neither a view."""
    name = "two_outputs"

    def forward(self, xp, x):
        return x * 2, x * 3

    def backward(self, xp, ga, gb):
        return (2 * ga + 3 * gb,)


def _leaf(*shape, seed=0):
    return tinynet.tensor(np.random.default_rng(seed).random(shape) + 0.5, requires_grad=True)


def _residual():  # x += identity with an older identity: renumbered
    x, w = _leaf(4), _leaf(4, seed=1)
    idt = x * 1.5
    out = idt * w
    out += idt
    out.relu_()
    return out.sum(), [x, w]


def _relu_chain():  # the same tensor changed twice, consumed in between
    x, w = _leaf(4), _leaf(4, seed=1)
    h = x * w - 1
    early = h * 2
    h.relu_()
    h2 = h * 3
    h.mul_(2)
    return (h2 * h).sum() + early.sum(), [x, w]


def _siblings():  # both outputs of one op changed in place: equal numbers, any order
    x = _leaf(3)
    a, b = _TwoOutputs().apply(x * 1)
    c = a + b * 2
    a.mul_(2)
    b.add_(1)
    return (c + a * b).sum(), [x]


def _newer_operand():  # y.add_(z) with z newer than y's op: no number fits, search order
    x, y = _leaf(4), _leaf(4, seed=2)
    a = x * 2
    b = a * 3
    z = y * 5
    a.add_(z)
    return b.sum() + (a * z).sum(), [x, y]


@pytest.mark.parametrize("build", [_residual, _relu_chain, _siblings, _newer_operand])
def test_walk_order_matches_search_order(build, monkeypatch):
    loss, leaves = build()
    loss.backward()
    got = [t.grad.numpy().copy() for t in leaves]
    del loss
    gc.collect()
    monkeypatch.setattr(order, "needs_search", lambda: True)  # every walk by depth-first search
    loss, leaves = build()
    loss.backward()
    for g, t in zip(got, leaves):
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=1e-12)


def test_unary_inplace_ops_are_renumbered_not_searched():
    x = _leaf(4)
    h = x * 2
    before = h.grad_fn
    h.relu_()
    h.mul_(3)
    assert not order.needs_search()
    assert before._seq < h.grad_fn.inputs[0].grad_fn._seq < h.grad_fn._seq < before._seq + 1


def test_search_fallback_lasts_while_the_op_lives():
    x, y = _leaf(4), _leaf(4, seed=2)
    a = x * 2
    z = y * 5
    a.add_(z)
    assert order.needs_search()
    a.sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), np.full(4, 5.0))
    del a, z
    gc.collect()
    assert not order.needs_search()


def test_second_derivative_through_a_saved_output():
    # exp saves its output; a create_graph backward differentiates through it
    x = _leaf(3)
    (g,) = tinynet.autograd.grad(x.exp().sum(), [x], create_graph=True)
    (gg,) = tinynet.autograd.grad(g.sum(), [x])
    np.testing.assert_allclose(gg.numpy(), np.exp(x.detach().numpy()), rtol=1e-12)


def test_apply_sets_every_tensor_field():
    # Op.apply builds its output tensors inline, not through Tensor._wrap
    x = _leaf(2, 3)
    made = [x * 2, x.view(3, 2), (x > 1), x.detach() * 2]
    for t in made:
        for field in tinynet.Tensor.__slots__:
            if field != "__weakref__":
                getattr(t, field)
    assert made[1]._vc is x._vc and made[1]._base is x
    assert made[0]._vc is not x._vc and made[0]._base is None
    assert not made[2].requires_grad and made[2].grad_fn is None and made[3].grad_fn is None


def test_leaf_hooks_run_after_the_ops_in_first_arrival_order():
    x, y = _leaf(3), _leaf(3, seed=1)
    seen = []
    x.register_hook(lambda g: seen.append("x"))
    y.register_hook(lambda g: seen.append("y"))
    h = x * y
    h.register_hook(lambda g: seen.append("h"))
    (h * x).sum().backward()
    assert seen == ["h", "x", "y"]  # PyTorch's order too


class _Cube(Op):
    """An op with a GPU forward of its own but no GPU backward."""
    name = "cube"

    def forward(self, xp, x):
        self.save_for_backward(x)
        return x ** 3

    def forward_gpu(self, xp, x):
        return self.forward(xp, x)

    def backward(self, xp, gy):
        (x,) = self.saved
        return (3 * x ** 2 * gy,)


def test_op_with_forward_gpu_only_takes_the_generic_backward(device):
    # the engine calls backward_gpu on every op whose forward_gpu ran; Op gives such a class
    # the generic backward as its backward_gpu
    assert "backward_gpu" in _Cube.__dict__ and "backward_gpu" not in Op.__dict__
    x = tinynet.tensor([1.0, -2.0, 0.5], device=device, requires_grad=True)
    y = _Cube().apply(x)
    assert y.grad_fn.gpu_path == (x.device.type == "cuda" and tinynet.backend.kernels_enabled)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), [3.0, 12.0, 0.75])
