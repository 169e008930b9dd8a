"""The smooth and piecewise activations (F.silu ... F.glu, F.softmin and their layers)
against PyTorch: forward, gradients (float32/float64), gradcheck and gradgradcheck, the
values and gradients exactly at the kinks, in-place forms, reprs, and bad arguments."""
import warnings

import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import assert_close, check_op, rng, torch
from tinynet.errors import ArgumentError, ArgumentTypeError, AutogradError, DTypeError, ShapeError

TF = torch.nn.functional if torch is not None else None
R = rng(3)
X = R.standard_normal((3, 5))
WIDE = R.uniform(-5, 5, (3, 5))  # reaches the kinks at +-3 and 0..6
IMG = R.standard_normal((2, 3, 2, 2))

# name -> (ours, torch's, inputs[, tol])
CASES = {
    "silu": (F.silu, lambda x: TF.silu(x), [X]),
    "softplus": (F.softplus, lambda x: TF.softplus(x), [X]),
    "softplus_beta_threshold": (lambda x: F.softplus(x, 2.0, 1.5), lambda x: TF.softplus(x, 2.0, 1.5), [X]),
    "elu": (F.elu, lambda x: TF.elu(x), [X]),
    "elu_alpha": (lambda x: F.elu(x, 0.4), lambda x: TF.elu(x, 0.4), [X]),
    "selu": (F.selu, lambda x: TF.selu(x), [X]),
    # PyTorch's float64 celu gradient divides by alpha rounded to float32 (1.7 is not exact there)
    "celu": (lambda x: F.celu(x, 1.7), lambda x: TF.celu(x, 1.7), [X], (1e-5, 1e-6)),
    "celu_exact_alpha": (lambda x: F.celu(x, 0.5), lambda x: TF.celu(x, 0.5), [X]),
    "mish": (F.mish, lambda x: TF.mish(x), [X]),
    "hardtanh": (F.hardtanh, lambda x: TF.hardtanh(x), [X]),
    "hardtanh_bounds": (lambda x: F.hardtanh(x, -0.3, 2.0), lambda x: TF.hardtanh(x, -0.3, 2.0), [WIDE]),
    "relu6": (F.relu6, lambda x: TF.relu6(x), [WIDE + 2]),
    "hardswish": (F.hardswish, lambda x: TF.hardswish(x), [WIDE]),
    # PyTorch's float64 hardsigmoid gradient uses 1/6 rounded to float32 (a 3e-8 relative difference)
    "hardsigmoid": (F.hardsigmoid, lambda x: TF.hardsigmoid(x), [WIDE], (1e-5, 1e-6)),
    "logsigmoid": (F.logsigmoid, lambda x: TF.logsigmoid(x), [X * 4]),
    "softsign": (F.softsign, lambda x: TF.softsign(x), [X]),
    "tanhshrink": (F.tanhshrink, lambda x: TF.tanhshrink(x), [X]),
    "glu": (F.glu, lambda x: TF.glu(x), [R.standard_normal((3, 4))]),
    "glu_dim0": (lambda x: F.glu(x, 0), lambda x: TF.glu(x, 0), [R.standard_normal((4, 3))]),
    "softmin": (lambda x: F.softmin(x, 1), lambda x: TF.softmin(x, 1), [X]),
    "prelu_shared": (F.prelu, lambda x, w: TF.prelu(x, w), [IMG, numpy.array([0.25])]),
    "prelu_channels": (F.prelu, lambda x, w: TF.prelu(x, w), [IMG, numpy.array([0.1, -0.5, 2.0])]),
    "prelu_1d": (F.prelu, lambda x, w: TF.prelu(x, w), [X[0], numpy.array(0.3)]),
    "torch_selu": (tinynet.selu, lambda x: torch.selu(x), [X]),
    "torch_celu": (lambda x: tinynet.celu(x, 0.5), lambda x: torch.celu(x, 0.5), [X]),
    "torch_prelu": (tinynet.prelu, lambda x, w: torch.prelu(x, w), [IMG, numpy.array([0.1, -0.5, 2.0])]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch_with_second_derivatives(name, device):
    ours, theirs, inputs, *tol = CASES[name]
    check_op(device, ours, theirs, inputs, second_order=True, tol=tol[0] if tol else None)


# the values at the kinks and the extremes: (ours, torch's, points)
KINKS = {
    "elu_alpha2": (lambda x: F.elu(x, 2.0), lambda x: TF.elu(x, 2.0), [0.0, -0.0, 1.0, -1.0]),
    "elu_negative_alpha": (lambda x: F.elu(x, -0.5), lambda x: TF.elu(x, -0.5), [0.0, -2.0]),
    "celu_alpha2": (lambda x: F.celu(x, 2.0), lambda x: TF.celu(x, 2.0), [0.0, -3.0]),
    "selu": (F.selu, lambda x: TF.selu(x), [0.0, -1.0]),
    "hardtanh": (F.hardtanh, lambda x: TF.hardtanh(x), [-1.0, 1.0, 0.0, -2.0, 2.0]),
    "hardtanh_bounds": (lambda x: F.hardtanh(x, -2.0, 3.0), lambda x: TF.hardtanh(x, -2.0, 3.0), [-2.0, 3.0]),
    "relu6": (F.relu6, lambda x: TF.relu6(x), [0.0, 6.0, 3.0, 7.0, -1.0]),
    "hardswish": (F.hardswish, lambda x: TF.hardswish(x), [-3.0, 3.0, 0.0, -4.0, 4.0]),
    "hardsigmoid": (F.hardsigmoid, lambda x: TF.hardsigmoid(x), [-3.0, 3.0, -4.0, 4.0]),
    "softplus_threshold": (lambda x: F.softplus(x, 2.0, 4.0), lambda x: TF.softplus(x, 2.0, 4.0),
                           [2.0, 2.0001, 1.9999, -500.0, 500.0]),
    "softplus_extremes": (F.softplus, lambda x: TF.softplus(x), [20.0, 100.0, -100.0, -800.0, 800.0]),
    "logsigmoid_extremes": (F.logsigmoid, lambda x: TF.logsigmoid(x), [0.0, -800.0, 800.0, -30.0, 30.0]),
    "silu_extremes": (F.silu, lambda x: TF.silu(x), [0.0, -800.0, 800.0]),
    "mish_extremes": (F.mish, lambda x: TF.mish(x), [0.0, 100.0, -100.0, 1000.0, -1000.0]),
    "softsign_zero": (F.softsign, lambda x: TF.softsign(x), [0.0]),
    "prelu_zero": (lambda x: F.prelu(x, tinynet.tensor([0.3], dtype=x.dtype, device=x.device)),
                   lambda x: TF.prelu(x, torch.tensor([0.3], dtype=x.dtype)), [0.0, -1.0, 2.0]),
}


@pytest.mark.parametrize("name", sorted(KINKS))
def test_values_and_gradients_at_kinks_match_torch(name, device):
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    ours, theirs, points = KINKS[name]
    for dt in ("float32", "float64"):
        a = tinynet.tensor(numpy.array(points, dtype=dt), device=device, requires_grad=True)
        b = torch.tensor(numpy.array(points, dtype=dt), requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no overflow in a branch that is not taken
            y = ours(a)
            y.sum().backward()
        z = theirs(b)
        z.sum().backward()
        tol = 1e-6 if dt == "float32" or name == "hardsigmoid" else 1e-12
        assert_close(y, z, rtol=tol, atol=tol, what=f"{name} value ({dt})")
        assert_close(a.grad, b.grad, rtol=tol, atol=tol, what=f"{name} gradient ({dt})")


def test_softplus_linear_branch_exactly_above_threshold(device):
    x = tinynet.tensor([2.0001], device=device, requires_grad=True)
    y = F.softplus(x, beta=2, threshold=4)
    y.backward()
    assert y.item() == pytest.approx(2.0001) and x.grad.item() == 1.0


INPLACE = {
    "silu": (lambda x: F.silu(x, inplace=True), TF.silu if TF else None),
    "elu": (lambda x: F.elu(x, 0.5, True), lambda x: TF.elu(x, 0.5)),
    "elu_": (lambda x: F.elu_(x, 0.5), lambda x: TF.elu(x, 0.5)),
    "selu": (lambda x: F.selu(x, True), TF.selu if TF else None),
    "selu_": (tinynet.selu_, TF.selu if TF else None),
    "celu": (lambda x: F.celu(x, 2.0, True), lambda x: TF.celu(x, 2.0)),
    "celu_": (lambda x: tinynet.celu_(x, 2.0), lambda x: TF.celu(x, 2.0)),
    "mish": (lambda x: F.mish(x, inplace=True), TF.mish if TF else None),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 0.5, True), lambda x: TF.hardtanh(x, -0.5, 0.5)),
    "hardtanh_": (lambda x: F.hardtanh_(x, -0.5, 0.5), lambda x: TF.hardtanh(x, -0.5, 0.5)),
    "relu6": (lambda x: F.relu6(x * 4, inplace=True), lambda x: TF.relu6(x * 4)),
    "hardswish": (lambda x: F.hardswish(x * 4, inplace=True), lambda x: TF.hardswish(x * 4)),
    "hardsigmoid": (lambda x: F.hardsigmoid(x * 4, inplace=True), lambda x: TF.hardsigmoid(x * 4)),
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_forms_write_into_the_input_and_keep_gradients(name, device):
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    ours, theirs = INPLACE[name]
    leaf = tinynet.tensor(X, device=device, requires_grad=True)
    h = leaf * 1.0
    out = ours(h)
    assert out is h or name in ("relu6", "hardswish", "hardsigmoid")  # (x * 4 is a new tensor there)
    b = torch.tensor(X, requires_grad=True)
    ref = theirs(b)
    assert_close(out, ref, rtol=1e-12, atol=1e-12)
    r = rng(5).standard_normal(X.shape)
    (out * tinynet.tensor(r, device=device)).sum().backward()
    (ref * torch.tensor(r)).sum().backward()
    assert_close(leaf.grad, b.grad, rtol=1e-6 if name == "hardsigmoid" else 1e-10, atol=1e-12)
    with tinynet.no_grad():  # without recording: the values land in the tensor itself
        t = tinynet.tensor(X, device=device)
        assert ours(t) is t or name in ("relu6", "hardswish", "hardsigmoid")


def test_inplace_on_a_leaf_that_requires_grad_raises(device):
    x = tinynet.tensor(X, device=device, requires_grad=True)
    with pytest.raises(AutogradError):
        F.elu(x, inplace=True)
    with pytest.raises(AutogradError):
        nn.SiLU(inplace=True)(x)


def test_integer_inputs_like_torch(device):
    ints = numpy.array([-3, 0, 2, 9])
    t = tinynet.tensor(ints, device=device)
    assert F.hardtanh(t).dtype == tinynet.int64 and F.hardtanh(t).tolist() == [-1, 0, 1, 1]
    assert F.relu6(t).tolist() == [0, 0, 2, 6]
    assert F.hardtanh(t, -1.5, 2.7).tolist() == [-1, 0, 2, 2]  # bounds converted to integers, as PyTorch
    assert F.relu6(tinynet.tensor([3, 200], dtype=tinynet.uint8, device=device)).tolist() == [3, 6]
    assert F.softsign(t).dtype == tinynet.float32
    assert_close(F.softsign(t), TF.softsign(torch.tensor(ints)) if torch else ints / (1 + numpy.abs(ints)), 1e-6)
    assert F.tanhshrink(t).dtype == tinynet.float32
    for fn in (F.silu, F.elu, F.softplus, F.mish, F.hardswish, F.logsigmoid, F.glu):
        with pytest.raises(DTypeError):
            fn(t)


# (module ours, module torch's, input)
LAYERS = [
    (lambda m: m.SiLU(), X), (lambda m: m.Softplus(), X), (lambda m: m.Softplus(beta=2.0, threshold=1.0), X),
    (lambda m: m.ELU(), X), (lambda m: m.ELU(alpha=0.5), X), (lambda m: m.SELU(), X), (lambda m: m.CELU(2.0), X),
    (lambda m: m.Mish(), X), (lambda m: m.Hardtanh(), X), (lambda m: m.Hardtanh(-2.0, 0.5), WIDE),
    (lambda m: m.ReLU6(), WIDE + 2), (lambda m: m.Hardswish(), WIDE), (lambda m: m.Hardsigmoid(), WIDE),
    (lambda m: m.LogSigmoid(), X), (lambda m: m.Softsign(), X), (lambda m: m.Tanhshrink(), X),
    (lambda m: m.GLU(), R.standard_normal((3, 4))), (lambda m: m.GLU(dim=0), R.standard_normal((4, 2))),
    (lambda m: m.Softmin(dim=1), X), (lambda m: m.Softmin(dim=0), X),
    (lambda m: m.Softmax2d(), IMG), (lambda m: m.Softmax2d(), IMG[0]),
    (lambda m: m.PReLU(), IMG), (lambda m: m.PReLU(3, init=0.1), IMG),
]


@pytest.mark.parametrize("k", range(len(LAYERS)))
def test_layers_match_torch(k, device):
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    make, x = LAYERS[k]
    ours, theirs = make(nn), make(torch.nn)
    assert repr(ours) == repr(theirs)
    theirs.double()
    ours.to(device).double()
    if isinstance(theirs, torch.nn.PReLU):  # different slopes per channel, copied across
        with torch.no_grad():
            theirs.weight.copy_(torch.linspace(-0.5, 0.7, theirs.num_parameters, dtype=torch.float64))
        ours.load_state_dict({k_: v.numpy() for k_, v in theirs.state_dict().items()})
        assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    a = tinynet.tensor(x, device=device, requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    y, z = ours(a), theirs(b)
    assert_close(y, z, rtol=1e-10, atol=1e-12)
    r = rng(8).standard_normal(tuple(z.shape))
    (y * tinynet.tensor(r, device=device)).sum().backward()
    (z * torch.tensor(r)).sum().backward()
    assert_close(a.grad, b.grad, rtol=1e-6, atol=1e-9)
    for p, q in zip(ours.parameters(), theirs.parameters()):
        assert_close(p.grad, q.grad, rtol=1e-10, atol=1e-12)


def test_prelu_state_dict_both_ways_and_default_init():
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    ours, theirs = nn.PReLU(4, init=0.2), torch.nn.PReLU(4, init=0.2)
    assert_close(ours.weight, theirs.weight)
    assert ours.weight.shape == (4,) and ours.weight.dtype == tinynet.float32 and ours.weight.requires_grad
    ours.weight.data.copy_(tinynet.tensor(numpy.arange(4) * 0.1))
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    assert_close(theirs.weight, numpy.arange(4, dtype=numpy.float32) * 0.1)


def test_inplace_layers_repr_and_write_into_input(device):
    if torch is None:
        pytest.skip("PyTorch not installed: reference unavailable")
    for name in ("SiLU", "SELU", "Mish", "Hardswish", "Hardsigmoid", "ReLU6", "ELU", "CELU", "Hardtanh"):
        ours, theirs = getattr(nn, name)(inplace=True), getattr(torch.nn, name)(inplace=True)
        assert repr(ours) == repr(theirs)
        t = tinynet.tensor(X, device=device)
        ref = theirs(torch.tensor(X))
        assert ours(t) is t
        assert_close(t, ref, rtol=1e-12, atol=1e-12)


ERRORS = [
    (lambda: F.hardtanh(tinynet.zeros(3), 2.0, 1.0), ArgumentError, "min_val cannot be greater"),
    (lambda: F.hardtanh(tinynet.zeros(3), "a"), ArgumentTypeError, "min_val"),
    (lambda: F.hardtanh(tinynet.zeros(3, dtype=tinynet.bool)), DTypeError, "bool"),
    (lambda: F.hardtanh(tinynet.zeros(3, dtype=tinynet.uint8)), ArgumentError, "unsigned type"),
    (lambda: F.celu(tinynet.zeros(3), 0.0), ArgumentError, "alpha cannot be 0"),
    (lambda: F.elu(tinynet.zeros(3), None), ArgumentTypeError, "alpha"),
    (lambda: F.softplus(tinynet.zeros(3), beta="x"), ArgumentTypeError, "beta"),
    (lambda: F.silu(numpy.zeros(3)), ArgumentTypeError, "silu: input must be a Tensor"),
    (lambda: F.glu(tinynet.zeros(3, 5), 1), ShapeError, "dimension 1 is size 5"),
    (lambda: F.glu(tinynet.tensor(1.0)), ShapeError, "scalars"),
    (lambda: F.glu(tinynet.zeros(3, 4), 2), IndexError, "glu: dimension out of range"),
    (lambda: F.prelu(tinynet.zeros(2, 4), tinynet.zeros(3)), ShapeError, "weight has 3 elements.*4 channel"),
    (lambda: F.prelu(tinynet.zeros(2, 4), tinynet.zeros(2, 2)), ShapeError, "scalar or 1-D"),
    (lambda: F.prelu(tinynet.zeros(4), tinynet.zeros(4)), ShapeError, "1 channel"),
    (lambda: F.prelu(tinynet.zeros(2, 4), tinynet.zeros(1, dtype=tinynet.float64)), DTypeError, "dtype"),
    (lambda: nn.Hardtanh(1.0, 1.0), ArgumentError, "Hardtanh: max_val must be greater"),
    (lambda: nn.CELU(0.0), ArgumentError, "CELU: alpha cannot be 0"),
    (lambda: nn.PReLU(0), ArgumentError, "num_parameters must be >= 1"),
    (lambda: nn.PReLU(2.5), ArgumentTypeError, "num_parameters must be an int"),
    (lambda: nn.GLU(dim=1.5), ArgumentTypeError, "GLU: dim must be an int"),
    (lambda: nn.Softplus(beta=None), ArgumentTypeError, "Softplus: beta"),
    (lambda: nn.Softmax2d()(tinynet.zeros(3, 4)), ShapeError, "Softmax2d: expected input to be 3-D or 4-D, got 2-D"),
    (lambda: nn.PReLU(3)(tinynet.zeros(2, 4)), ShapeError, "prelu: mismatch"),
]


@pytest.mark.parametrize("k", range(len(ERRORS)))
def test_bad_arguments_raise_typed_errors(k):
    fn, error, match = ERRORS[k]
    with pytest.raises(error, match=match):
        fn()


def test_hardtanh_deprecated_keywords_warn():
    with pytest.warns(FutureWarning):
        m = nn.Hardtanh(min_value=-2.0)
    assert m.min_val == -2.0
