"""benchmarks/multinode.py on the CPU: the main job under ``mpiexec`` (MPICH's hydra, a hostfile
naming this host) in two ways, compared epoch line by epoch line and weight by weight; the
torchrun runs need GPUs (the GPU machine runs them: docs/distributed.md)."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "multinode.py")


def test_multinode_script_compares_launches_bit_for_bit(tmp_path, mnist_dir):
    pytest.importorskip("mpi4py")
    out = tmp_path / "mn.json"
    env = dict(os.environ, TINYNET_BACKEND="numpy", TINYNET_NUM_THREADS="1")
    r = subprocess.run([sys.executable, SCRIPT, "--data-dir", mnist_dir, "--runs", "single-mpi", "mpi-hostfile",
                        "--epochs", "1", "--train-subset", "256", "--timeout", "120", "--out", str(out)],
                       capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    runs = json.loads(out.read_text())["runs"]
    assert runs["single-mpi"]["rc"] == [0] and len(runs["single-mpi"]["epochs"]) == 1
    row = runs["mpi-hostfile"]
    assert row["same_epoch_lines_as"] == "single-mpi"
    assert row["same_epoch_lines"] is True and row["bit_identical_weights"] is True
