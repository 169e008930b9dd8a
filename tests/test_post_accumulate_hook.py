"""Tensor.register_post_accumulate_grad_hook and autograd's end-of-backward callbacks, against
PyTorch's behaviour (what DistributedDataParallel builds on)."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
from tinynet.autograd.post_hooks import queue_callback
from tinynet.errors import ArgumentTypeError, AutogradError

torch = pytest.importorskip("torch")


def _mlp(lib, seed=0):
    rng = numpy.random.default_rng(seed)
    w1, b1, w2, b2 = (rng.standard_normal(s) for s in [(5, 4), (5,), (3, 5), (3,)])
    x = rng.standard_normal((2, 4))
    if lib is torch:
        params = [torch.tensor(a, requires_grad=True) for a in (w1, b1, w2, b2)]
        return params, torch.tensor(x)
    return [tinynet.tensor(a, requires_grad=True) for a in (w1, b1, w2, b2)], tinynet.tensor(x)


def _run(lib, twice=False):
    """Record the hooks' events: (name, .grad at that moment) for each parameter, and the
    moment the gradient of the first layer's output was computed."""
    (w1, b1, w2, b2), x = _mlp(lib)
    names = {id(w1): "w1", id(b1): "b1", id(w2): "w2", id(b2): "b2"}
    events = []
    for p in (w1, b1, w2, b2):
        p.register_post_accumulate_grad_hook(
            lambda t: events.append((names[id(t)], t.grad.detach().numpy().copy())))
    for _ in range(2 if twice else 1):
        h = x @ w1.T + b1
        h.register_hook(lambda g: events.append(("h", None)))
        y = (lib.relu(h) @ w2.T + b2).sum() + (w2 * w2).sum()  # w2 used twice
        y.backward()
    return events, {n: p.grad.detach().numpy() for n, p in zip(("w1", "b1", "w2", "b2"), (w1, b1, w2, b2))}


@pytest.mark.parametrize("twice", [False, True], ids=["one backward", "accumulating"])
def test_hooks_run_once_per_leaf_after_accumulation_and_during_the_walk(twice):
    mine, my_grads = _run(tinynet, twice)
    ref, ref_grads = _run(torch, twice)
    per_pass = len(ref) // (2 if twice else 1)
    for k in range(2 if twice else 1):
        a, b = mine[k * per_pass:(k + 1) * per_pass], ref[k * per_pass:(k + 1) * per_pass]
        # each parameter once, with .grad already holding everything so far (PyTorch's values)
        assert sorted(n for n, _ in a) == sorted(n for n, _ in b)
        got, want = dict(a), dict(b)
        for n in ("w1", "b1", "w2", "b2"):
            numpy.testing.assert_allclose(got[n], want[n], rtol=1e-12, err_msg=n)
        # the last layer's hooks run before the walk reaches the first layer's output, the first
        # layer's after: the hooks fire during backward, as PyTorch's, not at its end
        split = [n for n, _ in a].index("h")
        assert {n for n, _ in a[:split]} == {n for n, _ in b[:[n for n, _ in b].index("h")]} == {"w2", "b2"}
    for n in my_grads:
        numpy.testing.assert_allclose(my_grads[n], ref_grads[n], rtol=1e-12)


def test_hook_on_a_leaf_used_twice_in_one_op_and_on_a_root_leaf():
    for lib in (tinynet, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        (w * w).sum().backward()
        w.backward(lib.tensor([1.0, 1.0]))  # the root itself is the leaf
        assert seen == [[2.0, 4.0], [3.0, 5.0]], lib


def test_inputs_grad_and_remove_follow_pytorch():
    for lib in (tinynet, torch):
        w = lib.ones(3, requires_grad=True)
        v = lib.ones(3, requires_grad=True)
        seen = []
        hw = w.register_post_accumulate_grad_hook(lambda t: seen.append("w"))
        v.register_post_accumulate_grad_hook(lambda t: seen.append("v"))
        loss = (w * 2).sum() + (v * 3).sum()
        loss.backward(inputs=[w], retain_graph=True)  # only w accumulates, so only w's hook runs
        assert seen == ["w"], lib
        lib.autograd.grad(loss, [w, v], retain_graph=True)  # grad() accumulates nothing: no hooks
        assert seen == ["w"], lib
        hw.remove()
        loss.backward()
        assert seen == ["w", "v"], lib


def test_create_graph_backward_runs_the_hooks_with_a_differentiable_grad():
    w = tinynet.tensor([1.0, 2.0], requires_grad=True)
    seen = []
    w.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.requires_grad))
    (w ** 3).sum().backward(create_graph=True)
    assert seen == [True]
    numpy.testing.assert_allclose(w.grad.detach().numpy(), [3.0, 12.0])


