"""tinynet's softmax and log-softmax row kernels (``tinynet/kernels/softmax_nll.cu``) run on the
CPU, without a GPU, built as tests/test_attention_kernels_emulated.py builds the attention
kernels (``tests/cuda_emulation``: each CUDA thread a coroutine, a warp shuffle a block-wide
exchange). Each kernel takes its arguments through a small C++ wrapper (the runner passes one
struct) and is checked against NumPy in float64 on rows shorter and longer than a warp, a row
holding -inf and a row of equal values, float32 and float64, with rows past the grid's last
warp left alone. Skipped where there is no g++ or no ``ucontext`` (not Linux/glibc)."""
import ctypes

import numpy
import pytest

from tinynet.kernels import cuda

from cuda_emulation_build import build
WRAPPERS = """
struct RowArgs { const void* a; const void* b; void* c; void* d; long long m, n; };
#define ROW_WRAPPERS(T, S) \\
extern "C" void emu_softmax_fwd_##S(RowArgs r) { \\
    tinynet_softmax_fwd_##S((const T*)r.a, (T*)r.c, (int)r.m, (int)r.n); } \\
extern "C" void emu_softmax_bwd_##S(RowArgs r) { \\
    tinynet_softmax_bwd_##S((const T*)r.a, (const T*)r.b, (T*)r.c, (int)r.m, (int)r.n); } \\
extern "C" void emu_log_softmax_fwd_##S(RowArgs r) { \\
    tinynet_log_softmax_fwd_##S((const T*)r.a, (T*)r.c, (T*)r.d, (int)r.m, (int)r.n); } \\
extern "C" void emu_log_softmax_bwd_##S(RowArgs r) { \\
    tinynet_log_softmax_bwd_##S((const T*)r.a, (const T*)r.b, (T*)r.c, (int)r.m, (int)r.n); }
ROW_WRAPPERS(float, f32)
ROW_WRAPPERS(double, f64)
#define EMU_ARG RowArgs
"""


class RowArgs(ctypes.Structure):
    _fields_ = [("a", ctypes.c_void_p), ("b", ctypes.c_void_p), ("c", ctypes.c_void_p), ("d", ctypes.c_void_p),
                ("m", ctypes.c_longlong), ("n", ctypes.c_longlong)]


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    return build(tmp_path_factory, "softmax", cuda.source("softmax_nll.cu"), WRAPPERS)


def _run(lib, name, arrays, m, n, threads=64):
    """``name`` over m rows of n (one warp a row, ``threads`` a block, as kernels/cuda.launch)."""
    ptr = [None if a is None else a.ctypes.data for a in arrays]
    args = RowArgs(*ptr, m, n)
    blocks = -(-m * 32 // threads)
    rc = lib.emu_run(ctypes.cast(getattr(lib, name), ctypes.c_void_p), ctypes.byref(args), ctypes.c_uint(blocks),
                     ctypes.c_uint(1), ctypes.c_uint(1), ctypes.c_uint(threads))
    assert rc == 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [7, 70])
def test_emulated_row_kernels_match_numpy(library, dtype, n):
    r = numpy.random.default_rng(3)
    m = 5  # 5 warps in blocks of 2: the last block's second warp has no row
    x = (r.standard_normal((m, n)) * 3).astype(dtype)
    x[1, 2] = -numpy.inf
    x[3] = 0.25
    gy = r.standard_normal((m, n)).astype(dtype)
    x64, g64 = x.astype(numpy.float64), gy.astype(numpy.float64)
    shifted = x64 - x64.max(axis=1, keepdims=True)
    sm = numpy.exp(shifted) / numpy.exp(shifted).sum(axis=1, keepdims=True)
    lsm = shifted - numpy.log(numpy.exp(shifted).sum(axis=1, keepdims=True))
    sfx = "f32" if dtype == "float32" else "f64"
    tol = 1e-6 if dtype == "float32" else 1e-14
    y, ly, lse = numpy.empty_like(x), numpy.empty_like(x), numpy.empty(m, dtype)
    _run(library, f"emu_softmax_fwd_{sfx}", (x, None, y, None), m, n)
    _run(library, f"emu_log_softmax_fwd_{sfx}", (x, None, ly, lse), m, n)
    numpy.testing.assert_allclose(y, sm, rtol=tol, atol=tol)
    numpy.testing.assert_allclose(ly, lsm, rtol=tol, atol=tol)
    numpy.testing.assert_allclose(lse, x64.max(axis=1) + numpy.log(numpy.exp(shifted).sum(axis=1)), rtol=tol)
    assert y[1, 2] == 0 and ly[1, 2] == -numpy.inf
    gx, lgx = numpy.empty_like(x), numpy.empty_like(x)
    _run(library, f"emu_softmax_bwd_{sfx}", (y, gy, gx, None), m, n)
    _run(library, f"emu_log_softmax_bwd_{sfx}", (ly, gy, lgx, None), m, n)
    y64, ly64 = y.astype(numpy.float64), ly.astype(numpy.float64)
    numpy.testing.assert_allclose(gx, y64 * (g64 - (g64 * y64).sum(axis=1, keepdims=True)), rtol=tol, atol=tol)
    numpy.testing.assert_allclose(lgx, g64 - numpy.exp(ly64) * g64.sum(axis=1, keepdims=True), rtol=tol,
                                  atol=tol * 10)
