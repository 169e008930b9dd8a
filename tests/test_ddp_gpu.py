"""Data-parallel training on all the machine's GPUs (N of them, at least 2; DDP_TEST_GPUS=N
takes the first N only) with the NCCL backend (float32), launched by ``mpiexec -n N`` (unique
id over MPI) and by ``torchrun --nproc-per-node N`` (env://, the TCP store), against one GPU
on the same global batches. Skipped without two GPUs, CuPy's NCCL, mpi4py/mpiexec or torchrun."""
import json
import os
import shutil
import subprocess
import sys
import time

import numpy
import pytest

import tinynet

pytestmark = pytest.mark.gpu
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import ddp_worker as W  # noqa: E402

TOL = 1e-5  # float32


def _world():
    """The number of ranks, one a GPU: every visible GPU, or the first DDP_TEST_GPUS of them."""
    count = tinynet.cuda.device_count()
    if "DDP_TEST_GPUS" in os.environ:
        count = min(count, int(os.environ["DDP_TEST_GPUS"]))
    if count < 2:
        pytest.skip(f"needs 2 GPUs, {count} visible (or allowed by DDP_TEST_GPUS)")
    if not tinynet.distributed.is_nccl_available():
        pytest.skip("needs CuPy's NCCL binding (cupy.cuda.nccl)")
    return count


def _env():
    return dict(os.environ, PYTHONPATH=ROOT, TINYNET_BACKEND="cupy", DDP_TEST_DETERMINISTIC="1")


