"""Matrix products on the GPU: tinynet's tiled GEMM kernel (``gemm.cu``, with split-K and the
bias in the same launch) for small products, cuBLAS called directly (:mod:`tinynet.kernels.cublas`)
for large ones. Both are capturable in CUDA graphs (CuPy's ``@`` is not); the choice depends only
on the shape, so eager and graphed steps give the same bits. float32 and float64 accumulate in
their own precision; float16 and bfloat16 in float32, rounded once to the half type at the end.
"""
import functools

import numpy

from .. import backend, capture
from . import cublas, cublaslt, cuda
from .gpu_ops import bias_add

# M*N*K up to which a product runs in tinynet_gemm_fwd rather than cuBLAS: between the reference
# MLP's batch-64 products (12.8M multiply-adds; the step is bound by host time, where one RawKernel
# launch is cheapest) and the reference convnet's batch-1024 fc1 products (16.4M; the step is bound by
# the GPU, where cuBLAS's kernels win: graphed step 0.55 against 0.57 ms on the H200, 2026-11-27)
SMALL_GEMM = 14 << 20
# The tiled kernel's layout per shape (``plan``), chosen from GPU time per product on the H100,
# 2026-11-27 (benchmarks/gemm_shapes.py, NOTES.md row 19): slabs of 64 lost to 32 wherever a
# block's K range exceeds 32 (MLP fc1 forward at batch 64: 9.2 against 8.3 us); 2 x 2 outputs
# per thread won on products of 784+ tiles (MLP fc1 weight gradient 4.8 against 6.3 us) and lost
# on small ones (convnet fc1 weight gradient, 80 tiles: 3.1 against 2.5 us) and under split-K.
GEMM_TILE = 16            # threads per block side; a thread computes R x R outputs of a (16 R)-wide tile
REG_TILE_TILES = 512      # R = 2 for an unsplit product of at least this many 16 x 16 tiles, else R = 1
SLABS = (16, 32)          # the K slabs gemm.cu is built for: the least that covers a block's K range
BLOCKS_PER_SM = 2         # split-K aims for this many blocks per SM (4: MLP fc1 forward 9.7 against 8.2 us)
SPLIT_MIN_K = 64          # each split of a split-K product sums at least 64 values of K
SPLIT_MAX = 32
SPLIT_WORK = 1 << 20      # partial-product elements of the split-K workspace (8 MiB: float64 or float32 partials)
SPLIT_COUNTERS = 1024     # tiles a split product may have (it splits only below 2 blocks per SM)
_split_state: dict = {}   # device -> (workspace, counters, blocks to aim for, the launch's (pointers, blocks))


def _split_workspace(cp):
    """The split-K workspace and tile counters of the current GPU: allocations of their own
    (outside every memory pool, so graphs may hold them), the counters zeroed once (the
    kernel leaves them at zero). None while a capture is in progress and none exists yet
    (the zeroing would be recorded, not run): the product then runs unsplit."""
    dev = cp.cuda.runtime.getDevice()
    st = _split_state.get(dev)
    if st is None:
        if capture.current() is not None:
            return None
        work, counters = cp.cuda.Memory(SPLIT_WORK * 8), cp.cuda.Memory(SPLIT_COUNTERS * 4)
        cp.cuda.runtime.memset(counters.ptr, 0, SPLIT_COUNTERS * 4)
        sms = cp.cuda.Device(dev).attributes["MultiProcessorCount"]
        target = BLOCKS_PER_SM * sms
        st = _split_state[dev] = (work, counters, target, (work.ptr, counters.ptr, target))
    return st


