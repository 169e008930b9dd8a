"""tinynet.testing against torch.testing: assert_close passes and fails on the same inputs
with the same message (tinynet shapes print as tuples), make_tensor's ranges and options."""
import math

import numpy
import pytest

import tinynet
from tinynet.errors import ArgumentError, ArgumentTypeError
from tinynet.testing import assert_close, make_tensor

from helpers import torch

pytestmark = pytest.mark.skipif(torch is None, reason="PyTorch (the reference) is not installed")
inf, nan = math.inf, math.nan

# (actual, expected, kwargs): each built by the library M (tinynet or torch) on the device
CASES = [
    (lambda M: M.tensor([1., 2., 3.]), lambda M: M.tensor([1., 2.5, 3.]), {}),
    (lambda M: M.tensor([[1., 2.], [3., 4.]]), lambda M: M.tensor([[1., 2.5], [3., nan]]), {}),
    (lambda M: M.tensor([1, 2, 3]), lambda M: M.tensor([1, 4, 3]), {}),
    (lambda M: M.tensor([1.]), lambda M: M.tensor([1.], dtype=M.float64), {}),
    (lambda M: M.tensor([1.]), lambda M: M.tensor([1.2]), dict(rtol=0.1, atol=0.0)),
    (lambda M: M.tensor([1.]), lambda M: M.tensor([1.2]), dict(msg="custom")),
    (lambda M: M.tensor([1., 2.]), lambda M: M.tensor([1., 3.]), dict(msg=lambda m: "PRE " + m)),
    (lambda M: M.tensor([nan]), lambda M: M.tensor([nan]), {}),
    (lambda M: M.tensor([nan, 1.]), lambda M: M.tensor([nan, 2.]), dict(equal_nan=True)),
    (lambda M: M.tensor([nan]), lambda M: M.tensor([nan]), dict(equal_nan=True)),
    (lambda M: M.tensor([True, False]), lambda M: M.tensor([True, True]), {}),
    (lambda M: M.tensor(True), lambda M: M.tensor(False), {}),
    (lambda M: M.tensor([1e-10]), lambda M: M.tensor([0.]), {}),
    (lambda M: M.zeros(2, 3), lambda M: M.ones(2, 3), {}),
    (lambda M: M.tensor([1., inf]), lambda M: M.tensor([1., -inf]), {}),
    (lambda M: M.tensor([inf, 1.]), lambda M: M.tensor([inf, 2.]), {}),
    (lambda M: M.tensor([1.]).double(), lambda M: M.tensor([1.5]).double(), {}),
    (lambda M: M.tensor([1.]).half(), lambda M: M.tensor([1.5]).half(), {}),
    (lambda M: M.tensor([1.]), lambda M: M.tensor([1.2], dtype=M.float64), dict(check_dtype=False)),
    (lambda M: M.tensor([1]), lambda M: M.tensor([1.2]), dict(check_dtype=False)),
    (lambda M: M.tensor([1]), lambda M: M.tensor([1.2]), dict(check_dtype=False, atol=1, rtol=0)),
    (lambda M: M.tensor(5), lambda M: M.tensor(6), {}),
    (lambda M: M.tensor(1.), lambda M: M.tensor(2.), {}),
    (lambda M: M.tensor([1., 2.]), lambda M: M.tensor([0., 0.]), {}),
    (lambda M: M.tensor([3, 5], dtype=M.uint8), lambda M: M.tensor([5, 3], dtype=M.uint8), {}),
    (lambda M: M.tensor([1., 2.]), lambda M: M.tensor([1., 2.1]), dict(rtol=0, atol=0)),
    (lambda M: M.arange(24.).reshape(2, 3, 4), lambda M: M.arange(24.).reshape(2, 3, 4) * 1.001, {}),
    (lambda M: M.zeros(3, 2).t(), lambda M: M.zeros(3, 2).t().contiguous(), dict(check_stride=True)),
    (lambda M: M.zeros(3, 2).t(), lambda M: M.zeros(3, 2).t().contiguous(), {}),
    (lambda M: M.ones(3, requires_grad=True), lambda M: M.ones(3), {}),
    (lambda M: [M.tensor(1.), M.tensor(2.)], lambda M: [M.tensor(1.), M.tensor(2.5)], {}),
    (lambda M: {"a": M.tensor(1.), "b": [1.0, 2.0]}, lambda M: {"a": M.tensor(1.), "b": [1.0, 3.0]}, {}),
    (lambda M: [M.tensor([1., 2.])], lambda M: [M.tensor([1., 3.])], dict(msg=lambda m: "PRE " + m)),
    (lambda M: [1, [2, 3]], lambda M: [1, [2, 4]], {}),
    (lambda M: [1.0], lambda M: [1.0, 2.0], {}),
    (lambda M: {"a": 1}, lambda M: {"b": 1}, {}),
    (lambda M: (1, 2), lambda M: [1, 2], {}),
    (lambda M: 1.0, lambda M: 1.5, {}),
    (lambda M: 1, lambda M: 2, {}),
    (lambda M: 1, lambda M: 1.0, {}),
    (lambda M: 2, lambda M: 2.0, dict(check_dtype=False)),
    (lambda M: True, lambda M: False, {}),
    (lambda M: None, lambda M: None, {}),
    (lambda M: None, lambda M: 1, {}),
    (lambda M: 1.0, lambda M: 1.0000001, {}),
    (lambda M: 1 + 1j, lambda M: 1 + 2j, {}),
    (lambda M: numpy.float64(1.0), lambda M: numpy.float64(1.5), {}),
    (lambda M: numpy.array([1.0, 2.0]), lambda M: numpy.array([1.5, 2.0]), {}),
]


