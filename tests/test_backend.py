"""Backend selection (read once at import) and ``python -m tinynet.info``."""
import os
import subprocess
import sys

import pytest

import tinynet
from tinynet.errors import BackendError, DeviceMismatchError


def _run(code, **env):
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True, timeout=120)


def test_unknown_backend_value_raises_backend_error():
    r = _run("import tinynet", TINYNET_BACKEND="tensorflow")
    assert r.returncode != 0
    assert "BackendError" in r.stderr and "'tensorflow'" in r.stderr and "auto, numpy, cupy" in r.stderr


def test_numpy_backend_forced():
    r = _run("import tinynet; print(tinynet.backend.name, tinynet.zeros(1).device)", TINYNET_BACKEND="numpy")
    assert r.returncode == 0 and r.stdout.split() == ["numpy", "cpu"]


@pytest.mark.skipif(tinynet.backend.cupy is not None, reason="this machine has a usable CuPy GPU")
def test_cupy_without_gpu_raises_backend_error():
    r = _run("import tinynet", TINYNET_BACKEND="cupy")
    assert r.returncode != 0 and "BackendError" in r.stderr and "cupy" in r.stderr.lower()


@pytest.mark.skipif(tinynet.backend.cupy is not None, reason="this machine has a usable CuPy GPU")
def test_cuda_device_without_gpu_is_a_clear_error():
    with pytest.raises(BackendError, match="cuda"):
        tinynet.zeros(2, device="cuda")


def test_info_prints_backend_and_versions():
    r = subprocess.run([sys.executable, "-m", "tinynet.info"], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, COLUMNS="120"))
    assert r.returncode == 0
    for word in ("tinynet backend", "numpy", "scipy", "cupy", "GPU", "cuDNN"):
        assert word in r.stdout


@pytest.mark.gpu
def test_mixing_devices_raises_device_mismatch():
    a = tinynet.ones(2, device="cpu")
    b = tinynet.ones(2, device="cuda")
    with pytest.raises(DeviceMismatchError, match="add"):
        a + b
    assert (b.cpu() + a).device == "cpu"
    assert tinynet.tensor(b.numpy(), device="cuda").device == "cuda"
