"""Shared fixtures: every op test body runs once per available backend device."""
import os
import subprocess
import sys

import numpy
import pytest
from hypothesis import settings

import tinynet

# Hypothesis profiles: "ci" (the default) draws the same 20 examples per test every run (the fuzz
# tests, -m fuzz, take about a minute on two CPU cores); "long" draws 2,000 fresh ones on demand:
# pytest -m fuzz --hypothesis-profile long
settings.register_profile("ci", max_examples=20, deadline=None, derandomize=True)
settings.register_profile("long", max_examples=2000, deadline=None)
settings.load_profile("ci")

DEVICES = [pytest.param("cpu", id="numpy")]
if tinynet.cuda.is_available():
    DEVICES.append(pytest.param("cuda", id="cupy", marks=pytest.mark.gpu))


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs CuPy and a CUDA GPU (skipped without one)")
    config.addinivalue_line("markers", "slow: trains on real data (a few minutes)")
    config.addinivalue_line("markers", "fuzz: hypothesis fuzzing (bounded by the hypothesis profile)")


def pytest_collection_modifyitems(config, items):
    if not tinynet.cuda.is_available():
        skip = pytest.mark.skip(reason="needs CuPy and a CUDA GPU (TINYNET_BACKEND=cupy)")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def _gpu_index_errors_stay_in_their_test():
    """A GPU tensor-index gather reports an out-of-range index at the next gather or
    ``tinynet.cuda.synchronize()`` (tinynet/kernels/index_rows.py): one a test left pending
    (the bad-input walk draws such indices) is dropped, not raised in the next test."""
    yield
    from tinynet.kernels import index_rows
    if index_rows._RECORD:  # a GPU gather ran in this process: let its kernels finish first
        tinynet.backend.cupy.cuda.runtime.deviceSynchronize()
        index_rows.clear()


@pytest.fixture(params=DEVICES)
def device(request):
    """'cpu' (NumPy) and, where a GPU is present, 'cuda' (CuPy)."""
    return request.param


def find_mnist():
    """The real MNIST folder: ../shared/datasets/mnist beside the checkout, else $TINYNET_DATA/mnist."""
    here = os.path.dirname(os.path.abspath(__file__))
    for path in (os.path.join(here, "..", "..", "shared", "datasets", "mnist"),
                 os.path.join(os.environ.get("TINYNET_DATA", "/nonexistent"), "mnist")):
        if os.path.isdir(path):
            return os.path.abspath(path)
    return None


@pytest.fixture(scope="session")
def mnist_dir():
    path = find_mnist()
    if path is None:
        pytest.skip("real MNIST not found (../shared/datasets/mnist or $TINYNET_DATA/mnist)")
    return path


_HYPOTHESIS_SETTINGS = {}


@pytest.fixture(autouse=True)
def _hypothesis_settings_chain(request):
    """Hypothesis's pytest plugin (6.170) wraps a parametrized test's settings in a new
    settings object at every call, parented by the previous call's: a test parametrized
    ~1,000 times (the bad-input walk) then overflows the recursion limit when a setting is
    read through the chain. Each call starts again from the test's own settings."""
    fn = getattr(request.function, "__func__", request.function)
    if hasattr(fn, "_hypothesis_internal_use_settings"):
        fn._hypothesis_internal_use_settings = _HYPOTHESIS_SETTINGS.setdefault(fn, fn._hypothesis_internal_use_settings)


@pytest.fixture(autouse=True)
def _seed():
    tinynet.manual_seed(1234)
    numpy.random.seed(1234)


@pytest.fixture
def own_rnn_path(monkeypatch):
    """For tests of tinynet's own recurrent kernels and ops: cuDNN's RNN (the GPU default;
    tests/test_cudnn_rnn_gpu.py tests it) is switched off. Files use it with
    ``pytestmark = pytest.mark.usefixtures("own_rnn_path")``."""
    monkeypatch.setattr(tinynet.backends.cudnn, "rnn_enabled", False)


@pytest.fixture
def cpu_default_device():
    """Factories default to the CPU, as PyTorch's do (the CuPy backend defaults to the GPU): for
    tests that compare with PyTorch on the CPU or check what only the CPU checks (value ranges)."""

    tinynet.set_default_device("cpu")
    yield
    tinynet.set_default_device(None)


@pytest.fixture(scope="session")
def reference_torchvision(tmp_path_factory):
    """A folder holding torchvision's Python files for PyTorch's side of a comparison
    (benchmarks/pytorch_examples.py says why it is made so), fetched once a session for every
    test file that compares with torchvision; skips where it cannot be prepared."""
    pytest.importorskip("torch")
    benchmarks = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
    sys.path.insert(0, benchmarks)
    try:
        import pytorch_examples
        return pytorch_examples.reference_torchvision(str(tmp_path_factory.getbasetemp() / "torchvision"))
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        pytest.skip(f"torchvision for PyTorch's side could not be prepared: {exc}")
    finally:
        sys.path.remove(benchmarks)
