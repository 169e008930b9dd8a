"""tinynet.save / tinynet.load: npz, no pickle, atomic."""
import os
import threading

import numpy
import pytest

import tinynet
import tinynet.nn as nn
from tinynet.errors import SerializationError


def test_state_dict_roundtrip(tmp_path, device):
    m = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2)).to(device)
    path = tmp_path / "model.npz"
    tinynet.save(m.state_dict(), path)
    loaded = tinynet.load(path, map_location=device)
    assert list(loaded) == list(m.state_dict())
    m2 = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2)).to(device)
    m2.load_state_dict(loaded)
    for k, v in m.state_dict().items():
        assert (m2.state_dict()[k].detach().numpy() == v.detach().numpy()).all()
    with numpy.load(path, allow_pickle=False) as z:  # readable by plain NumPy
        assert "0.weight" in z.files


def test_nested_structures_keep_types(tmp_path):
    obj = {"a": [1, 2.5, "x", None, True], 3: (tinynet.ones(2), numpy.zeros(3)), "n": {"k": 1}}
    tinynet.save(obj, tmp_path / "o.npz")
    back = tinynet.load(tmp_path / "o.npz", map_location="cpu")
    assert back["a"] == [1, 2.5, "x", None, True] and back["n"] == {"k": 1}
    t, arr = back[3]
    assert isinstance(t, tinynet.Tensor) and t.tolist() == [1.0, 1.0]
    assert isinstance(arr, numpy.ndarray) and arr.shape == (3,)


def test_failed_save_leaves_old_file(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.npz"
    tinynet.save({"w": tinynet.ones(3)}, path)
    before = path.read_bytes()

    def boom(*a, **k):
        raise OSError("disk full (simulated)")
    monkeypatch.setattr(numpy, "savez", boom)
    with pytest.raises(OSError, match="simulated"):
        tinynet.save({"w": tinynet.zeros(3)}, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.npz"]  # no temporary file left behind


def test_unsupported_objects_write_nothing(tmp_path):
    with pytest.raises(SerializationError, match="cannot store dict.*pickling it failed.*lock"):
        tinynet.save({"bad": threading.Lock()}, tmp_path / "x.npz")  # neither structure nor picklable
    assert not (tmp_path / "x.npz").exists()


def test_load_never_unpickles(tmp_path):
    path = tmp_path / "evil.npz"
    numpy.savez(path, obj=numpy.array([{"a": 1}], dtype=object))
    with pytest.raises(SerializationError, match="not a readable"):
        tinynet.load(path)


def test_load_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        tinynet.load(tmp_path / "missing.npz")
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip file")
    with pytest.raises(SerializationError):
        tinynet.load(bad)


def test_plain_npz_loads_as_tensors(tmp_path):
    numpy.savez(tmp_path / "p.npz", w=numpy.ones(2))
    out = tinynet.load(tmp_path / "p.npz")
    assert out["w"].tolist() == [1.0, 1.0]
