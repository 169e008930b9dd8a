"""nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm, orthogonal) and
the hook-based nn.utils.weight_norm / spectral_norm, against PyTorch on the same weights:
state-dict keys, parametrized values, buffers after power iteration, gradients."""
import numpy
import pytest

import tinynet
from helpers import as_numpy, assert_close, torch
from tinynet import errors
from tinynet.nn.utils import parametrizations as PZ
from tinynet.nn.utils import parametrize as P

TP, TPZ = torch.nn.utils.parametrize, torch.nn.utils.parametrizations
R = numpy.random.default_rng(7)


def _load(module, tmodule, device):
    """Give ``module`` (tinynet) ``tmodule``'s state, as float64, on ``device``."""
    module.double().to(device)
    sd = {k: tinynet.tensor(v.detach().numpy(), device=device) for k, v in tmodule.state_dict().items()}
    module.load_state_dict(sd)
    return module


def _pair(cls, *args):
    torch.manual_seed(0)
    t = getattr(torch.nn, cls)(*args).double()
    return getattr(tinynet.nn, cls)(*args), t


class Symmetric(tinynet.nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT


class TSymmetric(torch.nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).mT


class Exp(tinynet.nn.Module):
    def forward(self, X):
        return X.exp()

    def right_inverse(self, Y):
        return Y.log()


class TExp(torch.nn.Module):
    def forward(self, X):
        return X.exp()

    def right_inverse(self, Y):
        return Y.log()


def test_register_matches_torch(device):
    m, t = _pair("Linear", 3, 3)
    P.register_parametrization(m, "weight", Symmetric())
    TP.register_parametrization(t, "weight", TSymmetric())
    assert list(m.state_dict()) == list(t.state_dict()) == ["bias", "parametrizations.weight.original"]
    _load(m, t, device)
    assert type(m).__name__ == "ParametrizedLinear" and P.type_before_parametrizations(m) is tinynet.nn.Linear
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight") and not P.is_parametrized(m, "bias")
    assert_close(m.weight, t.weight, rtol=1e-12, what="symmetric weight")
    x = R.standard_normal((5, 3))
    m(tinynet.tensor(x, device=device)).square().sum().backward()
    t(torch.tensor(x)).square().sum().backward()
    assert_close(m.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad, rtol=1e-10,
                 what="gradient of the original")
    # a second parametrization chains after the first, as torch's
    P.register_parametrization(m, "weight", Exp())
    TP.register_parametrization(t, "weight", TExp())
    assert_close(m.weight, t.weight, rtol=1e-12, what="chained")
    assert len(m.parametrizations.weight) == 2


def test_right_inverse_assignment_and_cached(device):
    m, t = _pair("Linear", 2, 4)
    P.register_parametrization(m.double(), "weight", Exp())
    TP.register_parametrization(t, "weight", TExp())
    _load(m, t, device)
    value = numpy.abs(R.standard_normal((4, 2))) + 0.5
    m.weight = tinynet.tensor(value, device=device)
    with torch.no_grad():
        t.weight = torch.tensor(value)
    assert_close(m.parametrizations.weight.original, t.parametrizations.weight.original, rtol=1e-12,
                 what="original after assignment")
    assert_close(m.weight, value, rtol=1e-12, what="weight after assignment")
    assert m.weight is not m.weight
    with P.cached():
        assert m.weight is m.weight
    assert m.weight is not m.weight


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations_matches_torch(leave, device):
    m, t = _pair("Linear", 3, 3)
    P.register_parametrization(m, "weight", Symmetric())
    TP.register_parametrization(t, "weight", TSymmetric())
    _load(m, t, device)
    original = m.parametrizations.weight.original
    P.remove_parametrizations(m, "weight", leave_parametrized=leave)
    TP.remove_parametrizations(t, "weight", leave_parametrized=leave)
    assert type(m) is tinynet.nn.Linear and not P.is_parametrized(m) and "parametrizations" not in m._modules
    assert list(m.state_dict()) == list(t.state_dict()) == ["bias", "weight"]
    assert m.weight is original and isinstance(m.weight, tinynet.nn.Parameter)
    assert_close(m.weight, t.weight, rtol=1e-12, what="weight after removal")


@pytest.mark.parametrize("cls,args,dim", [("Linear", (5, 3), 0), ("Linear", (5, 3), 1), ("Linear", (5, 3), None),
                                          ("Conv2d", (2, 4, 3), 0)])
def test_weight_norm_matches_torch(cls, args, dim, device):
    m, t = _pair(cls, *args)
    PZ.weight_norm(m, dim=dim)
    TPZ.weight_norm(t, dim=dim)
    assert list(m.state_dict()) == list(t.state_dict())
    # registration computes g from the weight: the same g as torch's from the same weight
    m2, t2 = _pair(cls, *args)
    _load(m2, t2, device)
    PZ.weight_norm(m2, dim=dim)
    assert_close(m2.parametrizations.weight.original0, t.parametrizations.weight.original0, rtol=1e-12, what="g")
    _load(m, t, device)
    shape = (4, 5) if cls == "Linear" else (1, 2, 6, 6)
    x = R.standard_normal(shape)
    m(tinynet.tensor(x, device=device)).square().sum().backward()
    t(torch.tensor(x)).square().sum().backward()
    assert_close(m.weight, t.weight, rtol=1e-12, what="weight")
    for k in ("original0", "original1"):
        assert_close(getattr(m.parametrizations.weight, k).grad, getattr(t.parametrizations.weight, k).grad,
                     rtol=1e-9, atol=1e-12, what=k)


@pytest.mark.parametrize("cls,args", [("Linear", (6, 4)), ("Conv2d", (3, 4, 2)), ("ConvTranspose2d", (3, 4, 2))])
def test_spectral_norm_matches_torch(cls, args, device):
    m, t = _pair(cls, *args)
    PZ.spectral_norm(m, n_power_iterations=2)
    TPZ.spectral_norm(t, n_power_iterations=2)
    assert list(m.state_dict()) == list(t.state_dict())
    assert numpy.isclose(numpy.linalg.norm(as_numpy(m.parametrizations.weight[0]._u)), 1.0)
    _load(m, t, device)
    x = R.standard_normal((2, 6) if cls == "Linear" else (2, 3, 5, 5))
    for step in range(2):  # training mode: each forward advances u and v two steps
        out = m(tinynet.tensor(x, device=device))
        tout = t(torch.tensor(x))
        assert_close(out, tout, rtol=1e-9, atol=1e-12, what=f"output, step {step}")
        for b in ("_u", "_v"):
            assert_close(getattr(m.parametrizations.weight[0], b), getattr(t.parametrizations.weight[0], b),
                         rtol=1e-9, atol=1e-12, what=b)
    out.square().sum().backward()
    tout.square().sum().backward()
    assert_close(m.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad, rtol=1e-8,
                 atol=1e-12, what="gradient")
    m.eval()
    t.eval()
    u = as_numpy(m.parametrizations.weight[0]._u).copy()
    assert_close(m.weight, t.weight, rtol=1e-9, atol=1e-12, what="eval weight")
    assert numpy.array_equal(as_numpy(m.parametrizations.weight[0]._u), u)  # eval: no power iteration


@pytest.mark.parametrize("shape", [(4, 4), (6, 3), (3, 6)])
@pytest.mark.parametrize("trivial", [True, False])
def test_orthogonal_householder_matches_torch(shape, trivial, device):
    lin = ("Linear", shape[1], shape[0])
    m, t = _pair(*lin)
    PZ.orthogonal(m, orthogonal_map="householder", use_trivialization=trivial)
    TPZ.orthogonal(t, orthogonal_map="householder", use_trivialization=trivial)
    assert list(m.state_dict()) == list(t.state_dict())
    _load(m, t, device)
    W = as_numpy(m.weight)
    small = min(shape)
    gram = W @ W.T if shape[0] < shape[1] else W.T @ W
    assert numpy.allclose(gram, numpy.eye(small), atol=1e-12)
    assert_close(m.weight, t.weight, rtol=1e-10, atol=1e-12, what="orthogonal weight")
    x = R.standard_normal((2, shape[1]))
    m(tinynet.tensor(x, device=device)).square().sum().backward()
    t(torch.tensor(x)).square().sum().backward()
    assert_close(m.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad, rtol=1e-8,
                 atol=1e-12, what="gradient")
    if shape[0] == shape[1] or not trivial:  # registration is deterministic here: the same stored state
        m2, t2 = _pair(*lin)
        _load(m2, t2, device)
        PZ.orthogonal(m2, orthogonal_map="householder", use_trivialization=trivial)
        for k, v in t.state_dict().items():
            if k != "bias":
                assert_close(m2.state_dict()[k], v, rtol=1e-9, atol=1e-12, what=k)


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley"])
def test_orthogonal_matrix_exp_and_cayley(omap, device):
    m, t = _pair("Linear", 4, 4)
    PZ.orthogonal(m, orthogonal_map=omap)
    TPZ.orthogonal(t, orthogonal_map=omap)
    _load(m, t, device)
    with torch.no_grad():
        t.parametrizations.weight.original.add_(0.1)
    _load(m, t, device)
    assert_close(m.weight, t.weight, rtol=1e-9, atol=1e-12, what=omap)


def test_old_style_weight_norm_and_spectral_norm_match_torch(device):
    m, t = _pair("Linear", 5, 3)
    tinynet.nn.utils.weight_norm(m)
    torch.nn.utils.weight_norm(t)
    assert list(m.state_dict()) == list(t.state_dict()) == ["bias", "weight_g", "weight_v"]
    _load(m, t, device)
    x = R.standard_normal((2, 5))
    assert_close(m(tinynet.tensor(x, device=device)), t(torch.tensor(x)), rtol=1e-12, what="weight_norm output")
    tinynet.nn.utils.remove_weight_norm(m)
    torch.nn.utils.remove_weight_norm(t)
    assert list(m.state_dict()) == ["bias", "weight"] and isinstance(m.weight, tinynet.nn.Parameter)
    assert_close(m.weight, t.weight, rtol=1e-12, what="weight after remove_weight_norm")

    m, t = _pair("Linear", 5, 3)
    tinynet.nn.utils.spectral_norm(m)
    torch.nn.utils.spectral_norm(t)
    assert sorted(m.state_dict()) == sorted(t.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    _load(m, t, device)
    for _ in range(2):
        assert_close(m(tinynet.tensor(x, device=device)), t(torch.tensor(x)), rtol=1e-9, what="spectral output")
        assert_close(m.weight_u, t.weight_u, rtol=1e-9, atol=1e-12, what="weight_u")
    tinynet.nn.utils.remove_spectral_norm(m)
    torch.nn.utils.remove_spectral_norm(t)
    assert_close(m.weight, t.weight, rtol=1e-9, what="weight after remove_spectral_norm")


def test_bad_input():
    m = tinynet.nn.Linear(3, 3)
    with pytest.raises(errors.ArgumentError, match="register_parametrization: .* named 'nope'"):
        P.register_parametrization(m, "nope", Symmetric())
    with pytest.raises(errors.ArgumentTypeError, match="register_parametrization: parametrization"):
        P.register_parametrization(m, "weight", lambda x: x)

    class Cut(tinynet.nn.Module):
        def forward(self, X):
            return X[:2]
    with pytest.raises(errors.ShapeError, match="register_parametrization: .*shape"):
        P.register_parametrization(tinynet.nn.Linear(3, 3), "weight", Cut())
    P.register_parametrization(m2 := tinynet.nn.Linear(3, 3), "weight", Cut(), unsafe=True)
    assert tuple(m2.weight.shape) == (2, 3)
    with pytest.raises(errors.ArgumentError, match="remove_parametrizations: .* 'weight'"):
        P.remove_parametrizations(tinynet.nn.Linear(2, 2), "weight")
    with pytest.raises(errors.ArgumentError, match="spectral_norm: n_power_iterations"):
        PZ.spectral_norm(tinynet.nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(errors.IndexOutOfRangeError, match="weight_norm: dim 3"):
        PZ.weight_norm(tinynet.nn.Linear(2, 2), dim=3)
    with pytest.raises(errors.ArgumentError, match="orthogonal: expected a matrix"):
        PZ.orthogonal(tinynet.nn.Linear(2, 2), name="bias")
    with pytest.raises(errors.ArgumentError, match="orthogonal: orthogonal_map must be"):
        PZ.orthogonal(tinynet.nn.Linear(2, 2), orthogonal_map="bogus")
    with pytest.raises(errors.ArgumentError, match="weight_norm: cannot register two"):
        tinynet.nn.utils.weight_norm(tinynet.nn.utils.weight_norm(tinynet.nn.Linear(2, 2)))
    with pytest.raises(errors.ArgumentError, match="remove_spectral_norm"):
        tinynet.nn.utils.remove_spectral_norm(tinynet.nn.Linear(2, 2))
