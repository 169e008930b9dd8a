"""Tensor construction, metadata, conversions and factories."""
import numpy
import pytest

import tinynet
from tinynet.errors import DTypeError, ShapeError


def test_dtype_inference_follows_pytorch():
    assert tinynet.tensor([1.0, 2.0]).dtype == numpy.float32
    assert tinynet.tensor([1, 2]).dtype == numpy.int64
    assert tinynet.tensor([True]).dtype == numpy.bool_
    assert tinynet.tensor(numpy.zeros(2, numpy.float64)).dtype == numpy.float64
    assert tinynet.tensor([1, 2], dtype=tinynet.float64).dtype == numpy.float64


def test_metadata_and_conversions(device):
    t = tinynet.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], device=device)
    assert t.shape == (2, 3) and t.ndim == 2 and t.device == device and len(t) == 2
    assert t.T.shape == (3, 2) and t.numel() == 6 and t.size(1) == 3
    assert isinstance(t.detach().numpy(), numpy.ndarray)
    assert t.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
    assert t[1, 2].item() == 6.0 and float(t.sum()) == 21.0
    assert t.double().dtype == numpy.float64 and t.long().dtype == numpy.int64
    with pytest.raises(ValueError, match="one-element"):
        t.item()
    assert "tensor(" in repr(t)


def test_factories(device):
    assert tinynet.zeros(2, 3, device=device).tolist() == [[0.0] * 3] * 2
    assert tinynet.ones((2,), device=device).dtype == numpy.float32
    assert tinynet.full((2, 2), 7.0, device=device).tolist() == [[7.0, 7.0]] * 2
    assert tinynet.arange(5, device=device).tolist() == [0, 1, 2, 3, 4]
    assert tinynet.arange(0, 1, 0.25, device=device).dtype == numpy.float32
    assert tinynet.empty(3, device=device).shape == (3,)
    z = tinynet.zeros_like(tinynet.ones(2, dtype=tinynet.float64, device=device))
    assert z.dtype == numpy.float64 and z.device == device
    r = tinynet.rand(1000, device=device).detach().numpy()
    assert 0 <= r.min() and r.max() < 1 and abs(r.mean() - 0.5) < 0.05
    n = tinynet.randn(10000, device=device).detach().numpy()
    assert abs(n.mean()) < 0.05 and abs(n.std() - 1) < 0.05
    assert tinynet.ones(2, device=device, requires_grad=True).requires_grad
    for like in (tinynet.ones_like, tinynet.rand_like, tinynet.randn_like, tinynet.empty_like):
        assert like(z).shape == (2,)
    assert tinynet.full_like(z, 3).tolist() == [3.0, 3.0]


def test_manual_seed_repeats_random_draws():
    tinynet.manual_seed(5)
    a = tinynet.randn(4).detach().numpy()
    tinynet.manual_seed(5)
    assert (tinynet.randn(4).detach().numpy() == a).all()
    with pytest.raises(TypeError):
        tinynet.manual_seed("5")
    with pytest.raises(ValueError):
        tinynet.manual_seed(-1)


def test_dlpack_roundtrip(device):
    t = tinynet.tensor([1.0, 2.0], device=device)
    back = tinynet.from_dlpack(t)
    assert back.tolist() == [1.0, 2.0] and back.device == device


def test_dlpack_from_torch():
    torch = pytest.importorskip("torch")
    t = tinynet.from_dlpack(torch.arange(3.0))
    assert t.tolist() == [0.0, 1.0, 2.0]


def test_bad_construction_inputs():
    with pytest.raises(DTypeError):
        tinynet.tensor("abc")
    with pytest.raises(DTypeError):
        tinynet.tensor([[1.0], [2.0, 3.0]])
    with pytest.raises(DTypeError, match="unknown dtype"):
        tinynet.tensor([1.0], dtype="nonsense")
    with pytest.raises(tinynet.errors.DeviceError, match="invalid device string 'tpu'"):
        tinynet.tensor([1.0], device="tpu")
    with pytest.raises(ValueError, match="sizes"):
        tinynet.zeros(-1)


def test_bad_shape_ops(device):
    t = tinynet.ones(2, 3, device=device)
    with pytest.raises(ShapeError, match="reshape"):
        t.reshape(4, 2)
    with pytest.raises(ShapeError, match="matmul"):
        t @ t
    with pytest.raises(tinynet.errors.IndexOutOfRangeError, match=r"sum: dimension out of range.*got 5"):
        t.sum(5)
    with pytest.raises(ShapeError, match="cat"):
        tinynet.cat([t, tinynet.ones(3, 3, device=device)], 1)
    with pytest.raises(ShapeError, match="stack"):
        tinynet.stack([t, t.T])
    with pytest.raises(IndexError, match="shape"):
        t[5]
    with pytest.raises(ShapeError, match="permute"):
        t.permute(0, 0)
    with pytest.raises(DTypeError, match="where"):
        tinynet.where(t, t, t)
    with pytest.raises(ValueError, match="clamp"):
        t.clamp()
    with pytest.raises(TypeError, match="unsupported operand"):
        t + "a"


def test_setitem_outside_autograd(device):
    t = tinynet.zeros(3, device=device)
    t[1] = 5.0
    assert t.tolist() == [0.0, 5.0, 0.0]
    p = tinynet.zeros(3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="in-place"):
        p[0] = 1.0
    with tinynet.no_grad():
        p[0] = 1.0
    assert p.tolist()[0] == 1.0