def outcome(M, case, device):
    """(error type or None, message) of M.testing.assert_close on the case, tinynet's
    tensors made on ``device``."""
    if M is tinynet:
        tinynet.set_default_device(device)
    try:
        M.testing.assert_close(case[0](M), case[1](M), **case[2])
        return None, ""
    except (AssertionError, TypeError, ValueError) as e:
        return type(e), str(e)
    finally:
        if M is tinynet:
            tinynet.set_default_device(None)


def normalise(text):
    """torch prints shapes as torch.Size([...]) and dtypes as torch.X; tinynet as tuples and tinynet.X."""
    for a, b in (("torch.Size([", "("), ("])", ")"), ("tinynet.", "torch.")):
        text = text.replace(a, b)
    return text.replace("(1)", "(1,)")


@pytest.mark.parametrize("k", range(len(CASES)))
def test_assert_close_matches_torch(device, k):
    if device != "cpu" and k in (8, 9):
        pytest.skip("NaN-only cases are device independent")
    t_type, t_msg = outcome(torch, CASES[k], "cpu")
    o_type, o_msg = outcome(tinynet, CASES[k], device)
    if t_type is None:
        assert o_type is None, o_msg
        return
    assert o_type is not None and issubclass(o_type, t_type), (o_type, t_type, o_msg)
    if t_type is AssertionError:
        assert normalise(o_msg) == normalise(t_msg)


def test_assert_close_bad_input_and_devices(device):
    x = tinynet.ones(2, device=device)
    with pytest.raises(ArgumentError, match="both 'rtol' and 'atol'"):
        assert_close(x, x, rtol=0.1)
    with pytest.raises(ArgumentTypeError, match="no comparison pair"):
        assert_close(x, [1.0, 1.0])
    with pytest.raises(ArgumentTypeError, match="no comparison pair"):
        assert_close("a", "a")
    with pytest.raises(ArgumentTypeError, match="no comparison pair"):
        assert_close(x, numpy.ones(2, dtype=numpy.float32))
    if device != "cpu":
        with pytest.raises(AssertionError, match="attribute 'device'"):
            assert_close(x, tinynet.ones(2, device="cpu"))
        assert_close(x, tinynet.ones(2), check_device=False)