def test_bad_registrations_raise_as_pytorch():
    w = tinynet.ones(2, requires_grad=True)
    cases = [(lambda lib_w: (lib_w * 2).register_post_accumulate_grad_hook(lambda t: None), "non-leaf"),
             (lambda lib_w: lib_w.detach().register_post_accumulate_grad_hook(lambda t: None), "doesn't require")]
    for fn, words in cases:
        with pytest.raises(AutogradError, match=words):
            fn(w)
        with pytest.raises(RuntimeError):  # PyTorch's error type too
            fn(torch.ones(2, requires_grad=True))
    with pytest.raises(ArgumentTypeError, match="callable"):
        w.register_post_accumulate_grad_hook(3)
    for returned, error in ((lambda t: 5, TypeError), (lambda t: t.grad * 2, RuntimeError)):  # PyTorch's types
        for lib in (tinynet, torch):
            v = lib.ones(2, requires_grad=True)
            v.register_post_accumulate_grad_hook(returned)
            with pytest.raises(error):
                (v * 2).sum().backward()
    v = tinynet.ones(2, requires_grad=True)
    v.register_post_accumulate_grad_hook(lambda t: t.grad * 2)
    with pytest.raises(AutogradError, match="should return None"):
        (v * 2).sum().backward()


def test_a_model_trains_the_same_with_hooks_on_every_parameter():
    """The early accumulation changes nothing: parameters after 3 SGD steps equal a run without hooks."""
    def train(hooks):
        tinynet.manual_seed(0)
        model = nn.Sequential(nn.Conv2d(1, 3, 3), nn.ReLU(), nn.Flatten(), nn.Linear(3 * 4 * 4, 2))
        calls = []
        if hooks:
            for p in model.parameters():
                p.register_post_accumulate_grad_hook(lambda t: calls.append(1))
        opt = tinynet.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        x = tinynet.randn(4, 1, 6, 6)
        for _ in range(3):
            opt.zero_grad()
            model(x).square().mean().backward()
            opt.step()
        return [p.detach().numpy().copy() for p in model.parameters()], len(calls)

    plain, _ = train(False)
    hooked, calls = train(True)
    assert calls == 3 * 4
    for a, b in zip(plain, hooked):
        numpy.testing.assert_array_equal(a, b)


def test_queue_callback_runs_after_every_grad_is_written():
    a = tinynet.ones(2, requires_grad=True)
    b = tinynet.ones(2, requires_grad=True)
    order = []

    def later():
        order.append(("later", b.grad is not None))

    def first(t):
        order.append("hook")
        queue_callback(lambda: (order.append(("cb", a.grad.tolist(), b.grad is not None)), queue_callback(later)))
    a.register_post_accumulate_grad_hook(first)
    ((a * 2).sum() + (b * 3).sum()).backward()
    assert order == ["hook", ("cb", [2.0, 2.0], True), ("later", True)]
    with pytest.raises(AutogradError, match="during a backward"):
        queue_callback(lambda: None)
    with pytest.raises(ArgumentTypeError):
        queue_callback("not callable")


def test_queued_callbacks_are_dropped_when_backward_fails():
    a = tinynet.ones(2, requires_grad=True)
    ran = []

    def hook(t):
        queue_callback(lambda: ran.append(1))
        raise ValueError("hook failed")
    a.register_post_accumulate_grad_hook(hook)
    with pytest.raises(ValueError):
        (a * 2).sum().backward()
    assert ran == []
    b = tinynet.ones(2, requires_grad=True)  # the next backward starts a fresh task
    (b * 2).sum().backward()


def test_a_hook_changing_grad_in_place_does_not_change_other_gradients():
    """``w + h`` hands the same gradient array to both inputs; the leaf ``w`` is finished while
    ``h``'s share is still pending, so ``w.grad`` must not be that array (PyTorch copies too)."""
    results = []
    for lib in (tinynet, torch):
        w, v = lib.ones(3, requires_grad=True), lib.ones(3, requires_grad=True)
        w.register_post_accumulate_grad_hook(lambda t: [t.grad.zero_()] and None)
        ((w + v * 2) * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        results.append((w.grad.tolist(), v.grad.tolist()))
    assert results[0] == results[1] == ([0.0, 0.0, 0.0], [2.0, 4.0, 6.0])
