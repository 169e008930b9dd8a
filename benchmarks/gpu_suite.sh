#!/usr/bin/env bash
# The whole test suite on the CuPy backend within one device-tool call (at most 10 minutes),
# spread over every visible GPU and the machine's cores:
#   - the suite (all files but the bad-input walk and the two-GPU DDP tests) in WORKERS
#     pytest-xdist workers that take tests one at a time (--dist load), so a slow file does
#     not hold up a shard; without pytest-xdist, in WORKERS shards of whole files;
#   - the bad-input walk in two processes of its own, its numpy cases and its cupy cases;
#   - with two or more GPUs, the two-GPU DDP tests afterwards.
# Every run is verbose (one line per test), so a run cut by its limit still shows each test it
# finished and each failure; the summary prints one line per run and every FAILED/ERROR line.
#
# Usage on the GPU machine, after the stage-gpu prefix:
#   bash benchmarks/gpu_suite.sh [WORKERS] [LIMIT_S] [WALK_LIMIT_S]
# Defaults: 12 workers, 420 s for the suite, 420 s for each half of the walk (WALK_WORKERS=n:
# each half in n pytest-xdist workers; DDP_LIMIT: seconds for the multi-GPU DDP tests, default 300). The logs are
# written to a scratch folder and joined, each under its name, into $OUT/gpu_suite_logs.txt
# (the device tool brings back only a few files).
set -u
workers=${1:-12}
limit=${2:-420}
walk_limit=${3:-420}
final=${OUT:-/tmp/tinynet-gpu}
out=$(mktemp -d)
mkdir -p "$final"
export TINYNET_BACKEND=cupy PYTHONUNBUFFERED=1
# Open MPI (the system MPI of the GPU machines) refuses root unless told, and binds each
# rank to one core unless told otherwise: the distributed tests need both settings
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_hwloc_base_binding_policy=none
export NCCL_NVLS_ENABLE=0
gpus=$(python3 -c "import cupy; print(cupy.cuda.runtime.getDeviceCount())" 2>/dev/null || echo 1)
files=$(ls tests/test_*.py | grep -v -e test_bad_input_walk -e test_ddp_gpu | LC_ALL=C sort)
# A test stuck for TEST_LIMIT seconds is failed with its stack (pytest-timeout where installed, as on the GPU
# machines), so it cannot hold back the tests queued behind it on its worker: on 2026-11-27 one docs page sat on
# a worker for the last third of the run and 103 tests never started. The run's own limit sends SIGINT first,
# so pytest still prints its failures and summary, then kills 30 s later.
test_limit=${TEST_LIMIT:-240}
pytest_args=(-p no:cacheprovider -o addopts="" -v -rfE --tb=short -o faulthandler_timeout="$test_limit")
if python3 -c "import pytest_timeout" 2>/dev/null; then
  pytest_args+=(--timeout "$test_limit")
fi
run() {  # run NAME LIMIT GPUS PYTEST_ARGS...
  local name=$1 lim=$2 gpu=$3
  shift 3
  CUDA_VISIBLE_DEVICES=$gpu timeout -s INT -k 30 "$lim" python3 -m pytest "${pytest_args[@]}" "$@" > "$out/$name.log" 2>&1
  echo "$?" > "$out/$name.rc"
}
all_gpus=$(seq -s, 0 $((gpus - 1)))
if python3 -c "import xdist" 2>/dev/null; then
  # every worker sees every GPU and works on the first (the tests need one GPU each)
  run suite "$limit" "$all_gpus" -n "$workers" --dist load $files &
else
  i=0
  for f in $files; do
    printf '%s\n' "$f" >> "$out/shard$(printf %02d $((i % workers))).files"
    i=$((i + 1))
  done
  n=0
  for list in "$out"/shard*.files; do
    run "$(basename "$list" .files)" "$limit" $((n % gpus)) $(cat "$list") &
    n=$((n + 1))
  done
fi
# WALK_WORKERS (env, with pytest-xdist): each half of the walk in so many workers (on a machine
# with many cores the single-process halves, 220-320 s on an H200 host, outlast the suite)
walk_args=()
if [ -n "${WALK_WORKERS:-}" ] && python3 -c "import xdist" 2>/dev/null; then
  walk_args=(-n "$WALK_WORKERS" --dist load)
fi
run walk-numpy "$walk_limit" $((1 % gpus)) "${walk_args[@]}" -k numpy- tests/test_bad_input_walk.py &
run walk-cupy "$walk_limit" $((1 % gpus)) "${walk_args[@]}" -k "not numpy-" tests/test_bad_input_walk.py &
wait
for rc in "$out"/*.rc; do
  name=$(basename "$rc" .rc)
  log="$out/$name.log"
  summary=$(grep -aE "^=+ .*(passed|failed|error).* in [0-9.]+s" "$log" | tail -1)
  if [ "$(cat "$rc")" = 124 ]; then  # interrupted at its limit: pytest's own summary, where it printed one
    summary="cut by its time limit after $(grep -acE "(PASSED|FAILED|SKIPPED|ERROR|XFAIL|XPASS)" "$log") tests${summary:+; $summary}"
  elif [ -z "$summary" ]; then
    summary="no pytest summary (see $name in gpu_suite_logs.txt)"
  fi
  echo "$name (rc $(cat "$rc")): $summary"
done
grep -ahoE "(FAILED|ERROR) tests/[^ ]+" "$out"/*.log | sort -u | head -80
if [ "$gpus" -ge 2 ]; then
  timeout "${DDP_LIMIT:-300}" python3 -m pytest "${pytest_args[@]}" tests/test_ddp_gpu.py > "$out/ddp_gpu.log" 2>&1
  echo "ddp_gpu (rc $?): $(tail -1 "$out/ddp_gpu.log")"
fi
for log in "$out"/*.log; do
  echo "===== $(basename "$log" .log)"
  cat "$log"
done > "$final/gpu_suite_logs.txt"
