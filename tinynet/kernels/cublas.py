"""Large dense products through cuBLAS, called directly so that CUDA graphs can record them.

CuPy refuses every cuBLAS call while a stream is being captured (``NotImplementedError:
calling cuBLAS API during stream capture is currently unsupported``), because a cuBLAS
handle without a workspace of its own allocates one on first use. cuBLAS itself records
into a graph when its workspace is set by the caller (cuBLAS docs, "CUDA Graphs Support").
So tinynet keeps its own handle per GPU, gives it a fixed 32 MiB workspace
(``cublasSetWorkspace``: the size NVIDIA recommends for Hopper), and calls
``cublas{S,D}gemm_v2`` (float32, float64) or ``cublasGemmEx`` (float16, bfloat16) through
``ctypes`` on the library CuPy already loaded. Eager and captured steps take the same call,
so a graph replays exactly the eager products (same kernels, same rounding). It also costs
less host time than CuPy's ``@`` (no array wrapping or dispatch in Python).

Accumulation is in the operands' precision for float32 and float64 with cuBLAS's default
math mode (no TF32), as before with CuPy's ``@``. float16 and bfloat16 products accumulate
in float32 (``CUBLAS_COMPUTE_32F``, alpha and beta as float32; cuBLAS docs, "cublasGemmEx")
and are rounded to the operands' type when written, as PyTorch's half-precision ``mm`` does
by default (PyTorch also leaves cuBLAS free to use its reduced-precision split-K reductions,
``allow_fp16/bf16_reduced_precision_reduction``; so does this handle's default math mode).
The strided-batched :func:`matmul` takes all four dtypes (``cublasGemmStridedBatchedEx`` for
the half types, the same float32 accumulation), so a bfloat16 ``bmm`` or attention-score product
over heads is one tensor-core call.

TF32: with ``settings["tf32"]`` set (``tinynet.backends.cuda.matmul.allow_tf32`` or
``set_float32_matmul_precision("high")``), the handle's math mode is
``CUBLAS_TF32_TENSOR_OP_MATH``, so float32 products round their inputs to TF32 on the tensor
cores, as PyTorch's do under the same switch; the default is cuBLAS's default math mode.
"""
import ctypes
import ctypes.util
import math

import numpy

from .. import backend, parallel
from ..dtypes import bfloat16
from ..errors import BackendError
from . import gpu_ops

WORKSPACE = 32 << 20
_OP_N, _OP_T = 0, 1
# cublasGemmEx's enums (cuBLAS/CUDA headers): cudaDataType_t of the half types (CUDA_R_16F,
# CUDA_R_16BF), the float32 compute type (CUBLAS_COMPUTE_32F) and CUBLAS_GEMM_DEFAULT
_CUDA_R_16F, _CUDA_R_16BF = 2, 14
_COMPUTE_32F = 68
_GEMM_DEFAULT = -1
_DEFAULT_MATH, _TF32_MATH = 0, 3  # cublasMath_t: CUBLAS_DEFAULT_MATH, CUBLAS_TF32_TENSOR_OP_MATH
settings = {"tf32": False}  # written by tinynet.backends.cuda (kernels sit below backends)
_HALF_TYPES = {numpy.dtype(numpy.float16): _CUDA_R_16F, bfloat16: _CUDA_R_16BF}
_state: dict = {"lib": None, "handles": {}}


def _library():
    if _state["lib"] is None:
        from cupy_backends.cuda.libs import cublas  # noqa: F401  (loads libcublas into the process)
        path = None
        try:
            with open("/proc/self/maps") as f:
                for line in f:
                    if "libcublas.so" in line and "libcublasLt" not in line:
                        path = line.split()[-1]
                        break
        except OSError:
            pass
        path = path or ctypes.util.find_library("cublas")
        if path is None:
            raise BackendError("cublas: libcublas is not loaded by CuPy and not found on the library path")
        lib = ctypes.CDLL(path)
        for name in ("cublasCreate_v2", "cublasSetStream_v2", "cublasSetWorkspace_v2", "cublasSgemm_v2",
                     "cublasDgemm_v2", "cublasGemmEx", "cublasSgemmStridedBatched", "cublasDgemmStridedBatched",
                     "cublasGemmStridedBatchedEx", "cublasSetMathMode"):
            getattr(lib, name).restype = ctypes.c_int
        _state["lib"] = lib
    return _state["lib"]


def _check(status, what):
    if status != 0:
        raise BackendError(f"cublas: {what} failed with cublasStatus {status}")


