"""Two element-wise GPU kernels that take 4 elements per thread (kernels/dropout.cu,
kernels/fused.cu): the dropout masks are exactly Philox4x32-10's for unit ``i // group``
(a NumPy implementation of the generator below, written from Salmon et al., SC 2011), and
the in-place bias add is exactly ``y + b[channel]``, on sizes that are and are not multiples
of 4, rows that end inside a thread's four elements, and every float dtype; and the
multi-tensor scaled copy of DistributedDataParallel's buckets is one multiply per element."""
import numpy
import pytest

import tinynet
from tinynet import backend

from philox_reference import MASK32, philox4x32_10

pytestmark = pytest.mark.gpu


def reference_keep(n, group, p, seed, offset):
    """The keep mask of element i: unit u = i // group draws (word u % 4 of the block for
    counter (u // 4, offset), key seed) >> 8, over 2^24, and is kept when that is >= p."""
    u = numpy.arange(n, dtype=numpy.uint64) // numpy.uint64(group)
    ctr = u >> numpy.uint64(2)
    words = philox4x32_10([ctr & MASK32, ctr >> numpy.uint64(32), numpy.full(n, offset & 0xFFFFFFFF, numpy.uint64),
                           numpy.full(n, offset >> 32, numpy.uint64)], seed & 0xFFFFFFFF, seed >> 32)
    word = numpy.choose((u & numpy.uint64(3)).astype(numpy.int64), words)
    uniform = (word >> numpy.uint64(8)).astype(numpy.float32) * numpy.float32(1.0 / 16777216.0)
    return uniform >= numpy.float32(p)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16"])
@pytest.mark.parametrize("shape,mask_shape", [
    ((3, 5, 7), (3, 5, 7)),                  # dropout, 105 elements: the last thread has 1
    ((64, 50), (64, 50)),
    ((3, 5, 3, 3), (3, 5, 1, 1)),            # dropout2d, maps of 9: rows end inside a thread's 4
    ((4, 6, 2, 1), (4, 6, 1, 1)),            # maps of 2: a thread spans 2 maps
    ((2, 3, 8, 8), (2, 3, 1, 1)),
])
def test_dropout_masks_are_philox_per_unit(shape, mask_shape, dtype, monkeypatch):
    cp = backend.cupy
    from tinynet import random as tr
    from tinynet.kernels import gpu_ops
    draws = []
    real = tr.philox_draw

    def recorded():
        draws.append(real())
        return draws[-1]
    monkeypatch.setattr(tr, "philox_draw", recorded)
    tinynet.manual_seed(1234)
    x = tinynet.tensor(numpy.random.default_rng(0).standard_normal(shape), dtype=dtype, device="cuda").array
    p = 0.35
    for _ in range(2):  # two draws: offsets 0 and 1
        y, mask, _scale = gpu_ops.dropout_fwd(x, p, mask_shape)
        seed, offset, _cells = draws[-1]
        group = int(numpy.prod(shape)) // int(numpy.prod(mask_shape))
        want = reference_keep(x.size, group, p, int(seed), int(offset)).reshape(shape)
        numpy.testing.assert_array_equal(cp.asnumpy(mask).astype(bool), want)
        xs = tinynet.Tensor._wrap(x).double().numpy()
        ys = tinynet.Tensor._wrap(y).double().numpy()
        assert (ys[~want] == 0).all() and (numpy.sign(ys[want]) == numpy.sign(xs[want])).all()
    assert [int(d[1]) for d in draws[-2:]] == [int(draws[-2][1]), int(draws[-2][1]) + 1]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(3, 5, 7), (2, 3, 1), (5, 6), (4, 3, 2, 2), (1, 1, 9), (7, 13, 3, 5)])
def test_bias_add_is_one_add_per_element(shape, dtype):
    cp = backend.cupy
    from tinynet.kernels import gpu_ops
    rng = numpy.random.default_rng(3)
    y = rng.standard_normal(shape).astype(dtype)
    b = rng.standard_normal(shape[1]).astype(dtype)
    got = gpu_ops.bias_add(cp.asarray(y), cp.asarray(b))
    want = y + b.reshape((1, -1) + (1,) * (len(shape) - 2))
    numpy.testing.assert_array_equal(cp.asnumpy(got), want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_multi_tensor_scale_copy_is_one_multiply_per_element(dtype):
    """kernels/optim_update.scale_copy (DistributedDataParallel's bucket packing; its bfloat16
    version is the same template): 20 pairs
    (two launches of 16 and 4), empty and odd sizes, into slices of one flat buffer and back;
    each element ``src * scale`` rounded once, as CuPy's multiply gives it."""
    cp = backend.cupy
    from tinynet.kernels import optim_update
    dt = numpy.dtype(dtype)
    rng = numpy.random.default_rng(5)
    sizes = [0, 1, 3, 1000, 4097] + list(rng.integers(1, 300, 15))
    srcs = [cp.asarray(rng.standard_normal(n).astype(numpy.float32)).astype(dt) for n in sizes]
    flat = cp.full(sum(sizes), 7, dtype=dt)
    offs = numpy.concatenate([[0], numpy.cumsum(sizes)])
    dsts = [flat[offs[k]:offs[k + 1]] for k in range(len(sizes))]
    assert optim_update.scale_copy(dsts, srcs, 0.5)
    want = cp.concatenate([(s.astype(cp.float64 if dt == numpy.float64 else cp.float32) * 0.5).astype(dt)
                           for s in srcs])
    assert cp.asnumpy((flat == want).all())
    backs = [cp.empty_like(s) for s in srcs]
    assert optim_update.scale_copy(backs, dsts, 1.0)
    for b, d in zip(backs, dsts):
        assert cp.asnumpy((b == d).all())
    other = cp.float64 if dt != numpy.float64 else cp.float32
    assert not optim_update.scale_copy([flat[:3]], [srcs[2].astype(other)], 1.0)  # mixed dtypes: the caller's code
