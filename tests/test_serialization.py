"""tinynet.save / tinynet.load: npz for state dicts, pickled objects behind a weights_only load, atomic."""
import os
import pickle
import sys
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


# ---- pickled objects (whole modules, optimizers) and the weights_only load ------------------------
class _Payload:
    """Unpickling it runs ``open(path, "w")``: the file appears only if the load ran the file's code."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_whole_module_round_trips(tmp_path, device):
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.LSTM(4, 5)).to(device)
    tinynet.save(m, tmp_path / "m.pt")
    with tinynet.serialization.safe_globals([nn.Sequential, nn.Linear, nn.ReLU, nn.LSTM]):
        back = tinynet.load(tmp_path / "m.pt", map_location=device)
    assert type(back) is nn.Sequential and type(back[0].weight) is nn.Parameter
    for (k, v), (k2, v2) in zip(m.state_dict().items(), back.state_dict().items()):
        assert k == k2 and v.device == v2.device and (v.detach().numpy() == v2.detach().numpy()).all()
    with numpy.load(tmp_path / "m.pt", allow_pickle=False) as z:  # the weights sit outside the pickle stream
        assert "__tinynet_pickle__" in z.files and z["__tinynet_pickle__"].size < 4000


def test_tied_weights_stay_tied_and_an_optimizer_round_trips(tmp_path):
    m = nn.Sequential(nn.Embedding(5, 4), nn.Linear(4, 5))
    m[1].weight = m[0].weight
    opt = tinynet.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    m(tinynet.tensor([1, 2])).sum().backward()
    opt.step()
    tinynet.save({"model": m, "opt": opt}, tmp_path / "ckpt.pt")
    back = tinynet.load(tmp_path / "ckpt.pt", weights_only=False)
    assert back["model"][1].weight is back["model"][0].weight
    assert isinstance(back["opt"], tinynet.optim.SGD) and back["opt"].param_groups[0]["momentum"] == 0.9


def test_weights_only_refuses_foreign_globals_and_names_the_opt_ins(tmp_path):
    tinynet.save(nn.Linear(2, 2), tmp_path / "lin.pt")
    with pytest.raises(tinynet.errors.UnpicklingError) as err:
        tinynet.load(tmp_path / "lin.pt")
    msg = str(err.value)
    assert "tinynet.nn.modules.linear.Linear" in msg and "weights_only=False" in msg
    assert "add_safe_globals([Linear])" in msg and "safe_globals([Linear])" in msg
    assert isinstance(err.value, pickle.UnpicklingError) and isinstance(err.value, SerializationError)
    tinynet.serialization.add_safe_globals([nn.Linear])
    try:
        assert isinstance(tinynet.load(tmp_path / "lin.pt"), nn.Linear)
        assert nn.Linear in tinynet.serialization.get_safe_globals()
    finally:
        tinynet.serialization.clear_safe_globals()
    with pytest.raises(tinynet.errors.UnpicklingError):
        tinynet.load(tmp_path / "lin.pt")
    assert isinstance(tinynet.load(tmp_path / "lin.pt", weights_only=False), nn.Linear)


def test_a_file_with_code_in_it_runs_nothing_unless_weights_only_is_false(tmp_path):
    marker = tmp_path / "marker"
    tinynet.save({"w": tinynet.ones(2), "payload": _Payload(str(marker))}, tmp_path / "evil.pt")
    assert not marker.exists()
    for kwargs in ({}, {"weights_only": True}, {"map_location": "cpu"}):
        with pytest.raises(tinynet.errors.UnpicklingError, match=r"the global _?io\.open, which is not on"):
            tinynet.load(tmp_path / "evil.pt", **kwargs)
        assert not marker.exists()
    with tinynet.serialization.safe_globals([nn.Linear]):  # other allowances do not let it through
        with pytest.raises(tinynet.errors.UnpicklingError):
            tinynet.load(tmp_path / "evil.pt")
    assert not marker.exists()
    tinynet.load(tmp_path / "evil.pt", weights_only=False)  # the trusted path runs it, as pickle does
    assert marker.exists()


def test_state_dicts_keep_the_json_format_and_plain_objects_pickle(tmp_path):
    tinynet.save({"w": tinynet.ones(2)}, tmp_path / "sd.npz")
    with numpy.load(tmp_path / "sd.npz", allow_pickle=False) as z:
        assert "__tinynet_pickle__" not in z.files and "w" in z.files
    obj = {(1, 2): {3.5: [tinynet.ones(2), frozenset({1})]}, "s": {1, 2}}  # not JSON-shaped: pickled
    tinynet.save(obj, tmp_path / "o.pt")
    back = tinynet.load(tmp_path / "o.pt")  # only allowed globals: set, frozenset, tensors
    assert back["s"] == {1, 2} and back[(1, 2)][3.5][1] == frozenset({1})
    assert back[(1, 2)][3.5][0].tolist() == [1.0, 1.0]


def test_a_failed_pickled_save_keeps_the_old_file(tmp_path):
    path = tmp_path / "ckpt.pt"
    tinynet.save(nn.Linear(2, 2), path)
    before = path.read_bytes()
    with pytest.raises(SerializationError, match="(?i)pickling it failed.*can.t pickle"):
        tinynet.save({"model": nn.Linear(2, 2), "hook": lambda: 0}, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.pt"]


def test_load_arguments_as_pytorch(tmp_path):
    tinynet.save({"w": tinynet.ones(2)}, tmp_path / "a.npz")
    assert tinynet.load(tmp_path / "a.npz", "cpu", pickle, weights_only=True)["w"].tolist() == [1.0, 1.0]
    with pytest.raises(tinynet.errors.ArgumentError, match="mmap"):
        tinynet.load(tmp_path / "a.npz", mmap=True)
    with pytest.raises(tinynet.errors.ArgumentTypeError, match="weights_only"):
        tinynet.load(tmp_path / "a.npz", weights_only="yes")
    with pytest.raises(tinynet.errors.ArgumentError, match="pickle_protocol"):
        tinynet.save(nn.Linear(1, 1), tmp_path / "b.pt", pickle_protocol=1)


def test_tensors_load_onto_the_device_they_were_saved_from(tmp_path, device):
    """PyTorch's map_location=None: a model saved from the GPU by a program whose default device
    is the CPU (the compat runner's) comes back on the GPU, whole module and state dict alike."""
    m = nn.Sequential(nn.Embedding(5, 3), nn.Linear(3, 2)).to(device)
    old = tinynet.get_default_device()
    tinynet.set_default_device("cpu")
    try:
        tinynet.save(m, tmp_path / "m.pt")
        tinynet.save({"sd": m.state_dict(), "host": tinynet.ones(2, device="cpu")}, tmp_path / "sd.npz")
        with tinynet.serialization.safe_globals([nn.Sequential, nn.Embedding, nn.Linear]):
            back = tinynet.load(tmp_path / "m.pt")
            assert back[0].weight.device == m[0].weight.device and back[1].bias.device == m[1].bias.device
            assert tinynet.load(tmp_path / "m.pt", map_location="cpu")[0].weight.device == tinynet.device("cpu")
        sd = tinynet.load(tmp_path / "sd.npz")
        assert {v.device for v in sd["sd"].values()} == {m[0].weight.device}
        assert sd["host"].device == tinynet.device("cpu")  # each tensor its own device
        assert (sd["sd"]["1.weight"].cpu().numpy() == m[1].weight.detach().cpu().numpy()).all()
        mapped = tinynet.load(tmp_path / "sd.npz", map_location={str(m[0].weight.device): "cpu"})
        assert {v.device for v in mapped["sd"].values()} == {tinynet.device("cpu")}
    finally:
        tinynet.set_default_device(old)


class _SavedOnGpu:
    """Pickles as a tensor that a GPU machine saved (tinynet.tensor._rebuild with "cuda:0")."""

    def __reduce__(self):
        return (sys.modules["tinynet.tensor"]._rebuild, (numpy.arange(3, dtype=numpy.float32), "cuda:0", False))


@pytest.mark.skipif(tinynet.cuda.is_available(), reason="the file's GPU exists on this machine")
def test_a_gpu_file_on_a_machine_without_gpu_needs_map_location(tmp_path):
    tinynet.save({"w": _SavedOnGpu()}, tmp_path / "pickled.pt")
    tinynet.save({"w": tinynet.ones(3)}, tmp_path / "plain.npz")
    with numpy.load(tmp_path / "plain.npz", allow_pickle=False) as z:  # the structure entry says cuda:0
        entries = {k: z[k] for k in z.files}
    meta = bytes(entries["__tinynet__"]).decode().replace('"device": "cpu"', '"device": "cuda:0"')
    entries["__tinynet__"] = numpy.frombuffer(meta.encode(), dtype=numpy.uint8)
    numpy.savez(tmp_path / "structured.npz", **entries)
    for name in ("pickled.pt", "structured.npz"):
        with pytest.raises(tinynet.errors.DeviceError, match="map_location='cpu'"):
            tinynet.load(tmp_path / name)
        for where in ("cpu", {"cuda:0": "cpu"}, tinynet.device("cpu")):
            w = tinynet.load(tmp_path / name, map_location=where)["w"]
            assert w.device == tinynet.device("cpu") and w.shape == (3,)
    with pytest.raises(tinynet.errors.ArgumentTypeError, match="map_location"):
        tinynet.load(tmp_path / "plain.npz", map_location=lambda storage, loc: storage)