class _Handle:
    """One cuBLAS handle of one GPU with its own workspace, bound to the last stream used."""

    def __init__(self, lib, cp):
        self.lib = lib
        self.ptr = ctypes.c_void_p()
        _check(lib.cublasCreate_v2(ctypes.byref(self.ptr)), "cublasCreate")
        self.workspace = cp.cuda.Memory(WORKSPACE)  # its own allocation, outside every memory pool
        self.stream = None
        self.math = _DEFAULT_MATH
        # alpha and beta in the compute type: float32 for float32 and the half types' COMPUTE_32F
        f32, f64 = numpy.dtype(numpy.float32), numpy.dtype(numpy.float64)
        self.alpha = {f32: ctypes.c_float(1.0), f64: ctypes.c_double(1.0)}
        self.beta = {f32: ctypes.c_float(0.0), f64: ctypes.c_double(0.0)}
        for half in _HALF_TYPES:
            self.alpha[half], self.beta[half] = self.alpha[f32], self.beta[f32]

    def bind(self, stream):
        if stream != self.stream:  # setting a stream resets the workspace to cuBLAS's own: set it again
            _check(self.lib.cublasSetStream_v2(self.ptr, ctypes.c_void_p(stream)), "cublasSetStream")
            _check(self.lib.cublasSetWorkspace_v2(self.ptr, ctypes.c_void_p(self.workspace.ptr),
                                                  ctypes.c_size_t(WORKSPACE)), "cublasSetWorkspace")
            self.stream = stream


def _handle(cp):
    dev = cp.cuda.runtime.getDevice()
    h = _state["handles"].get(dev)
    if h is None:
        h = _state["handles"][dev] = _Handle(_library(), cp)
    h.bind(cp.cuda.get_current_stream().ptr)
    math = _TF32_MATH if settings["tf32"] else _DEFAULT_MATH
    if math != h.math:
        _check(h.lib.cublasSetMathMode(h.ptr, math), "cublasSetMathMode")
        h.math = math
    return h


def gemm(a, b, trans_a=False, trans_b=False, bias=None):
    """``op(a) @ op(b) [+ bias]`` for C-contiguous 2-D CuPy arrays of one dtype: float32 and
    float64 through ``cublas{S,D}gemm_v2`` (accumulated in that dtype), float16 and bfloat16
    through ``cublasGemmEx`` with float32 accumulation (``CUBLAS_COMPUTE_32F``), rounded once
    to the dtype. ``op`` transposes the stored array when ``trans_*`` is set: ``a`` is (M, K)
    or, transposed, (K, M); ``b`` is (K, N) or (N, K). ``bias`` (N,), of the same dtype, is
    added to every row inside the product: the output is first filled with it and cuBLAS
    computes ``1 * op(a) op(b) + 1 * C`` (beta = 1), so a half-precision result is rounded
    once, after the bias; for float32 and float64 the bits equal those of a separate addition.
    (:func:`tinynet.kernels.gemm.matmul` gives the half types' bias to cuBLASLt's epilogue
    first, :mod:`tinynet.kernels.cublaslt`; this fill is where cuBLASLt declines.)

    Row-major ``C (M, N) = op(A) op(B)`` is column-major ``C^T = op(B)^T op(A)^T``, so
    the call passes B first. Returns a new C-contiguous (M, N) array of ``a``'s dtype.

    Raises:
        BackendError: libcublas cannot be found, or a cuBLAS call returns an error status.
    """
    cp = backend.cupy
    m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
    n = b.shape[0] if trans_b else b.shape[1]
    out = cp.empty((m, n), dtype=a.dtype)
    if bias is not None:  # the bias in every row (one launch of tinynet's kernel; CuPy's broadcast copy was 3x slower)
        gpu_ops.bias_fill(out, bias if bias._c_contiguous else cp.ascontiguousarray(bias))
    if k == 0:
        if bias is None:
            out.fill(0)
        return out
    h = _handle(cp)
    ops = (_OP_T if trans_b else _OP_N, _OP_T if trans_a else _OP_N, n, m, k)
    lda, ldb = m if trans_a else k, k if trans_b else n
    alpha = ctypes.byref(h.alpha[a.dtype])
    beta = alpha if bias is not None else ctypes.byref(h.beta[a.dtype])  # alpha holds 1
    half = _HALF_TYPES.get(a.dtype)
    if half is not None:  # B, A and C stored in the half type, the sums in float32
        status = h.lib.cublasGemmEx(h.ptr, *ops, alpha, ctypes.c_void_p(b.data.ptr), half, ldb,
                                    ctypes.c_void_p(a.data.ptr), half, lda, beta, ctypes.c_void_p(out.data.ptr),
                                    half, n, _COMPUTE_32F, _GEMM_DEFAULT)
        _check(status, "gemm (GemmEx)")
        return out
    fn = h.lib.cublasSgemm_v2 if a.dtype == numpy.float32 else h.lib.cublasDgemm_v2
    status = fn(h.ptr, *ops, alpha, ctypes.c_void_p(b.data.ptr), ldb, ctypes.c_void_p(a.data.ptr), lda, beta,
                ctypes.c_void_p(out.data.ptr), n)
    _check(status, "gemm")
    return out


