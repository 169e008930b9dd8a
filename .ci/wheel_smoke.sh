#!/usr/bin/env bash
# Wheel smoke test: build the sdist and, from it, the wheel (python -m build), install the wheel (not editable)
# into a fresh virtual environment in a temporary folder, and from a folder outside the repository import
# tinynet, run `python -m tinynet.info`, take one training step and check that the CUDA kernel sources
# (tinynet/kernels/*.cu and the *.cuh they paste in) were installed. A package-data file missing from pyproject.toml fails here.
# Building the wheel from the sdist (build's default) also proves the sdist is complete, and keeps stale files
# in build/ out of the wheel. Only tinynet's own dependencies are installed (from pip's cache after the first run).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
start=$SECONDS

"$python" -m venv "$tmp/build-env"
"$tmp/build-env/bin/python" -m pip install -q build
"$tmp/build-env/bin/python" -m build -q --outdir "$tmp/dist" "$repo" >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
wheel=$(ls "$tmp"/dist/tinynet-*.whl)
sdist=$(ls "$tmp"/dist/tinynet-*.tar.gz)
cu_in_wheel=$("$tmp/build-env/bin/python" -m zipfile -l "$wheel" | grep -cE '^tinynet/kernels/.*\.cuh? ' || true)
cu_in_repo=$(ls "$repo"/tinynet/kernels/*.cu "$repo"/tinynet/kernels/*.cuh | wc -l)
echo "wheel_smoke: built $(basename "$sdist") and $(basename "$wheel") ($cu_in_wheel of $cu_in_repo .cu/.cuh files in the wheel)"
if [ "$cu_in_wheel" -ne "$cu_in_repo" ]; then
  echo "wheel_smoke: the wheel lacks kernel sources" >&2
  exit 1
fi

"$python" -m venv "$tmp/env"
"$tmp/env/bin/python" -m pip install -q "$wheel"
mkdir "$tmp/run"
cd "$tmp/run"  # outside the repository, so that `import tinynet` can only find the installed package
env -u PYTHONPATH TINYNET_BACKEND=numpy COLUMNS=120 "$tmp/env/bin/python" -m tinynet.info >"$tmp/info.txt"
grep -q "tinynet backend" "$tmp/info.txt" && grep -q "extra \[plot\]" "$tmp/info.txt" || { cat "$tmp/info.txt"; exit 1; }
env -u PYTHONPATH TINYNET_BACKEND=numpy "$tmp/env/bin/python" - "$repo" <<'PY'
import importlib.metadata
import pathlib
import sys

import tinynet
from tinynet import nn

repo = pathlib.Path(sys.argv[1]).resolve()
pkg = pathlib.Path(tinynet.__file__).resolve().parent
assert repo not in pkg.parents, f"imported tinynet from the repository ({pkg}), not from the wheel"
assert tinynet.__version__ == importlib.metadata.version("tinynet"), tinynet.__version__
kernels = sorted(p.name for p in (pkg / "kernels").glob("*.cu*"))
expected = sorted(p.name for p in (repo / "tinynet" / "kernels").glob("*.cu*"))
assert kernels == expected, f"installed kernels {kernels} != repository kernels {expected}"
assert (pkg / "py.typed").is_file(), "py.typed missing"

# one training step of a small convnet: forward, loss, backward, optimizer step
tinynet.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 3 * 3, 10))
opt = tinynet.optim.SGD(model.parameters(), lr=0.1, momentum=0.5)
x, y = tinynet.randn(8, 1, 8, 8), tinynet.randint(0, 10, (8,))
before = [p.detach().numpy().copy() for p in model.parameters()]
loss = nn.functional.cross_entropy(model(x), y)
opt.zero_grad()
loss.backward()
opt.step()
changed = sum(not (b == p.detach().numpy()).all() for b, p in zip(before, model.parameters()))
assert changed == len(before), f"only {changed} of {len(before)} parameters changed"
print(f"wheel_smoke: tinynet {tinynet.__version__} from {pkg}: {len(kernels)} kernels, "
      f"one training step (loss {loss.item():.4f})")
PY
echo "wheel_smoke: passed in $((SECONDS - start)) s"
