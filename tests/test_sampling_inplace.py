"""The in-place samplers (bernoulli_, random_, exponential_, cauchy_, geometric_, log_normal_) and the
bernoulli/multinomial methods: ranges, dtypes and moments against the distributions (the streams
differ from PyTorch's, as for every tinynet draw), seeding, gradients, and PyTorch's refusals."""
import math

import numpy
import pytest

import tinynet
from helpers import torch
from tinynet import errors

N = 20000


def _draw(device, name, *args, dtype=tinynet.float64, **kwargs):
    t = tinynet.zeros(N, dtype=dtype, device=device)
    assert getattr(t, name)(*args, **kwargs) is t
    return t.numpy(force=True)


def test_continuous_samplers_have_their_moments(device):
    e = _draw(device, "exponential_", 2.0)
    assert (e >= 0).all() and abs(e.mean() - 0.5) < 0.02
    c = _draw(device, "cauchy_", 1.0, 2.0)
    assert abs(numpy.median(c) - 1.0) < 0.1 and abs(numpy.percentile(c, 75) - 3.0) < 0.2  # quartile = m + s
    ln = _draw(device, "log_normal_", 0.5, 0.25)
    assert (ln > 0).all() and abs(numpy.log(ln).mean() - 0.5) < 0.01 and abs(numpy.log(ln).std() - 0.25) < 0.01
    g = _draw(device, "geometric_", 0.25)
    assert g.min() >= 1 and (g == numpy.round(g)).all() and abs(g.mean() - 4.0) < 0.15
    b = _draw(device, "bernoulli_", 0.3)
    assert set(numpy.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.02
    p = tinynet.tensor([0.0, 1.0, 0.5], device=device)
    s = tinynet.zeros(3, device=device).bernoulli_(p).numpy(force=True)
    assert s[0] == 0 and s[1] == 1


def test_random_ranges_match_torch(device):
    for args in ((), (5,), (2, 5), (-3, 3)):
        for dt in ("float32", "int64", "int8", "float64"):
            if args and args[0] < 0 and dt == "uint8":
                continue
            ours = tinynet.zeros(2000, dtype=getattr(tinynet, dt), device=device).random_(*args).numpy(force=True)
            ref = torch.zeros(2000, dtype=getattr(torch, dt)).random_(*args).numpy()
            assert ours.dtype == ref.dtype and (ours == numpy.round(ours)).all()
            lo, hi = (0, None) if not args else (0, args[0]) if len(args) == 1 else args
            assert ours.min() >= lo and (hi is None or ours.max() <= hi - 1)
            if hi is not None:  # every value of a small range turns up
                assert set(numpy.unique(ours)) == set(numpy.unique(ref)) == set(range(lo, hi))
            else:
                top = {"float32": 2 ** 24, "float64": 2 ** 53, "int64": 2 ** 63 - 1, "int8": 127}[dt]
                assert ours.max() <= top and ours.max() > top / 4
    assert set(tinynet.zeros(100, dtype=tinynet.bool, device=device).random_().tolist()) == {False, True}


def test_seeded_and_not_differentiable(device):
    tinynet.manual_seed(3)
    a = tinynet.zeros(5, device=device).exponential_()
    tinynet.manual_seed(3)
    b = tinynet.zeros(5, device=device).exponential_()
    assert a.tolist() == b.tolist()
    w = tinynet.ones(4, device=device, requires_grad=True)
    y = w * 2
    y.cauchy_()
    (y * 3).sum().backward()
    assert w.grad.tolist() == [0.0] * 4  # the old values are overwritten: no gradient


@pytest.mark.parametrize("call", [lambda m: m.zeros(3, dtype=m.int64).exponential_(),
                                  lambda m: m.zeros(3).bernoulli_(1.5), lambda m: m.zeros(3).geometric_(0),
                                  lambda m: m.zeros(3).exponential_(-1), lambda m: m.zeros(3).cauchy_(0, -1),
                                  lambda m: m.zeros(3).log_normal_(0, -1), lambda m: m.zeros(3).random_(5, 2),
                                  lambda m: m.ones(3, requires_grad=True).random_()])
def test_refused_like_torch(call):
    with pytest.raises(Exception):
        call(torch)
    with pytest.raises(errors.TinynetError):
        call(tinynet)


def test_methods_of_existing_functions(device):
    x = tinynet.full((3,), 0.5, device=device)
    assert set(x.bernoulli().tolist()) <= {0.0, 1.0}
    m = tinynet.tensor([[0.0, 1.0], [1.0, 0.0]], device=device).multinomial(1)
    assert m.tolist() == [[1], [0]]
    assert tinynet.tensor([2.0], device=device).is_nonzero() and not tinynet.tensor([0.0]).is_nonzero()
    with pytest.raises(errors.ArgumentError):
        tinynet.ones(2, device=device).is_nonzero()
    assert tinynet.ones(2, device=device).cfloat().dtype == tinynet.complex64
    assert tinynet.ones(2, device=device).cdouble().dtype == tinynet.complex128
    v = numpy.array([-1.0, 0.2, 2.0])
    assert tinynet.tensor(v, device=device).hardshrink(0.5).tolist() == torch.tensor(v).hardshrink(0.5).tolist()
    assert numpy.allclose(tinynet.tensor(v, device=device).prelu(tinynet.tensor([0.25], dtype=tinynet.float64,
                                                                               device=device)).tolist(),
                          torch.tensor(v).prelu(torch.tensor([0.25], dtype=torch.float64)).tolist())
    assert math.isfinite(float(tinynet.zeros(1, device=device).log_normal_()))
