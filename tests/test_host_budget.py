"""A generous guard against gross host-cost regressions, counted in Python function calls.

``benchmarks/op_overhead.py --count-calls`` counts the Python function calls one call of each
of ~45 ops makes (forward, forward + backward, under no_grad / inference_mode / autocast) and
records them in ``benchmarks/results/op_overhead_calls_cpu.json``; the benchmark, not this test,
holds the figure (rerun it after a change that moves the counts on purpose). A count does not
depend on the machine's load, so CI can check it: every op and mode stays within 3x its recorded
count (plus 5 calls, for the ops that make only a few), and a forward under no_grad or
inference_mode makes no more calls than one that records the tape. The timing mode of the
benchmark runs too, on a few ops, against PyTorch."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "op_overhead.py")
RECORDED = os.path.join(ROOT, "benchmarks", "results", "op_overhead_calls_cpu.json")


def _run(*args):
    env = dict(os.environ, TINYNET_BACKEND="numpy")
    r = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env, timeout=300,
                       cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    return r


@pytest.fixture(scope="module")
def counts(tmp_path_factory):
    out = tmp_path_factory.mktemp("calls") / "calls.json"
    _run("--count-calls", "--out", str(out))
    return json.loads(out.read_text())["calls"]


def test_every_op_within_three_times_its_recorded_call_count(counts):
    with open(RECORDED) as f:
        recorded = json.load(f)["calls"]
    assert len(recorded) >= 40 and set(counts) == set(recorded)
    over = [f"{op} [{mode}]: {n} calls, recorded {recorded[op][mode]}"
            for op, modes in counts.items() for mode, n in modes.items()
            if n > 3 * recorded[op][mode] + 5]
    assert not over, "host-cost regression (Python calls per op call):\n" + "\n".join(over)


def test_no_grad_and_inference_mode_do_no_more_work_than_recording(counts):
    # no tape under no_grad/inference_mode: never more calls than the forward that records one
    worse = [f"{op}: {mode} {modes[mode]} > forward {modes['forward']}"
             for op, modes in counts.items() for mode in ("no_grad", "inference_mode")
             if mode in modes and modes[mode] > modes["forward"]]
    assert not worse, "\n".join(worse)


def test_counts_cover_the_modes(counts):
    ops_with_backward = [op for op, modes in counts.items() if "forward+backward" in modes]
    assert len(ops_with_backward) >= 35
    for op in ops_with_backward:  # a backward walk is real work on top of the forward
        assert counts[op]["forward+backward"] > counts[op]["forward"], op


def test_timing_mode_runs_against_pytorch(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "t.json"
    r = _run("--calls", "3", "--rounds", "2", "--only", "relu", "linear", "--out", str(out))
    table = json.loads(out.read_text())["table"]
    assert set(table) == {"relu", "linear (module)"}
    assert set(table["relu"]) == {"forward", "forward+backward", "no_grad", "inference_mode", "autocast"}
    assert all(v["tinynet"] > 0 and v["torch"] > 0 for m in table.values() for v in m.values())
    assert "median ratio" in r.stdout
