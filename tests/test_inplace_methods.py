"""The in-place methods composed of an out-of-place function (ops/inplace_methods.py): the
binary, comparison, logical/bitwise, triangle and scan methods against PyTorch on every
backend (the elementwise math ones: test_inplace_math.py)."""
import numpy
import pytest

import tinynet
from helpers import assert_close, rng, torch
from tinynet.ops.inplace_methods import _BINARY, _COMPARISONS

R = rng(151)
A, B, C = R.uniform(0.5, 2.0, (3, 4)), R.uniform(0.5, 2.0, (3, 4)), R.uniform(0.5, 2.0, (3, 4))
ARGS = {"lerp_": lambda t, d: (t(B), 0.3), "addcmul_": lambda t, d: (t(B), t(C)), "addcdiv_": lambda t, d: (t(B), t(C)),
        "clamp_min_": lambda t, d: (1.0,), "clamp_max_": lambda t, d: (1.0,), "tril_": lambda t, d: (),
        "triu_": lambda t, d: (1,), "cumsum_": lambda t, d: (1,), "cumprod_": lambda t, d: (0,)}
FLOAT_BINARY = sorted(n for n in _BINARY if not n.startswith(("logical", "bitwise")))


@pytest.mark.parametrize("name", FLOAT_BINARY)
def test_inplace_binary_matches_torch(name, device):
    t = lambda a: tinynet.tensor(a, device=device)  # noqa: E731
    args = ARGS.get(name, lambda f, d: (f(B),))
    ours, theirs = tinynet.tensor(A, device=device, requires_grad=True), torch.tensor(A, requires_grad=True)
    a, b = ours * 1.0, theirs * 1.0
    assert getattr(a, name)(*args(t, device)) is a
    getattr(b, name)(*args(torch.tensor, None))
    assert_close(a, b, rtol=1e-12, atol=1e-12, what=name)
    if name not in ("floor_divide_", "remainder_", "fmod_"):  # piecewise constant or not differentiable in PyTorch
        g = R.standard_normal((3, 4))
        (a * tinynet.tensor(g, device=device)).sum().backward()
        (b * torch.tensor(g)).sum().backward()
        assert_close(ours.grad, theirs.grad, rtol=1e-10, atol=1e-12, what=f"{name} gradient")


@pytest.mark.parametrize("name", sorted(_COMPARISONS))
def test_inplace_comparisons_keep_the_dtype_as_torch(name, device):
    ours, theirs = tinynet.tensor(A, device=device), torch.tensor(A)
    getattr(ours, name)(tinynet.tensor(B, device=device))
    getattr(theirs, name)(torch.tensor(B))
    assert ours.dtype == tinynet.float64
    assert_close(ours, theirs, rtol=0, atol=0, what=name)


def test_inplace_logical_and_bitwise_match_torch(device):
    m, n = R.random((3, 4)) < 0.5, R.random((3, 4)) < 0.5
    for name in ("logical_and_", "logical_or_", "logical_xor_", "bitwise_and_", "bitwise_or_", "bitwise_xor_"):
        ours, theirs = tinynet.tensor(m, device=device), torch.tensor(m)
        getattr(ours, name)(tinynet.tensor(n, device=device))
        getattr(theirs, name)(torch.tensor(n))
        assert_close(ours, theirs, rtol=0, atol=0, what=name)
    for name in ("logical_not_", "bitwise_not_"):
        ours, theirs = tinynet.tensor(m, device=device), torch.tensor(m)
        getattr(ours, name)()
        getattr(theirs, name)()
        assert_close(ours, theirs, rtol=0, atol=0, what=name)
    i = numpy.arange(6)
    ours, theirs = tinynet.tensor(i, device=device), torch.tensor(i)
    ours.bitwise_xor_(tinynet.tensor(3, device=device))
    theirs.bitwise_xor_(torch.tensor(3))
    assert_close(ours, theirs, rtol=0, atol=0, what="bitwise_xor_ ints")
