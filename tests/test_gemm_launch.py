"""The launch arguments of tinynet's tiled GEMM kernel (``kernels/gemm.py``), built on the host
without a GPU: the kernel, grid and scalars ``_gemm_launch`` caches per shape are those
``gemm.plan`` lays out and the kernel's signature takes (``gemm.cu``: M, N, K, trans_a,
trans_b, K chunk, workspace, counters), with split-K exactly where ``_gemm_splits`` asks for
it, a slab covering each block's K range, and a repeated shape costs a cache hit."""
import numpy
import pytest

from tinynet.kernels import gemm

SHAPES = [(1, 1, 1), (64, 50, 320), (64, 10, 50), (64, 256, 784), (10, 784, 64), (256, 784, 64), (1024, 50, 320),
          (3, 7, 5000)]


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("target", [0, 264])  # no workspace (a capture before the first product); an H100's 2 x SMs
def test_gemm_launch_arguments(m, n, k, target):
    work, counters = (0, 0) if target == 0 else (0x7F0000001000, 0x7F0000002000)
    name, grid, scalars = gemm._gemm_launch(m, n, k, True, False, work, counters, target)
    r, slab, splits, kchunk = gemm.plan(m, n, k, target)
    tiles16 = -(-m // 16) * -(-n // 16)
    assert r == (2 if splits == 1 and tiles16 >= gemm.REG_TILE_TILES else 1)
    assert name == f"tinynet_gemm_fwd_s{slab}r{r}" and slab in gemm.SLABS
    assert slab >= min(kchunk, gemm.SLABS[-1]) and (slab == gemm.SLABS[0] or slab // 2 < kchunk)
    tile = gemm.GEMM_TILE * r
    assert grid == (-(-n // tile), -(-m // tile), splits)
    assert [type(s) for s in scalars] == [numpy.int32] * 6 + [numpy.uint64] * 2
    assert [int(s) for s in scalars] == [m, n, k, 1, 0, max(kchunk, 1), work, counters]
    if target == 0:
        assert (splits, kchunk) == (1, k)
    assert splits == 1 or (splits * kchunk >= k > (splits - 1) * kchunk and kchunk % gemm.GEMM_TILE == 0)
    assert splits == 1 or tiles16 * splits <= 2 * target  # about target blocks, not more
    assert gemm._gemm_launch(m, n, k, True, False, work, counters, target)[2] is scalars  # cached


def test_gemm_kernels_exist_for_every_plan():
    """Every (slab, R) the plan can choose is instantiated in gemm.cu."""
    import os
    src = open(os.path.join(os.path.dirname(gemm.__file__), "gemm.cu")).read()
    for slab in gemm.SLABS:
        for r in (1, 2):
            assert f"GEMM_KERNEL(T, S, {slab}, {r})" in src
