"""DDP communication hooks, ``no_sync`` with hooks, and ZeroRedundancyOptimizer in two
processes under ``mpiexec -n 2`` (tests/ddp_hooks_worker.py runs every scenario once), next
to PyTorch's DDP and ZeroRedundancyOptimizer (gloo) in the same processes; plus the
single-process checks of ``tinynet.futures`` and the hooks' argument errors."""
import json
import os
import sys

import numpy
import pytest

import tinynet
from tinynet.errors import FutureError, ProcessGroupError

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    pytest.importorskip("mpi4py")
    pytest.importorskip("torch")
    from test_distributed_training import launch
    out = tmp_path_factory.mktemp("hooks")
    proc, seconds = launch([os.path.join(HERE, "ddp_hooks_worker.py"), str(out)], timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
    ranks = [dict(numpy.load(out / f"rank{r}.npz")) for r in range(2)]
    notes = [json.loads((out / f"rank{r}.json").read_text()) for r in range(2)]
    return ranks, notes, seconds


# ---- hooks against PyTorch's DDP --------------------------------------------------------------
@pytest.mark.parametrize("micro", [1, 3])
@pytest.mark.parametrize("hook", ["none", "allreduce", "fp16"])
def test_hooks_give_pytorchs_gradients_bit_for_bit(run, hook, micro):
    """The gradients are the inputs (loss = sum(w * a)), so both frameworks hand their hooks
    the same buckets; micro=3 accumulates two backward passes under no_sync first."""
    ranks, _, _ = run
    for arrays in ranks:
        for i in range(2):
            ours, theirs = arrays[f"exact.{hook}.{micro}.tinynet.{i}"], arrays[f"exact.{hook}.{micro}.torch.{i}"]
            assert ours.dtype == theirs.dtype == numpy.float32
            numpy.testing.assert_array_equal(ours, theirs)
    if hook == "fp16":  # the compression is there: float16 rounding, not the float32 average
        plain = ranks[0][f"exact.none.{micro}.tinynet.0"]
        assert not numpy.array_equal(ranks[0][f"exact.fp16.{micro}.tinynet.0"], plain)


@pytest.mark.parametrize("micro", [1, 3])
def test_bf16_hook_rounds_as_pytorchs_formula(run, micro):
    """PyTorch's bf16_compress_hook: where its gloo refuses bfloat16 (PyTorch 2.13's CPU build;
    the worker notes the error) compare with its formula, bf16(g0)/2 + bf16(g1)/2 summed and
    rounded to bfloat16, cast back; where gloo runs it (PyTorch 2.11's CUDA build), the same
    formula must also equal PyTorch's own result."""
    torch = pytest.importorskip("torch")
    from ddp_hooks_worker import local_grads
    ranks, notes, _ = run
    error = notes[0].get(f"exact.bf16.{micro}.torch_error")
    assert error is None or "BF16" in error, error
    sums = [sum(local_grads(r, k)[i] for k in range(micro)) for r in range(2) for i in range(2)]
    for i in range(2):
        halves = [torch.tensor(sums[2 * r + i]).bfloat16() / 2 for r in range(2)]
        want = (halves[0] + halves[1]).float().numpy()
        for arrays in ranks:
            numpy.testing.assert_array_equal(arrays[f"exact.bf16.{micro}.tinynet.{i}"], want)
            if error is None:
                numpy.testing.assert_array_equal(arrays[f"exact.bf16.{micro}.torch.{i}"], want)


def test_allreduce_hook_trains_exactly_as_no_hook(run):
    ranks, notes, _ = run
    assert notes[0]["train.f64.allreduce.buckets"] >= 3  # several buckets, each through the hook
    for arrays in ranks:
        keys = [k for k in arrays if k.startswith("train.f64.allreduce.")]
        assert keys
        for k in keys:
            numpy.testing.assert_array_equal(arrays[k], arrays[k.replace("allreduce", "none")])


@pytest.mark.parametrize("hook,tol", [("fp16", 2e-3), ("bf16", 2e-2)])
def test_compressed_hooks_train_close_to_float32_and_ranks_agree(run, hook, tol):
    ranks, _, _ = run
    keys = [k for k in ranks[0] if k.startswith(f"train.f32.{hook}.p.")]
    assert keys
    for k in keys:
        numpy.testing.assert_array_equal(ranks[0][k], ranks[1][k])  # every rank the same parameters
        want = ranks[0][k.replace(hook, "none")]
        diff = numpy.abs(ranks[0][k] - want).max()
        assert 0 < diff <= tol * max(1.0, numpy.abs(want).max()) or k.endswith("bias") and diff == 0, (k, diff)


def test_bad_hooks_raise_distributed_error_naming_the_rank(run):
    _, notes, _ = run
    for r in range(2):
        n = notes[r]
        assert n["bad.shape"].startswith("DistributedError") and f"on rank {r}, bucket 0" in n["bad.shape"]
        assert "shape (362,), but the bucket's buffer has shape (363,)" in n["bad.shape"]
        assert n["bad.not_future"].startswith("DistributedError") and "must return a tinynet.futures.Future" in \
            n["bad.not_future"] and f"on rank {r}" in n["bad.not_future"]
        assert n["bad.not_callable"].startswith("ArgumentTypeError") and "got int" in n["bad.not_callable"]
        assert n["bad.twice"].startswith("DistributedError") and "only be called once" in n["bad.twice"]
        assert n["bad.after"] == [3.0, 3.0]  # the group still works


def test_a_bad_hook_on_one_rank_stops_both_with_distributed_error(tmp_path):
    pytest.importorskip("mpi4py")
    from test_distributed_training import launch
    proc, seconds = launch([os.path.join(HERE, "ddp_hooks_worker.py"), str(tmp_path), "one-bad-hook"], timeout=90)
    assert proc.returncode != 0 and seconds < 60
    mine = json.loads((tmp_path / "failure1.json").read_text())
    assert "on rank 1, bucket 0: the hook's Future holds a tensor of shape" in mine["error"]
    other = json.loads((tmp_path / "failure0.json").read_text())
    assert "rank 1 failed: DistributedError" in other["error"] and other["seconds"] < 30, other


# ---- ZeroRedundancyOptimizer ------------------------------------------------------------------
@pytest.mark.parametrize("name", ["zero", "zero_view", "resumed.zero"])
def test_zero_adam_equals_unsharded_adam_after_50_steps(run, name):
    ranks, _, _ = run
    plain = "resumed.plain" if name.startswith("resumed") else "plain"
    for arrays in ranks:
        keys = [k for k in arrays if k.startswith(f"{name}.p.")]
        assert len(keys) == 8
        for k in keys:
            want = arrays[plain + k[len(name):]]
            assert want.dtype == numpy.float64
            assert numpy.abs(arrays[k] - want).max() <= 1e-6


def test_zero_state_is_halved_and_partitioned_as_pytorch(run):
    _, notes, _ = run
    for r in range(2):
        n = notes[r]
        for name in ("zero", "zero_view"):
            assert n[f"{name}.state_bytes"] <= 0.55 * n["plain.state_bytes"]
            assert n[f"{name}.local_params"] == n["torch.local_params"]
    assert notes[0]["zero.local_params"] != notes[1]["zero.local_params"]


def test_zero_consolidated_state_dict_is_the_unsharded_one(run):
    _, notes, _ = run
    assert notes[0]["zero.state_dict_keys"] == list(range(8))
    assert notes[0]["zero.state_dict_matches"] is True and notes[0]["zero.state_dict_groups"] == [True]
    assert "not been consolidated on rank 1" in notes[1]["zero.state_dict_other_rank"]


def test_zero_bad_input(run):
    _, notes, _ = run
    for r in range(2):
        n = notes[r]
        assert n["zero.bad_values"].startswith("DistributedError") and "other values on rank 1" in n["zero.bad_values"]
        assert "(rank 0: 8; rank 1: 7)" in n["zero.bad_count"]
        assert n["zero.bad_class"].startswith("ArgumentTypeError")


def test_the_run_exits_promptly(run):
    _, notes, seconds = run
    assert seconds < 200
    for n in notes:
        assert n["shutdown_seconds"] < 5  # both frameworks' destroy_process_group


# ---- one process ------------------------------------------------------------------------------
def test_future_chains_values_and_errors():
    from tinynet.futures import Future, collect_all, wait_all
    fut = Future()
    seen = []
    fut.add_done_callback(lambda f: seen.append(f.value()))
    chained = fut.then(lambda f: f.value() * 2)
    with pytest.raises(FutureError, match="not completed yet"):
        fut.value()
    fut.set_result(21)
    assert chained.wait() == 42 and seen == [21] and fut.done()
    with pytest.raises(FutureError, match="only be marked completed once"):
        fut.set_result(1)
    bad = Future()
    bad.set_exception(ValueError("boom"))
    with pytest.raises(ValueError, match="boom"):
        bad.then(lambda f: f.value()).wait()
    with pytest.raises(FutureError, match="callable"):
        fut.then(3)
    assert wait_all([fut, chained]) == [21, 42]
    assert collect_all([fut, chained]).wait() == [fut, chained]


def test_pytorch_future_agrees():
    torch = pytest.importorskip("torch")
    fut = torch.futures.Future()
    chained = fut.then(lambda f: f.value() * 2)
    fut.set_result(21)
    assert chained.wait() == 42
    with pytest.raises(RuntimeError):
        fut.set_result(1)


def test_hooks_and_zero_need_a_process_group():
    from tinynet.distributed.algorithms.ddp_comm_hooks import default_hooks
    from tinynet.distributed.optim import ZeroRedundancyOptimizer
    with pytest.raises(ProcessGroupError):
        ZeroRedundancyOptimizer(tinynet.nn.Linear(2, 2).parameters(), tinynet.optim.Adam)
    with pytest.raises(ProcessGroupError):
        default_hooks.allreduce_hook(None, None)
