"""Resuming a run where it stopped: DataLoader.state_dict/load_state_dict with the random
state, and the examples' --checkpoint/--resume giving bit-identical parameters."""
import importlib.util
import os
import random
import subprocess
import sys
import time

import numpy
import pytest

import tinynet
from tinynet.errors import ArgumentError, ArgumentTypeError
from tinynet.utils.data import DataLoader, TensorDataset


def _dataset(n=23):
    return TensorDataset(tinynet.arange(n, device="cpu"))


def _run(loader, epochs, stop=None):
    """Iterate ``epochs`` epochs, drawing a random number after each batch (as dropout
    would); return the (indices, draw) trail, and at ``stop = (epoch, batch)`` also the
    checkpoint (epoch, loader state, random state) taken right after that batch."""
    trail, ckpt = [], None
    for epoch in range(epochs):
        for i, (x,) in enumerate(loader):
            trail.append((x.tolist(), float(tinynet.rand(1, device="cpu"))))
            if stop == (epoch, i):
                ckpt = (epoch, loader.state_dict(), tinynet.get_rng_state())
    return trail, ckpt


def _resume(make_loader, ckpt, epochs):
    epoch, state, rng = ckpt
    tinynet.manual_seed(12345)  # a fresh process: another random state until restored
    loader = make_loader()
    tinynet.set_rng_state(rng)
    loader.load_state_dict(state)
    trail, _ = _run(loader, epochs - epoch)
    return trail


@pytest.mark.parametrize("kind", ["default_generator", "own_generator", "workers", "persistent_workers",
                                  "drop_last"])
@pytest.mark.parametrize("stop", [(0, 0), (1, 2), (1, 4)])
def test_loader_resumes_the_interrupted_epoch_exactly(kind, stop):
    def make_loader():
        kw = dict(batch_size=4, shuffle=True, device="cpu")
        if kind == "own_generator":
            kw["generator"] = tinynet.Generator().manual_seed(7)
        if kind == "workers":
            kw["num_workers"] = 2
        if kind == "persistent_workers":
            kw.update(num_workers=2, persistent_workers=True)
        if kind == "drop_last":
            kw["drop_last"] = True
        return DataLoader(_dataset(), **kw)

    tinynet.manual_seed(3)
    full, ckpt = _run(make_loader(), 3, stop)
    done = stop[0] * len(make_loader()) + stop[1] + 1
    assert _resume(make_loader, ckpt, 3) == full[done:]


def test_state_at_an_epoch_end_starts_the_next_epoch_afresh():
    def make_loader():
        return DataLoader(_dataset(), batch_size=5, shuffle=True, device="cpu")

    tinynet.manual_seed(0)
    full, _ = _run(make_loader(), 2)
    tinynet.manual_seed(0)
    loader = make_loader()
    assert loader.state_dict()["rng_state"] is None
    _run(loader, 1)
    state, rng = loader.state_dict(), tinynet.get_rng_state()
    assert state["rng_state"] is None and state["batches_yielded"] == 0
    assert _resume(make_loader, (1, state, rng), 2) == full[len(loader):]


def test_loader_state_survives_save_and_load(tmp_path):
    tinynet.manual_seed(1)
    loader = DataLoader(_dataset(), batch_size=3, shuffle=True, device="cpu")
    it = iter(loader)
    next(it), next(it)
    tinynet.save({"loader": loader.state_dict(), "rng": tinynet.get_rng_state()}, tmp_path / "c.npz")
    rest = [x.tolist() for (x,) in it]
    back = tinynet.load(tmp_path / "c.npz")
    assert back["loader"]["batches_yielded"] == 2
    loader2 = DataLoader(_dataset(), batch_size=3, shuffle=True, device="cpu")
    loader2.load_state_dict(back["loader"])
    tinynet.set_rng_state(back["rng"])
    assert [x.tolist() for (x,) in loader2] == rest


def test_state_dict_between_load_and_iter_keeps_the_position():
    """A checkpoint written after load_state_dict() and before iter() (an example saving at
    the start of a resumed run) still holds the interrupted epoch's position."""
    tinynet.manual_seed(2)
    loader = DataLoader(_dataset(), batch_size=3, shuffle=True, device="cpu")
    it = iter(loader)
    for _ in range(3):
        next(it)
    state = loader.state_dict()
    rest = [x.tolist() for (x,) in it]
    again = DataLoader(_dataset(), batch_size=3, shuffle=True, device="cpu")
    again.load_state_dict(state)
    echoed = again.state_dict()
    assert echoed["batches_yielded"] == 3 and echoed["base_seed"] == state["base_seed"]
    assert numpy.array_equal(echoed["rng_state"].numpy(), state["rng_state"].numpy())
    third = DataLoader(_dataset(), batch_size=3, shuffle=True, device="cpu")
    third.load_state_dict(echoed)
    assert [x.tolist() for (x,) in third] == rest


