"""Data-parallel training in N processes under ``mpiexec -n N`` (the ``mpi`` backend, CPU,
float64; N = 2, and 3 for a world size that is neither two nor a power of two), against one
process on the same global batches (tests/ddp_worker.py runs both sides); failures of a rank;
the examples' ``--distributed``; torchrun with the MPI backend.

Needs mpi4py and mpiexec (``pip install 'tinynet[distributed]'``: mpi4py and the mpich
wheel, whose mpiexec lands next to the Python executable); skipped without them.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy
import pytest

import tinynet

pytest.importorskip("mpi4py")
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import ddp_worker as W  # noqa: E402

TOL = 1e-6  # float64, one process vs two


def mpiexec():
    """The mpiexec beside this Python (the mpich wheel's), else the one on PATH, with MPICH's
    ``-launcher fork`` (local processes only: no ssh, no host name lookup) when it is hydra."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    exe = here if os.access(here, os.X_OK) else shutil.which("mpiexec")
    if exe is None:
        return None
    version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    return [exe, "-launcher", "fork"] if "HYDRA" in version else [exe]


def launch(args, timeout=120, n=2, env=None):
    exe = mpiexec()
    if exe is None:
        pytest.skip("mpiexec not found (pip install 'tinynet[distributed]')")
    full = dict(os.environ, PYTHONPATH=ROOT, TINYNET_NUM_THREADS="1", TINYNET_BACKEND="numpy", **(env or {}))
    start = time.monotonic()
    proc = subprocess.run([*exe, "-n", str(n), sys.executable, *args], env=full, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)
    return proc, time.monotonic() - start


WORLDS = [2, 3]  # a run of each takes a few seconds; DDP_TEST_WORLDS=2,3,4 (say) picks others


def _worlds():
    picked = os.environ.get("DDP_TEST_WORLDS")
    return [int(n) for n in picked.split(",")] if picked else WORLDS


@pytest.fixture(scope="module", params=_worlds(), ids=lambda n: f"world{n}")
def run(request, tmp_path_factory):
    """One ``mpiexec -n N`` run of every scenario (collectives, training, buckets, no_sync,
    BatchNorm, unused parameters, bad input); the tests below check its parts, for each N."""
    world = request.param
    out = tmp_path_factory.mktemp(f"ddp{world}")
    proc, _ = launch([os.path.join(HERE, "ddp_worker.py"), str(out)], n=world)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    ranks = [dict(numpy.load(out / f"rank{r}.npz")) for r in range(world)]
    notes = [json.loads((out / f"rank{r}.json").read_text()) for r in range(world)]
    init_errors = [(out / f"init_error{r}.txt").read_text() for r in range(world)]
    s = world * (world + 1) // 2  # sum of rank + 1
    for r in range(world):  # after destroy_process_group, init_process_group again works
        assert (out / f"reinit{r}.txt").read_text() == str([float(s)] * 2)
    return world, ranks, notes, init_errors


def _compare(ranks, prefix, snap, tol=TOL):
    for name, want in snap.items():
        for r, arrays in enumerate(ranks):
            got = arrays[f"{prefix}{name}"]
            assert numpy.abs(got - want).max() <= tol * max(1.0, numpy.abs(want).max()), (prefix, name, r)


TWO_RANKS = {"c.sum": [3, 6, 9], "c.avg": [1.5, 3, 4.5], "c.max": [3, -4], "c.min": [2, -6], "c.prod": [6, 24],
             "c.broadcast": [0, 6, 12, 18], "c.all_gather": [[[1, 1], [1, 1]], [[2, 2], [2, 2]]],
             "c.all_gather_into_tensor": [0, 0, 1, 1], "c.noncontiguous_async": [[3] * 3] * 2,
             "c.cpu_tensor": [3, 3], "c.debug_ok": [2, 2, 2]}


def test_expected_collectives_for_two_ranks_are_the_values_by_hand():
    """The closed forms of ddp_worker.expected_collectives, at N=2, are the numbers worked out by hand."""
    for r, scattered in ((0, [3, 3, 3]), (1, [20, 20, 20])):
        assert W.expected_collectives(2, r) == dict(TWO_RANKS, **{"c.reduce_scatter": scattered})
    assert W.expected_collectives(3, 2)["c.prod"] == [24, -192]  # 2 * 3 * 4, (-4) * (-6) * (-8)
    assert W.expected_collectives(3, 2)["c.reduce_scatter"] == [60] * 3  # 10 * 2 from each of 3 ranks


def test_collectives(run):
    world, ranks, notes, _ = run
    for r in range(world):
        for key, value in W.expected_collectives(world, r).items():
            numpy.testing.assert_array_equal(ranks[r][key], value, err_msg=f"{key} on rank {r}")
        assert notes[r]["completed"] is True


def test_bad_input_gives_typed_errors_on_every_rank(run):
    world, _, notes, init_errors = run
    shapes = "; ".join(f"rank {r}: all_reduce op=SUM float32 ({3 + r},)" for r in range(world))
    dtypes = "; ".join(f"rank {r}: all_reduce op=SUM {'float32' if r else 'float64'} (3,)" for r in range(world))
    for r in range(world):
        assert f"world_size={world + 1} disagrees with the launcher on rank {r}" in init_errors[r]
        assert f"gives world_size {world});" in init_errors[r]
        assert notes[r]["init_twice"].startswith("ProcessGroupError: init_process_group: trying to initialize")
        assert f"invalid root rank src={world + 3} (the group has ranks 0 to {world - 1})" in notes[r]["bad_src"]
        assert f"one tensor per rank ({world}), got 1" in notes[r]["bad_list"]
        # TINYNET_DISTRIBUTED_DEBUG: the mismatch is found on every rank, each rank's call listed
        assert shapes in notes[r]["debug_shape"]
        assert dtypes in notes[r]["debug_dtype"]


@pytest.mark.parametrize("case", list(W.LOADER_CASES))
def test_n_processes_equal_one_process_on_the_global_batch(run, case):
    """Step by step (two epochs, uneven last batches), parameters and averaged gradients of every
    rank equal one process trained on the union of all ranks' batches."""
    world, ranks, _, _ = run
    ref = W.reference_training("cpu", tinynet.float64, case, world)
    steps = {k.split(".")[2] for k in ranks[0] if k.startswith(f"train.{case}.")}
    assert len(steps) == len(ref) == (6 if case == "loader_drop" else 8)
    for k, snap in enumerate(ref):
        _compare(ranks, f"train.{case}.{k}.", snap)


def test_small_buckets_overlap_backward_and_give_the_same_result(run):
    world, ranks, _, _ = run
    for k, snap in enumerate(W.reference_training("cpu", tinynet.float64, "pad", world)):
        _compare(ranks, f"buckets.{k}.", snap)
    for r in range(world):
        assert int(ranks[r]["buckets.count"]) == 3  # (fc2.bias, fc2.weight), fc1's, conv's
        # when backward reached fc1's input, the buckets of fc2 and fc1 were already all-reducing
        assert ranks[r]["buckets.overlap"].tolist() == [2] * 8


def test_no_sync_accumulates_locally_then_reduces_the_sums(run):
    world, ranks, _, _ = run
    _compare(ranks, "no_sync.", W.reference_no_sync("cpu", tinynet.float64, world))
    for r in range(1, world):
        assert numpy.abs(ranks[0]["no_sync.local_fc2_bias_grad"] - ranks[r]["no_sync.local_fc2_bias_grad"]).max() > 1e-3


def test_batchnorm_buffers_are_rank_0s(run):
    """Each rank normalises with its own batch statistics, gradients are averaged, and before
    each forward every rank gets rank 0's running statistics (PyTorch's broadcast_buffers)."""
    world, ranks, _, _ = run
    ref = W.reference_batchnorm("cpu", tinynet.float64, world)
    for k, step in enumerate(ref):
        _compare(ranks, f"bn.{k}.after.", {n: v for n, v in step["after"].items() if not n.startswith("b.")})
        _compare(ranks, f"bn.{k}.seen.", step["seen"])
    # the broadcast matters: without it rank 1 would have gone on with its own statistics
    own = W.reference_batchnorm("cpu", tinynet.float64, world, steps=1, own_rank=1)[0]["own"]
    assert numpy.abs(own["b.bn1.running_mean"] - ref[1]["seen"]["b.bn1.running_mean"]).max() > 1e-3


def test_unused_parameters(run):
    world, ranks, notes, _ = run
    _compare(ranks, "unused.", W.reference_unused("cpu", tinynet.float64, world))
    for r in range(world):
        assert f"did not receive a gradient in this backward on rank {r}: extra.weight, extra.bias" in \
            notes[r]["unused_strict"]
        assert "find_unused_parameters=True" in notes[r]["unused_strict"]


def test_state_dict_keys_are_prefixed(run):
    _, _, notes, _ = run
    assert notes[0]["state_dict_keys"][:2] == ["module.conv.weight", "module.conv.bias"]


# ---- failures: nothing hangs ------------------------------------------------------------------------
def _failure(tmp_path, scenario, timeout="60"):
    proc, seconds = launch([os.path.join(HERE, "ddp_worker.py"), str(tmp_path), scenario], timeout=90,
                           env={"DDP_TEST_TIMEOUT": timeout})
    assert proc.returncode != 0
    report = tmp_path / "failure0.json"
    return proc, seconds, json.loads(report.read_text()) if report.exists() else None


def test_a_rank_that_raises_stops_the_others_with_distributed_error(tmp_path):
    proc, seconds, report = _failure(tmp_path, "fail-exception")
    assert report["type"] == "DistributedError"
    assert "rank 1 failed: ZeroDivisionError: rank 1 divided by zero on purpose" in report["error"]
    assert report["seconds"] < 10 and seconds < 30  # the note arrives at once; the timeout (60 s) is not needed
    # (what the ranks print last may be lost when MPI_Abort ends the job, so the report file is the evidence)


def test_a_killed_rank_ends_the_run(tmp_path):
    proc, seconds, _ = _failure(tmp_path, "fail-kill")
    assert seconds < 30  # mpiexec ends the other ranks when one dies
    assert "Killed" in proc.stdout + proc.stderr or "signal 9" in proc.stdout + proc.stderr


def test_a_hanging_rank_trips_the_timeout(tmp_path):
    proc, seconds, report = _failure(tmp_path, "fail-hang", timeout="3")
    assert report["type"] == "DistributedError" and "within the timeout of 3 s" in report["error"]
    assert 2.5 < report["seconds"] < 15 and seconds < 40


# ---- the examples and torchrun ------------------------------------------------------------------------
@pytest.mark.parametrize("example,hook", [("mnist_mlp", "none"), ("mnist_convnet", "none"), ("mnist_convnet", "fp16")])
def test_example_trains_with_distributed(mnist_dir, example, hook):
    proc, _ = launch([os.path.join(ROOT, "examples", f"{example}.py"), "--distributed", "--epochs", "1",
                      "--train-subset", "2000", "--data-dir", mnist_dir, "--no-download", "--log-interval", "0",
                      "--comm-hook", hook], timeout=300, env={"COLUMNS": "200"})
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", proc.stdout)  # Open MPI hands ranks a terminal: rich colours
    assert "data-parallel over 2 processes (mpi): batch 64 per process, 128 in all" in out
    assert ("gradients all-reduced in fp16" in out) == (hook == "fp16")
    assert out.count("tinynet 0") == 1 and out.count("epoch  1:") == 1  # rank 0 speaks, once


def _torchrun():
    torchrun = shutil.which("torchrun") or os.path.join(os.path.dirname(sys.executable), "torchrun")
    if not os.access(torchrun, os.X_OK):
        pytest.skip("torchrun not found")
    return torchrun


def test_torchrun_with_the_mpi_backend_says_to_use_mpiexec(tmp_path):
    torchrun = _torchrun()
    script = tmp_path / "t.py"
    # each rank writes its own file: two processes' prints may interleave on the shared stdout
    script.write_text("import os, sys\nimport tinynet\nimport tinynet.distributed as dist\n"
                      "try:\n    dist.init_process_group('mpi')\n"
                      "except tinynet.errors.ProcessGroupError as e:\n"
                      "    open(os.path.join(sys.argv[1], 'err' + os.environ['RANK']), 'w').write(str(e))\n")
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([torchrun, "--nproc-per-node", "2", "--master-port", "29631", str(script), str(tmp_path)],
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for r in range(2):
        err = (tmp_path / f"err{r}").read_text()
        assert err.startswith("init_process_group: backend 'mpi'") and "mpiexec -n N" in err


def test_torchrun_env_rendezvous(tmp_path):
    """Under torchrun (whose agent holds MASTER_PORT), the ranks meet at tinynet's store and get
    rank 0's id: what the NCCL backend does before NcclCommunicator."""
    script = tmp_path / "r.py"
    script.write_text(
        "import json, os\n"
        "from tinynet.distributed import _launch, _nccl\n"
        "rank, size = int(os.environ['RANK']), int(os.environ['WORLD_SIZE'])\n"
        "uid, store = _nccl.rendezvous(*_launch.store_address('t'), size, rank, 30, lambda: tuple(range(128)))\n"
        "store.add('done', 1)\n"
        "if rank == 0:\n    store.wait_for('done', 'all', done=lambda v: int(v) >= size)\n"
        "open(os.path.join(os.environ['OUT'], f'uid{rank}'), 'w').write(json.dumps(list(uid)))\n")
    proc = subprocess.run([_torchrun(), "--nproc-per-node", "2", "--master-port", "29633", str(script)],
                          env=dict(os.environ, PYTHONPATH=ROOT, OUT=str(tmp_path)), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for r in range(2):
        assert json.loads((tmp_path / f"uid{r}").read_text()) == list(range(128))
