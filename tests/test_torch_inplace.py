"""The torch-level in-place functions (``tinynet.exp_(x)``, ``tinynet.clamp_(x, min=0)``, ...) and the
in-place methods added with them (``nan_to_num_``, ``conj_physical_``, ``addmm_``, ``round_(decimals=)``),
against PyTorch's on every backend: values written, the tensor returned, the gradient through the
in-place change of a non-leaf, and the refusals."""
import numpy
import pytest

import tinynet
from helpers import assert_close, rng, torch
from tinynet import errors
from tinynet.ops import inplace_torch

R = rng(5)
DOMAIN = {"acosh_": (1.1, 3.0), "arccosh_": (1.1, 3.0), "asin_": (-0.9, 0.9), "acos_": (-0.9, 0.9),
          "arcsin_": (-0.9, 0.9), "arccos_": (-0.9, 0.9), "atanh_": (-0.9, 0.9), "arctanh_": (-0.9, 0.9),
          "log_": (0.1, 3.0), "log2_": (0.1, 3.0), "log10_": (0.1, 3.0), "log1p_": (-0.5, 3.0), "rsqrt_": (0.1, 3.0),
          "sqrt_": (0.1, 3.0), "logit_": (0.05, 0.95), "reciprocal_": (0.5, 2.0), "i0_": (-2.0, 2.0)}
UNARY = ["abs_", "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_",
         "asinh_", "atan_", "atanh_", "ceil_", "cos_", "cosh_", "deg2rad_", "erf_", "erfc_", "exp2_", "exp_",
         "expm1_", "fix_", "floor_", "frac_", "i0_", "log10_", "log1p_", "log2_", "log_", "logit_", "neg_",
         "negative_", "rad2deg_", "reciprocal_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_",
         "square_", "tan_", "tanh_", "trunc_", "zero_", "nan_to_num_", "conj_physical_"]
# PyTorch has no derivative for these in-place on a non-leaf: compare with its out-of-place one
NO_TORCH_GRAD = {"acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_", "arctanh_"}


@pytest.mark.parametrize("name", UNARY)
def test_torch_level_unary_inplace_matches_torch(name, device):
    lo, hi = DOMAIN.get(name, (-2.0, 2.0))
    x = R.uniform(lo, hi, (3, 4))
    t = tinynet.tensor(x, device=device, requires_grad=True)
    p = torch.tensor(x, requires_grad=True)
    a, b = t * 1.0, p * 1.0  # non-leaves: the change is recorded
    assert getattr(tinynet, name)(a) is a
    getattr(torch, name)(b)
    assert_close(a, b, rtol=1e-12, atol=1e-12, what=f"{name} values")
    g = R.standard_normal((3, 4))
    (a * tinynet.tensor(g, device=device)).sum().backward()
    if name in NO_TORCH_GRAD:
        b = getattr(torch, name[:-1])(p * 1.0)
    (b * torch.tensor(g)).sum().backward()
    assert_close(t.grad, p.grad, rtol=1e-10, atol=1e-12, what=f"{name} gradient")


@pytest.mark.parametrize("name, args, kwargs", [
    ("clamp_", (), {"min": -0.5, "max": 0.7}), ("clip_", (-0.2,), {}), ("clamp_min_", (0.1,), {}),
    ("clamp_max_", (0.1,), {}), ("fill_", (2.5,), {}), ("xlogy_", (1.5,), {}), ("logit_", (), {"eps": 0.2}),
    ("round_", (), {"decimals": 1}), ("nan_to_num_", (), {"nan": 3.0})])
def test_torch_level_inplace_with_arguments(name, args, kwargs, device):
    x = R.uniform(0.05, 0.95, (2, 5)) * numpy.array([1, -1, 1, 1, -1])
    a, b = tinynet.tensor(x, device=device), torch.tensor(x)
    out = getattr(tinynet, name)(a, *args, **kwargs)
    assert out is a
    assert_close(a, getattr(torch, name)(b, *args, **kwargs), rtol=1e-12, atol=1e-12, what=name)


def test_nan_to_num_and_index_put_in_place(device):
    x = numpy.array([numpy.nan, numpy.inf, -numpy.inf, 1.0])
    a = tinynet.tensor(x, device=device)
    assert a.nan_to_num_(posinf=5.0) is a
    assert_close(a, torch.tensor(x).nan_to_num_(posinf=5.0), rtol=0, atol=0, what="nan_to_num_")
    a, b = tinynet.zeros(5, device=device), torch.zeros(5, dtype=torch.float32)
    idx = numpy.array([0, 3, 3])
    tinynet.index_put_(a, (tinynet.tensor(idx, device=device),), tinynet.ones(3, device=device), accumulate=True)
    torch.index_put_(b, (torch.tensor(idx),), torch.ones(3), accumulate=True)
    assert_close(a, b, rtol=0, atol=0, what="index_put_")


def test_detach_and_get_device(device):
    x = tinynet.ones(2, device=device, requires_grad=True)
    y = x * 2
    d = tinynet.detach(y)
    assert not d.requires_grad and d.data_ptr() == y.data_ptr()
    assert tinynet.detach_(y) is y and not y.requires_grad and y.grad_fn is None
    assert tinynet.get_device(x) == (-1 if device == "cpu" else x.array.device.id)
    assert torch.get_device(torch.ones(2)) == -1


