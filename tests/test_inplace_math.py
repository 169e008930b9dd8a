"""The in-place elementwise math methods (x.sin_(), x.logit_(eps), x.xlogy_(y), ...) against
PyTorch's on every backend: the values written, self returned, the gradient through the
in-place change of a non-leaf, and the refusal to write a float result into an integer tensor."""
import numpy
import pytest

import tinynet
from helpers import assert_close, rng, torch
from tinynet import errors
from tinynet.ops.inplace_methods import MATH_INPLACE

R = rng(81)
DOMAIN = {"acosh_": (1.1, 3.0), "arccosh_": (1.1, 3.0), "asin_": (-0.9, 0.9), "acos_": (-0.9, 0.9),
          "arcsin_": (-0.9, 0.9), "arccos_": (-0.9, 0.9), "atanh_": (-0.9, 0.9), "arctanh_": (-0.9, 0.9),
          "log2_": (0.1, 3.0), "log10_": (0.1, 3.0), "log1p_": (-0.5, 3.0), "rsqrt_": (0.1, 3.0),
          "logit_": (0.05, 0.95)}
NO_TORCH_GRAD = {"acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_", "arctanh_"}
UNARY = sorted(n for n in MATH_INPLACE if n != "xlogy_")


@pytest.mark.parametrize("name", UNARY)
def test_inplace_method_matches_torch(name, device):
    lo, hi = DOMAIN.get(name, (-2.0, 2.0))
    x = R.uniform(lo, hi, (3, 4))
    t = tinynet.tensor(x, device=device, requires_grad=True)
    p = torch.tensor(x, requires_grad=True)
    a, b = t * 1.0, p * 1.0  # non-leaves, so the in-place change is recorded
    assert getattr(a, name)() is a
    getattr(b, name)()
    assert_close(a, b, rtol=1e-12, atol=1e-12, what=f"{name} values")
    g = R.standard_normal((3, 4))
    (a * tinynet.tensor(g, device=device)).sum().backward()
    if name in NO_TORCH_GRAD:  # PyTorch has no derivative for these in-place: its out-of-place one
        b = getattr(torch, name[:-1])(p * 1.0)
    (b * torch.tensor(g)).sum().backward()
    assert_close(t.grad, p.grad, rtol=1e-10, atol=1e-12, what=f"{name} gradient")


def test_xlogy_and_logit_with_arguments(device):
    x, y = R.uniform(0.1, 0.9, (3, 4)), R.uniform(0.5, 2.0, (3, 4))
    a, b = tinynet.tensor(x, device=device), torch.tensor(x)
    assert_close(a.clone().xlogy_(tinynet.tensor(y, device=device)), b.clone().xlogy_(torch.tensor(y)), rtol=1e-12,
                 atol=0, what="xlogy_")
    assert_close(a.clone().logit_(eps=0.2), b.clone().logit_(eps=0.2), rtol=1e-12, atol=0, what="logit_ eps")


@pytest.mark.parametrize("name", ["sin_", "expm1_", "rsqrt_", "deg2rad_", "sinc_"])
def test_float_result_into_an_integer_tensor_is_refused(name, device):
    with pytest.raises(RuntimeError):
        getattr(torch.tensor([1, 2]), name)()
    with pytest.raises(errors.DTypeError, match=f"{name}: result type"):
        getattr(tinynet.tensor([1, 2], device=device), name)()


def test_trunc_and_negative_keep_integers(device):
    for name in ("trunc_", "negative_", "absolute_"):
        a = tinynet.tensor([-3, 2], device=device)
        getattr(a, name)()
        assert_close(a, getattr(torch.tensor([-3, 2]), name)(), rtol=0, atol=0, what=name)
    assert numpy.array_equal(tinynet.tensor([-1.5], device=device).frac_().numpy(), [-0.5])
