"""Tape-based autograd: ordering, accumulation, freeing, no_grad."""
import threading

import numpy
import pytest

import tinynet
from tinynet.autograd import Op
from tinynet.errors import AutogradError, DTypeError


def test_reused_tensor_accumulates(device):
    x = tinynet.tensor([2.0, -1.0], device=device, requires_grad=True)
    y = x * x + x * 3 + x
    y.sum().backward()
    assert x.grad.tolist() == [2 * 2.0 + 4, 2 * -1.0 + 4]


def test_diamond_graph(device):
    x = tinynet.tensor(1.5, device=device, requires_grad=True)
    a = x.exp()
    b = a * 2
    c = a * a
    (b + c).backward()
    e = numpy.exp(1.5)
    assert abs(x.grad.item() - (2 * e + 2 * e * e)) < 1e-5


def test_ten_thousand_op_chain_no_recursion_limit(device):
    x = tinynet.tensor(1.0, device=device, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.backward()
    assert abs(x.grad.item() - 1.0001 ** 10_000) < 1e-2


def test_grads_accumulate_across_backward_calls(device):
    x = tinynet.tensor([1.0], device=device, requires_grad=True)
    (x * 3).sum().backward()
    (x * 3).sum().backward()
    assert x.grad.tolist() == [6.0]


def test_second_backward_through_freed_graph_raises(device):
    x = tinynet.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = (x.exp() * 2).sum()
    y.backward()
    with pytest.raises(AutogradError, match="second time"):
        y.backward()


def test_retain_graph_allows_second_backward(device):
    x = tinynet.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 8.0]


def test_non_scalar_backward_needs_gradient(device):
    x = tinynet.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x * 2
    with pytest.raises(AutogradError, match="scalar"):
        y.backward()
    y.backward(gradient=tinynet.tensor([1.0, 10.0], device=device))
    assert x.grad.tolist() == [2.0, 20.0]


def test_backward_of_tensor_without_grad_raises(device):
    with pytest.raises(AutogradError, match="does not require grad"):
        tinynet.ones(2, device=device).sum().backward()


def test_gradient_of_wrong_shape_raises(device):
    x = tinynet.ones(3, device=device, requires_grad=True)
    with pytest.raises(AutogradError, match="shape"):
        (x * 2).backward(gradient=tinynet.ones(2, device=device))


def test_no_grad_context_and_decorator(device):
    x = tinynet.ones(2, device=device, requires_grad=True)
    with tinynet.no_grad():
        assert not (x * 2).requires_grad
        with tinynet.enable_grad():
            assert (x * 2).requires_grad
    assert (x * 2).requires_grad

    @tinynet.no_grad()
    def f(t):
        return t * 2
    assert not f(x).requires_grad
    assert tinynet.is_grad_enabled()


def test_no_grad_is_per_thread():
    seen = {}
    inside = threading.Event()
    release = threading.Event()

    def worker():
        with tinynet.no_grad():
            inside.set()
            release.wait(5)
            seen["worker"] = tinynet.is_grad_enabled()

    t = threading.Thread(target=worker)
    t.start()
    inside.wait(5)
    seen["main"] = tinynet.is_grad_enabled()
    x = tinynet.ones(1, requires_grad=True)
    seen["main_records"] = (x * 2).requires_grad
    release.set()
    t.join()
    assert seen == {"worker": False, "main": True, "main_records": True}


def test_detach_and_requires_grad(device):
    x = tinynet.ones(2, device=device, requires_grad=True)
    d = (x * 2).detach()
    assert not d.requires_grad and d.is_leaf
    with pytest.raises(DTypeError):
        tinynet.tensor([1, 2], device=device, requires_grad=True)
    with pytest.raises(AutogradError):
        (x * 2).requires_grad_(False)


def test_retain_grad_on_intermediate(device):
    x = tinynet.ones(2, device=device, requires_grad=True)
    h = (x * 3).retain_grad()
    (h * h).sum().backward()
    assert h.grad.tolist() == [6.0, 6.0]
    assert x.grad.tolist() == [18.0, 18.0]


def test_leaf_grad_is_writable_and_right_dtype(device):
    x = tinynet.ones(2, 3, device=device, requires_grad=True)
    x.sum().backward()
    assert x.grad.dtype == numpy.float32
    x.grad.array[...] = 0  # a broadcast view would be read-only


class _TwoOutputsOnce(Op):
    """y = 2x, z = 3x; no second derivative, and an output without a gradient arrives as None
    (as the LSTM/cuDNN RNN ops' h_n/c_n)."""
    name = "two_outputs_once"
    n_outputs = 2
    twice_differentiable = False
    materialize_grads = False

    def forward(self, xp, x):
        return 2 * x, 3 * x

    def backward(self, xp, gy, gz):
        total = (0 if gy is None else 2 * gy) + (0 if gz is None else 3 * gz)
        return (total,)


def test_create_graph_through_an_op_without_second_derivative_and_an_unused_output(device):
    x = tinynet.tensor([1.0, 2.0], device=device, requires_grad=True)
    y, _ = _TwoOutputsOnce().apply(x)
    (gx,) = tinynet.autograd.grad((y * y).sum(), [x], create_graph=True)
    assert gx.tolist() == [8.0, 16.0]  # d/dx (2x)^2 = 8x
    with pytest.raises(AutogradError, match="two_outputs_once"):
        gx.sum().backward()
