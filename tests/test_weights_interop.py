"""Weights from other frameworks: safetensors files written by PyTorch (and back), and Keras
weights files in both Keras 3's and the legacy HDF5 layout, built here in Keras' documented
layouts (no TensorFlow needed) and checked against a NumPy NHWC forward pass."""
import io

import numpy
import pytest

import tinynet
import tinynet.nn as nn
from tinynet.errors import SerializationError, StateDictError
from tinynet.nn.utils import load_keras_weights

from conftest import DEVICES

safetensors = pytest.importorskip("safetensors")
h5py = pytest.importorskip("h5py")
R = numpy.random.default_rng(0)


# ---- safetensors ------------------------------------------------------------------------------
@pytest.mark.parametrize("device", DEVICES)
def test_safetensors_from_pytorch_and_back(tmp_path, device):
    torch = pytest.importorskip("torch")
    import safetensors.torch as st_torch
    tm = torch.nn.Sequential(torch.nn.Conv2d(1, 3, 3), torch.nn.BatchNorm2d(3), torch.nn.Flatten(),
                             torch.nn.Linear(3 * 4 * 4, 5))
    st_torch.save_file(tm.state_dict(), tmp_path / "torch.safetensors")
    ours = nn.Sequential(nn.Conv2d(1, 3, 3), nn.BatchNorm2d(3), nn.Flatten(), nn.Linear(3 * 4 * 4, 5)).to(device)
    ours.load_state_dict(tinynet.load(tmp_path / "torch.safetensors", map_location=device))
    for name, value in tm.state_dict().items():
        numpy.testing.assert_array_equal(ours.state_dict()[name].numpy(), value.numpy(), err_msg=name)
    tinynet.save(ours.state_dict(), tmp_path / "ours.safetensors")  # the format from the suffix
    back = st_torch.load_file(tmp_path / "ours.safetensors")
    assert set(back) == set(tm.state_dict())
    for name, value in back.items():
        assert value.dtype == tm.state_dict()[name].dtype, name
        numpy.testing.assert_array_equal(value.numpy(), tm.state_dict()[name].numpy(), err_msg=name)


def test_safetensors_file_objects_bfloat16_and_format_argument(tmp_path):
    state = {"w": tinynet.ones(2, 3, dtype=tinynet.bfloat16), "i": tinynet.tensor([1, 2])}
    buf = io.BytesIO()
    tinynet.save(state, buf, format="safetensors")
    buf.seek(0)
    got = tinynet.load(buf)
    assert got["w"].dtype == tinynet.bfloat16 and got["i"].tolist() == [1, 2]
    tinynet.save(state, tmp_path / "x.bin", format="safetensors")  # any name: load tells by the bytes
    assert tinynet.load(tmp_path / "x.bin")["w"].shape == (2, 3)
    with pytest.raises(tinynet.errors.ArgumentError, match="format must be 'npz' or 'safetensors'"):
        tinynet.save(state, tmp_path / "y", format="pickle")


