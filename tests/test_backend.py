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
    for extra in ("test", "plot", "tensorboard", "docs", "cuda12", "cuda13"):
        assert f"extra [{extra}]" in r.stdout


def test_info_lists_extras_and_version():
    from tinynet import info
    found = info.extras()
    assert set(found) == {f"extra [{name}]" for name in info.EXTRAS}
    # pytest runs this, so the test extra's pytest is there; an absent distribution is reported with its extra
    assert "pytest" in found["extra [test]"] or "missing" in found["extra [test]"]
    assert info._present("surely-not-a-distribution-xyz", None) is None
    assert isinstance(tinynet.__version__, str) and tinynet.__version__


@pytest.mark.gpu
def test_mixing_devices_raises_device_mismatch():
    a = tinynet.ones(2, device="cpu")
    b = tinynet.ones(2, device="cuda")
    with pytest.raises(DeviceMismatchError, match="add"):
        a + b
    assert (b.cpu() + a).device == "cpu"
    assert tinynet.tensor(b.detach().numpy(), device="cuda").device == "cuda"


def test_heap_setting_validated_and_switchable():
    r = _run("import tinynet", TINYNET_HEAP="huge")
    assert r.returncode != 0 and "BackendError" in r.stderr and "TINYNET_HEAP" in r.stderr and "'huge'" in r.stderr
    probe = "import tinynet.backends.cpu as c; print(c.heap_mode, c.heap_retained)"
    assert _run(probe, TINYNET_HEAP="default").stdout.split() == ["default", "False"]
    import platform
    glibc = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"
    assert _run(probe).stdout.split() == ["retain", str(glibc)]


@pytest.mark.skipif(sys.platform != "linux", reason="glibc's malloc thresholds are Linux-only")
def test_retained_heap_avoids_page_faults_between_steps():
    """With the heap retained, repeating the same large temporaries takes no fresh page
    faults after the first round (glibc's defaults re-fault them: what the setting is for)."""
    code = ("import resource, numpy, tinynet\n"
            "def step():\n"
            "    a = [numpy.ones(2**20 + 7 * i, dtype='float32') for i in range(6)]\n"
            "    del a\n"
            "step(); step()\n"
            "before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
            "for _ in range(20): step()\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)\n")
    if not tinynet.backends.cpu.heap_retained:
        pytest.skip("heap thresholds not set in this process (TINYNET_HEAP=default or not glibc)")
    retained, default = _run(code), _run(code, TINYNET_HEAP="default")
    assert retained.returncode == 0 and default.returncode == 0, retained.stderr + default.stderr
    assert int(retained.stdout) < 200 < 5000 < int(default.stdout), (retained.stdout, default.stdout)
