"""tinynet's attention kernels (``tinynet/kernels/attention.cu``) run on the CPU, without a GPU.

The CUDA source, as :func:`tinynet.kernels.cuda.source` assembles it, is built with the host's
C++ compiler between ``tests/cuda_emulation/prelude.h`` (each CUDA thread a coroutine,
``__syncthreads`` a switch to a scheduler, shared memory function-static) and ``runner.h`` (runs
every block of a grid), the float16 conversions' PTX replaced by ``_Float16`` casts. The launchers
of :mod:`tinynet.kernels.attention` then run unchanged on NumPy arrays (their data pointers stand
in for device pointers): the struct packing, the choice of kernel, the grids and every tile path
(interior and edge tiles, masks, causal with L != S, head dims over 64 and odd ones, grouped-query
heads, broadcast batches, the strided gradient buffer) are checked against the float64 math path
(softmax(scale Q K^T + mask) V and its gradients in NumPy). Skipped where there is no g++ or no
``ucontext`` (not Linux/glibc)."""
import ctypes

import numpy
import pytest

from tinynet import backend
from tinynet.kernels import attention as fused
from tinynet.kernels import cuda, grad_buffers

from cuda_emulation_build import build

SUFFIX = {numpy.dtype(numpy.float32): "f32", numpy.dtype(numpy.float16): "f16"}
PTX_HALF = {  # the two conversions written in PTX, as C++
    'asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));': "f = (float)*(const _Float16*)&h;",
    'asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));': "{ _Float16 t = (_Float16)x; memcpy(&h, &t, 2); }",
}


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    src = cuda.source("attention.cu")
    for ptx, cpp in PTX_HALF.items():
        assert ptx in src, "attention_tiles.cuh's float16 conversions changed: update PTX_HALF"
        src = src.replace(ptx, cpp)
    return build(tmp_path_factory, "attention", src, "#define EMU_ARG Sdpa\n")


class _Kernel:
    def __init__(self, lib, name):
        self.lib, self.fn = lib, ctypes.cast(getattr(lib, name), ctypes.c_void_p)

    def __call__(self, grid, block, args):
        arg = numpy.array(args[0], dtype=fused.ARGS)
        rc = self.lib.emu_run(self.fn, arg.ctypes.data_as(ctypes.c_void_p), *map(ctypes.c_uint, grid),
                              ctypes.c_uint(block[0]))
        assert rc == 0


