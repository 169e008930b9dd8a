"""benchmarks/eager_ab.py runs an older checkout's tinynet beside today's in one process: here the
checkout itself stands in for the old one (copied and imported as ``tinynet_old``), on the CPU, a
few steps, with the profile table; a folder without a tinynet package is refused."""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "eager_ab.py")


def _run(*args):
    env = dict(os.environ, TINYNET_BACKEND="numpy")
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env, timeout=300)


def test_eager_ab_times_both_libraries_in_one_process(tmp_path):
    out = tmp_path / "ab.json"
    r = _run("--old", ROOT, "--device", "cpu", "--no-torch", "--models", "mlp", "--batch", "4", "--steps", "5",
             "--rounds", "3", "--profile", "5", "--out", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "mlp b4: old" in r.stdout and "host time per step: old" in r.stdout
    # module paths below either package line up: the engine's apply is in both columns of one row
    # (a function such as Linear.forward can fall out of the printed top list where the products
    # take longer, as on the GPU machine's CPUs)
    assert any(line.count("autograd/node.py:apply") == 2 or line.count("autograd/engine.py:_execute") == 2
               for line in r.stdout.splitlines()) or (r.stdout.count("autograd/node.py:apply") == 2)
    row = json.loads(out.read_text())["rows"][0]
    assert row["model"] == "mlp" and set(row["ms_per_step_median"]) == {"old", "new"}
    assert all(len(v) == 2 and min(v) > 0 for v in row["ms_per_step_all"].values())  # first round dropped


def test_eager_ab_refuses_a_folder_without_tinynet(tmp_path):
    r = _run("--old", str(tmp_path), "--device", "cpu", "--no-torch")
    assert r.returncode != 0 and "no tinynet package" in r.stderr
