"""NumPy's splits and stacks (ops/split.py, ops/join.py): hsplit/vsplit/dsplit and
column_stack/row_stack/dstack against PyTorch on every backend: pieces (views of the input),
values, gradients, the calling forms and errors."""
import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(79)
X = R.standard_normal((4, 6, 2))


@pytest.mark.parametrize("name,arg", [("hsplit", 3), ("hsplit", [1, 4]), ("vsplit", 2), ("vsplit", [3]),
                                      ("dsplit", 2), ("dsplit", [1])])
def test_splits_match_torch(name, arg, device):
    pieces = getattr(tinynet, name)(tinynet.tensor(X, device=device), arg)
    ref = getattr(torch, name)(torch.tensor(X), arg)
    assert len(pieces) == len(ref)
    for k, (p, r) in enumerate(zip(pieces, ref)):
        assert_close(p, r, rtol=0, atol=0, what=f"{name} piece {k}")
        # each piece feeds its own gradient slice, as PyTorch's views do
        check_op(device, lambda t: getattr(t, name)(arg)[k] * 2, lambda t: getattr(t, name)(arg)[k] * 2, [X])
    one_d = numpy.arange(6.0)
    check_op(device, lambda t: tinynet.hsplit(t, 3)[1], lambda t: torch.hsplit(t, 3)[1], [one_d])


def test_stacks_match_torch(device):
    a, b, s = R.standard_normal(3), R.standard_normal((3, 2)), R.standard_normal(())
    check_op(device, lambda x, y: tinynet.column_stack([x, y]), lambda x, y: torch.column_stack([x, y]), [a, b])
    c, d = R.standard_normal(3), R.standard_normal((3, 2, 4))
    check_op(device, lambda x, y: tinynet.row_stack([x, y]), lambda x, y: torch.vstack([x, y]), [a, c])
    check_op(device, lambda x, y: tinynet.dstack((x, y)), lambda x, y: torch.dstack((x, y)), [a, c])
    check_op(device, lambda x, y: tinynet.dstack([x, y]), lambda x, y: torch.dstack([x, y]), [b, d])
    check_op(device, lambda x: tinynet.column_stack([x, x]), lambda x: torch.column_stack([x, x]),
             [numpy.asarray(s)], grad=False)


def test_errors_as_torch(device):
    x = tinynet.tensor(X, device=device)
    with pytest.raises(RuntimeError):
        torch.hsplit(torch.tensor(X), 4)
    with pytest.raises(errors.ArgumentError, match="hsplit: dimension 1 of size 6 is not divisible"):
        tinynet.hsplit(x, 4)
    with pytest.raises(errors.ShapeError, match="vsplit: requires a tensor with at least 2"):
        tinynet.vsplit(tinynet.zeros(3, device=device), 1)
    with pytest.raises(errors.ShapeError, match="dsplit: requires a tensor with at least 3"):
        tinynet.dsplit(tinynet.zeros(3, 2, device=device), 1)
    with pytest.raises(errors.ArgumentTypeError, match="hsplit: indices_or_sections must be an int"):
        tinynet.hsplit(x, 2.0)
    with pytest.raises(errors.ArgumentError, match="expected a sequence of tensors, got a single Tensor"):
        tinynet.dstack(x)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_capture_concatenate_copies_slices_during_a_capture(axis, monkeypatch):
    """capture.concatenate: while a capture is in progress (the thread's capture set), the
    pieces are copied into their slices one by one (CuPy's many-array kernel reads a host
    table a capture cannot record); the result equals NumPy's concatenate."""
    from tinynet import capture
    g = rng(5)
    shapes = [(3, 4, 2)] * 10
    arrays = []
    for i, s in enumerate(shapes):
        s = list(s)
        s[axis] = 1 + i % 3
        arrays.append(g.standard_normal(s))
    want = numpy.concatenate(arrays, axis=axis)
    numpy.testing.assert_array_equal(capture.concatenate(numpy, arrays, axis), want)
    monkeypatch.setattr(capture._local, "capture", object())
    got = capture.concatenate(numpy, arrays, axis)
    assert not numpy.shares_memory(got, arrays[0])
    numpy.testing.assert_array_equal(got, want)
