"""tinynet.autograd's public API against PyTorch's: grad(), create_graph and higher
derivatives, hooks, retain_grad, custom Functions, gradcheck/gradgradcheck."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet.autograd import Function, grad, gradcheck, gradgradcheck, once_differentiable
from tinynet.errors import AutogradError, DTypeError, GradcheckError
from helpers import assert_close, rng, torch

R = rng(3)
A = R.standard_normal((3, 4))


def _pair(a, device, requires_grad=True):
    t = tinynet.tensor(a, device=device, requires_grad=requires_grad)
    return t, (torch.tensor(a, requires_grad=requires_grad) if torch is not None else None)


def test_grad_returns_gradients_without_touching_dot_grad(device):
    x = tinynet.tensor(A, device=device, requires_grad=True)
    w = tinynet.tensor(A[0], device=device, requires_grad=True)
    y = ((x * w).exp()).sum()
    gx, gw = grad(y, [x, w])
    assert x.grad is None and w.grad is None
    e = numpy.exp(A * A[0])
    assert_close(gx, e * A[0], rtol=1e-12)
    assert_close(gw, (e * A).sum(0), rtol=1e-12)


def test_grad_of_an_intermediate_tensor(device):
    x = tinynet.tensor(A, device=device, requires_grad=True)
    h = x * 3
    y = (h * h).sum()
    (gh,) = grad(y, h)
    assert_close(gh, 2 * 3 * A, rtol=1e-12)


def test_grad_allow_unused_and_materialize(device):
    x = tinynet.tensor(A, device=device, requires_grad=True)
    z = tinynet.tensor(A, device=device, requires_grad=True)
    y = (x * 2).sum()
    with pytest.raises(AutogradError, match="input 1 was not used"):
        grad(y, [x, z], retain_graph=True)
    gx, gz = grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gz is None and gx.tolist() == (2 * numpy.ones_like(A)).tolist()
    _, gz = grad(y, [x, z], materialize_grads=True)
    assert gz.tolist() == numpy.zeros_like(A).tolist()


def test_grad_with_grad_outputs_and_several_outputs(device):
    x, tx = _pair(A, device)
    ys = [x * 2, x.exp()]
    gos = [tinynet.tensor(A, device=device), tinynet.ones(3, 4, device=device, dtype=tinynet.float64)]
    (g,) = grad(ys, x, gos)
    if torch is not None:
        (tg,) = torch.autograd.grad([tx * 2, tx.exp()], tx, [torch.tensor(A), torch.ones(3, 4, dtype=torch.float64)])
        assert_close(g, tg, rtol=1e-12)


def test_grad_errors(device):
    x = tinynet.tensor(A, device=device, requires_grad=True)
    c = tinynet.tensor(A, device=device)
    with pytest.raises(AutogradError, match="does not require grad"):
        grad((x * 2).sum(), c)
    with pytest.raises(AutogradError, match="scalar"):
        grad(x * 2, x)
    with pytest.raises(AutogradError, match="shape"):
        grad(x * 2, x, tinynet.ones(2, device=device))
    with pytest.raises(TypeError):
        grad((x * 2).sum(), "x")


def test_double_backward_of_a_polynomial(device):
    x = tinynet.tensor([1.5, -2.0, 0.5], device=device, requires_grad=True)
    y = (x ** 3).sum()
    (g,) = grad(y, x, create_graph=True)
    assert g.requires_grad
    (h,) = grad(g.sum(), x, create_graph=True)
    (t,) = grad(h.sum(), x)
    v = numpy.array([1.5, -2.0, 0.5])
    assert_close(g, 3 * v ** 2, rtol=1e-12)
    assert_close(h, 6 * v, rtol=1e-12)
    assert_close(t, 6 * numpy.ones(3), rtol=1e-12)


def test_hessian_vector_product_of_an_mlp_loss_matches_torch(device):
    """The gradient-of-a-gradient path through linear, tanh, log_softmax and nll: H @ v."""
    if torch is None:
        pytest.skip("PyTorch not installed")
    w1, b1 = R.standard_normal((5, 4)), R.standard_normal(5)
    w2 = R.standard_normal((3, 5))
    x, target = R.standard_normal((6, 4)), numpy.array([0, 1, 2, 0, 1, 2])
    v = [R.standard_normal(a.shape) for a in (w1, b1, w2)]

    def hvp(lib, params, xx, tt, vv):
        h = lib.tanh(xx @ params[0].T + params[1])
        loss = lib.nn.functional.nll_loss((h @ params[2].T).log_softmax(1), tt)
        g = lib.autograd.grad(loss, params, create_graph=True)
        dot = sum((gi * vi).sum() for gi, vi in zip(g, vv))
        return lib.autograd.grad(dot, params)

    ours = hvp(tinynet, [tinynet.tensor(a, device=device, requires_grad=True) for a in (w1, b1, w2)],
               tinynet.tensor(x, device=device), tinynet.tensor(target, device=device),
               [tinynet.tensor(a, device=device) for a in v])
    theirs = hvp(torch, [torch.tensor(a, requires_grad=True) for a in (w1, b1, w2)], torch.tensor(x),
                 torch.tensor(target), [torch.tensor(a) for a in v])
    for a, b in zip(ours, theirs):
        assert_close(a, b, rtol=1e-9, atol=1e-12)


def test_gradient_penalty_through_cross_entropy_matches_torch(device):
    """WGAN-GP style: the norm of d(loss)/d(input) is itself minimised."""
    if torch is None:
        pytest.skip("PyTorch not installed")
    w = R.standard_normal((3, 4))
    x, target = R.standard_normal((5, 4)), numpy.array([0, 2, 1, 1, 0])

    def penalty_grad(lib, ww, xx, tt):
        loss = lib.nn.functional.cross_entropy(xx @ ww.T, tt)
        (gx,) = lib.autograd.grad(loss, xx, create_graph=True)
        pen = ((gx * gx).sum(1).sqrt() - 1).pow(2).mean()
        return lib.autograd.grad(pen, ww)[0]

    ours = penalty_grad(tinynet, tinynet.tensor(w, device=device, requires_grad=True),
                        tinynet.tensor(x, device=device, requires_grad=True), tinynet.tensor(target, device=device))
    theirs = penalty_grad(torch, torch.tensor(w, requires_grad=True), torch.tensor(x, requires_grad=True),
                          torch.tensor(target))
    assert_close(ours, theirs, rtol=1e-9, atol=1e-12)


def test_second_derivative_through_an_op_without_one_raises_when_used(device):
    x = tinynet.tensor(R.standard_normal((2, 1, 4, 4)), device=device, requires_grad=True)
    y = F.max_pool2d(x * x, 2).sum()  # max_pool2d is differentiable once
    (g,) = grad(y, x, create_graph=True)  # fine: first derivative
    assert g.requires_grad
    with pytest.raises(AutogradError, match="max_pool2d.*not implemented"):
        grad(g.sum(), x)


def test_backward_create_graph_populates_a_differentiable_grad(device):
    x = tinynet.tensor([2.0], device=device, requires_grad=True)
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad and x.grad.item() == 12.0
    (gg,) = grad(x.grad.sum(), x)
    assert gg.item() == 12.0  # d(3x^2)/dx = 6x


def test_backward_inputs_restricts_accumulation(device):
    x = tinynet.tensor(A, device=device, requires_grad=True)
    w = tinynet.tensor(A, device=device, requires_grad=True)
    (x * w).sum().backward(inputs=[x])
    assert w.grad is None and x.grad is not None


def test_tensor_hooks_modify_gradients(device):
    x = tinynet.tensor([1.0, 2.0], device=device, requires_grad=True)
    seen = []
    handle = x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    h = x * 3
    h.register_hook(lambda g: g + 1)
    h.sum().backward()
    assert seen == [[6.0, 6.0]] and x.grad.tolist() == [60.0, 60.0]  # (1 + 1) * 3, then * 10
    handle.remove()
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_retain_grad_and_is_leaf(device):
    x = tinynet.tensor([1.0, 2.0], device=device, requires_grad=True)
    h = x * x
    h.retain_grad()
    assert x.is_leaf and not h.is_leaf and h.retains_grad
    (h * 2).sum().backward()
    assert h.grad.tolist() == [2.0, 2.0] and x.grad.tolist() == [4.0, 8.0]


def test_leaf_gradients_accumulate_in_place(device):
    x = tinynet.tensor([1.0, 2.0], device=device, requires_grad=True)
    (x * 2).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert x.grad is g and g.tolist() == [5.0, 5.0]  # the same tensor, added to (what PyTorch does)


def test_shared_gradient_arrays_are_not_aliased_between_leaves(device):
    a = tinynet.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = tinynet.tensor([3.0, 4.0], device=device, requires_grad=True)
    (a + b).sum().backward()  # add hands the same gradient array to both
    (a * 2).sum().backward()
    assert a.grad.tolist() == [3.0, 3.0] and b.grad.tolist() == [1.0, 1.0]


# ---- custom Functions ------------------------------------------------------------------
class Cube(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, gy):
        (x,) = ctx.saved_tensors
        return gy * 3 * x ** 2


class ScaledSplit(Function):
    """Two outputs and a non-tensor argument; the second output is not differentiable."""

    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        idx = x.argmax()
        ctx.mark_non_differentiable(idx)
        return x * k, idx

    @staticmethod
    def backward(ctx, gy, gidx):
        assert ctx.needs_input_grad == (True, False)
        return gy * ctx.k, None


class OnceOnly(Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x.exp()

    @staticmethod
    @once_differentiable
    def backward(ctx, gy):
        (x,) = ctx.saved_tensors
        return gy * x.exp()


def test_function_forward_backward_and_double_backward(device):
    x = tinynet.tensor([1.0, -2.0], device=device, requires_grad=True)
    y = Cube.apply(x)
    assert y.grad_fn is not None and not isinstance(y.grad_fn, type)
    (g,) = grad(y.sum(), x, create_graph=True)
    assert g.tolist() == [3.0, 12.0]
    (h,) = grad(g.sum(), x)
    assert h.tolist() == [6.0, -12.0]
    assert gradcheck(Cube.apply, (tinynet.tensor([0.3, -0.7], dtype=tinynet.float64, device=device,
                                                 requires_grad=True),))
    assert gradgradcheck(Cube.apply, (tinynet.tensor([0.3, -0.7], dtype=tinynet.float64, device=device,
                                                     requires_grad=True),))


def test_function_with_several_outputs(device):
    x = tinynet.tensor([1.0, 5.0, 2.0], device=device, requires_grad=True)
    y, idx = ScaledSplit.apply(x, 4.0)
    assert idx.item() == 1 and not idx.requires_grad and y.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]


def test_once_differentiable_raises_on_the_second_derivative(device):
    x = tinynet.tensor([0.5], device=device, requires_grad=True)
    (g,) = grad(OnceOnly.apply(x).sum(), x, create_graph=True)
    assert abs(g.item() - numpy.exp(0.5)) < 1e-6
    with pytest.raises(AutogradError, match="OnceOnly"):
        grad(g.sum(), x)


def test_function_saved_tensor_modified_in_place_raises(device):
    x = tinynet.tensor([1.0, 2.0], device=device, requires_grad=True)
    h = x * 1
    y = Cube.apply(h)
    h.mul_(2)
    with pytest.raises(AutogradError, match="Cube.*modified by an in-place"):
        y.sum().backward()


def test_function_wrong_number_of_gradients(device):
    class Bad(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, g):
            return g

    a = tinynet.tensor([1.0], device=device, requires_grad=True)
    b = tinynet.tensor([2.0], device=device, requires_grad=True)
    with pytest.raises(AutogradError, match="Bad.backward returned 1 gradients, expected 2"):
        Bad.apply(a, b).sum().backward()


def test_function_returning_an_input_gets_a_new_tensor(device):
    class Ident(Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, g):
            return g * 2

    a = tinynet.tensor([1.0], device=device, requires_grad=True)
    b = Ident.apply(a)
    assert b is not a and a.is_leaf and not b.is_leaf
    b.sum().backward()
    assert a.grad.tolist() == [2.0]


# ---- gradcheck -----------------------------------------------------------------------------
def test_gradcheck_catches_a_wrong_backward(device):
    class Wrong(Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g * 3  # should be 2x

    x = tinynet.tensor([0.5, 1.5], dtype=tinynet.float64, device=device, requires_grad=True)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for input 0"):
        gradcheck(Wrong.apply, (x,))
    assert gradcheck(Wrong.apply, (x,), raise_exception=False) is False


def test_gradcheck_needs_float64(device):
    x = tinynet.tensor([0.5], device=device, requires_grad=True)
    with pytest.raises(DTypeError, match="float64"):
        gradcheck(lambda t: t * 2, (x,))


def test_gradgradcheck_of_library_ops(device):
    x = tinynet.tensor(R.standard_normal((2, 3)), device=device, requires_grad=True)
    w = tinynet.tensor(R.standard_normal((4, 3)), device=device, requires_grad=True)
    assert gradgradcheck(lambda a, b: F.softmax(F.linear(a, b).tanh(), 1), (x, w))
    assert gradgradcheck(lambda a: F.gelu(a) * F.sigmoid(a) + F.leaky_relu(a, 0.2), (x,))


def test_set_grad_enabled_and_inference_mode(device):
    x = tinynet.ones(2, device=device, requires_grad=True)
    with tinynet.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert tinynet.is_grad_enabled()
    tinynet.set_grad_enabled(False)
    try:
        assert not tinynet.is_grad_enabled()
    finally:
        tinynet.set_grad_enabled(True)
    with tinynet.inference_mode():
        assert not (x * 2).requires_grad and tinynet.is_inference_mode_enabled()
    with tinynet.inference_mode(False):
        assert (x * 2).requires_grad

    @tinynet.inference_mode()
    def f(t):
        return t * 2
    assert not f(x).requires_grad and (x * 2).requires_grad
    with pytest.raises(TypeError):
        tinynet.set_grad_enabled("yes")