def _launchers(world):
    out = []
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    mpiexec = mpiexec if os.access(mpiexec, os.X_OK) else shutil.which("mpiexec")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        mpiexec = None
    if mpiexec:
        out.append(("mpiexec", [mpiexec, "-n", str(world), sys.executable]))
    torchrun = shutil.which("torchrun") or os.path.join(os.path.dirname(sys.executable), "torchrun")
    if os.access(torchrun, os.X_OK):
        out.append(("torchrun", [torchrun, "--nproc-per-node", str(world), "--master-port", "29641"]))
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """{launcher: [rank 0's arrays, ...]} of one run of every scenario per launcher; and N."""
    world = _world()
    results = {}
    for name, prefix in _launchers(world):
        out = tmp_path_factory.mktemp(name)
        proc = subprocess.run([*prefix, os.path.join(HERE, "ddp_worker.py"), str(out), "--device", "cuda",
                               "--backend", "nccl"], env=_env(), capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert proc.returncode == 0, name + proc.stdout[-3000:] + proc.stderr[-5000:]
        results[name] = [dict(numpy.load(out / f"rank{r}.npz"), notes=json.loads((out / f"rank{r}.json").read_text()),
                              after_destroy=json.loads((out / f"after_destroy{r}.json").read_text()))
                         for r in range(world)]
    if not results:
        pytest.skip("neither mpiexec (with mpi4py) nor torchrun found")
    return results, world


def _compare(ranks, prefix, snap):
    for name, want in snap.items():
        for r, arrays in enumerate(ranks):
            got = arrays[f"{prefix}{name}"]
            assert numpy.abs(got - want).max() <= TOL * max(1.0, numpy.abs(want).max()), (prefix, name, r)


@pytest.fixture
def deterministic():
    tinynet.use_deterministic_algorithms(True)
    yield
    tinynet.use_deterministic_algorithms(False)


def test_collectives_on_gpu(runs):
    """Every collective's result on every rank (ddp_worker.expected_collectives: for N=2 the sum
    [3, 6, 9], the average [1.5, 3, 4.5], the all_gather [[[1, 1], [1, 1]], [[2, 2], [2, 2]]], ...)."""
    results, world = runs
    for name, ranks in results.items():
        for r in range(world):
            for key, value in W.expected_collectives(world, r).items():
                numpy.testing.assert_array_equal(ranks[r][key], value, err_msg=f"{name}: {key} on rank {r}")
            assert ranks[r]["notes"]["completed"] is True, name


@pytest.mark.parametrize("case", list(W.LOADER_CASES))
def test_n_gpus_equal_one_gpu_on_the_global_batch(runs, case, deterministic):
    results, world = runs
    ref = W.reference_training("cuda", tinynet.float32, case, world)
    assert len(ref) == (6 if case == "loader_drop" else 8)
    for name, ranks in results.items():
        for k, snap in enumerate(ref):
            _compare(ranks, f"train.{case}.{k}.", snap)


def test_buckets_no_sync_batchnorm_unused_on_gpu(runs, deterministic):
    results, world = runs
    buckets = W.reference_training("cuda", tinynet.float32, "pad", world)
    no_sync = W.reference_no_sync("cuda", tinynet.float32, world)
    bn = W.reference_batchnorm("cuda", tinynet.float32, world)
    unused = W.reference_unused("cuda", tinynet.float32, world)
    for name, ranks in results.items():
        for k, snap in enumerate(buckets):
            _compare(ranks, f"buckets.{k}.", snap)
        assert ranks[0]["buckets.overlap"].tolist() == [2] * 8
        _compare(ranks, "no_sync.", no_sync)
        for k, step in enumerate(bn):
            _compare(ranks, f"bn.{k}.after.", {n: v for n, v in step["after"].items() if not n.startswith("b.")})
            _compare(ranks, f"bn.{k}.seen.", step["seen"])
        _compare(ranks, "unused.", unused)


def test_graphed_ddp_step_equals_eager_ddp(runs, deterministic):
    """The whole DDP step captured in a CUDA graph (NCCL all-reduces inside it), one bucket
    and one bucket per layer, gives the eager DDP run's parameters bit for bit, and one
    process's on the global batch within TOL."""
    results, world = runs
    ref = W.reference_training("cuda", tinynet.float32, "loader_drop", world)
    for name, ranks in results.items():
        for r in range(world):
            notes = ranks[r]["notes"]
            assert notes["graphed.captures"] == 1 and notes["graphed_buckets.captures"] == 1, (name, notes)
            # the steps were still held at destroy_process_group, which dropped their graphs (NCCL's
            # destroy waits for every graph holding its collectives: it hung before) and exited
            after = ranks[r]["after_destroy"]
            assert len(after) == 2 and all(a.startswith("GraphCaptureError") and "destroy_process_group" in a
                                           for a in after), (name, r, after)
        for prefix in ("graphed.", "graphed_buckets."):
            for k, snap in enumerate(ref):
                _compare(ranks, f"{prefix}{k}.", snap)
                for r in range(world):
                    for n in snap:
                        numpy.testing.assert_array_equal(ranks[r][f"{prefix}{k}.{n}"],
                                                         ranks[r][f"train.loader_drop.{k}.{n}"],
                                                         err_msg=f"{name} rank {r} {prefix}{k}.{n}")


def test_graphed_ddp_replay_stuck_on_a_hanging_rank_ends_in_distributed_error(tmp_path):
    """Rank 1 stops answering while rank 0 (and any other rank) replays its DDP step from a
    CUDA graph: the watchdog, waiting on the event recorded after each replay, aborts the
    communicator after the group's timeout (3 s) and the next replay raises DistributedError."""
    launchers = _launchers(_world())
    if not launchers:
        pytest.skip("neither mpiexec (with mpi4py) nor torchrun found")
    name, prefix = launchers[0]
    started = time.monotonic()
    proc = subprocess.run([*prefix, os.path.join(HERE, "ddp_worker.py"), str(tmp_path), "fail-hang-graphed",
                           "--device", "cuda", "--backend", "nccl"], env=dict(_env(), DDP_TEST_TIMEOUT="3"),
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    seconds = time.monotonic() - started
    assert proc.returncode != 0
    report = json.loads((tmp_path / "failure0.json").read_text())
    assert report["type"] == "DistributedError", (name, report, proc.stderr[-3000:])
    assert "within the timeout of 3 s" in report["error"], report
    assert 2.5 < report["seconds"] < 30 and seconds < 120, (report, seconds)


def test_graphed_ddp_overlap_stream_equals_eager(tmp_path, deterministic):
    """TINYNET_NCCL_GRAPH_OVERLAP=1: the bucket all-reduces captured on a side stream forked
    from the capturing stream and joined back (tinynet/distributed/_nccl_capture.py) give the
    eager run's parameters bit for bit, one bucket and one bucket per layer."""
    world = _world()
    launchers = _launchers(world)
    if not launchers:
        pytest.skip("neither mpiexec (with mpi4py) nor torchrun found")
    name, prefix = launchers[0]
    proc = subprocess.run([*prefix, os.path.join(HERE, "ddp_worker.py"), str(tmp_path), "--device", "cuda",
                           "--backend", "nccl"], env=dict(_env(), TINYNET_NCCL_GRAPH_OVERLAP="1"),
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert proc.returncode == 0, name + proc.stdout[-3000:] + proc.stderr[-5000:]
    ranks = [dict(numpy.load(tmp_path / f"rank{r}.npz")) for r in range(world)]
    ref = W.reference_training("cuda", tinynet.float32, "loader_drop", world)
    for prefix in ("graphed.", "graphed_buckets."):
        for k, snap in enumerate(ref):
            for r in range(world):
                for n in snap:
                    numpy.testing.assert_array_equal(ranks[r][f"{prefix}{k}.{n}"],
                                                     ranks[r][f"train.loader_drop.{k}.{n}"],
                                                     err_msg=f"{name} rank {r} {prefix}{k}.{n}")
