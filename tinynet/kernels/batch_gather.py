"""Launchers of ``batch_gather.cu``: rows of a GPU-resident dataset picked by a shuffled
index and a device-side batch counter (``tinynet.utils.data.ResidentBatches``)."""
import numpy

from . import cuda


def gather(src, perm, counter, out):
    """``out[r] = src[perm[(counter * B + r) % N]]`` for the B rows of ``out`` (C-contiguous
    CuPy arrays; ``perm`` and ``counter`` int64 on the device)."""
    batch = out.shape[0]
    row_bytes = out.nbytes // batch if batch else 0
    if row_bytes % 4 == 0:
        name, row = "tinynet_batch_gather_words", row_bytes // 4
    else:
        name, row = "tinynet_batch_gather_bytes", row_bytes
    fn = cuda.module("batch_gather.cu").get_function(name)
    cuda.launch(fn, batch * row, (src, perm, counter, numpy.int64(src.shape[0]), numpy.int64(batch),
                                  numpy.int64(row), out))


def advance(counter):
    """``counter += 1`` on the device."""
    cuda.module("batch_gather.cu").get_function("tinynet_batch_counter_advance")((1,), (1,), (counter,))