def test_safetensors_bad_input_and_a_failed_save_keeps_the_old_file(tmp_path):
    path = tmp_path / "m.safetensors"
    tinynet.save({"a": tinynet.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises(SerializationError, match="flat dict of named tensors"):
        tinynet.save([tinynet.ones(2)], path)
    with pytest.raises(SerializationError, match="'lr' is a float"):
        tinynet.save({"a": tinynet.ones(2), "lr": 0.1}, path)
    assert path.read_bytes() == before
    (tmp_path / "cut.safetensors").write_bytes(before[:-3])  # truncated
    with pytest.raises(SerializationError, match="not a readable safetensors file"):
        tinynet.load(tmp_path / "cut.safetensors")


# ---- Keras ------------------------------------------------------------------------------------
def _model(bn=True):
    layers = [nn.Conv2d(2, 3, 3)]
    if bn:
        layers.append(nn.BatchNorm2d(3, eps=1e-3))  # Keras' default epsilon
    layers += [nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(3 * 3 * 3, 4), nn.ReLU(), nn.Linear(4, 2)]
    return nn.Sequential(*layers).eval()


def _keras_arrays(bn=True):
    """Keras layouts: Conv2D kernel HWIO, Dense kernel (in, out) on NHWC-flattened features."""
    out = [("conv2d", [R.standard_normal((3, 3, 2, 3)), R.standard_normal(3)])]
    if bn:
        out.append(("batch_normalization", [R.uniform(0.5, 2, 3), R.standard_normal(3), R.standard_normal(3),
                                            R.uniform(0.5, 2, 3)]))
    out += [("dense", [R.standard_normal((27, 4)), R.standard_normal(4)]),
            ("dense_1", [R.standard_normal((4, 2)), R.standard_normal(2)])]
    return [(n, [a.astype(numpy.float32) for a in arrays]) for n, arrays in out]


def _nhwc_forward(x, layers):
    """The Keras network in NumPy, NHWC throughout: conv (valid), BN, ReLU, 2x2 max-pool,
    flatten in NHWC order, dense, ReLU, dense."""
    d = dict(layers)
    k, b = d["conv2d"]
    n, h, w, _ = x.shape
    y = numpy.zeros((n, h - 2, w - 2, k.shape[3]))
    for i in range(h - 2):
        for j in range(w - 2):
            y[:, i, j, :] = numpy.einsum("nabc,abco->no", x[:, i:i + 3, j:j + 3, :], k) + b
    if "batch_normalization" in d:
        g, beta, mean, var = d["batch_normalization"]
        y = (y - mean) / numpy.sqrt(var + 1e-3) * g + beta
    y = numpy.maximum(y, 0)
    y = y.reshape(n, 3, 2, 3, 2, -1).max(axis=(2, 4))
    y = y.reshape(n, -1)
    k1, b1 = d["dense"]
    k2, b2 = d["dense_1"]
    return numpy.maximum(y @ k1 + b1, 0) @ k2 + b2


def _write(path, layers, layout):
    with h5py.File(path, "w") as f:
        if layout == "keras3":  # model.save_weights("m.weights.h5"): layers/<name>/vars/<i>
            f.create_group("vars")
            for name, arrays in layers:
                v = f.create_group(f"layers/{name}/vars")
                for i, a in enumerate(arrays):
                    v.create_dataset(str(i), data=a)
        else:  # legacy Keras 2 HDF5: ordered layer_names, each layer's weight_names
            f.attrs["layer_names"] = [n.encode() for n, _ in layers] + [b"flatten"]
            f.create_group("flatten").attrs["weight_names"] = []
            for name, arrays in layers:
                g = f.create_group(name)
                kinds = ["gamma", "beta", "moving_mean", "moving_variance"] if len(arrays) == 4 else ["kernel", "bias"]
                g.attrs["weight_names"] = [f"{name}/{k}:0".encode() for k in kinds]
                for k, a in zip(kinds, arrays):
                    g.create_dataset(f"{name}/{k}:0", data=a)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", ["keras3", "legacy"])
@pytest.mark.parametrize("bn", [True, False], ids=["bn", "no_bn"])
def test_keras_weights_give_the_keras_outputs(tmp_path, device, layout, bn):
    layers = _keras_arrays(bn)
    path = tmp_path / "model.weights.h5"
    _write(path, layers, layout)
    model = _model(bn).to(device)
    pairs = load_keras_weights(model, path)
    assert [k for _, k in pairs] == [n for n, _ in layers]
    x = R.standard_normal((4, 8, 8, 2)).astype(numpy.float32)  # NHWC, as Keras takes it
    want = _nhwc_forward(x.astype(numpy.float64), layers)
    got = model(tinynet.tensor(x.transpose(0, 3, 1, 2).copy(), device=device)).detach().numpy()
    numpy.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * numpy.abs(want).max())  # float32 sums
    # without the NHWC -> NCHW permutation of the first dense layer the outputs differ
    plain = dict(layers)["dense"][0].T
    assert not numpy.allclose(model[5 if bn else 4].weight.detach().numpy(), plain)


def test_keras_problems_are_all_reported_and_nothing_is_loaded(tmp_path):
    layers = _keras_arrays(True)
    layers[0] = ("conv2d", [layers[0][1][0][:, :, :, :2], layers[0][1][1][:2]])  # 2 filters, the model has 3
    layers.append(("dense_2", [numpy.ones((2, 2), numpy.float32), numpy.ones(2, numpy.float32)]))  # extra
    path = tmp_path / "bad.weights.h5"
    _write(path, layers, "keras3")
    model = _model(True)
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    with pytest.raises(StateDictError) as info:
        load_keras_weights(model, path)
    msg = str(info.value)
    assert "0.weight: expected shape (3, 2, 3, 3)" in msg and "0.bias: expected shape (3,)" in msg
    assert "'dense_2' has no tinynet module to go to" in msg
    for k, v in model.state_dict().items():
        numpy.testing.assert_array_equal(v.numpy(), before[k], err_msg=k)


def test_keras_mapping_feature_shape_and_foreign_files(tmp_path):
    layers = _keras_arrays(False)
    path = tmp_path / "named.weights.h5"
    renamed = [("features", layers[0][1]), ("z_hidden", layers[1][1]), ("a_logits", layers[2][1])]
    _write(path, renamed, "keras3")
    model = _model(False)
    # a Keras 3 file keeps no order: custom names that sort the other way pair the dense layers
    # wrongly, which the shapes reveal (and nothing is loaded)
    wrong = r"6.weight: expected shape \(2, 4\) in tinynet's layout, Keras layer 'z_hidden' gives \(4, 27\)"
    with pytest.raises(StateDictError, match=wrong):
        load_keras_weights(model, path)
    with pytest.raises(StateDictError, match=r"feature_shape \(2, 3, 3\) has 18 values"):
        load_keras_weights(model, path, mapping={"0": "features", "4": "z_hidden", "6": "a_logits"},
                           feature_shape=(2, 3, 3))
    pairs = load_keras_weights(model, path, mapping={"0": "features", "4": "z_hidden", "6": "a_logits"},
                               feature_shape=(3, 3, 3))
    assert pairs == [("0", "features"), ("4", "z_hidden"), ("6", "a_logits")]
    x = R.standard_normal((2, 8, 8, 2)).astype(numpy.float32)
    want = _nhwc_forward(x.astype(numpy.float64), layers)
    numpy.testing.assert_allclose(model(tinynet.tensor(x.transpose(0, 3, 1, 2).copy())).detach().numpy(), want,
                                  rtol=1e-5, atol=1e-5 * numpy.abs(want).max())
    (tmp_path / "junk.h5").write_bytes(b"not an hdf5 file at all")
    with pytest.raises(SerializationError, match="not a readable Keras HDF5 file"):
        load_keras_weights(model, tmp_path / "junk.h5")
    with h5py.File(tmp_path / "empty.h5", "w"):
        pass
    with pytest.raises(SerializationError, match="is it a Keras weights file"):
        load_keras_weights(model, tmp_path / "empty.h5")
    with pytest.raises(tinynet.errors.ArgumentError, match="feature_shape must be"):
        load_keras_weights(model, path, feature_shape=(3, 3))
