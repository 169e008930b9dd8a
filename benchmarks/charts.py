"""Bar charts of the committed benchmark results (benchmarks/results/*.json) for the docs.

    python benchmarks/charts.py                # writes docs/img/bench_*.png
    python benchmarks/charts.py --out DIR      # somewhere else

Each chart shows tinynet's speed relative to PyTorch's from one results file, as measured
side by side in one run: bars above 1 mean tinynet was faster. Charts need matplotlib
(the ``plot`` extra); they are drawn with the headless Agg backend.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
DEFAULT_OUT = os.path.join(HERE, "..", "docs", "img")


def _load(name):
    path = os.path.join(RESULTS, name)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def _bars(plt, labels, values, title, path, ylabel="speed vs PyTorch (x, >1: tinynet faster)"):
    fig, ax = plt.subplots(figsize=(max(6, 0.55 * len(labels) + 2), 3.6))
    colors = ["tab:green" if v >= 1 else "tab:red" for v in values]
    ax.bar(range(len(values)), values, color=colors)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=35, ha="right", fontsize=8)
    ax.set_ylabel(ylabel, fontsize=8)
    ax.set_title(title, fontsize=10)
    for i, v in enumerate(values):
        ax.text(i, v, f"{v:.2f}", ha="center", va="bottom", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def charts(out):
    """Draw every chart whose results file exists into folder ``out``; returns the paths."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    os.makedirs(out, exist_ok=True)
    made = []
    for name, where in (("train_throughput_cpu.json", "CPU"), ("train_throughput_cuda.json", "GPU")):
        data = _load(name)
        if data:
            rows = [r for r in data["rows"] if r.get("speed_ratio")]
            meta = data["meta"]
            label = meta.get("gpu") or f"{meta.get('cpus')}-core CPU"
            made.append(_bars(plt, [f"{r['model']} b{r['batch']}" for r in rows], [r["speed_ratio"] for r in rows],
                              f"training throughput, {label} ({name})",
                              os.path.join(out, f"bench_train_{where.lower()}.png")))
    data = _load("train_throughput_cuda_graph.json")
    if data:
        rows = [r for r in data["rows"] if r.get("speed_ratio")]
        made.append(_bars(plt, [f"{r['model']} b{r['batch']}" for r in rows], [r["speed_ratio"] for r in rows],
                          f"whole-step CUDA graphs, both frameworks graphed, {data['meta'].get('gpu')} "
                          "(train_throughput_cuda_graph.json)",
                          os.path.join(out, "bench_train_gpu_graph.png")))
    data = _load("attention_cuda.json")
    if data:
        rows = data["rows"]
        labels = [f"L={r['shape'][2]} E={r['shape'][3]} fp{r['dtype'][5:]}" + (" causal" if r["causal"] else "")
                  for r in rows]
        made.append(_bars(plt, labels, [1 / r["ratio"] for r in rows],
                          "scaled_dot_product_attention fwd+bwd, H100 (attention_cuda.json)",
                          os.path.join(out, "bench_attention_cuda.png")))
    data = _load("norm_rnn_cuda.json")
    if data:
        rows = data["rows"]
        made.append(_bars(plt, [f"{r['case'].split()[0]} {r['dtype']}" for r in rows], [1 / r["ratio"] for r in rows],
                          "LayerNorm and recurrent layers fwd+bwd, H100 (norm_rnn_cuda.json)",
                          os.path.join(out, "bench_norm_rnn_cuda.png")))
    return made


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default=DEFAULT_OUT, help="folder for the PNG files (default docs/img)")
    args = p.parse_args(argv)
    try:
        made = charts(args.out)
    except ImportError:
        print("benchmarks/charts.py needs matplotlib: pip install 'tinynet[plot]'", file=sys.stderr)
        return 2
    for path in made:
        print(os.path.relpath(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
