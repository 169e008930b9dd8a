"""benchmarks/charts.py draws one valid PNG per committed results file it knows."""
import importlib.util
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def test_charts_are_pngs_for_the_committed_results(tmp_path):
    pytest.importorskip("matplotlib")
    spec = importlib.util.spec_from_file_location("charts", os.path.join(HERE, "..", "benchmarks", "charts.py"))
    charts = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(charts)
    made = charts.charts(str(tmp_path))
    names = sorted(os.path.basename(p) for p in made)
    assert names == ["bench_attention_cuda.png", "bench_norm_rnn_cuda.png", "bench_train_cpu.png",
                     "bench_train_gpu.png", "bench_train_gpu_graph.png"]
    for path in made:
        with open(path, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert charts.main(["--out", str(tmp_path / "again")]) == 0