def test_make_tensor_ranges_and_options(device):
    tinynet.manual_seed(0)
    f = make_tensor(500, dtype=tinynet.float32, device=device)
    v = f.numpy(force=True)
    assert f.dtype == tinynet.float32 and f.device.type == tinynet.device(device).type and v.min() >= -9 and v.max() < 9
    assert v.std() > 3  # spread over the interval, not a constant
    i = make_tensor((20, 25), dtype=tinynet.int64, device=device).numpy(force=True)
    assert i.shape == (20, 25) and i.min() >= -9 and i.max() <= 9 and len(numpy.unique(i)) > 10
    u = make_tensor(300, dtype=tinynet.uint8, device=device, low=-5, high=3).numpy(force=True)
    assert set(numpy.unique(u)) <= {0, 1, 2}
    b = make_tensor(200, dtype=tinynet.bool, device=device).numpy(force=True)
    assert b.dtype == numpy.bool_ and 0 < b.sum() < 200
    nz = make_tensor(400, dtype=tinynet.int64, device=device, low=0, high=2, exclude_zero=True).numpy(force=True)
    assert nz.min() >= 1
    tiny = make_tensor(8, dtype=tinynet.float32, device=device, low=0, high=0, exclude_zero=True).numpy(force=True)
    assert numpy.all(tiny == numpy.finfo(numpy.float32).tiny)
    g = make_tensor(2, 3, dtype=tinynet.float64, device=device, requires_grad=True, low=1, high=2)
    assert g.requires_grad and g.is_leaf and g.shape == (2, 3) and g.numpy(force=True).min() >= 1
    nc = make_tensor([3, 4], dtype=tinynet.float32, device=device, noncontiguous=True)
    assert nc.shape == (3, 4) and not nc.is_contiguous()
    assert make_tensor((), dtype=tinynet.float32, device=device).shape == ()
    assert make_tensor(1, dtype=tinynet.float32, device=device, noncontiguous=True).is_contiguous()  # one element
    # the same contract as PyTorch's for what is refused
    for kwargs in (dict(dtype=tinynet.int64, requires_grad=True), dict(dtype=tinynet.float32, low=5, high=3),
                   dict(dtype=tinynet.float32, low=nan), dict(dtype=tinynet.int64, low=2, high=2),
                   dict(dtype=tinynet.uint8, low=300, high=400),
                   dict(dtype=tinynet.float32, noncontiguous=True, memory_format=tinynet.channels_last)):
        with pytest.raises(ArgumentError):
            make_tensor(3, device=device, **kwargs)
        t_kwargs = {k: (getattr(torch, str(v).replace("tinynet.", "")) if k == "dtype" else
                        torch.channels_last if k == "memory_format" else v) for k, v in kwargs.items()}
        with pytest.raises(ValueError):
            torch.testing.make_tensor(3, device="cpu", **t_kwargs)


ALLCLOSE_CASES = [  # (actual, expected, kwargs): assert_allclose's own defaults decide these
    ([1.0, 2.0], [1.00005, 2.0], {}),                      # inside float32's 1e-4
    ([1.0, 2.0], [1.001, 2.0], {}),                        # outside
    ([1.0, float("nan")], [1.0, float("nan")], {}),        # NaN equal by default
    ([1.0, float("nan")], [1.0, float("nan")], {"equal_nan": False}),
    ([1, 2], [1.0, 2.0], {}),                              # dtypes not compared
    ([1.0, 2.0], [1.1, 2.0], {"rtol": 0.2, "atol": 0.0}),
    ([1.0], [1.0000001], {"dtype": "float64"}),            # float64's 1e-5
    ([1.0, 2.0], [1.5, 2.0], {"dtype": "bfloat16"}),       # bfloat16: exact
]


@pytest.mark.parametrize("case", range(len(ALLCLOSE_CASES)))
def test_assert_allclose_decides_as_pytorch(case, device):
    a, e, kw = ALLCLOSE_CASES[case]
    kw = dict(kw)
    dtype = kw.pop("dtype", None)

    def outcome(lib, **where):
        actual = lib.tensor(a, dtype=getattr(lib, dtype) if dtype else None, **where)
        with pytest.warns(FutureWarning, match="assert_allclose"):
            try:
                lib.testing.assert_allclose(actual, e, **kw)
                return "close"
            except AssertionError:
                return "not close"
    assert outcome(tinynet, device=device) == outcome(torch)


def test_assert_allclose_refuses_one_tolerance_and_takes_msg():
    with pytest.warns(FutureWarning), pytest.raises(ArgumentError):
        tinynet.testing.assert_allclose(tinynet.ones(1), [1.0], rtol=0.1)
    with pytest.warns(FutureWarning), pytest.raises(AssertionError, match="^custom$"):
        tinynet.testing.assert_allclose(tinynet.ones(1), [2.0], msg="custom")