def test_load_state_dict_bad_input():
    loader = DataLoader(_dataset(), batch_size=4, shuffle=True, device="cpu")
    good = {"rng_state": tinynet.get_rng_state(), "batches_yielded": 2, "generator_state": None, "base_seed": 5}
    with pytest.raises(ArgumentTypeError, match="DataLoader.load_state_dict.*keys"):
        loader.load_state_dict({"batches_yielded": 2})
    with pytest.raises(ArgumentTypeError, match="batches_yielded must be an int"):
        loader.load_state_dict(dict(good, batches_yielded=2.0))
    with pytest.raises(ArgumentError, match=r"batches_yielded must be in \[0, 6\], got 7"):
        loader.load_state_dict(dict(good, batches_yielded=7))
    with pytest.raises(ArgumentTypeError, match="base_seed must be an int"):
        loader.load_state_dict(dict(good, base_seed="x"))
    with pytest.raises(ArgumentTypeError):
        loader.load_state_dict(dict(good, rng_state=tinynet.zeros(3)))
    with pytest.raises(ValueError):  # the typed errors are also the built-in ones
        loader.load_state_dict(dict(good, batches_yielded=-1))


# ---- the main job: --checkpoint / --resume give bit-identical parameters ----------------------
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SMALL = ["--train-subset", "640", "--batch-size", "64", "--test-batch-size", "1000", "--log-interval", "0",
         "--no-download"]


def _main(args):
    spec = importlib.util.spec_from_file_location("mnist_convnet", os.path.join(ROOT, "examples", "mnist_convnet.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.main(args), mod.main.results


def _same_params(a, b):
    sa, sb = tinynet.load(a), tinynet.load(b)
    assert sa.keys() == sb.keys()
    for k in sa:
        numpy.testing.assert_array_equal(sa[k].numpy(), sb[k].numpy(), err_msg=k)


@pytest.fixture
def reference_run(mnist_dir, tmp_path_factory, cpu_default_device):
    """The uninterrupted run, on the CPU: bit-exact resume on the GPU also needs cuDNN's
    deterministic algorithms (an H100 run of this test on CuPy differed in the last bits)."""
    out = tmp_path_factory.mktemp("ref") / "final.npz"
    code, rows = _main(["--data-dir", mnist_dir, "--epochs", "3", "--save-model", str(out)] + SMALL)
    assert code == 0
    return out, rows


class _Crash(Exception):
    pass


def test_main_job_resumed_after_an_epoch_or_mid_epoch_is_bit_identical(mnist_dir, tmp_path, reference_run,
                                                                       monkeypatch, cpu_default_device):
    ref, ref_rows = reference_run
    ck = tmp_path / "ck.npz"
    base = ["--data-dir", mnist_dir, "--checkpoint", str(ck)] + SMALL
    # stopped after epoch 1
    assert _main(base + ["--epochs", "1"])[0] == 0
    code, rows = _main(base + ["--epochs", "3", "--resume", str(ck), "--save-model", str(tmp_path / "a.npz")])
    assert code == 0
    _same_params(ref, tmp_path / "a.npz")
    assert [r["train_loss"] for r in rows] == [r["train_loss"] for r in ref_rows]
    # stopped in epoch 2 right after the checkpoint of step 7 (of 10): the run "crashes" there
    import common  # the examples' shared module, imported by _main
    save = common.save_checkpoint

    def save_then_crash(path, model, optimizer, loader, epoch, rows, total):
        save(path, model, optimizer, loader, epoch, rows, total)
        if epoch == 2 and total is not None:
            raise _Crash

    monkeypatch.setattr(common, "save_checkpoint", save_then_crash)
    with pytest.raises(_Crash):
        _main(base + ["--epochs", "3", "--checkpoint-every", "7"])
    monkeypatch.setattr(common, "save_checkpoint", save)
    state = tinynet.load(ck)
    assert state["epoch"] == 2 and state["loader"]["batches_yielded"] == 7
    code, rows = _main(base + ["--epochs", "3", "--resume", str(ck), "--save-model", str(tmp_path / "b.npz")])
    assert code == 0
    _same_params(ref, tmp_path / "b.npz")
    assert [r["train_loss"] for r in rows] == [r["train_loss"] for r in ref_rows]


def test_main_job_killed_at_random_moments_resumes_bit_identical(mnist_dir, tmp_path, reference_run):
    """SIGKILL at a random moment after the first checkpoint, then --resume: the final
    parameters equal the uninterrupted run's bit for bit (3 trials)."""
    ref, _ = reference_run
    rng = random.Random(0)
    env = dict(os.environ, TINYNET_BACKEND="numpy", PYTHONPATH=ROOT)
    script = os.path.join(ROOT, "examples", "mnist_convnet.py")
    for trial in range(3):
        ck, final = tmp_path / f"ck{trial}.npz", tmp_path / f"final{trial}.npz"
        args = [sys.executable, script, "--data-dir", mnist_dir, "--epochs", "3", "--checkpoint", str(ck),
                "--checkpoint-every", "3", "--save-model", str(final)] + SMALL
        proc = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while not ck.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 1.5))
        proc.kill()
        proc.wait()
        assert ck.exists()
        if not final.exists():  # killed before the end: resume from the last checkpoint
            done = subprocess.run(args + ["--resume", str(ck)], env=env, capture_output=True, text=True)
            assert done.returncode == 0, done.stdout + done.stderr
        _same_params(ref, final)
