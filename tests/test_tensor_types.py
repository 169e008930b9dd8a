"""The legacy typed tensor classes (``tinynet.FloatTensor``, ...), ``dtype``, ``layout``/``strided``,
``set_default_tensor_type``, ``typename`` and the Tensor's kind flags, against PyTorch's."""
import numpy
import pytest

import tinynet
from helpers import torch
from tinynet import errors

NAMES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor", "CharTensor", "ShortTensor",
         "IntTensor", "LongTensor", "BoolTensor"]


@pytest.mark.parametrize("name", NAMES)
def test_typed_constructors_match_torch(name):
    ours, theirs = getattr(tinynet, name), getattr(torch, name)
    data = [[1, 0], [3, 1]]
    a, b = ours(data), theirs(data)
    assert str(a.dtype) == str(b.dtype).split(".")[-1]
    assert a.to(tinynet.float64).tolist() == b.double().tolist()
    assert ours(2, 3).shape == theirs(2, 3).shape == (2, 3)
    assert ours().shape == theirs().shape == (0,)
    assert ours(tinynet.Size([2, 2])).shape == (2, 2)
    assert ours(numpy.array([1, 0])).tolist() == theirs(numpy.array([1, 0])).tolist()
    t = ours(data)
    assert ours(t) is t
    assert isinstance(a, ours) and isinstance(b, theirs)
    other = tinynet.zeros(2, dtype=tinynet.float64 if name != "DoubleTensor" else tinynet.float32)
    assert not isinstance(other, ours)
    assert not isinstance("x", ours)
    assert ours.dtype == a.dtype and not ours.is_cuda and ours.add is tinynet.Tensor.add
    assert a.type() == f"tinynet.{name}" and b.type() == f"torch.{name}"
    assert tinynet.zeros(2).type(ours).dtype == a.dtype


def test_typed_constructor_refusals():
    for bad in (2.5, "a"):
        with pytest.raises(TypeError):
            torch.FloatTensor(bad)
        with pytest.raises(errors.ArgumentTypeError, match="FloatTensor"):
            tinynet.FloatTensor(bad)
    with pytest.raises(TypeError):
        torch.FloatTensor(torch.zeros(2, dtype=torch.float64))
    with pytest.raises(errors.DTypeError, match="FloatTensor"):
        tinynet.FloatTensor(tinynet.zeros(2, dtype=tinynet.float64))
    with pytest.raises(errors.ArgumentTypeError):
        tinynet.LongTensor(2, "x")


def test_set_default_tensor_type():
    old = tinynet.get_default_dtype()
    try:
        tinynet.set_default_tensor_type(tinynet.DoubleTensor)
        assert tinynet.zeros(2).dtype == tinynet.float64
        tinynet.set_default_tensor_type("torch.FloatTensor")
        assert tinynet.zeros(2).dtype == tinynet.float32
        with pytest.raises(errors.DTypeError, match="only floating-point"):
            tinynet.set_default_tensor_type(tinynet.LongTensor)
        with pytest.raises(TypeError):
            torch.set_default_tensor_type(torch.LongTensor)
        with pytest.raises(errors.DTypeError, match="invalid type"):
            tinynet.set_default_tensor_type("torch.NoSuchTensor")
        with pytest.raises(errors.ArgumentTypeError):
            tinynet.set_default_tensor_type(3)
    finally:
        tinynet.set_default_dtype(old)


def test_typename_dtype_and_layout(device):
    x = tinynet.zeros(2, 3, device=device)
    assert tinynet.typename(3) == torch.typename(3) == "int"
    assert tinynet.typename(tinynet.nn.Linear(1, 1)) == "tinynet.nn.modules.linear.Linear"
    assert torch.typename(torch.nn.Linear(1, 1)) == "torch.nn.modules.linear.Linear"
    assert tinynet.typename(x) == x.type()
    assert isinstance(x.dtype, tinynet.dtype) and isinstance(tinynet.int64, tinynet.dtype)
    assert x.layout is tinynet.strided and isinstance(tinynet.strided, tinynet.layout)
    assert repr(tinynet.strided) == "tinynet.strided" and repr(torch.strided) == "torch.strided"


@pytest.mark.parametrize("flag", ["is_sparse", "is_sparse_csr", "is_quantized", "is_nested", "is_mkldnn",
                                  "is_vulkan", "is_xla", "is_ipu", "is_mtia", "is_maia"])
def test_kind_flags_are_false_as_for_a_dense_torch_tensor(flag, device):
    assert getattr(tinynet.zeros(2, device=device), flag) is False
    assert getattr(torch.zeros(2), flag) is False


def test_dense_queries_match_torch(device):
    x, p = tinynet.zeros(2, 3, 4, device=device), torch.zeros(2, 3, 4)
    for f in (lambda t: t, lambda t: t.permute(2, 0, 1), lambda t: t.transpose(0, 1)):
        assert f(x).dim_order() == f(p).dim_order()
    assert x.dense_dim() == p.dense_dim() == 3 and x.sparse_dim() == p.sparse_dim() == 0
    assert x.to_dense() is x and x.to_dense(tinynet.float64).dtype == tinynet.float64
    assert x.is_set_to(x.view(2, 3, 4)) and p.is_set_to(p.view(2, 3, 4))
    assert not x.is_set_to(x.view(6, 4)) and not p.is_set_to(p.view(6, 4))
    assert not x.is_set_to(x[1:]) and not p.is_set_to(p[1:])
    assert x.is_distributed() is p.is_distributed() is False
    assert x.const_data_ptr() == x.data_ptr()
    assert x.is_pinned() is False


def test_pin_memory(device):
    x = tinynet.ones(3, device=device)
    if device != "cpu" or not tinynet.cuda.is_available():
        with pytest.raises(errors.DeviceError, match="pin_memory"):
            x.pin_memory()
        return
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned() and p.tolist() == [1.0, 1.0, 1.0]
    assert p.pin_memory() is p
    w = tinynet.ones(3, requires_grad=True, device="cpu")
    y = w.pin_memory()
    (y * 2).sum().backward()
    assert w.grad.tolist() == [2.0, 2.0, 2.0]


def test_legacy_new(device):
    b, p = tinynet.tensor([1, 2], dtype=tinynet.int32, device=device), torch.tensor([1, 2], dtype=torch.int32)
    for args in (([3.7, 1.2],), (2, 3), (), (tinynet.Size([2, 2]),)):
        ours = b.new(*args)
        theirs = p.new(*(torch.Size(a) if isinstance(a, tinynet.Size) else a for a in args))
        assert ours.shape == theirs.shape and ours.dtype == tinynet.int32 and ours.device == b.device
        if args and isinstance(args[0], list):
            assert ours.tolist() == theirs.tolist()
    assert b.new(b) is b
    with pytest.raises(errors.DTypeError, match="new"):
        b.new(tinynet.ones(2, device=device))
    with pytest.raises(TypeError):
        p.new(torch.ones(2))
    with pytest.raises(errors.ArgumentTypeError, match="new"):
        b.new(2.5)
