"""The Tensor queries (ops/tensor_properties.py): is_signed, is_complex, is_same_size, is_cpu,
is_inference, stride, storage_offset, data_ptr, output_nr, and the dtype queries iinfo and
can_cast, against PyTorch on every backend."""
import pytest

import tinynet
from helpers import rng, torch
from tinynet import errors

A = rng(151).uniform(0.5, 2.0, (3, 4))


def test_queries_match_torch(device):
    for dt in ("float32", "int64", "uint8", "bool", "int8"):
        ours, theirs = tinynet.zeros(2, dtype=dt, device=device), torch.zeros(2, dtype=getattr(torch, dt))
        assert ours.is_signed() == theirs.is_signed() and tinynet.is_signed(ours) == torch.is_signed(theirs)
        assert ours.is_complex() is False and tinynet.is_complex(ours) is False
    x, p = tinynet.arange(24.0, device=device).reshape(2, 3, 4), torch.arange(24.0).reshape(2, 3, 4)
    for f in (lambda t: t, lambda t: t.transpose(0, 2), lambda t: t[:, 1:, ::2], lambda t: t[1], lambda t: t[1, 2, 3]):
        assert f(x).stride() == f(p).stride() and f(x).storage_offset() == f(p).storage_offset()
    assert x.stride(1) == p.stride(1) and x.stride(-1) == p.stride(-1)
    assert x[1].data_ptr() - x.data_ptr() == (p[1].data_ptr() - p.data_ptr())
    assert x.is_same_size(tinynet.zeros(2, 3, 4)) and not tinynet.is_same_size(x, tinynet.zeros(3, 4))
    assert x.is_cpu == (device == "cpu") and x.is_inference() is False
    y = x.unbind(1)
    assert [t.output_nr for t in tinynet.tensor(A, requires_grad=True).unbind(0)] == [0, 1, 2]
    assert y[0].output_nr == 0
    with pytest.raises(errors.IndexOutOfRangeError):
        tinynet.tensor(1.0).stride(0)


def test_iinfo_and_can_cast_as_torch():
    for ours, theirs in ((tinynet.int32, torch.int32), (tinynet.uint8, torch.uint8), (tinynet.int64, torch.int64),
                         (tinynet.int8, torch.int8), (tinynet.int16, torch.int16)):
        a, b = tinynet.iinfo(ours), torch.iinfo(theirs)
        assert (a.bits, a.max, a.min) == (b.bits, b.max, b.min)
    with pytest.raises(TypeError):
        torch.iinfo(torch.float32)
    with pytest.raises(errors.DTypeError, match="iinfo: requires an integer dtype"):
        tinynet.iinfo(tinynet.float32)
    pairs = [("float32", "int32"), ("int32", "float16"), ("int64", "bool"), ("bool", "int8"), ("float64", "float16"),
             ("uint8", "int8")]
    for a, b in pairs:
        assert tinynet.can_cast(getattr(tinynet, a), getattr(tinynet, b)) == torch.can_cast(getattr(torch, a),
                                                                                            getattr(torch, b)), (a, b)
