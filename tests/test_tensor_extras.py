"""The aliases (multiply, divide, subtract, positive), the queries (is_signed, is_complex,
is_same_size, is_cpu, is_inference, stride, storage_offset, data_ptr, output_nr) and the
in-place binary, comparison, logical/bitwise and scan methods against PyTorch on every backend."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors
from tinynet.ops.tensor_extras import _BINARY, _COMPARISONS

R = rng(151)
A, B, C = R.uniform(0.5, 2.0, (3, 4)), R.uniform(0.5, 2.0, (3, 4)), R.uniform(0.5, 2.0, (3, 4))
ARGS = {"lerp_": lambda t, d: (t(B), 0.3), "addcmul_": lambda t, d: (t(B), t(C)), "addcdiv_": lambda t, d: (t(B), t(C)),
        "clamp_min_": lambda t, d: (1.0,), "clamp_max_": lambda t, d: (1.0,), "tril_": lambda t, d: (),
        "triu_": lambda t, d: (1,), "cumsum_": lambda t, d: (1,), "cumprod_": lambda t, d: (0,)}
FLOAT_BINARY = sorted(n for n in _BINARY if not n.startswith(("logical", "bitwise")))


def test_aliases_match_torch(device):
    for name in ("multiply", "divide", "subtract"):
        check_op(device, getattr(tinynet, name), getattr(torch, name), [A, B])
        check_op(device, lambda x, y, n=name: getattr(x, n)(y), lambda x, y, n=name: getattr(x, n)(y), [A, B])
    check_op(device, lambda x, y: tinynet.divide(x, y, rounding_mode="floor"),
             lambda x, y: torch.divide(x, y, rounding_mode="floor"), [A * 5, B], grad=False)
    check_op(device, tinynet.positive, torch.positive, [A])
    with pytest.raises(RuntimeError):
        torch.positive(torch.tensor([True]))
    with pytest.raises(errors.ArgumentTypeError):
        tinynet.positive(tinynet.tensor([True], device=device))


def test_queries_match_torch(device):
    for dt in ("float32", "int64", "uint8", "bool", "int8"):
        ours, theirs = tinynet.zeros(2, dtype=dt, device=device), torch.zeros(2, dtype=getattr(torch, dt))
        assert ours.is_signed() == theirs.is_signed() and tinynet.is_signed(ours) == torch.is_signed(theirs)
        assert ours.is_complex() is False and tinynet.is_complex(ours) is False
    x, p = tinynet.arange(24.0, device=device).reshape(2, 3, 4), torch.arange(24.0).reshape(2, 3, 4)
    for f in (lambda t: t, lambda t: t.transpose(0, 2), lambda t: t[:, 1:, ::2], lambda t: t[1], lambda t: t[1, 2, 3]):
        assert f(x).stride() == f(p).stride() and f(x).storage_offset() == f(p).storage_offset()
    assert x.stride(1) == p.stride(1) and x.stride(-1) == p.stride(-1)
    assert x[1].data_ptr() - x.data_ptr() == (p[1].data_ptr() - p.data_ptr())
    assert x.is_same_size(tinynet.zeros(2, 3, 4)) and not tinynet.is_same_size(x, tinynet.zeros(3, 4))
    assert x.is_cpu == (device == "cpu") and x.is_inference() is False
    y = x.unbind(1)
    assert [t.output_nr for t in tinynet.tensor(A, requires_grad=True).unbind(0)] == [0, 1, 2]
    assert y[0].output_nr == 0
    with pytest.raises(errors.IndexOutOfRangeError):
        tinynet.tensor(1.0).stride(0)


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