def _like_base(xp, arrays):
    """grad_buffers.like_base for NumPy views of one array (NaN-filled: an unwritten element shows)."""
    base = arrays[0].base
    if base is None or not base.flags.c_contiguous or any(a.base is not base for a in arrays):
        return None
    whole = numpy.full(base.shape, numpy.nan, dtype=base.dtype).reshape(-1)
    return [numpy.lib.stride_tricks.as_strided(whole[(a.ctypes.data - base.ctypes.data) // a.itemsize:],
                                               a.shape, a.strides) for a in arrays]


@pytest.fixture
def emulated(library, monkeypatch):
    monkeypatch.setattr(cuda, "kernel", lambda f, op, dtype: _Kernel(library, f"{op}_{SUFFIX[numpy.dtype(dtype)]}"))
    monkeypatch.setattr(cuda, "launch", lambda fn, n, args, threads=256:
                        fn((max(1, (int(n) + threads - 1) // threads), 1, 1), (threads,), args))
    monkeypatch.setattr(fused, "pointer", lambda a: a.ctypes.data)
    monkeypatch.setattr(backend, "_CUPY_NDARRAY", numpy.ndarray)
    monkeypatch.setattr(grad_buffers, "like_base", _like_base)


def _reference(q, k, v, mask, scale, causal, groups, gout):
    """out, dq, dk, dv of the float64 math path, dk and dv per key/value head."""
    q, k, v, gout = (x.astype(numpy.float64) for x in (q, k, v, gout))
    k, v = numpy.repeat(k, groups[0], axis=-3), numpy.repeat(v, groups[1], axis=-3)
    s = scale * q @ numpy.swapaxes(k, -1, -2)
    keep = numpy.ones(s.shape[-2:], dtype=bool)
    keep = numpy.tril(keep) if causal else keep
    if mask is not None and mask.dtype == numpy.bool_:
        keep = keep & mask
    elif mask is not None:
        s = s + mask
    s = numpy.where(keep, s, -numpy.inf)
    m = s.max(-1, keepdims=True)
    p = numpy.exp(s - numpy.where(numpy.isfinite(m), m, 0))
    total = p.sum(-1, keepdims=True)
    p = numpy.where(total > 0, p / numpy.where(total > 0, total, 1), 0)  # a row with no key: zeros
    dp = gout @ numpy.swapaxes(v, -1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    dk, dv = scale * numpy.swapaxes(ds, -1, -2) @ q, numpy.swapaxes(p, -1, -2) @ gout
    fold = [x.reshape(x.shape[:-3] + (x.shape[-3] // g, g) + x.shape[-2:]).sum(-3) for x, g in ((dk, groups[0]),
                                                                                              (dv, groups[1]))]
    return p @ v, scale * ds @ k, fold[0], fold[1]


def _bool_mask(shape, empty_row=False):
    m = numpy.random.default_rng(3).random(shape) > 0.4
    m[..., 0] = True
    if empty_row:
        m[..., 1, :] = False
    return m


CASES = [
    # (id, query, key, value shapes, mask, causal, (kgroup, vgroup))
    ("interior_E64", (1, 2, 128, 64), (1, 2, 128, 64), (1, 2, 128, 64), None, False, (1, 1)),
    ("causal_130_E64", (1, 1, 130, 64), (1, 1, 130, 64), (1, 1, 130, 64), None, True, (1, 1)),
    ("causal_200_300", (1, 1, 200, 64), (1, 1, 300, 64), (1, 1, 300, 64), None, True, (1, 1)),
    ("causal_300_130_Ev48", (1, 1, 300, 32), (1, 1, 130, 32), (1, 1, 130, 48), None, True, (1, 1)),
    ("odd_E45_Ev33_bool", (2, 2, 77, 45), (2, 2, 77, 45), (2, 2, 77, 33), _bool_mask((77, 77)), False, (1, 1)),
    ("empty_rows", (1, 1, 37, 16), (1, 1, 53, 16), (1, 1, 53, 16), _bool_mask((37, 53), True), False, (1, 1)),
    ("float_mask_causal", (1, 1, 130, 64), (1, 1, 130, 64), (1, 1, 130, 64),
     numpy.random.default_rng(4).standard_normal((130, 130)), True, (1, 1)),
    ("wide_E64_Ev128", (1, 1, 128, 64), (1, 1, 200, 64), (1, 1, 200, 128), None, True, (1, 1)),
    ("wide_E100_Ev64", (1, 1, 70, 100), (1, 1, 90, 100), (1, 1, 90, 64), None, False, (1, 1)),
    ("wide_E128_L_gt_S", (1, 1, 150, 128), (1, 1, 70, 128), (1, 1, 70, 16), None, True, (1, 1)),
    ("gqa", (1, 4, 40, 32), (1, 2, 50, 32), (1, 1, 50, 32), None, False, (2, 4)),
    ("broadcast_batch", (1, 2, 20, 16), (2, 2, 30, 16), (2, 1, 30, 8), None, False, (1, 1)),
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_emulated_kernels_match_the_float64_math_path(emulated, case, dtype):
    _, qs, ks, vs, mask, causal, groups = case
    r = numpy.random.default_rng(0)
    q, k, v = (r.standard_normal(s).astype(dtype) for s in (qs, ks, vs))
    mask = mask.astype(dtype) if mask is not None and mask.dtype != numpy.bool_ else mask
    scale = 1 / numpy.sqrt(qs[-1])
    out, lse = fused.forward(numpy, q, k, v, mask, scale, causal, groups)
    gout = r.standard_normal(out.shape).astype(dtype)
    got = [out] + list(fused.backward(numpy, q, k, v, mask, out, lse, gout, scale, causal, groups, True, True))
    for i, g in ((2, groups[0]), (3, groups[1])):  # per query head: summed over each group, as the op does
        got[i] = got[i].reshape(got[i].shape[:-3] + (got[i].shape[-3] // g, g) + got[i].shape[-2:]).sum(-3)
    ref = _reference(q, k, v, mask, scale, causal, groups, gout)
    for name, a, b in zip(("out", "dq", "dk", "dv"), got, ref):
        assert a.shape == b.shape and a.dtype == numpy.dtype(dtype), name
        err = numpy.abs(a.astype(numpy.float64) - b).max() / numpy.abs(b).max()
        assert numpy.isfinite(a).all() and err < (1e-5 if dtype == "float32" else 3e-3), f"{name}: {err:.2e}"


@pytest.mark.parametrize("causal", [False, True])
def test_emulated_gradients_in_one_buffer(emulated, causal):
    """q, k and v split from one projection: the gradients are written as views of one buffer."""
    base = numpy.random.default_rng(1).standard_normal((2, 70, 3 * 64)).astype(numpy.float32)
    q, k, v = (base[..., i * 64:(i + 1) * 64] for i in range(3))
    out, lse = fused.forward(numpy, q, k, v, None, 0.125, causal, (1, 1))
    gout = numpy.random.default_rng(2).standard_normal(out.shape).astype(numpy.float32)
    got = fused.backward(numpy, q, k, v, None, out, lse, gout, 0.125, causal, (1, 1), True, True)
    assert [g.ctypes.data - got[0].ctypes.data for g in got] == [a.ctypes.data - q.ctypes.data for a in (q, k, v)]
    assert all(g.strides == q.strides for g in got)
    ref = _reference(q, k, v, None, 0.125, causal, (1, 1), gout)
    for a, b in zip((out,) + got, ref):
        assert numpy.abs(a - b).max() / numpy.abs(b).max() < 1e-5


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_emulated_rows_aligned_but_head_dims_odd(emulated, dtype):
    """Rows 4-element aligned (vector loads) whose head dims end inside a group of 4: the tail is read as 0."""
    r = numpy.random.default_rng(5)
    q = r.standard_normal((1, 2, 77, 48)).astype(dtype)[..., :47]
    k = r.standard_normal((1, 2, 90, 48)).astype(dtype)[..., :47]
    v = r.standard_normal((1, 2, 90, 36)).astype(dtype)[..., :35]
    out, lse = fused.forward(numpy, q, k, v, None, 0.15, True, (1, 1))
    gout = r.standard_normal(out.shape).astype(dtype)
    got = fused.backward(numpy, q, k, v, None, out, lse, gout, 0.15, True, (1, 1), True, True)
    ref = _reference(q, k, v, None, 0.15, True, (1, 1), gout)
    tol = 1e-5 if dtype == "float32" else 3e-3
    for a, b in zip((out,) + got, ref):
        assert numpy.abs(a.astype(numpy.float64) - b).max() / numpy.abs(b).max() < tol


@pytest.mark.parametrize("mode", ["dq_only", "dkv_only", "no_scratch"])
@pytest.mark.parametrize("case", [CASES[2], CASES[4], CASES[9], CASES[10]], ids=lambda c: c[0])
def test_emulated_gradients_without_the_stored_scores(emulated, monkeypatch, case, mode):
    """dQ recomputes dS (its own kernel) when dK/dV is not wanted or the dS^T scratch would pass
    DS_LIMIT; dK/dV alone stores no scratch."""
    _, qs, ks, vs, mask, causal, groups = case
    r = numpy.random.default_rng(6)
    q, k, v = (r.standard_normal(s).astype(numpy.float32) for s in (qs, ks, vs))
    if mode == "no_scratch":
        monkeypatch.setattr(fused, "DS_LIMIT", 0)
    out, lse = fused.forward(numpy, q, k, v, mask, 0.2, causal, groups)
    gout = r.standard_normal(out.shape).astype(numpy.float32)
    got = list(fused.backward(numpy, q, k, v, mask, out, lse, gout, 0.2, causal, groups, mode != "dkv_only",
                              mode != "dq_only"))
    for i, g in ((1, groups[0]), (2, groups[1])):
        if got[i] is not None:
            got[i] = got[i].reshape(got[i].shape[:-3] + (got[i].shape[-3] // g, g) + got[i].shape[-2:]).sum(-3)
    ref = _reference(q, k, v, mask, 0.2, causal, groups, gout)[1:]
    assert (got[0] is None) == (mode == "dkv_only") and (got[1] is None) == (mode == "dq_only")
    for name, a, b in zip(("dq", "dk", "dv"), got, ref):
        if a is not None:
            assert numpy.abs(a - b).max() / numpy.abs(b).max() < 1e-5, name


def _keep_reference(batch, L, S, p, seed, offset):
    """The keep mask (*batch, L, S) of the kernels' dropout (attention.cu keep4): weight (b, i, j)
    draws word j % 4 of the Philox block for counter ((b L + i) ceil(S / 4) + j // 4, offset)."""
    from philox_reference import MASK32, philox4x32_10
    b, i, j = numpy.meshgrid(numpy.arange(int(numpy.prod(batch))), numpy.arange(L), numpy.arange(S), indexing="ij")
    ctr = ((b * L + i) * ((S + 3) // 4) + j // 4).astype(numpy.uint64).reshape(-1)
    n = ctr.size
    words = philox4x32_10([ctr & MASK32, ctr >> numpy.uint64(32), numpy.full(n, offset & 0xFFFFFFFF, numpy.uint64),
                           numpy.full(n, offset >> 32, numpy.uint64)], seed & 0xFFFFFFFF, seed >> 32)
    word = numpy.choose((j.reshape(-1) % 4).astype(numpy.int64), words)
    uniform = (word >> numpy.uint64(8)).astype(numpy.float32) * numpy.float32(1.0 / 16777216.0)
    return (uniform >= numpy.float32(p)).reshape(tuple(batch) + (L, S))


def _reference_dropout(q, k, v, mask, scale, causal, gout, d):
    """out, dq, dk, dv of the float64 math path with the dropout factors ``d`` (0 or 1/(1-p))."""
    q, k, v, gout = (x.astype(numpy.float64) for x in (q, k, v, gout))
    s = scale * q @ numpy.swapaxes(k, -1, -2)
    keep = numpy.tril(numpy.ones(s.shape[-2:], bool)) if causal else numpy.ones(s.shape[-2:], bool)
    if mask is not None:
        keep = keep & mask
    s = numpy.where(keep, s, -numpy.inf)
    p = numpy.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    pd = p * d
    out = pd @ v
    dp = gout @ numpy.swapaxes(v, -1, -2)
    ds = p * (dp * d - (gout * out).sum(-1, keepdims=True))
    return out, scale * ds @ k, scale * numpy.swapaxes(ds, -1, -2) @ q, numpy.swapaxes(pd, -1, -2) @ gout


DROP_CASES = [
    # (id, query, key/value shapes, causal, bool mask)
    ("causal_E32", (2, 2, 70, 32), (2, 2, 70, 32), True, False),
    ("L_ne_S_odd_S", (1, 3, 45, 16), (1, 3, 77, 16), False, True),
    ("causal_E100", (1, 1, 130, 100), (1, 1, 130, 100), True, False),
]


@pytest.mark.parametrize("mode", ["scratch", "no_scratch", "dq_only", "dkv_only", "graph_cells"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("case", DROP_CASES, ids=[c[0] for c in DROP_CASES])
def test_emulated_dropout_matches_the_math_path_with_the_philox_mask(emulated, monkeypatch, case, dtype, mode):
    """Dropout on the weights inside the fused kernels: forward and every backward kernel
    (dK/dV with and without the stored dS^T, dQ from it or recomputed) apply the mask that the
    documented Philox draw gives, against the float64 math path with that mask; in a CUDA
    graph the seed and the offset's base come from the device cells, as F.dropout's do."""
    _, qs, kvs, causal, with_mask = case
    r = numpy.random.default_rng(8)
    q, k, v = (r.standard_normal(s).astype(dtype) for s in (qs, kvs, kvs))
    mask = _bool_mask((qs[-2], kvs[-2])) if with_mask else None
    p, seed, offset = 0.3, 0x1234_5678_9ABC_DEF0, 7
    if mode == "graph_cells":  # the kernel reads [seed, base] from the device; offset is the draw's place
        cells = numpy.array([seed, 5], dtype=numpy.uint64)
        drop = (p, 1 / (1 - p), 0, offset - 5, cells.ctypes.data)
    else:
        drop = (p, 1 / (1 - p), seed, offset, 0)
    if mode == "no_scratch":
        monkeypatch.setattr(fused, "DS_LIMIT", 0)
    out, lse = fused.forward(numpy, q, k, v, mask, 0.25, causal, (1, 1), drop)
    gout = r.standard_normal(out.shape).astype(dtype)
    need_q, need_kv = mode != "dkv_only", mode != "dq_only"
    got = (out,) + fused.backward(numpy, q, k, v, mask, out, lse, gout, 0.25, causal, (1, 1), need_q, need_kv, drop)
    keep = _keep_reference(qs[:-2], qs[-2], kvs[-2], p, seed, offset)
    assert abs(keep.mean() - (1 - p)) < 0.02  # the draw keeps about 1 - p of the weights
    ref = _reference_dropout(q, k, v, mask, 0.25, causal, gout, keep / (1 - p))
    tol = 1e-5 if dtype == "float32" else 3e-3
    for name, a, b in zip(("out", "dq", "dk", "dv"), got, ref):
        if a is None:
            assert not (need_q if name == "dq" else need_kv), name
            continue
        err = numpy.abs(a.astype(numpy.float64) - b).max() / numpy.abs(b).max()
        assert numpy.isfinite(a).all() and err < tol, f"{name}: {err:.2e}"
