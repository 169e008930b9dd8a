"""tinynet.load of PyTorch's own checkpoint files (``torch.save``'s zip archives, read without
PyTorch by tinynet/_torch_zip.py): every dtype, views with offsets and strides, Parameters,
nested containers, dtypes/devices/sizes, a model's state_dict giving PyTorch's outputs, an
optimizer's state, map_location, big-endian archives, and the errors for what tinynet cannot or
must not rebuild (whole pickled modules, globals off the allow-list, damaged archives). The files
are written by real PyTorch (CPU) and loaded on every device."""
import argparse
import collections
import io
import zipfile

import numpy
import pytest

import tinynet
from helpers import as_numpy, assert_close, rng
from tinynet import errors, nn
from tinynet.serialization import safe_globals

torch = pytest.importorskip("torch")
R = rng(38)
DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64", "complex128"]


def _saved(obj, tmp_path, name="ckpt.pth"):
    path = tmp_path / name
    torch.save(obj, path)
    return path


def _values(dtype, shape=(3, 4)):
    a = R.standard_normal(shape) * 5
    if dtype == "bool":
        return torch.tensor(a > 0)
    if dtype.startswith("complex"):
        return torch.tensor(a + 1j * a[::-1].copy()).to(getattr(torch, dtype))
    return torch.tensor(a).to(getattr(torch, dtype))


def _host(t):  # a torch tensor as NumPy, bfloat16 through float32
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy()


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_and_layout(tmp_path, device, dtype):
    t = _values(dtype, (4, 6))
    obj = {"plain": t, "transposed": t.t(), "offset": t[1:, 2:], "strided": t[::2, ::3], "scalar": t[1, 1],
           "empty": t[:0], "expanded": t[:1].expand(3, 6)}
    loaded = tinynet.load(_saved(obj, tmp_path), map_location=device)
    assert list(loaded) == list(obj)
    for k, v in obj.items():
        out = loaded[k]
        assert isinstance(out, tinynet.Tensor) and out.device.type == tinynet.device(device).type, k
        assert str(out.dtype) == dtype and tuple(out.shape) == tuple(v.shape), k
        numpy.testing.assert_array_equal(as_numpy(out.float() if dtype == "bfloat16" else out), _host(v), err_msg=k)


def test_a_models_state_dict_gives_pytorchs_outputs(tmp_path, device):
    torch.manual_seed(0)
    ref = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.BatchNorm2d(4), torch.nn.ReLU(), torch.nn.Flatten(),
                              torch.nn.Linear(4 * 6 * 6, 5))
    ref.train()(torch.randn(8, 1, 8, 8))  # running statistics away from their initial values
    ref.eval()
    ours = nn.Sequential(nn.Conv2d(1, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 6 * 6, 5))
    state = tinynet.load(_saved(ref.state_dict(), tmp_path), map_location=device)
    assert isinstance(state, collections.OrderedDict) and list(state) == list(ref.state_dict())
    ours.load_state_dict(state)
    ours.to(device).eval()
    x = R.standard_normal((2, 1, 8, 8)).astype(numpy.float32)
    assert_close(ours(tinynet.tensor(x, device=device)), ref(torch.tensor(x)), rtol=1e-5, atol=1e-6)


def test_parameters_containers_and_the_small_objects(tmp_path, device):
    w = torch.nn.Parameter(torch.randn(2, 3))
    frozen = torch.nn.Parameter(torch.randn(2), requires_grad=False)
    obj = {"w": w, "frozen": frozen, "grad": torch.ones(2, requires_grad=True), "epoch": 7, "name": "run",
           "history": [0.5, (1, "a"), {"nested": torch.arange(3)}], "od": collections.OrderedDict(a=1),
           "dtype": torch.bfloat16, "device": torch.device("cpu"), "size": torch.Size([2, 3]), "none": None,
           "set": {1, 2}}
    out = tinynet.load(_saved(obj, tmp_path), map_location=device)
    assert isinstance(out["w"], nn.Parameter) and out["w"].requires_grad
    assert isinstance(out["frozen"], nn.Parameter) and not out["frozen"].requires_grad
    assert not isinstance(out["grad"], nn.Parameter) and out["grad"].requires_grad
    assert_close(out["w"], w.detach(), rtol=0, atol=0)
    assert (out["epoch"], out["name"], out["history"][:2], out["none"], out["set"]) == (7, "run", [0.5, (1, "a")],
                                                                                         None, {1, 2})
    assert as_numpy(out["history"][2]["nested"]).tolist() == [0, 1, 2]
    assert isinstance(out["od"], collections.OrderedDict)
    assert out["dtype"] == tinynet.bfloat16 and out["device"] == tinynet.device("cpu")
    assert isinstance(out["size"], tinynet.Size) and out["size"] == (2, 3)


