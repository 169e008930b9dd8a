#!/usr/bin/env bash
# The whole test suite on the CuPy backend in parallel shards, spread over every visible GPU,
# within one device-tool call (at most 10 minutes). The bad-input walk (the longest file)
# runs alone in its own shard with its own limit; with two or more GPUs the two-GPU DDP
# tests run afterwards. Each shard's log keeps its name (shardNN.log) and its summary line
# is printed, so a shard cut by its limit shows as "cut" instead of vanishing.
#
# Usage on the GPU machine, after the stage-gpu prefix:
#   bash benchmarks/gpu_suite.sh [SHARDS] [SHARD_LIMIT_S] [WALK_LIMIT_S]
# Defaults: 12 shards, 300 s per shard, 420 s for the walk. Logs go to $OUT.
set -u
shards=${1:-12}
limit=${2:-300}
walk_limit=${3:-420}
out=${OUT:-/tmp/tinynet-gpu}
mkdir -p "$out"
export TINYNET_BACKEND=cupy PYTHONUNBUFFERED=1
# Open MPI (the system MPI of the GPU machines) refuses root unless told, and binds each
# rank to one core unless told otherwise: the distributed tests need both settings
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_hwloc_base_binding_policy=none
export NCCL_NVLS_ENABLE=0
gpus=$(python3 -c "import cupy; print(cupy.cuda.runtime.getDeviceCount())" 2>/dev/null || echo 1)
files=$(ls tests/test_*.py | grep -v -e test_bad_input_walk -e test_ddp_gpu | LC_ALL=C sort)
rm -f "$out"/shard*.list
i=0
for f in $files; do
  printf '%s\n' "$f" >> "$out/shard$(printf %02d $((i % shards))).list"
  i=$((i + 1))
done
run() {  # run SHARD_NAME LIMIT GPU FILES...
  local name=$1 lim=$2 gpu=$3
  shift 3
  CUDA_VISIBLE_DEVICES=$gpu timeout "$lim" python3 -m pytest -p no:cacheprovider -o addopts="" -q -rfE \
    --tb=short "$@" > "$out/$name.log" 2>&1
  echo "$?" > "$out/$name.rc"
}
n=0
for list in "$out"/shard*.list; do
  name=$(basename "$list" .list)
  run "$name" "$limit" $((n % gpus)) $(cat "$list") &
  n=$((n + 1))
done
run walk "$walk_limit" $((n % gpus)) tests/test_bad_input_walk.py &
wait
for log in "$out"/shard*.log "$out"/walk.log; do
  name=$(basename "$log" .log)
  rc=$(cat "$out/$name.rc")
  summary=$(grep -aE "^[0-9]+ (passed|failed)|^=+ .*(passed|failed|error)" "$log" | tail -1)
  if [ "$rc" = 124 ]; then
    summary="cut by its time limit after: $(grep -ac '' "$log") lines of output"
  elif [ -z "$summary" ]; then
    summary="no pytest summary (see $name.log)"
  fi
  echo "$name (rc $rc): $summary"
done
grep -ah "^FAILED\|^ERROR" "$out"/shard*.log "$out"/walk.log | sort -u | head -80
if [ "$gpus" -ge 2 ]; then
  timeout 300 python3 -m pytest -p no:cacheprovider -o addopts="" -q -rfE --tb=short tests/test_ddp_gpu.py \
    > "$out/ddp_gpu.log" 2>&1
  echo "ddp_gpu (rc $?): $(tail -1 "$out/ddp_gpu.log")"
fi
