#!/usr/bin/env bash
# One GPU-machine session: environment, the whole test suite on the CuPy backend, the cuDNN
# conv benchmark, and the main job. Logs go to $OUT (the device tool brings them back).
# Usage on the GPU machine, after the stage-gpu prefix:
#   bash benchmarks/gpu_check.sh [EPOCHS] [PYTEST_ARGS...]
set -o pipefail
epochs=${1:-10}
shift || true
out=${OUT:-/tmp/tinynet-gpu}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm --format=csv | tee "$out/env.txt"
python3 -c "import sys, numpy, cupy, torch; print(sys.version.split()[0], 'numpy', numpy.__version__, 'cupy', cupy.__version__, 'torch', torch.__version__)" | tee -a "$out/env.txt"
export TINYNET_BACKEND=cupy COLUMNS=120
python3 -m tinynet.info | tee -a "$out/env.txt"
timeout 420 python3 -m pytest -q -p no:cacheprovider --junitxml="$out/junit.xml" "$@" 2>&1 | tee "$out/pytest_gpu.log" | tail -25
echo "pytest exit: $?"
timeout 200 python3 benchmarks/conv_cudnn.py --out "$out/conv_cudnn.json" 2>&1 | tail -12
if [ "$epochs" -gt 0 ]; then
  timeout 300 python3 examples/mnist_convnet.py --epochs "$epochs" --no-download 2>&1 | tee "$out/mnist_cupy.log" | grep -E "epoch "
  python3 -m tinynet.info | grep -i cudnn
fi
