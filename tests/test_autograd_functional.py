"""tinynet.autograd.functional against torch.autograd.functional on the same inputs
(float64): values, return structures (Tensor vs tuple, nesting), create_graph, strict."""
import numpy
import pytest

import tinynet
import tinynet.autograd.functional as F
from tinynet.errors import ArgumentError, ArgumentTypeError, AutogradError, ShapeError

from helpers import as_numpy, rng, torch

pytestmark = pytest.mark.skipif(torch is None, reason="PyTorch (the reference) is not installed")
TF = torch.autograd.functional if torch is not None else None


def same(ours, ref):
    """Same nesting (tuple vs Tensor), shapes and values; results detached."""
    if isinstance(ref, (tuple, list)):
        assert isinstance(ours, tuple) and len(ours) == len(ref), (type(ours), type(ref))
        for a, b in zip(ours, ref):
            same(a, b)
        return
    assert isinstance(ours, tinynet.Tensor) and tuple(ours.shape) == tuple(ref.shape), (ours, ref.shape)
    numpy.testing.assert_allclose(as_numpy(ours), as_numpy(ref), rtol=1e-10, atol=1e-12)


def point(device, *shapes):
    r = rng(1)
    arrs = [r.standard_normal(s) for s in shapes]
    return ([tinynet.tensor(a, dtype=tinynet.float64, device=device) for a in arrs],
            [torch.tensor(a, dtype=torch.float64) for a in arrs])


# M is tinynet or torch; each maps (x (3,), W (3, 2)) to outputs
def one_to_one(M):
    return lambda x: M.tanh(x) * M.sin(x)


def two_to_two(M):
    return lambda x, W: (M.tanh(x @ W), M.softmax(x, dim=0).sum())


def one_to_two(M):
    return lambda x: (M.sin(x), M.tanh(x[:2]).sum())


def scalar_of_two(M):
    return lambda x, W: (M.tanh(x @ W) ** 2).sum() + (x ** 3).sum()


def test_jacobian_structures_match_torch(device):
    (x, W), (xt, Wt) = point(device, (3,), (3, 2))
    same(F.jacobian(one_to_one(tinynet), x), TF.jacobian(one_to_one(torch), xt))
    same(F.jacobian(two_to_two(tinynet), (x, W)), TF.jacobian(two_to_two(torch), (xt, Wt)))
    same(F.jacobian(one_to_two(tinynet), x), TF.jacobian(one_to_two(torch), xt))
    same(F.jacobian(lambda x, W: M_out(tinynet, x, W), (x, W)), TF.jacobian(lambda x, W: M_out(torch, x, W), (xt, Wt)))
    # forward mode (with vectorize, as PyTorch requires); PyTorch returns lists for tuple inputs there
    same(F.jacobian(one_to_one(tinynet), x, vectorize=True, strategy="forward-mode"),
         TF.jacobian(one_to_one(torch), xt, vectorize=True, strategy="forward-mode"))
    f2 = lambda M: lambda x, W: ((W * x[:, None]).tanh(), M.sin(x).sum())  # noqa: E731
    same(F.jacobian(f2(tinynet), (x, W), vectorize=True, strategy="forward-mode"),
         TF.jacobian(f2(torch), (xt, Wt), vectorize=True, strategy="forward-mode"))
    same(F.jacobian(two_to_two(tinynet), (x, W), vectorize=True), TF.jacobian(two_to_two(torch), (xt, Wt),
                                                                               vectorize=True))


def M_out(M, x, W):
    return M.tanh(x @ W)  # tuple inputs, one output


def test_hessian_vjp_jvp_hvp_vhp_match_torch(device):
    (x, W, u, v), (xt, Wt, ut, vt) = point(device, (3,), (3, 2), (2,), (3,))
    same(F.hessian(lambda x: (x.tanh() * x.sin()).sum(), x), TF.hessian(lambda x: (x.tanh() * x.sin()).sum(), xt))
    same(F.hessian(scalar_of_two(tinynet), (x, W)), TF.hessian(scalar_of_two(torch), (xt, Wt)))
    s2 = lambda M: lambda x, W: (M.tanh(W * x[:, None]) ** 2).sum() + (x ** 3).sum()  # noqa: E731
    # (PyTorch's forward mode fails on a 1-D @ 2-D matmul under its vmap: broadcasting instead)
    same(F.hessian(s2(tinynet), (x, W), outer_jacobian_strategy="forward-mode", vectorize=True),
         TF.hessian(s2(torch), (xt, Wt), outer_jacobian_strategy="forward-mode", vectorize=True))
    one = tinynet.tensor(0.5, dtype=tinynet.float64, device=device)
    same(F.vjp(two_to_two(tinynet), (x, W), (u, one)), TF.vjp(two_to_two(torch), (xt, Wt), (ut, torch.tensor(0.5,
         dtype=torch.float64))))
    same(F.vjp(lambda x: x.sin().sum(), x), TF.vjp(lambda x: x.sin().sum(), xt))
    same(F.vjp(one_to_one(tinynet), x, v), TF.vjp(one_to_one(torch), xt, vt))
    same(F.jvp(two_to_two(tinynet), (x, W), (v, W * 0.3)), TF.jvp(two_to_two(torch), (xt, Wt), (vt, Wt * 0.3)))
    same(F.jvp(one_to_two(tinynet), x, v), TF.jvp(one_to_two(torch), xt, vt))
    same(F.jvp(lambda s: s.sin() * 2, x[0]), TF.jvp(lambda s: s.sin() * 2, xt[0]))
    for ours, theirs in ((F.hvp, TF.hvp), (F.vhp, TF.vhp)):
        same(ours(scalar_of_two(tinynet), (x, W), (v, W * 0.3)), theirs(scalar_of_two(torch), (xt, Wt), (vt, Wt * 0.3)))
        same(ours(lambda x: (x.tanh() ** 3).sum(), x, v), theirs(lambda x: (x.tanh() ** 3).sum(), xt, vt))


