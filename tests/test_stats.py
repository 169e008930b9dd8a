"""Statistics beyond var/std (ops/stats.py, with reduction.py's aminmax): var_mean, std_mean,
cov, corrcoef and aminmax against PyTorch on every backend: values, gradients (gradcheck),
weights, integers and errors."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(61)
M = R.standard_normal((3, 4))


@pytest.mark.parametrize("dim,keepdim", [(None, False), (1, False), (0, True)])
def test_aminmax_var_mean_std_mean_match_torch(dim, keepdim, device):
    kw = {} if dim is None else {"dim": dim, "keepdim": keepdim}
    for k, field in enumerate(("min", "max")):
        # gradients against amin/amax (older PyTorch has no derivative for aminmax; 2.13's is theirs)
        check_op(device, lambda t: tinynet.aminmax(t, **kw)[k], lambda t: getattr(torch, "a" + field)(t, **kw), [M])
        assert_close(getattr(tinynet.tensor(M, device=device).aminmax(**kw), field),
                     getattr(torch.aminmax(torch.tensor(M), **kw), field), rtol=0, atol=0, what=field)
    args = () if dim is None else (dim,)
    for name in ("var_mean", "std_mean"):
        for k in (0, 1):
            check_op(device, lambda t: getattr(tinynet, name)(t, *args, keepdim=keepdim, correction=0)[k],
                     lambda t: getattr(torch, name)(t, *args, keepdim=keepdim, correction=0)[k], [M])
            check_op(device, lambda t: getattr(tinynet, name)(t, *args, keepdim=keepdim)[k],
                     lambda t: getattr(torch, name)(t, *args, keepdim=keepdim)[k], [M])
    with pytest.raises(errors.ShapeError):
        tinynet.aminmax(tinynet.zeros(0, device=device))


@pytest.mark.parametrize("correction", [1, 0, 2])
def test_cov_and_corrcoef_match_torch(correction, device):
    x = R.standard_normal((3, 8))
    check_op(device, lambda t: tinynet.cov(t, correction=correction), lambda t: torch.cov(t, correction=correction),
             [x])
    f, a = R.integers(1, 4, 8), R.uniform(0.2, 2.0, 8)
    check_op(device, lambda t, w: t.cov(correction=correction, fweights=tinynet.tensor(f, device=device),
                                          aweights=w),
             lambda t, w: t.cov(correction=correction, fweights=torch.tensor(f), aweights=w), [x, a])
    check_op(device, lambda t: tinynet.cov(t, correction=correction), lambda t: torch.cov(t, correction=correction),
             [x[0]])  # one variable: a 0-d result
    check_op(device, tinynet.corrcoef, torch.corrcoef, [x])
    ints = numpy.arange(12).reshape(3, 4) % 5
    assert_close(tinynet.cov(tinynet.tensor(ints, device=device)), torch.cov(torch.tensor(ints)), rtol=1e-6, atol=0,
                 what="cov of ints")
    with pytest.raises(errors.DTypeError, match="fweights to have an integral dtype"):
        tinynet.cov(tinynet.tensor(x, device=device), fweights=tinynet.tensor(a, device=device))
    with pytest.raises(errors.ShapeError, match="two or fewer dimensions"):
        tinynet.cov(tinynet.zeros(2, 2, 2, device=device))