def test_an_optimizers_state_dict(tmp_path, device):
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.randn(4, 3)).sum().backward()
    opt.step()
    state = tinynet.load(_saved(opt.state_dict(), tmp_path), map_location=device)
    ref = opt.state_dict()
    assert state["param_groups"] == ref["param_groups"]
    for i, s in ref["state"].items():
        for k, v in s.items():
            assert_close(state["state"][i][k], v, rtol=0, atol=0, what=f"{i}.{k}")


def test_map_location_rules(tmp_path):
    path = _saved({"x": torch.ones(2)}, tmp_path)
    assert tinynet.load(path)["x"].device == tinynet.device("cpu")  # saved on the CPU: back on the CPU
    assert tinynet.load(path, map_location={"cpu": "cpu"})["x"].device == tinynet.device("cpu")
    if not tinynet.cuda.is_available():
        with pytest.raises(errors.DeviceError, match="load"):
            tinynet.load(path, map_location="cuda")  # no GPU here: the typed error (its message names the cause)


@pytest.mark.gpu
def test_a_file_saved_from_the_gpu(tmp_path):
    if not torch.cuda.is_available():
        pytest.skip("needs PyTorch with CUDA to write the file")
    path = _saved({"x": torch.arange(4.0, device="cuda")}, tmp_path)
    assert tinynet.load(path)["x"].device == tinynet.device("cuda:0")
    assert tinynet.load(path, map_location="cpu")["x"].device == tinynet.device("cpu")


def _rewritten(path, change):
    """The archive at ``path`` with ``change(name, data)`` applied to each entry (None drops it)."""
    out = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = change(info.filename, src.read(info.filename))
            if data is not None:
                dst.writestr(info.filename, data)
    out.seek(0)
    return out


def test_big_endian_archive_and_file_objects(tmp_path, device):
    t = torch.tensor([1.5, -2.0, 3.25], dtype=torch.float64)
    path = _saved({"t": t}, tmp_path)

    def swap(name, data):
        if name.endswith("/byteorder"):
            return b"big"
        if "/data/" in name and not name.endswith("serialization_id"):
            return numpy.frombuffer(data, "<f8").astype(">f8").tobytes()
        return data
    out = tinynet.load(_rewritten(path, swap), map_location=device)
    assert as_numpy(out["t"]).tolist() == [1.5, -2.0, 3.25]
    with open(path, "rb") as fh:
        fh.read(3)
        fh.seek(0)
        assert as_numpy(tinynet.load(fh, map_location=device)["t"]).tolist() == [1.5, -2.0, 3.25]


def test_what_cannot_or_must_not_be_rebuilt(tmp_path):
    whole = _saved(torch.nn.Linear(2, 2), tmp_path, "whole.pth")
    with pytest.raises(errors.UnpicklingError, match="torch.nn.modules.linear.Linear.*state_dict"):
        tinynet.load(whole)
    with pytest.raises(errors.SerializationError, match="torch.nn.modules.linear.Linear.*state_dict"):
        tinynet.load(whole, weights_only=False)
    ns = _saved({"args": argparse.Namespace(lr=0.1), "x": torch.ones(1)}, tmp_path, "ns.pth")
    with pytest.raises(errors.UnpicklingError, match="argparse.Namespace"):  # PyTorch's weights_only refuses it too
        tinynet.load(ns)
    with pytest.raises(Exception):
        torch.load(ns)
    assert tinynet.load(ns, weights_only=False)["args"].lr == 0.1
    with safe_globals([argparse.Namespace]):
        assert tinynet.load(ns)["args"].lr == 0.1


def test_damaged_archives(tmp_path):
    path = _saved({"t": torch.ones(3)}, tmp_path)
    no_data = _rewritten(path, lambda name, data: None if "/data/" in name and "serialization" not in name else data)
    with pytest.raises(errors.SerializationError, match="without its entry"):
        tinynet.load(no_data)
    short = _rewritten(path, lambda name, data: data[:4] if "/data/0" in name else data)
    with pytest.raises(errors.SerializationError, match="storage 0 holds 1 values"):
        tinynet.load(short)
    bad_pickle = _rewritten(path, lambda name, data: data[:10] if name.endswith("data.pkl") else data)
    with pytest.raises(errors.SerializationError, match="damaged PyTorch archive"):
        tinynet.load(bad_pickle)
