"""``cuda.row_grid``: the (C, parts) launch of the per-channel reductions (the bias gradient's
row stage, batch norm's statistics and sums), and the cached integer arguments of the
launchers (``cuda.i32s`` and friends): pure functions checked without a GPU."""
import numpy as np
import pytest

from tinynet.kernels import cuda


@pytest.mark.parametrize("n,c,length,expected", [
    (1024, 32, 676, (32, 256)),      # ROW_BLOCKS // C parts, 256 threads for long rows
    (256, 128, 49, (8, 64)),         # threads: the power of two at or above the row length
    (3, 7, 45, (3, 64)),             # no more parts than rows
    (4, 3, 32, (4, 32)),             # a row of exactly MIN_ROW values
    (64, 10, 31, None),              # short rows: one block per channel
    (1, 4, 33, None),                # one row: a single part
    (64, 2048, 100, None),           # so many channels that one part each is the aim
])
def test_row_grid(n, c, length, expected):
    assert cuda.row_grid(n, c, length) == expected


def test_row_grid_aims_for_row_blocks_and_power_of_two_threads():
    for n, c, length in [(1024, 10, 576), (200, 64, 144), (512, 3, 1000)]:
        parts, threads = cuda.row_grid(n, c, length)
        assert parts == min(n, cuda.ROW_BLOCKS // c) and c * parts <= cuda.ROW_BLOCKS
        assert threads & (threads - 1) == 0 and threads <= 256 and (threads >= length or threads == 256)


def test_i32s_makes_int32_arguments_once_per_tuple():
    args = cuda.i32s((3, 28, 2))
    assert args == (3, 28, 2) and all(type(a) is np.int32 for a in args)
    assert cuda.i32s((3, 28, 2)) is args  # cached: the launchers pass the same shapes every step
    assert type(cuda.i32(7)) is np.int32 and type(cuda.i64(7)) is np.int64 and type(cuda.NULL) is np.uint64


def test_window_arguments_of_the_pooling_and_im2col_launchers():
    # the int32 scalars each kernel takes, in its prototype's order (pool.cu, im2col.cu)
    from tinynet.kernels import gpu_ops
    got = gpu_ops._max_args((2, 3, 28, 26), (14, 13), (2, 2), (2, 2), (0, 1), (1, 1))
    assert got == (28, 26, 14, 13, 2, 2, 2, 2, 0, 1, 1, 1) and all(type(a) is np.int32 for a in got)
    got = gpu_ops._avg_args((2, 3, 28, 26), [14, 13], (2, 2), (2, 2), (0, 1), True, None)
    assert got == (28, 26, 14, 13, 2, 2, 2, 2, 0, 1, 1, 0) and all(type(a) is np.int32 for a in got)
    got = gpu_ops._conv_args((2, 3, 28, 26), 1, (24, 22), (5, 5), (1, 1), ((0, 0), (0, 0)), (1, 1))
    assert got == (2, 3, 28, 26, 1, 24, 22, 5, 5, 1, 1, 0, 0, 1, 1) and all(type(a) is np.int32 for a in got)
