"""scalar_tensor, range, fill, empty_strided, empty_permuted, frombuffer, from_file, to_dlpack and
the window functions against PyTorch: values, dtypes, strides, shared memory, and the refusals."""
import warnings

import numpy
import pytest

import tinynet
from helpers import assert_close, torch
from tinynet import errors

WINDOWS = [("hann_window", {}), ("hamming_window", {}), ("hamming_window", {"alpha": 0.5, "beta": 0.3}),
           ("blackman_window", {}), ("bartlett_window", {}), ("kaiser_window", {}), ("kaiser_window", {"beta": 4.0})]


@pytest.mark.parametrize("name, kwargs", WINDOWS)
@pytest.mark.parametrize("n", [0, 1, 2, 7, 16])
def test_windows_match_torch(name, kwargs, n, device):
    for periodic in (True, False):
        for dt in ("float32", "float64"):
            out = getattr(tinynet, name)(n, periodic, dtype=getattr(tinynet, dt), device=device, **kwargs)
            ref = getattr(torch, name)(n, periodic, dtype=getattr(torch, dt), **kwargs)
            assert str(out.dtype) == dt and out.device.type == tinynet.device(device).type
            assert_close(out, ref, rtol=1e-6, atol=1e-6, what=f"{name}({n}, {periodic})")
    assert getattr(tinynet, name)(4, **kwargs).dtype == tinynet.float32
    assert getattr(tinynet, name)(4, requires_grad=True, **kwargs).requires_grad


def test_window_refusals(device):
    with pytest.raises(errors.DTypeError, match="hann_window"):
        tinynet.hann_window(4, dtype=tinynet.int64, device=device)
    with pytest.raises(RuntimeError):
        torch.hann_window(4, dtype=torch.int64)
    with pytest.raises(errors.ArgumentError, match="window_length"):
        tinynet.kaiser_window(-1, device=device)
    with pytest.raises(RuntimeError):
        torch.kaiser_window(-1)


