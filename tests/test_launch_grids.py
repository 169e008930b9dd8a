"""``cuda.row_grid``: the (C, parts) launch of the per-channel reductions (the bias gradient's
row stage, batch norm's statistics and sums), a pure function checked without a GPU."""
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
