"""Faults: ``python -m tinynet.distributed.run --max-restarts`` restarts a 2-process MPI job
whose rank 1 was killed mid-epoch; the examples' ``--checkpoint PATH --resume PATH`` make the
restarted group continue from the last checkpoint and end bit-identical to an uninterrupted
run (tests/fault_worker.py injects the kill). Plus the launcher's own checks."""
import os
import re
import subprocess
import sys
import time

import numpy
import pytest

from tinynet.errors import ArgumentError

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _run(tmp_path, mnist_dir, name, restarts, fault_step=None, timeout=240):
    pytest.importorskip("mpi4py")
    ck = str(tmp_path / f"{name}.ck")
    env = dict(os.environ, PYTHONPATH=ROOT, TINYNET_NUM_THREADS="1", TINYNET_BACKEND="numpy", COLUMNS="200")
    env.pop("FAULT_STEP", None)
    if fault_step is not None:
        env["FAULT_STEP"] = str(fault_step)
    cmd = [sys.executable, "-m", "tinynet.distributed.run", "--nproc-per-node", "2", "--max-restarts", str(restarts),
           os.path.join(HERE, "fault_worker.py"), "--distributed", "--epochs", "2", "--train-subset", "768",
           "--batch-size", "64", "--data-dir", mnist_dir, "--no-download", "--log-interval", "0",
           "--checkpoint", ck, "--checkpoint-every", "2", "--resume", ck, "--save-model", str(tmp_path / f"{name}.npz")]
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    # rich colours the example's lines where the environment asks for colour (FORCE_COLOR, as on
    # the GPU machines): the checks read the text without the escape sequences
    proc.stdout = ANSI.sub("", proc.stdout)
    return proc, time.monotonic() - start


def _weights(path):
    import tinynet
    return {k: v.numpy() for k, v in tinynet.load(str(path)).items()}


@pytest.fixture(scope="module")
def clean(tmp_path_factory, mnist_dir):
    """The uninterrupted run's final weights."""
    tmp = tmp_path_factory.mktemp("clean")
    proc, _ = _run(tmp, mnist_dir, "clean", 0)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "resumed" not in proc.stdout  # --resume of a checkpoint not written yet: from scratch
    return _weights(tmp / "clean.npz")


# 768 images, 64 per rank and step: 6 steps an epoch, a checkpoint every 2 steps and at the end
# of each epoch. Step 4: the restart resumes epoch 1 after its step 2 (mid-epoch checkpoint);
# step 9: epoch 2 after its step 2 (the epoch-end checkpoint of epoch 1 was overwritten by then)
@pytest.mark.parametrize("fault_step,epoch", [(4, 1), (9, 2)])
def test_a_killed_rank_restarts_the_group_from_the_checkpoint_bit_identically(tmp_path, mnist_dir, clean,
                                                                               fault_step, epoch):
    faulty, seconds = _run(tmp_path, mnist_dir, "faulty", 1, fault_step=fault_step)
    assert faulty.returncode == 0, faulty.stdout[-3000:] + faulty.stderr[-3000:]
    assert "attempt 0 of the 2-process job failed" in faulty.stderr and "restarting the group" in faulty.stderr
    # rank 1 dies in step k after its gradients were reduced: rank 0 may finish step k and write
    # its checkpoint of step k; the group then resumes from the step both have (rank 0's .prev)
    assert re.search(rf"resumed from \S+\.ck\.rank0(\.prev)? at epoch {epoch}\n", faulty.stdout)
    assert faulty.stdout.count("resumed from") == 1
    want, got = clean, _weights(tmp_path / "faulty.npz")
    assert sorted(want) == sorted(got)
    for k in want:
        numpy.testing.assert_array_equal(got[k], want[k])
    assert seconds < 120


def test_without_restarts_the_failure_is_the_exit_status(tmp_path, mnist_dir):
    proc, seconds = _run(tmp_path, mnist_dir, "once", 0, fault_step=3)
    assert proc.returncode != 0 and "no restarts left" in proc.stderr
    assert seconds < 60


def test_launcher_arguments():
    from tinynet.distributed import run
    args = run.parse(["--nproc-per-node", "3", "--max-restarts", "2", "train.py", "--lr", "0.1"])
    assert (args.nproc, args.max_restarts, args.script, args.script_args) == (3, 2, "train.py", ["--lr", "0.1"])
    with pytest.raises(ArgumentError, match="--max-restarts must be >= 0, got -1"):
        run.parse(["--max-restarts", "-1", "train.py"])
    with pytest.raises(ArgumentError, match="--nproc-per-node must be at least 1, got 0"):
        run.parse(["--nproc-per-node", "0", "train.py"])
