"""gather, take_along_dim and index_select along any dimension, every dtype the GPU gather
kernel copies (elements of 1, 2, 4, 8 and 16 bytes), int32 and int64 indices, against PyTorch
(NumPy for the dtypes PyTorch lacks): on the GPU these run as one launch of
``index_rows.cu``'s ``gather_dim`` (which also checks the indices), falling back to CuPy's
fancy indexing for a non-contiguous input or an index smaller than the input outside ``dim``.
One body per case for every device."""
import numpy
import pytest

import tinynet
from helpers import as_numpy, check_op, rng, torch

R = rng(36)
X = R.standard_normal((3, 5, 4))
DTYPES = ["bool", "int8", "float16", "float32", "float64", "int64", "complex64", "complex128"]


def _values(dtype):
    if dtype == "bool":
        return X > 0
    if dtype.startswith("complex"):
        return (X + 1j * X[::-1]).astype(dtype)
    return (X * 10).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("itype", ["int64", "int32"])
def test_gather_and_index_select_of_every_element_size(device, dtype, itype):
    a = _values(dtype)
    x = tinynet.tensor(a, device=device)
    for dim in range(3):
        size = a.shape[dim]
        if not dtype.startswith("complex"):  # gather takes no complex tensors (docs/complex.md); index_select does
            idx = R.integers(0, size, a.shape[:dim] + (7,) + a.shape[dim + 1:]).astype(itype)
            out = tinynet.gather(x, dim, tinynet.tensor(idx, device=device))
            numpy.testing.assert_array_equal(as_numpy(out), numpy.take_along_axis(a, idx, dim))
            assert out.dtype == x.dtype and out.device == x.device
            neg = idx - size * (R.random(idx.shape) < 0.5)  # take_along_dim: negative indices count from the end
            out = tinynet.take_along_dim(x, tinynet.tensor(neg, device=device), dim)
            numpy.testing.assert_array_equal(as_numpy(out), numpy.take_along_axis(a, neg, dim))
        sel = R.integers(0, size, 6).astype(itype)
        out = tinynet.index_select(x, dim, tinynet.tensor(sel, device=device))
        numpy.testing.assert_array_equal(as_numpy(out), numpy.take(a, sel, dim))


@pytest.mark.parametrize("case", ["contiguous", "transposed input", "smaller index", "empty index"])
def test_gather_values_and_gradients_match_torch(device, case):
    dim = 1
    x = X if case != "transposed input" else numpy.ascontiguousarray(X.transpose(0, 2, 1)).transpose(0, 2, 1)
    shape = {"smaller index": (2, 6, 3), "empty index": (3, 0, 4)}.get(case, (3, 6, 4))
    idx = R.integers(0, 5, shape)
    check_op(device, lambda a: tinynet.gather(a, dim, tinynet.tensor(idx, device=a.device)),
             lambda a: torch.gather(a, dim, torch.tensor(idx)), [x], second_order=True)
    sel = numpy.array([3, 0, 3, 2])
    check_op(device, lambda a: tinynet.index_select(a, 2, tinynet.tensor(sel, device=a.device)),
             lambda a: torch.index_select(a, 2, torch.tensor(sel)), [x], second_order=True)
