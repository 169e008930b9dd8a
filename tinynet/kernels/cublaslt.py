"""Half-precision products with the bias in cuBLASLt's epilogue (``CUBLASLT_EPILOGUE_BIAS``).

``cublas.gemm`` adds a linear layer's bias through ``beta = 1`` over an output first filled
with the bias: one extra launch that writes the whole output, and a product that reads it
back (the GPT's bfloat16 step spent 475 us a step in those fills on an H200, 7 % of it;
benchmarks/NOTES.md, fifteenth session). cuBLASLt adds the bias in the product's epilogue,
in float32 before the one rounding to the half type, which is PyTorch's path for
``addmm``/``linear`` in half precision. This module calls ``cublasLtMatmul`` through
``ctypes`` on the libcublasLt that libcublas loaded, with the cuBLAS handle's workspace
(same stream, one call at a time), so a CUDA graph records it as it records cuBLAS.

Each (shape, transposes, dtype, GPU) gets a plan once: the operation descriptor,
the three matrix layouts and the first algorithm of ``cublasLtMatmulAlgoGetHeuristic``;
the bias pointer is set on the descriptor at each call. The layouts: row-major
``C (M, N) = op(A) op(B)`` is column-major ``C^T = op(B)^T op(A)^T`` (as in
:func:`tinynet.kernels.cublas.gemm`), so cuBLASLt's A is our ``b``, its B our ``a``, and
the bias (N,) runs along the rows of its column-major D.

Enum values and the heuristic result's layout (an 8 x uint64 algorithm, the workspace size,
the status, the waves count, four reserved ints: 96 bytes) are cublasLt.h's.
:func:`gemm_bias` returns None when cuBLASLt is missing or declines the product, and the
caller keeps its previous path.
"""
import ctypes

import numpy

from .. import backend
from ..dtypes import bfloat16
from . import cublas

# cublasLt.h: matmul descriptor attributes, the epilogue, the preference attribute
_DESC_TRANSA, _DESC_TRANSB, _DESC_EPILOGUE, _DESC_BIAS_POINTER, _DESC_BIAS_DATA_TYPE = 3, 4, 7, 8, 26
_EPILOGUE_BIAS = 4
_PREF_MAX_WORKSPACE_BYTES = 1
_R_32F = 0
_TYPES = {numpy.dtype(numpy.float16): 2, bfloat16: 14}  # CUDA_R_16F, CUDA_R_16BF
_COMPUTE_32F = 68


class _Heuristic(ctypes.Structure):
    _fields_ = [("algo", ctypes.c_uint64 * 8), ("workspace_size", ctypes.c_size_t), ("state", ctypes.c_int),
                ("waves", ctypes.c_float), ("reserved", ctypes.c_int * 4)]


_state: dict = {"lib": None, "handles": {}, "plans": {}, "off": False}
stats = {"calls": 0, "plans": 0, "declined": 0}


def _library():
    if _state["lib"] is None:
        cublas._library()  # loads libcublas, which loads libcublasLt
        path = None
        with open("/proc/self/maps") as f:
            for line in f:
                if "libcublasLt.so" in line:
                    path = line.split()[-1]
                    break
        if path is None:
            _state["off"] = True
            return None
        lib = ctypes.CDLL(path)
        for name in ("cublasLtCreate", "cublasLtMatmulDescCreate", "cublasLtMatmulDescSetAttribute",
                     "cublasLtMatrixLayoutCreate", "cublasLtMatmulPreferenceCreate",
                     "cublasLtMatmulPreferenceSetAttribute", "cublasLtMatmulAlgoGetHeuristic", "cublasLtMatmul"):
            getattr(lib, name).restype = ctypes.c_int
        _state["lib"] = lib
    return _state["lib"]


def _set(lib, desc, attr, value):
    return lib.cublasLtMatmulDescSetAttribute(desc, attr, ctypes.byref(value), ctypes.sizeof(value))


def _layout(lib, dtype, rows, cols, ld):
    out = ctypes.c_void_p()
    ok = lib.cublasLtMatrixLayoutCreate(ctypes.byref(out), dtype, ctypes.c_uint64(rows), ctypes.c_uint64(cols),
                                        ctypes.c_int64(ld)) == 0
    return out if ok else None