def test_create_graph_results_are_differentiable(device):
    (x, c), (xt, ct) = point(device, (3,), (3,))
    c.requires_grad_(True)
    ct.requires_grad_(True)
    for create_graph in (False, True):
        jac = F.jacobian(lambda x: (x * c).sin(), x, create_graph=create_graph)
        jt = TF.jacobian(lambda x: (x * ct).sin(), xt, create_graph=create_graph)
        assert jac.requires_grad == jt.requires_grad == create_graph
    # d/dc of the trace of the Jacobian: through create_graph, as PyTorch
    (F.jacobian(lambda x: (x * c).sin(), x, create_graph=True).diagonal().sum()).backward()
    (TF.jacobian(lambda x: (x * ct).sin(), xt, create_graph=True).diagonal().sum()).backward()
    numpy.testing.assert_allclose(as_numpy(c.grad), as_numpy(ct.grad), rtol=1e-10)
    out, res = F.hvp(lambda x: ((x * c) ** 3).sum(), x, x, create_graph=True)
    outt, rest = TF.hvp(lambda x: ((x * ct) ** 3).sum(), xt, xt, create_graph=True)
    c.grad, ct.grad = None, None
    res.sum().backward()
    rest.sum().backward()
    numpy.testing.assert_allclose(as_numpy(c.grad), as_numpy(ct.grad), rtol=1e-10)


def test_strict_and_unused_inputs(device):
    (x,), (xt,) = point(device, (3,))
    ones = tinynet.ones(2, dtype=tinynet.float64, device=device)
    same(F.jacobian(lambda x: ones * 2, x), TF.jacobian(lambda x: torch.ones(2, dtype=torch.float64) * 2, xt))
    same(F.jacobian(lambda x, y: x * 2, (x, x)), TF.jacobian(lambda x, y: x * 2, (xt, xt)))
    with pytest.raises(AutogradError, match="output 0 of the user-provided function does not require gradients"):
        F.jacobian(lambda x: ones, x, strict=True)
    with pytest.raises(AutogradError, match="does not depend on input 1"):
        F.jacobian(lambda x, y: x * 2, (x, x), strict=True)
    with pytest.raises(AutogradError, match="Jacobian of the user-provided function with respect to input 0"):
        F.hvp(lambda x: (x * 1).sum(), x, x, strict=True)
    with pytest.raises(AutogradError, match="strict=True and vectorize=True"):
        F.jacobian(lambda x: x, x, strict=True, vectorize=True)
    with pytest.raises(AutogradError, match="forward-mode"):
        F.jacobian(lambda x: x, x, strategy="forward-mode")
    # found by tests/test_fuzz_namespaces.py: PyTorch refuses create_graph with the forward mode (NotImplementedError,
    # a RuntimeError), and so does tinynet, for the Hessian's outer Jacobian too
    with pytest.raises(NotImplementedError):
        TF.jacobian(lambda x: x, torch.ones(2), create_graph=True, vectorize=True, strategy="forward-mode")
    with pytest.raises(AutogradError, match="create_graph=True and strategy='forward-mode'"):
        F.jacobian(lambda x: x, x, create_graph=True, vectorize=True, strategy="forward-mode")
    with pytest.raises(AutogradError, match="create_graph=True and strategy='forward-mode'"):
        F.hessian(lambda x: (x * x).sum(), x, create_graph=True, vectorize=True, outer_jacobian_strategy="forward-mode")
    with pytest.raises(ArgumentError, match="strategy"):
        F.jacobian(lambda x: x, x, strategy="sideways")


def test_bad_input_is_typed_and_named(device):
    (x,), _ = point(device, (3,))
    with pytest.raises(ArgumentTypeError, match="jacobian: the inputs must be a Tensor or a tuple of Tensors, got "
                                                "list"):
        F.jacobian(lambda x: x, [x])
    with pytest.raises(ArgumentTypeError, match="outputs of the user-provided function"):
        F.jacobian(lambda x: 1.0, x)
    with pytest.raises(ArgumentError, match="vjp: v can be None only"):
        F.vjp(lambda x: x, x)
    with pytest.raises(ShapeError, match=r"vjp: v has invalid size: should be \(3,\) but got \(2,\)"):
        F.vjp(lambda x: x, x, x[:2])
    with pytest.raises(ArgumentError, match="jvp: v can be None only"):
        F.jvp(lambda x: x, x)
    with pytest.raises(ShapeError, match="hvp: the Tensor the function returns must have one element"):
        F.hvp(lambda x: x, x, x)
    with pytest.raises(ArgumentTypeError, match="hessian: the function must return a single Tensor"):
        F.hessian(lambda x: (x.sum(), x.sum()), x)
    with pytest.raises(ShapeError, match="v is a tuple of invalid length"):
        F.hvp(lambda x, y: (x * y).sum(), (x, x), (x,))
