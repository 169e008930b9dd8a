"""The torch-level settings and re-exports: set_printoptions, set_anomaly_enabled and its queries,
the deprecated autocast getters, vmap and GradScaler, against PyTorch's behaviour."""
import warnings

import pytest

import tinynet
from helpers import torch
from tinynet import errors


@pytest.fixture
def default_printing():
    yield
    tinynet.set_printoptions(profile="default")
    torch.set_printoptions(profile="default")


def test_printoptions(default_printing, device):
    x = tinynet.tensor([1.23456, 2.0, 30.5], device=device)
    tinynet.set_printoptions(precision=2)
    assert "1.23" in repr(x) and "1.2346" not in repr(x)
    tinynet.set_printoptions(sci_mode=True)
    assert "1.23e+00" in repr(x)
    torch.set_printoptions(precision=2, sci_mode=True)
    assert "1.23e+00" in repr(torch.tensor([1.23456, 2.0, 30.5]))
    tinynet.set_printoptions(profile="default")
    assert "1.2346" in repr(x)
    tinynet.set_printoptions(threshold=5, edgeitems=1)
    suffix = "" if tinynet.device(device).type == "cpu" else f",device='{tinynet.arange(1, device=device).device}'"
    assert repr(tinynet.arange(10.0, device=device)).replace(" ", "") == "tensor([0.,...,9.]" + suffix + ")"
    torch.set_printoptions(threshold=5, edgeitems=1)
    assert repr(torch.arange(10.0)).replace(" ", "") == "tensor([0.,...,9.])"
    tinynet.set_printoptions(profile="full")
    assert "..." not in repr(tinynet.arange(2000.0, device=device))
    tinynet.set_printoptions(profile="short")
    assert "1.23" in repr(x) and "..." in repr(tinynet.arange(2000.0, device=device))
    with pytest.raises(errors.ArgumentError, match="profile"):
        tinynet.set_printoptions(profile="long")
    with pytest.raises(errors.ArgumentError, match="precision"):
        tinynet.set_printoptions(precision=-1)
    with pytest.raises(errors.ArgumentTypeError, match="sci_mode"):
        tinynet.set_printoptions(sci_mode="yes")


def test_anomaly_switches():
    assert tinynet.is_anomaly_enabled() is torch.is_anomaly_enabled() is False
    try:
        tinynet.set_anomaly_enabled(True, check_nan=False)
        assert tinynet.is_anomaly_enabled() and not tinynet.is_anomaly_check_nan_enabled()
        tinynet.set_anomaly_enabled(True)
        assert tinynet.is_anomaly_check_nan_enabled()
        with pytest.raises(errors.AnomalyError):
            x = tinynet.tensor([-1.0], requires_grad=True)
            x.sqrt()
    finally:
        tinynet.set_anomaly_enabled(False)
    assert not tinynet.is_anomaly_enabled()
    with pytest.raises(errors.ArgumentTypeError, match="set_anomaly_enabled"):
        tinynet.set_anomaly_enabled("on")


def test_deprecated_autocast_getters():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert str(tinynet.get_autocast_cpu_dtype()) == str(torch.get_autocast_cpu_dtype()).split(".")[-1]
        assert str(tinynet.get_autocast_gpu_dtype()) == str(torch.get_autocast_gpu_dtype()).split(".")[-1]
        assert tinynet.is_autocast_cpu_enabled() is torch.is_autocast_cpu_enabled() is False
        with tinynet.autocast("cpu"):
            assert tinynet.is_autocast_cpu_enabled()
    with pytest.warns(DeprecationWarning, match="get_autocast_dtype"):
        tinynet.get_autocast_cpu_dtype()
    assert tinynet.is_autocast_cache_enabled() is torch.is_autocast_cache_enabled() is True
    tinynet.clear_autocast_cache()


def test_vmap_and_grad_scaler_are_the_namespaces_objects(device):
    assert tinynet.vmap is tinynet.func.vmap and torch.vmap is torch.func.vmap
    assert tinynet.GradScaler is tinynet.amp.GradScaler and torch.GradScaler is torch.amp.GradScaler
    x = tinynet.arange(6.0, device=device).reshape(2, 3)
    assert tinynet.vmap(lambda r: r.sum())(x).tolist() == torch.vmap(lambda r: r.sum())(
        torch.arange(6.0).reshape(2, 3)).tolist()
