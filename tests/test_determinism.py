"""tinynet.use_deterministic_algorithms: the API, the deterministic replacements of the GPU's
atomic paths (bit-identical to the CPU or run to run), and the main job on the GPU giving
bit-identical losses twice and after a resume."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet.errors import ArgumentTypeError

from test_resume import SMALL, _Crash, _main, _same_params

gpu = pytest.mark.gpu
needs_gpu = pytest.mark.skipif(not tinynet.cuda.is_available(),
                               reason="needs CuPy and a CUDA GPU (TINYNET_BACKEND=cupy)")


@pytest.fixture
def deterministic():
    tinynet.use_deterministic_algorithms(True)
    yield
    tinynet.use_deterministic_algorithms(False)


def test_the_switch_as_pytorch():
    assert tinynet.are_deterministic_algorithms_enabled() is False
    tinynet.use_deterministic_algorithms(True, warn_only=True)
    try:
        assert tinynet.are_deterministic_algorithms_enabled() is True
        assert tinynet.is_deterministic_algorithms_warn_only_enabled() is True
    finally:
        tinynet.use_deterministic_algorithms(False)
    assert tinynet.is_deterministic_algorithms_warn_only_enabled() is False
    for bad in (1, None, "yes"):
        with pytest.raises(ArgumentTypeError, match="use_deterministic_algorithms: mode must be a bool"):
            tinynet.use_deterministic_algorithms(bad)
    with pytest.raises(TypeError, match="warn_only"):
        tinynet.use_deterministic_algorithms(True, warn_only=0)


def _accumulating_ops(device, dtype):
    """Results that accumulate repeated indices (add.at): the gradients of indexing and of
    embedding, scatter_add; returned on the host."""
    rng = numpy.random.default_rng(0)
    idx = rng.integers(0, 7, size=20000)
    w = tinynet.tensor(rng.standard_normal((7, 33)), dtype=dtype, device=device, requires_grad=True)
    x = tinynet.tensor(rng.standard_normal((7, 5)), dtype=dtype, device=device, requires_grad=True)
    it = tinynet.tensor(idx, device=device)
    g = tinynet.tensor(rng.standard_normal((20000, 33)), dtype=dtype, device=device)
    F.embedding(it, w).backward(g)
    x[it].backward(tinynet.tensor(rng.standard_normal((20000, 5)), dtype=dtype, device=device))
    src = tinynet.tensor(rng.standard_normal((20000, 5)), dtype=dtype, device=device)
    sa = tinynet.zeros(7, 5, dtype=dtype, device=device).scatter_add(0, it[:, None].expand(20000, 5), src)
    return [t.detach().cpu().numpy() for t in (w.grad, x.grad, sa)]


@pytest.mark.parametrize("dtype", [tinynet.float32, tinynet.float64])
def test_accumulating_ops_in_deterministic_mode_equal_the_cpu_bit_for_bit(device, dtype, deterministic):
    """On the GPU the in-order add.at makes the same additions in the same order as NumPy's."""
    for got, want in zip(_accumulating_ops(device, dtype), _accumulating_ops("cpu", dtype)):
        numpy.testing.assert_array_equal(got, want)


@gpu
@needs_gpu
def test_overlapping_avg_pool_takes_the_generic_path_in_deterministic_mode(deterministic):
    x = tinynet.randn(4, 3, 17, 17, device="cuda", requires_grad=True)
    y = F.avg_pool2d(x, 3, stride=1)
    assert y.grad_fn.gpu_path is False
    y.backward(tinynet.ones_like(y))
    first = x.grad.cpu().numpy()
    x.grad = None
    F.avg_pool2d(x, 3, stride=1).backward(tinynet.ones_like(y))
    numpy.testing.assert_array_equal(x.grad.cpu().numpy(), first)
    assert F.avg_pool2d(x, 2).grad_fn.gpu_path is True  # windows that do not overlap keep the kernel


@gpu
@needs_gpu
def test_main_job_on_the_gpu_twice_and_resumed_bit_identical(mnist_dir, tmp_path, deterministic, monkeypatch):
    """With ``--deterministic``: two runs of the main job (640 images, 3 epochs) give the same
    losses and parameters bit for bit, and so does a run that crashed mid-epoch and was
    resumed from its checkpoint. (Without it, an H100 run of this test differed in the
    third epoch's loss: cuDNN's heuristic engines are not all deterministic.)"""
    base = ["--data-dir", mnist_dir, "--epochs", "3", "--deterministic"] + SMALL
    code, rows = _main(base + ["--save-model", str(tmp_path / "a.npz")])
    assert code == 0
    code, rows2 = _main(base + ["--save-model", str(tmp_path / "b.npz")])
    assert code == 0
    assert [r["train_loss"] for r in rows] == [r["train_loss"] for r in rows2]
    _same_params(tmp_path / "a.npz", tmp_path / "b.npz")
    import common
    save, ck = common.save_checkpoint, tmp_path / "ck.npz"

    def save_then_crash(path, model, optimizer, loader, epoch, rows, total):
        save(path, model, optimizer, loader, epoch, rows, total)
        if epoch == 2 and total is not None:
            raise _Crash

    monkeypatch.setattr(common, "save_checkpoint", save_then_crash)
    with pytest.raises(_Crash):
        _main(base + ["--checkpoint", str(ck), "--checkpoint-every", "7"])
    monkeypatch.setattr(common, "save_checkpoint", save)
    code, rows3 = _main(base + ["--resume", str(ck), "--save-model", str(tmp_path / "c.npz")])
    assert code == 0
    assert [r["train_loss"] for r in rows3] == [r["train_loss"] for r in rows]
    _same_params(tmp_path / "a.npz", tmp_path / "c.npz")
