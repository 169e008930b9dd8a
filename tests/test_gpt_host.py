"""benchmarks/gpt_host.py: a tiny GPT step per phase, this tree against another (here the tree
itself) and PyTorch, in processes of their own; the losses and weights of two trees compared bit
for bit, and the cProfile call counts."""
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "benchmarks", "gpt_host.py")


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_gpt_host_compares_trees_and_torch(tmp_path, precision):
    pytest.importorskip("torch")
    out = tmp_path / "gpt.json"
    r = subprocess.run([sys.executable, SCRIPT, "--against", ROOT, "--rounds", "1", "--steps", "2", "--warm-up", "1",
                        "--n-layer", "1", "--n-head", "2", "--n-embd", "8", "--block-size", "4", "--batch-size", "1",
                        "--precision", precision, "--losses", "3", "--calls", "--profile-steps", "1", "--top", "3",
                        "--out", str(out)], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, TINYNET_BACKEND="numpy"))
    assert r.returncode == 0, r.stderr[-3000:]
    assert "tinynet trees bit-identical (losses and weights): True" in r.stdout
    result = json.loads(out.read_text())
    name = f"tinynet {os.path.basename(ROOT)}"
    assert set(result["runs"]) == {name, f"{name} (2)", "PyTorch"}
    for runs in result["runs"].values():
        assert all(run["us"]["total"] > 0 and run["us"]["forward"] > 0 for run in runs)
    losses = list(result["losses"].values())
    assert len(losses) == 3 and all(len(v) == 3 for v in losses)  # two trees (the same one twice) and PyTorch
    calls = list(result["calls"].values())
    assert calls and all(c["calls_per_step"] > 100 and len(c["top"]) == 3 for c in calls)