def _plan(lib, handle, key, bias_ptr):
    """``(desc, (adesc, bdesc, ddesc), algo)`` for ``key``, or None when cuBLASLt offers no
    algorithm (the caller then takes its previous path)."""
    (m, n, k, trans_a, trans_b, dtype, _) = key
    t = _TYPES[dtype]
    desc = ctypes.c_void_p()
    if lib.cublasLtMatmulDescCreate(ctypes.byref(desc), _COMPUTE_32F, _R_32F) != 0:
        return None
    ops = (ctypes.c_int32(cublas._OP_T if trans_b else cublas._OP_N),
           ctypes.c_int32(cublas._OP_T if trans_a else cublas._OP_N))
    if (_set(lib, desc, _DESC_TRANSA, ops[0]) or _set(lib, desc, _DESC_TRANSB, ops[1])
            or _set(lib, desc, _DESC_EPILOGUE, ctypes.c_uint32(_EPILOGUE_BIAS))
            or _set(lib, desc, _DESC_BIAS_DATA_TYPE, ctypes.c_int32(t))
            or _set(lib, desc, _DESC_BIAS_POINTER, ctypes.c_void_p(bias_ptr))):
        return None
    # stored matrices, column-major: our b (K, N) or (N, K) row-major, our a (M, K) or (K, M), D (M, N)
    b_rows, b_cols = (k, n) if trans_b else (n, k)
    a_rows, a_cols = (m, k) if trans_a else (k, m)
    layouts = (_layout(lib, t, b_rows, b_cols, b_rows), _layout(lib, t, a_rows, a_cols, a_rows),
               _layout(lib, t, n, m, n))
    if any(x is None for x in layouts):
        return None
    pref = ctypes.c_void_p()
    if lib.cublasLtMatmulPreferenceCreate(ctypes.byref(pref)) != 0 or lib.cublasLtMatmulPreferenceSetAttribute(
            pref, _PREF_MAX_WORKSPACE_BYTES, ctypes.byref(ctypes.c_uint64(cublas.WORKSPACE)), 8) != 0:
        return None
    result, count = _Heuristic(), ctypes.c_int(0)
    status = lib.cublasLtMatmulAlgoGetHeuristic(handle, desc, layouts[0], layouts[1], layouts[2], layouts[2], pref, 1,
                                                ctypes.byref(result), ctypes.byref(count))
    if status != 0 or count.value < 1 or result.state != 0 or result.workspace_size > cublas.WORKSPACE:
        return None
    stats["plans"] += 1
    return desc, layouts, result


def gemm_bias(a, b, trans_a, trans_b, bias):
    """``op(a) @ op(b) + bias`` for C-contiguous 2-D float16/bfloat16 CuPy arrays of one dtype
    (``a`` (M, K) or, with ``trans_a``, (K, M); ``b`` (K, N) or, with ``trans_b``, (N, K);
    ``bias`` (N,), contiguous, of their dtype), summed in float32 with the bias added in the
    epilogue and rounded once to the dtype. Returns a new (M, N) array, or None when cuBLASLt
    is not available or declines (no algorithm for the shape, an operand not 16-byte aligned)."""
    if _state["off"] or a.dtype not in _TYPES or bias.dtype != a.dtype:
        return None
    lib = _library()
    if lib is None:
        return None
    cp = backend.cupy
    m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
    n = b.shape[0] if trans_b else b.shape[1]
    out = cp.empty((m, n), dtype=a.dtype)
    h = cublas._handle(cp)  # binds the stream and its workspace
    dev = cp.cuda.runtime.getDevice()
    lt = _state["handles"].get(dev)
    if lt is None:
        lt = ctypes.c_void_p()
        if lib.cublasLtCreate(ctypes.byref(lt)) != 0:
            _state["off"] = True
            return None
        _state["handles"][dev] = lt
    ptrs = (b.data.ptr, a.data.ptr, out.data.ptr, bias.data.ptr)
    if any(p % 16 for p in ptrs):  # the heuristic assumes 16-byte aligned operands
        stats["declined"] += 1
        return None
    key = (m, n, k, bool(trans_a), bool(trans_b), a.dtype, dev)
    plan = _state["plans"].get(key)
    if plan is None:
        plan = _state["plans"][key] = _plan(lib, lt, key, ptrs[3]) or False
    if plan is False:
        stats["declined"] += 1
        return None
    desc, (adesc, bdesc, ddesc), algo = plan
    if _set(lib, desc, _DESC_BIAS_POINTER, ctypes.c_void_p(ptrs[3])) != 0:
        return None
    status = lib.cublasLtMatmul(lt, desc, ctypes.byref(h.alpha[numpy.dtype(numpy.float32)]),
                                ctypes.c_void_p(ptrs[0]), adesc, ctypes.c_void_p(ptrs[1]), bdesc,
                                ctypes.byref(h.beta[numpy.dtype(numpy.float32)]), ctypes.c_void_p(ptrs[2]), ddesc,
                                ctypes.c_void_p(ptrs[2]), ddesc, ctypes.byref(algo.algo),
                                ctypes.c_void_p(h.workspace.ptr), ctypes.c_size_t(cublas.WORKSPACE),
                                ctypes.c_void_p(h.stream))
    cublas._check(status, "gemm with bias (cublasLtMatmul)")
    stats["calls"] += 1
    return out