def _operand(cp, x):
    """``(matrices, trans, batch)``: ``x`` (..., R, C) as a C-contiguous stack of matrices,
    read transposed when ``x`` is the transposed view of one (``swapaxes(-1, -2)`` of a
    C-contiguous array, as the backward of a product makes), else copied contiguous."""
    batch = x.shape[:-2]
    if not x.flags.c_contiguous:
        t = x.swapaxes(-1, -2)
        if t.flags.c_contiguous:
            return t.reshape(-1, x.shape[-1], x.shape[-2]), True, batch
        x = cp.ascontiguousarray(x)
    return x.reshape(-1, x.shape[-2], x.shape[-1]), False, batch


def _stored(cp, x):
    """``(matrix, transposed)``: the 2-D ``x`` as a C-contiguous matrix, read transposed when
    ``x`` is the transposed view of one, else copied contiguous."""
    if x.flags.c_contiguous:
        return x, False
    t = x.T
    return (t, True) if t.flags.c_contiguous else (cp.ascontiguousarray(x), False)


def matmul(a, b):
    """NumPy's ``a @ b`` for CuPy arrays of one dtype (float32, float64, float16 or bfloat16)
    with at least two dims each, on tinynet's handle (capturable in a CUDA graph, unlike
    CuPy's ``@``): two 2-D operands through :func:`gemm` (the plain call: on an H200 the
    strided-batched one cost 32-35 us of host time a call against gemm's 13-25), others
    through ``cublas{S,D}gemmStridedBatched`` or, for the half types,
    ``cublasGemmStridedBatchedEx`` with float32 accumulation. Batch dims broadcast; an
    operand without batch dims (or whose batch is all ones) is read with batch stride 0, one
    whose batch dims broadcast otherwise is expanded first. Transposed views are read in place.

    Returns a new C-contiguous array of shape ``broadcast(batch) + (M, N)``.
    """
    cp = backend.cupy
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if a.ndim == 2 and b.ndim == 2 and m and n:
        (am, ta), (bm, tb) = _stored(cp, a), _stored(cp, b)
        return gemm(am, bm, ta, tb)
    a_batch, b_batch = a.shape[:-2], b.shape[:-2]
    batch = a_batch if a_batch == b_batch else tuple(numpy.broadcast_shapes(a_batch, b_batch))
    count = math.prod(batch)
    out = cp.empty(batch + (m, n), dtype=a.dtype)
    if out.size == 0:
        return out
    if k == 0:
        out.fill(0)
        return out
    ops = []
    for x in (a, b):
        if x.shape[:-2] != batch and math.prod(x.shape[:-2]) != 1:
            x = cp.broadcast_to(x, batch + x.shape[-2:])
        mats, trans, _ = _operand(cp, x)
        stride = 0 if mats.shape[0] == 1 else mats.shape[1] * mats.shape[2]
        ops.append((mats, trans, stride))
    (am, ta, sa), (bm, tb, sb) = ops
    h = _handle(cp)
    head = (h.ptr, _OP_T if tb else _OP_N, _OP_T if ta else _OP_N, n, m, k, ctypes.byref(h.alpha[a.dtype]))
    b_ptr, ldb, b_stride = ctypes.c_void_p(bm.data.ptr), k if tb else n, ctypes.c_longlong(sb)
    a_ptr, lda, a_stride = ctypes.c_void_p(am.data.ptr), m if ta else k, ctypes.c_longlong(sa)
    beta, c_ptr, c_stride = ctypes.byref(h.beta[a.dtype]), ctypes.c_void_p(out.data.ptr), ctypes.c_longlong(m * n)
    half = _HALF_TYPES.get(a.dtype)
    if half is not None:  # stored in the half type, summed in float32
        status = h.lib.cublasGemmStridedBatchedEx(*head, b_ptr, half, ldb, b_stride, a_ptr, half, lda, a_stride,
                                                  beta, c_ptr, half, n, c_stride, count, _COMPUTE_32F, _GEMM_DEFAULT)
        _check(status, "gemm (strided batched Ex)")
        return out
    fn = h.lib.cublasSgemmStridedBatched if a.dtype == numpy.float32 else h.lib.cublasDgemmStridedBatched
    status = fn(*head, b_ptr, ldb, b_stride, a_ptr, lda, a_stride, beta, c_ptr, n, c_stride, count)
    _check(status, "gemm (strided batched)")
    return out


_DIRECT = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64), numpy.dtype(numpy.float16), bfloat16)


def product(xp, a, b):
    """``xp.matmul(a, b)``, with float32/float64/float16/bfloat16 GPU operands of at least two
    dims each taking :func:`matmul` (capturable in CUDA graphs, same kernels eager and graphed,
    tensor cores for the half types), and NumPy operands taking :func:`tinynet.parallel.matmul`
    (a large 2-D product split over tinynet's CPU threads in row or column blocks, each one BLAS
    call: the same sums; BLAS itself is held to one thread while the pool has more)."""
    if (backend.is_gpu_array(a) and backend.is_gpu_array(b) and a.ndim >= 2 and b.ndim >= 2
            and a.dtype == b.dtype and a.dtype in _DIRECT):
        return matmul(a, b)
    if type(a) is numpy.ndarray and type(b) is numpy.ndarray:
        return parallel.matmul(a, b)
    return xp.matmul(a, b)
