"""The GPU path of softmax and log_softmax (ops/softmax.py's _RowKernels, kernels/gpu_ops.py's
_row_pass) checked on the CPU: the launchers' arguments in the order the kernels of
softmax_nll.cu declare them, and N-D inputs taken as rows of their last dim and given back
in their shape. The kernels' arithmetic is checked on the GPU (tests/test_ops_nn.py)."""
import numpy
import pytest

from tinynet import backend
from tinynet.kernels import cuda, gpu_ops
from tinynet.ops import softmax as sm

SIGNATURES = {  # softmax_nll.cu: the arrays each kernel takes before (int M, int C)
    "tinynet_softmax_fwd": ("x", "y"), "tinynet_softmax_bwd": ("y", "gy", "gx"),
    "tinynet_log_softmax_fwd": ("x", "y", "lse"), "tinynet_log_softmax_bwd": ("y", "gy", "gx"),
}


@pytest.fixture
def launches(monkeypatch):
    seen = []
    monkeypatch.setattr(gpu_ops, "_cp", lambda: numpy)
    monkeypatch.setattr(cuda, "kernel", lambda f, name, dtype: (f, name, numpy.dtype(dtype)))
    monkeypatch.setattr(cuda, "launch", lambda fn, n, args, threads=256: seen.append((fn, n, args)))
    return seen


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_row_launchers_pass_the_kernels_arguments_in_order(launches, name):
    x = numpy.arange(12, dtype=numpy.float32).reshape(4, 3)[:, ::-1]  # not contiguous: copied first
    y = getattr(gpu_ops, name + "_fwd")(x)
    gx = getattr(gpu_ops, name + "_bwd")(y, numpy.asfortranarray(numpy.ones((4, 3), numpy.float32)))
    (fwd, n_f, a_f), (bwd, n_b, a_b) = launches
    assert fwd == ("softmax_nll.cu", f"tinynet_{name}_fwd", numpy.dtype(numpy.float32)) and n_f == 4 * 32
    assert bwd[1] == f"tinynet_{name}_bwd" and n_b == 4 * 32
    assert len(a_f) == len(SIGNATURES[fwd[1]]) + 2 and len(a_b) == len(SIGNATURES[bwd[1]]) + 2
    assert a_f[0].flags.c_contiguous and numpy.array_equal(a_f[0], x) and a_f[1] is y
    assert a_b[0] is y and a_b[1].flags.c_contiguous and a_b[2] is gx
    if name == "log_softmax":
        assert a_f[2].shape == (4,)
    for args in (a_f, a_b):
        assert args[-2:] == (4, 3) and all(type(v) is numpy.int32 for v in args[-2:])


@pytest.mark.parametrize("cls,dim", [(sm.Softmax, -1), (sm.LogSoftmax, -1), (sm.Softmax, 1)])
def test_row_ops_take_the_last_dim_as_rows(monkeypatch, cls, dim):
    """N-D input along the last dim: rows (prod of the other dims, C) to the kernels and back in
    the input's shape; another dim: the generic code."""
    monkeypatch.setattr(backend, "_CUPY_NDARRAY", numpy.ndarray)  # cuda.supported takes NumPy arrays
    calls = []

    def fwd(rows):
        calls.append(("fwd", rows.shape))
        return rows * 2

    def bwd(y, gy):
        calls.append(("bwd", y.shape, gy.shape))
        return y + gy
    monkeypatch.setattr(cls, "gpu_fwd", staticmethod(fwd))
    monkeypatch.setattr(cls, "gpu_bwd", staticmethod(bwd))
    x = numpy.random.default_rng(0).standard_normal((2, 3, 5)).astype(numpy.float32)
    op = cls(dim % 3)
    op.needs_input_grad = (True,)
    y = op.forward_gpu(numpy, x)
    (gx,) = op.backward_gpu(numpy, numpy.ones_like(x))
    if dim % 3 == 2:
        assert calls == [("fwd", (6, 5)), ("bwd", (6, 5), (6, 5))]
        assert y.shape == x.shape and numpy.array_equal(y, 2 * x) and numpy.array_equal(gx, 2 * x + 1)
    else:
        assert calls == [] and y.shape == x.shape  # the generic code
    if dim % 3 == 2:  # a 2-D input goes to the kernels as it is
        cls(1).forward_gpu(numpy, x[0])
        assert calls[-1] == ("fwd", (3, 5))