def test_conj_physical_in_place(device):
    z = numpy.array([1 + 2j, -3 - 1j])
    a = tinynet.tensor(z, device=device)
    assert tinynet.conj_physical_(a) is a
    assert_close(a, torch.conj_physical_(torch.tensor(z)), rtol=0, atol=0, what="conj_physical_")
    r = tinynet.tensor([1.0, -2.0], device=device)
    assert r.conj_physical_() is r and r.tolist() == [1.0, -2.0]


@pytest.mark.parametrize("name, shapes", [("addmm_", [(3, 4), (3, 2), (2, 4)]), ("addmv_", [(3,), (3, 2), (2,)]),
                                          ("addbmm_", [(3, 4), (5, 3, 2), (5, 2, 4)]),
                                          ("baddbmm_", [(5, 3, 4), (5, 3, 2), (5, 2, 4)])])
def test_blas_inplace_methods_match_torch(name, shapes, device):
    arrays = [R.standard_normal(s) for s in shapes]
    ts = [tinynet.tensor(a, device=device, requires_grad=True) for a in arrays]
    ps = [torch.tensor(a, requires_grad=True) for a in arrays]
    a, b = ts[0] * 1.0, ps[0] * 1.0
    assert getattr(a, name)(ts[1], ts[2], beta=0.5, alpha=2.0) is a
    getattr(b, name)(ps[1], ps[2], beta=0.5, alpha=2.0)
    assert_close(a, b, rtol=1e-12, atol=1e-12, what=name)
    g = R.standard_normal(shapes[0])
    (a * tinynet.tensor(g, device=device)).sum().backward()
    (b * torch.tensor(g)).sum().backward()
    for t, p in zip(ts, ps):
        assert_close(t.grad, p.grad, rtol=1e-10, atol=1e-12, what=f"{name} gradient")
    if name == "addmv_":
        c = tinynet.tensor(arrays[0], device=device)
        m, v = tinynet.tensor(arrays[1], device=device), tinynet.tensor(arrays[2], device=device)
        assert tinynet.addmv_(c, m, v) is c
        assert_close(c, torch.addmv_(torch.tensor(arrays[0]), torch.tensor(arrays[1]), torch.tensor(arrays[2])),
                     rtol=1e-12, atol=1e-12, what="torch.addmv_")


def test_refusals(device):
    leaf = tinynet.ones(3, device=device, requires_grad=True)
    with pytest.raises(errors.AutogradError, match="exp_"):
        tinynet.exp_(leaf)
    with pytest.raises(RuntimeError):
        torch.exp_(torch.ones(3, requires_grad=True))
    with pytest.raises(errors.ArgumentTypeError, match="abs_: input must be a Tensor"):
        tinynet.abs_([1.0])
    with pytest.raises(errors.ArgumentTypeError, match="abs_"):
        tinynet.abs_(tinynet.ones(2, device=device), 3)
    with pytest.raises(errors.DTypeError, match="sin_"):
        tinynet.sin_(tinynet.tensor([1, 2], device=device))
    with pytest.raises(RuntimeError):
        torch.sin_(torch.tensor([1, 2]))


def test_every_torch_level_function_takes_input_first():
    import inspect
    for name in UNARY + ["clamp_", "fill_", "index_put_", "detach", "get_device", "addmv_"]:
        fn = getattr(tinynet, name)
        if name != "round_":
            assert getattr(inplace_torch, name, fn) is fn or name in ("sigmoid_", "tanh_")
        assert next(iter(inspect.signature(fn).parameters)) == "input", name


@pytest.mark.parametrize("shape, wrap", [((3, 3), False), ((7, 3), True), ((7, 3), False), ((2, 5), False),
                                         ((2, 2, 2), False)])
def test_fill_diagonal_matches_torch(shape, wrap, device):
    x = R.standard_normal(shape)
    a, b = tinynet.tensor(x, device=device, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya, yb = a * 1.0, b * 1.0
    assert ya.fill_diagonal_(2.5, wrap=wrap) is ya
    yb.fill_diagonal_(2.5, wrap=wrap)
    assert_close(ya, yb, rtol=0, atol=0, what="fill_diagonal_")
    g = R.standard_normal(shape)
    (ya * tinynet.tensor(g, device=device)).sum().backward()
    (yb * torch.tensor(g)).sum().backward()
    assert_close(a.grad, b.grad, rtol=0, atol=0, what="fill_diagonal_ gradient")
    with pytest.raises(errors.ShapeError, match="fill_diagonal_"):
        tinynet.zeros(2, 3, 2, device=device).fill_diagonal_(1)
    with pytest.raises(RuntimeError):
        torch.zeros(2, 3, 2).fill_diagonal_(1)


@pytest.mark.parametrize("size", [(3, 1), (1, 3, 1), (2, 1, 4), (4,), (1,)])
def test_sum_to_size_matches_torch(size, device):
    from helpers import check_op
    check_op(device, lambda t: t.sum_to_size(*size), lambda t: t.sum_to_size(*size), [R.standard_normal((2, 3, 4))])
    with pytest.raises(errors.ShapeError, match="sum_to_size"):
        tinynet.ones(2, 3, 4, device=device).sum_to_size(2, 2)
