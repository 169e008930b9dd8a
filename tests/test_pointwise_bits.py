"""gcd, lcm, the bit shifts, ldexp, frexp, nextafter, isreal and rsub against PyTorch on every
backend: values, dtypes, gradients (ldexp, frexp's mantissa, rsub), the in-place forms and
the refusals."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(3)


def _pair(dtype_a="int64", dtype_b="int64", low=-30, high=30, shape_a=(3, 4), shape_b=(4,)):
    return R.integers(low, high, shape_a).astype(dtype_a), R.integers(low, high, shape_b).astype(dtype_b)


@pytest.mark.parametrize("name", ["gcd", "lcm", "bitwise_left_shift", "bitwise_right_shift"])
@pytest.mark.parametrize("dtypes", [("int64", "int64"), ("int32", "int64"), ("int8", "int8"), ("uint8", "uint8")])
def test_integer_ops_match_torch(name, dtypes, device):
    shifts = name.startswith("bitwise")
    a, b = _pair(*dtypes, low=0 if "uint" in dtypes[0] else -30, high=30)
    if shifts:  # shift amounts beyond the width and negative ones too
        b = R.integers(-2 if "uint" not in dtypes[1] else 0, 70 if dtypes[1] == "int64" else 12, (4,)).astype(
            dtypes[1])
    out = getattr(tinynet, name)(tinynet.tensor(a, device=device), tinynet.tensor(b, device=device))
    ref = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
    assert str(out.dtype) == str(ref.dtype).split(".")[-1]
    assert_close(out, ref, rtol=0, atol=0, what=name)
    x = tinynet.tensor(a, device=device)
    assert getattr(x, name + "_")(tinynet.tensor(b, device=device).to(x.dtype)) is x
    assert_close(x, getattr(torch.tensor(a), name + "_")(torch.tensor(b).to(ref.dtype)), rtol=0, atol=0)


def test_shifts_with_python_ints_and_operators(device):
    a = numpy.array([1, -8, 5, 3])
    t, p = tinynet.tensor(a, device=device), torch.tensor(a)
    for f in (lambda m, x: m.bitwise_left_shift(x, 3), lambda m, x: m.bitwise_right_shift(x, 1),
              lambda m, x: m.bitwise_left_shift(3, x.abs()), lambda m, x: x << 2, lambda m, x: x >> 1,
              lambda m, x: 1 << x.abs(), lambda m, x: 256 >> x.abs()):
        assert_close(f(tinynet, t), f(torch, p), rtol=0, atol=0)
    t <<= 1
    t >>= 2
    p <<= 1
    p >>= 2
    assert_close(t, p, rtol=0, atol=0)


def test_integer_ops_refuse_floats_and_bools(device):
    for name in ("gcd", "lcm", "bitwise_left_shift"):
        with pytest.raises((RuntimeError, NotImplementedError)):
            getattr(torch, name)(torch.tensor([1.0]), torch.tensor([2.0]))
        with pytest.raises(errors.DTypeError, match=f"{name}: expected integer tensors"):
            getattr(tinynet, name)(tinynet.tensor([1.0], device=device), tinynet.tensor([2.0], device=device))
        with pytest.raises(errors.DTypeError):
            getattr(tinynet, name)(tinynet.tensor([True], device=device), tinynet.tensor([True], device=device))
    with pytest.raises(errors.ArgumentTypeError, match="gcd: other"):
        tinynet.gcd(tinynet.tensor([4], device=device), 2)
    with pytest.raises(errors.ShapeError, match="lcm"):
        tinynet.lcm(tinynet.tensor([4, 2], device=device), tinynet.tensor([1, 2, 3], device=device))


def test_ldexp_matches_torch(device):
    x, e = R.standard_normal((3, 4)), R.integers(-3, 4, (4,)).astype(numpy.float64)
    check_op(device, tinynet.ldexp, torch.ldexp, [x, e])
    ints = tinynet.ldexp(tinynet.tensor([1, 2], device=device), tinynet.tensor([2, 3], device=device))
    ref = torch.ldexp(torch.tensor([1, 2]), torch.tensor([2, 3]))
    assert str(ints.dtype) == "float32" and ints.tolist() == ref.tolist()
    t = tinynet.tensor(x, device=device)
    assert tinynet.ldexp_(t, tinynet.tensor(e, device=device)) is t
    assert_close(t, torch.ldexp(torch.tensor(x), torch.tensor(e)), rtol=1e-12, atol=0)


def test_frexp_matches_torch(device):
    x = numpy.array([8.0, 0.0, -3.5, 1e-3, numpy.inf, -numpy.inf, numpy.nan, 123.25])
    for dt in ("float32", "float64", "float16"):
        m, e = tinynet.frexp(tinynet.tensor(x.astype(dt), device=device))
        rm, re = torch.frexp(torch.tensor(x.astype(dt)))
        assert_close(m, rm, rtol=0, atol=0, what=f"mantissa {dt}")
        assert_close(e, re, rtol=0, atol=0, what=f"exponent {dt}")
        assert str(e.dtype) == "int32"
    check_op(device, lambda t: tinynet.frexp(t)[0], lambda t: torch.frexp(t)[0], [R.standard_normal((3, 4)) * 10])
    with pytest.raises(errors.DTypeError, match="frexp"):
        tinynet.frexp(tinynet.tensor([1, 2], device=device))
    with pytest.raises(RuntimeError):
        torch.frexp(torch.tensor([1, 2]))


def test_nextafter_isreal_and_rsub(device):
    a, b = R.standard_normal((3, 4)), R.standard_normal(4)
    for dt in ("float32", "float64"):
        out = tinynet.nextafter(tinynet.tensor(a.astype(dt), device=device), tinynet.tensor(b.astype(dt),
                                                                                             device=device))
        assert_close(out, torch.nextafter(torch.tensor(a.astype(dt)), torch.tensor(b.astype(dt))), rtol=0, atol=0)
    t = tinynet.tensor(a, device=device)
    assert t.nextafter_(tinynet.tensor(b, device=device)) is t
    assert_close(t, torch.tensor(a).nextafter_(torch.tensor(b)), rtol=0, atol=0)
    assert not tinynet.nextafter(tinynet.ones(2, device=device, requires_grad=True),
                                 tinynet.zeros(2, device=device)).requires_grad
    with pytest.raises(errors.DTypeError, match="nextafter"):
        tinynet.nextafter(tinynet.tensor([1], device=device), tinynet.tensor([2], device=device))
    z = numpy.array([1 + 0j, 1 + 1j, -2 + 0j])
    assert tinynet.isreal(tinynet.tensor(z, device=device)).tolist() == torch.isreal(torch.tensor(z)).tolist()
    assert tinynet.tensor([1, 2], device=device).isreal().tolist() == [True, True]
    check_op(device, lambda x, y: tinynet.rsub(x, y, alpha=2), lambda x, y: torch.rsub(x, y, alpha=2), [a, b])
    check_op(device, lambda x: tinynet.rsub(x, 5, 3), lambda x: torch.rsub(x, 5, 3), [a])
