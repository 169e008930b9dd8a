"""tinynet.autograd.detect_anomaly / set_detect_anomaly: the first op whose forward or
backward produced a NaN is named, with the user code line that created it."""
import inspect
import warnings

import pytest

import tinynet
from tinynet.autograd import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from tinynet.errors import AnomalyError, ArgumentTypeError


def _line():
    return inspect.currentframe().f_back.f_lineno


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "invalid value" warnings
        yield


def test_forward_nan_names_the_op_and_the_line(device):
    x = tinynet.tensor([1.0, -1.0, 2.0], device=device, requires_grad=True)
    with pytest.raises(AnomalyError) as info:
        with detect_anomaly():
            y = x * 2
            line = _line() + 1
            z = y.log()  # log(-2): NaN from inputs without NaN
            z.sum()
    msg = str(info.value)
    assert "forward of 'log'" in msg and f"{__file__}:{line}" in msg and "z = y.log()" in msg
    assert isinstance(info.value, RuntimeError)


def test_backward_nan_names_the_op_that_returned_it(device):
    x = tinynet.tensor([0.0, 1.0], device=device, requires_grad=True)
    with detect_anomaly():
        line = _line() + 1
        y = (x * 0).sqrt()  # sqrt's gradient at 0 is inf; mul's backward makes inf * 0 = nan
        with pytest.raises(AnomalyError, match=rf"Function 'mulBackward' returned nan values in its 0th output.*"
                                               rf"{__file__.replace('.', '[.]')}:{line}"):
            y.sum().backward()


def test_inf_alone_and_nan_carried_in_are_not_flagged_in_forward(device):
    x = tinynet.tensor([[1.0, 2.0]], device=device, requires_grad=True)
    with detect_anomaly():
        s = x.masked_fill(tinynet.tensor([[True, False]], device=device), float("-inf"))  # an attention mask
        p = tinynet.softmax(s, dim=-1)
        p.sum().backward()
        n = tinynet.tensor([float("nan"), 1.0], device=device, requires_grad=True)
        (n * 2).sum()  # the NaN was in the input already: not this op's doing
    assert x.grad is not None


def test_off_by_default_and_restored_by_the_context_managers():
    assert not is_anomaly_enabled()
    x = tinynet.tensor([-1.0], requires_grad=True)
    x.log().sum().backward()  # NaN, but detection is off: no error, as PyTorch
    with detect_anomaly(check_nan=False):
        assert is_anomaly_enabled() and not is_anomaly_check_nan_enabled()
        x.log().sum().backward()
    assert not is_anomaly_enabled()
    set_detect_anomaly(True)
    try:
        assert is_anomaly_enabled() and is_anomaly_check_nan_enabled()
        with set_detect_anomaly(False):
            assert not is_anomaly_enabled()
        assert is_anomaly_enabled()
    finally:
        set_detect_anomaly(False)

    @detect_anomaly()
    def f(t):
        return t.log()

    with pytest.raises(AnomalyError):
        f(tinynet.tensor([-1.0], requires_grad=True))
    assert not is_anomaly_enabled()


def test_bad_arguments():
    with pytest.raises(ArgumentTypeError, match="set_detect_anomaly: mode must be a bool"):
        set_detect_anomaly(1)
    with pytest.raises(ArgumentTypeError, match="detect_anomaly: check_nan must be a bool"):
        detect_anomaly(check_nan="yes")
    assert not is_anomaly_enabled()
