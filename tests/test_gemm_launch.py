"""The launch arguments of tinynet's tiled GEMM kernel (``kernels/gemm.py``), built on the host
without a GPU: the grid and the scalars ``_gemm_launch`` caches per shape are those the kernel's
signature takes (``gemm.cu``: M, N, K, trans_a, trans_b, K chunk, workspace, counters), with
split-K exactly where ``_gemm_splits`` asks for it, and a repeated shape costs a cache hit."""
import numpy
import pytest

from tinynet.kernels import gemm

SHAPES = [(1, 1, 1), (64, 50, 320), (64, 10, 50), (64, 256, 784), (10, 784, 64), (1024, 50, 320), (3, 7, 5000)]


@pytest.mark.parametrize("m,n,k", SHAPES)
@pytest.mark.parametrize("target", [0, 264])  # no workspace (a capture before the first product); an H100's 2 x SMs
def test_gemm_launch_arguments(m, n, k, target):
    work, counters = (0, 0) if target == 0 else (0x7F0000001000, 0x7F0000002000)
    grid, scalars = gemm._gemm_launch(m, n, k, True, False, work, counters, target)
    splits, kchunk = gemm._gemm_splits(m, n, k, target) if target else (1, k)
    tile = gemm.GEMM_TILE
    assert grid == (-(-n // tile), -(-m // tile), splits)
    assert [type(s) for s in scalars] == [numpy.int32] * 6 + [numpy.uint64] * 2
    assert [int(s) for s in scalars] == [m, n, k, 1, 0, max(kchunk, 1), work, counters]
    assert splits == 1 or (splits * kchunk >= k > (splits - 1) * kchunk and kchunk % tile == 0)
    assert gemm._gemm_launch(m, n, k, True, False, work, counters, target)[1] is scalars  # cached
