"""Host cost of the CuPy calls a kernel launcher makes, in thread CPU time per call.

An eager step at batch 64 is bound by the host: every op pays for allocating its output,
making its scalar arguments and launching its kernel. This script times those pieces one
by one on the GPU machine (the fastest of several rounds of many calls each; no
synchronisation inside a round), so a launcher can take the cheaper form:

- ``cp.empty(shape, dtype)`` against ``cp.empty_like(a)`` (same layout for a C-contiguous ``a``);
- a NumPy scalar made per call against one taken from an ``lru_cache`` (``kernels.cuda.i32``);
- ``a.flags.c_contiguous`` against CuPy's ``a._c_contiguous``, and ``reshape`` to a new shape;
- a ``RawKernel`` call against the CUDA driver's ``cuLaunchKernel`` with a packed parameter
  block (``cupy.cuda.driver.launchKernel``): what CuPy's argument handling costs.

    TINYNET_BACKEND=cupy python3 benchmarks/host_costs.py --out host_costs.json

Absolute microseconds depend on the machine and its load; compare rows of one run.
"""
import argparse
import ctypes
import json
import os
import sys
import time

import numpy
from graph_timing import best_us

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def cases(cp):
    """``{label: call}`` of the pieces (CuPy ``cp``); a (64, 256) float32 operand as in the MLP's step."""
    from cupy.cuda import driver
    from tinynet.kernels import cuda
    n = 64 * 256
    y, gy, gx = cp.ones((64, 256), cp.float32), cp.ones((64, 256), cp.float32), cp.empty((64, 256), cp.float32)
    fn = cuda.kernel("fused.cu", "tinynet_relu_bwd", numpy.float32)
    blocks, size = (n + 255) // 256, numpy.int64(n)
    values = (ctypes.c_uint64 * 4)()
    params = (ctypes.c_void_p * 4)(*[ctypes.addressof(values) + 8 * i for i in range(4)])
    fptr = fn.kernel.ptr

    def driver_launch():
        values[0], values[1], values[2], values[3] = y.data.ptr, gy.data.ptr, gx.data.ptr, n
        driver.launchKernel(fptr, blocks, 1, 1, 256, 1, 1, 0, cp.cuda.get_current_stream().ptr,
                            ctypes.addressof(params), 0)
    return {
        "cp.empty(shape, dtype)": lambda: cp.empty((64, 256), dtype=cp.float32),
        "cp.empty_like(a)": lambda: cp.empty_like(y),
        "numpy.int32(v) per call": lambda: numpy.int32(n),
        "kernels.cuda.i32(v) (cached)": lambda: cuda.i32(n),
        "a.flags.c_contiguous": lambda: y.flags.c_contiguous,
        "a._c_contiguous": lambda: y._c_contiguous,
        "a.shape": lambda: y.shape,
        "a.reshape(new shape)": lambda: y.reshape(256, 64),
        "cp.ascontiguousarray(contiguous a)": lambda: cp.ascontiguousarray(y),
        "RawKernel call (relu backward)": lambda: fn((blocks,), (256,), (y, gy, gx, size)),
        "driver cuLaunchKernel, packed parameters": driver_launch,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    from tinynet import backend
    cp = backend.require_cupy("host_costs.py")
    sync = cp.cuda.Device().synchronize
    rows = {}
    for label, fn in cases(cp).items():
        rows[label] = best_us(fn, args.calls, args.rounds, sync)
        print(f"{label:45s} {rows[label]:8.3f} us", flush=True)
    if args.out:
        meta = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "cupy": cp.__version__,
                "when": time.strftime("%Y-%m-%d %H:%M:%S"), "unit": "us of thread CPU time per call"}
        with open(args.out, "w") as f:
            json.dump({"meta": meta, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