def _gemm_splits(m, n, k, target):
    """``(splits, kchunk)`` for an (M, N, K) product: split K when the output has fewer
    16 x 16 tiles than ``target`` blocks and K is long, so that about ``target`` blocks run.
    The choice depends only on the shape (and the GPU), so every call of a shape, eager or
    captured, sums in the same order."""
    tiles = -(-m // GEMM_TILE) * -(-n // GEMM_TILE)
    splits = min(target // tiles, k // SPLIT_MIN_K, SPLIT_MAX, SPLIT_WORK // (m * n))
    if tiles > SPLIT_COUNTERS or splits < 2:
        return 1, k
    kchunk = -(-k // (splits * GEMM_TILE)) * GEMM_TILE
    return -(-k // kchunk), kchunk


def matmul(a, b, trans_a=False, trans_b=False, bias=None):
    """``op(a) @ op(b) [+ bias]`` for C-contiguous 2-D CuPy arrays of one dtype, float32,
    float64, float16 or bfloat16: ``a`` is (M, K) or, with ``trans_a``, a stored (K, M)
    read transposed; ``b`` is (K, N) or, with ``trans_b``, a stored (N, K); ``bias`` (N,),
    of the same dtype, is added to every row.

    Products of up to ``SMALL_GEMM`` (14 x 2^20) multiply-adds (the reference convnet's
    linear layers up to batch 512; the reference MLP's first layer up to batch 64, its second
    at every batch) run in tinynet's tiled kernel (``gemm.cu``), with the bias in the same launch:
    at these sizes an eager training step is bound by host time, and one RawKernel launch
    costs less of it than a cuBLAS call plus a bias launch. Larger products go to cuBLAS,
    called directly (:mod:`tinynet.kernels.cublas`: capturable by CUDA graphs, unlike
    CuPy's ``@``), whose kernels win once the GPU time dominates. The choice depends only
    on the shape, so eager and graphed steps run the same kernels and give the same bits.
    Both accumulate float32 and float64 in the operands' precision (no TF32); float16 and
    bfloat16 in float32 (the tiled kernel widens each value as it stages it, cuBLAS runs
    ``cublasGemmEx`` with ``CUBLAS_COMPUTE_32F``, as PyTorch's half ``mm``), rounded once
    to the half type when the result is written; with the bias, both add it before that
    rounding (for the half types in cuBLASLt's bias epilogue, :mod:`tinynet.kernels.cublaslt`,
    or where it declines through ``beta = 1`` over an output filled with the bias, see
    :func:`tinynet.kernels.cublas.gemm`; float32 and float64 products from cuBLAS take
    ``gpu_ops.bias_add``'s one launch after it, the same bits).
    A tiled product with fewer output tiles than two blocks per SM and a
    long K is split along K (``_gemm_splits``; the partials are float32 for the half types):
    the splits' partial sums are added in a fixed order by the tile's last block, in the
    same launch, so results stay deterministic.

    Measured trade-off (H200, ``benchmarks/NOTES.md`` rows 13 and 17): before split-K a
    threshold of 2^20 made graphed steps faster (MLP at batch 64: 0.050 against 0.082 ms of
    GPU time per step) but eager steps 11-14 % slower, because a cuBLAS call here costs more
    host time than the tiled kernel's launch; with split-K, 2^23 took the convnet's graphed
    batch-1024 step from 0.57 to 0.55 ms but the MLP's eager batch-64 step from 0.58 to
    1.01 ms, hence a threshold between their products' sizes.

    Returns a new C-contiguous (M, N) array of ``a``'s dtype. Dtypes and shapes are the
    caller's to check (``ops.linear`` does, with ``cuda.supported(..., half=True)``).

    Raises:
        BackendError: from :func:`tinynet.kernels.cublas.gemm` (libcublas missing, or an
            error status) for a large product.
    """
    cp = backend.cupy
    m, k = (a.shape[1], a.shape[0]) if trans_a else a.shape
    n = b.shape[0] if trans_b else b.shape[1]
    if m * n * k > SMALL_GEMM or m == 0 or n == 0:
        if not (m and n):
            return cp.empty((m, n), dtype=a.dtype)
        if bias is not None and a.dtype.itemsize == 2 and k:  # half types: the bias in cuBLASLt's epilogue
            out = cublaslt.gemm_bias(a, b, trans_a, trans_b, bias if bias._c_contiguous else cp.ascontiguousarray(bias))
            if out is not None:
                return out
        if bias is None or a.dtype.itemsize == 2:  # half types: the bias inside cuBLAS's product, one rounding
            return cublas.gemm(a, b, trans_a, trans_b, bias)
        return bias_add(cublas.gemm(a, b, trans_a, trans_b), bias)
    out = cp.empty((m, n), dtype=a.dtype)
    ws = _split_workspace(cp)
    name, grid, scalars = _gemm_launch(m, n, k, bool(trans_a), bool(trans_b),
                                       *(ws[3] if ws is not None else (0, 0, 0)))
    cuda.kernel("gemm.cu", name, a.dtype)(grid, (GEMM_TILE, GEMM_TILE), (a, b, bias, out) + scalars)
    return out


def plan(m, n, k, target):
    """``(R, slab, splits, kchunk)`` of the tiled kernel for an (M, N, K) product: the split
    of K (``_gemm_splits``; ``target`` 0 means no split), R x R outputs per thread (R = 2 for
    an unsplit product of ``REG_TILE_TILES`` 16 x 16 tiles or more), and the slab, the least
    of ``SLABS`` covering a block's range of K (the largest for longer ranges). Neither R nor
    the slab changes a result's bits: every output is summed in K order either way."""
    splits, kchunk = _gemm_splits(m, n, k, target) if target and k else (1, k)
    tiles = -(-m // GEMM_TILE) * -(-n // GEMM_TILE)
    r = 2 if splits == 1 and tiles >= REG_TILE_TILES else 1
    slab = next((s for s in SLABS if s >= kchunk), SLABS[-1])
    return r, slab, splits, kchunk


@functools.lru_cache(maxsize=4096)
def _gemm_launch(m, n, k, trans_a, trans_b, work, counters, target):
    """``(kernel name, grid, scalar arguments)`` of the tiled kernel for an (M, N, K) product
    as :func:`plan` lays it out. The scalars follow the four array arguments (m, n, k,
    trans_a, trans_b, K chunk, workspace and counter pointers). ``target`` is the split-K
    block target, 0 (with null pointers) where no workspace exists (then no split). Cached,
    so a repeated product builds no Python scalars (CuPy's ``int32``/``uint64`` are NumPy's)."""
    r, slab, splits, kchunk = plan(m, n, k, target)
    tile = GEMM_TILE * r
    grid = ((n + tile - 1) // tile, (m + tile - 1) // tile, splits)
    i32 = numpy.int32
    return f"tinynet_gemm_fwd_s{slab}r{r}", grid, (
        i32(m), i32(n), i32(k), i32(trans_a), i32(trans_b), i32(max(kchunk, 1)), numpy.uint64(work),
        numpy.uint64(counters))
