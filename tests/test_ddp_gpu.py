"""Data-parallel training on two GPUs with the NCCL backend (float32), launched by
``mpiexec -n 2`` (unique id over MPI) and by ``torchrun --nproc-per-node 2`` (env://, the TCP
store), against one GPU on the same global batches. Skipped without two GPUs, CuPy's NCCL,
mpi4py/mpiexec or torchrun."""
import os
import shutil
import subprocess
import sys

import numpy
import pytest

import tinynet

pytestmark = pytest.mark.gpu
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
import ddp_worker as W  # noqa: E402

TOL = 1e-5  # float32


def _need_two_gpus():
    if tinynet.cuda.device_count() < 2:
        pytest.skip("needs 2 GPUs")
    if not tinynet.distributed.is_nccl_available():
        pytest.skip("needs CuPy's NCCL binding (cupy.cuda.nccl)")


def _env():
    return dict(os.environ, PYTHONPATH=ROOT, TINYNET_BACKEND="cupy", DDP_TEST_DETERMINISTIC="1")


def _launchers():
    out = []
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    mpiexec = mpiexec if os.access(mpiexec, os.X_OK) else shutil.which("mpiexec")
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        mpiexec = None
    if mpiexec:
        out.append(("mpiexec", [mpiexec, "-n", "2", sys.executable]))
    torchrun = shutil.which("torchrun") or os.path.join(os.path.dirname(sys.executable), "torchrun")
    if os.access(torchrun, os.X_OK):
        out.append(("torchrun", [torchrun, "--nproc-per-node", "2", "--master-port", "29641"]))
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    _need_two_gpus()
    results = {}
    for name, prefix in _launchers():
        out = tmp_path_factory.mktemp(name)
        proc = subprocess.run([*prefix, os.path.join(HERE, "ddp_worker.py"), str(out), "--device", "cuda",
                               "--backend", "nccl"], env=_env(), capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert proc.returncode == 0, name + proc.stdout[-3000:] + proc.stderr[-5000:]
        results[name] = [dict(numpy.load(out / f"rank{r}.npz")) for r in range(W.WORLD)]
    if not results:
        pytest.skip("neither mpiexec (with mpi4py) nor torchrun found")
    return results


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
    for name, ranks in runs.items():
        for r in range(W.WORLD):
            numpy.testing.assert_array_equal(ranks[r]["c.sum"], [3, 6, 9], err_msg=name)
            numpy.testing.assert_array_equal(ranks[r]["c.avg"], [1.5, 3, 4.5], err_msg=name)
            numpy.testing.assert_array_equal(ranks[r]["c.cpu_tensor"], [3, 3], err_msg=name)
            numpy.testing.assert_array_equal(ranks[r]["c.all_gather"], [[[1, 1], [1, 1]], [[2, 2], [2, 2]]])


@pytest.mark.parametrize("case", list(W.LOADER_CASES))
def test_two_gpus_equal_one_gpu_on_the_global_batch(runs, case, deterministic):
    ref = W.reference_training("cuda", tinynet.float32, case)
    for name, ranks in runs.items():
        for k, snap in enumerate(ref):
            _compare(ranks, f"train.{case}.{k}.", snap)


def test_buckets_no_sync_batchnorm_unused_on_gpu(runs, deterministic):
    buckets = W.reference_training("cuda", tinynet.float32, "pad")
    no_sync = W.reference_no_sync("cuda", tinynet.float32)
    bn = W.reference_batchnorm("cuda", tinynet.float32)
    unused = W.reference_unused("cuda", tinynet.float32)
    for name, ranks in runs.items():
        for k, snap in enumerate(buckets):
            _compare(ranks, f"buckets.{k}.", snap)
        assert ranks[0]["buckets.overlap"].tolist() == [2] * 8
        _compare(ranks, "no_sync.", no_sync)
        for k, step in enumerate(bn):
            _compare(ranks, f"bn.{k}.after.", {n: v for n, v in step["after"].items() if not n.startswith("b.")})
            _compare(ranks, f"bn.{k}.seen.", step["seen"])
        _compare(ranks, "unused.", unused)