def test_scalar_tensor_range_and_fill(device):
    for s, kw in ((3, {}), (True, {}), (2.5, {"dtype": tinynet.int64}), (1.5, {"dtype": tinynet.float64})):
        out = tinynet.scalar_tensor(s, device=device, **kw)
        tkw = {"dtype": getattr(torch, str(kw["dtype"]))} if kw else {}
        ref = torch.scalar_tensor(s, **tkw)
        assert out.shape == () and str(out.dtype) == str(ref.dtype).split(".")[-1] and out.item() == ref.item()
    assert tinynet.scalar_tensor(1, requires_grad=True).requires_grad
    with pytest.raises(errors.ArgumentTypeError, match="scalar_tensor"):
        tinynet.scalar_tensor("a")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for args, kw in (((1, 4), {}), ((0, 1, 0.3), {}), ((5, 1, -2), {}), ((1, 4), {"dtype": "int64"})):
            tkw = {"dtype": torch.int64} if kw else {}
            out, ref = tinynet.range(*args, device=device, **kw), torch.range(*args, **tkw)
            assert_close(out, ref, rtol=1e-6, atol=1e-7, what=f"range{args}")
            assert str(out.dtype) == str(ref.dtype).split(".")[-1]
        with pytest.raises(errors.ArgumentError, match="range"):
            tinynet.range(1, 0)
        with pytest.raises(RuntimeError):
            torch.range(1, 0)
    with pytest.warns(UserWarning, match="deprecated"):
        tinynet.range(0, 2)
    with pytest.raises(errors.ArgumentTypeError, match="end"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tinynet.range(3)
    z = tinynet.zeros(2, 3, dtype=tinynet.int64, device=device)
    assert tinynet.fill(z, 3).tolist() == torch.fill(torch.zeros(2, 3, dtype=torch.int64), 3).tolist()
    v = tinynet.tensor(2.0, device=device, requires_grad=True)
    out = tinynet.fill(tinynet.zeros(3, device=device), v)
    (out * tinynet.tensor([1.0, 2.0, 3.0], device=device)).sum().backward()
    assert out.tolist() == [2.0, 2.0, 2.0] and v.grad.item() == 6.0
    with pytest.raises(errors.ShapeError, match="fill"):
        tinynet.fill(tinynet.zeros(2, device=device), tinynet.ones(2, device=device))
    with pytest.raises(RuntimeError):
        torch.fill(torch.zeros(2), torch.ones(2))


def test_empty_strided_and_permuted(device):
    x = tinynet.empty_strided((2, 3), (1, 2), device=device)
    assert x.shape == (2, 3) and x.stride() == torch.empty_strided((2, 3), (1, 2)).stride()
    x.fill_(1.0)
    assert x.sum().item() == 6.0
    assert tinynet.empty_strided((0, 3), (3, 1), device=device).shape == (0, 3)
    for size, order in (((2, 3, 4), (0, 2, 1)), ((2, 3, 4, 5), (0, 2, 3, 1)), ((3,), (0,))):
        y = tinynet.empty_permuted(size, order, device=device)
        assert y.shape == size and y.stride() == torch.empty_permuted(size, order).stride()
    with pytest.raises(errors.ArgumentError, match="permutation"):
        tinynet.empty_permuted((2, 3), (0, 0), device=device)
    with pytest.raises(RuntimeError):
        torch.empty_permuted((2, 3), (0, 0))
    with pytest.raises(errors.ShapeError, match="empty_strided"):
        tinynet.empty_strided((2, 3), (1,), device=device)


def test_frombuffer_shares_memory():
    b = bytearray(numpy.array([1, 2, 3], dtype=numpy.int32).tobytes())
    t = tinynet.frombuffer(b, dtype=tinynet.int32, count=2, offset=4)
    assert t.tolist() == torch.frombuffer(bytearray(b), dtype=torch.int32, count=2, offset=4).tolist() == [2, 3]
    t[0] = 9
    assert b[4] == 9
    ro = tinynet.frombuffer(b"abcd", dtype=tinynet.uint8)
    assert ro.tolist() == [97, 98, 99, 100]
    with pytest.raises(errors.TinynetError):
        ro.add_(1)
    for kwargs in ({"dtype": tinynet.int32}, {"dtype": tinynet.int32, "count": 5}, {"dtype": tinynet.uint8,
                                                                                    "offset": 9}):
        with pytest.raises(errors.ArgumentError, match="frombuffer"):
            tinynet.frombuffer(b"abc" if "count" not in kwargs and "offset" not in kwargs else b"abcdefgh",
                               **kwargs)
    with pytest.raises(errors.ArgumentTypeError, match="buffer protocol"):
        tinynet.frombuffer([1, 2], dtype=tinynet.uint8)


def test_from_file(tmp_path, device):
    path = tmp_path / "values.bin"
    numpy.arange(5, dtype=numpy.float32).tofile(path)
    t = tinynet.from_file(str(path), size=3, dtype=tinynet.float32, device=device)
    assert t.tolist() == torch.from_file(str(path), size=3, dtype=torch.float32).tolist() and t.device.type == \
        tinynet.device(device).type
    assert tinynet.from_file(str(path)).shape == (0,)
    shared = tinynet.from_file(path, shared=True, size=5, dtype=tinynet.float32)
    shared[0] = 7.0
    assert numpy.fromfile(path, dtype=numpy.float32)[0] == 7.0
    private = tinynet.from_file(path, shared=False, size=5, dtype=tinynet.float32)
    private[1] = 8.0
    assert numpy.fromfile(path, dtype=numpy.float32)[1] == 1.0
    with pytest.raises(errors.ArgumentError, match="smaller than the required"):
        tinynet.from_file(str(path), size=10, dtype=tinynet.float32)
    with pytest.raises(RuntimeError):
        torch.from_file(str(path), size=10, dtype=torch.float32)


def test_to_dlpack_round_trip(device):
    x = tinynet.arange(4.0, device=device)
    y = tinynet.from_dlpack(_Capsule(x))
    assert y.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert type(tinynet.to_dlpack(x)).__name__ == "PyCapsule"
    assert torch.from_dlpack(_Capsule(tinynet.arange(3.0))).tolist() == [0.0, 1.0, 2.0]


class _Capsule:
    """An object whose ``__dlpack__`` hands out ``to_dlpack``'s capsule (the protocol's form)."""

    def __init__(self, t):
        self.t = t

    def __dlpack__(self, **kwargs):
        return tinynet.to_dlpack(self.t)

    def __dlpack_device__(self):
        return self.t.__dlpack_device__()
