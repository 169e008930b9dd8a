"""Writing a benchmark's results (benchmarks/results/*.json, which report.py and charts.py read)."""
import json
import os


def write_results(out, payload, indent=2):
    """``payload`` as JSON in the file ``out`` (its folder made first), and a line saying where."""
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        json.dump(payload, f, indent=indent)
    print(f"wrote {out}")
