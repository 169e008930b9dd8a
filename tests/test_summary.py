"""tinynet.utils.summary: the figures equal torchinfo's for the same PyTorch models (the
examples' own model code run once with tinynet and once with torch), depth handling,
input_data vs input_size, and the error on an input that does not fit."""
import os
import types

import numpy
import pytest

import tinynet
import tinynet.nn as nn
from tinynet.errors import ArgumentError, ArgumentTypeError, ShapeError
from tinynet.utils import ModelStatistics, summary

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
TORCH_IMPORTS = {"import tinynet as torch": "import torch", "import tinynet.nn as nn": "import torch.nn as nn",
                 "import tinynet.nn.functional as F": "import torch.nn.functional as F"}

# two small models written once, run with either framework (``nn`` is tinynet's or torch's)
MODELS = '''
import tinynet.nn as nn


class Tagger(nn.Module):
    """Embedding -> 2-layer LSTM -> Linear, batch first."""

    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(50, 16)
        self.lstm = nn.LSTM(16, 32, num_layers=2, batch_first=True)
        self.head = nn.Linear(32, 5)

    def forward(self, x):
        out, _ = self.lstm(self.emb(x))
        return self.head(out)


class Encoder(nn.Module):
    """Linear -> 2 post-norm TransformerEncoderLayers (sequence first) -> Linear."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(8, 32)
        layer = nn.TransformerEncoderLayer(32, 4, dim_feedforward=64, dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
        self.head = nn.Linear(32, 3)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x)))
'''


def _module(source, name, framework):
    if framework == "torch":
        for ours, theirs in TORCH_IMPORTS.items():
            source = source.replace(ours, theirs)
    mod = types.ModuleType(f"{name}_{framework}")
    mod.__file__ = os.path.join(ROOT, "examples", f"{name}.py")
    exec(compile(source, mod.__file__, "exec"), mod.__dict__)
    return mod


def _example(name, framework):
    with open(os.path.join(ROOT, "examples", f"{name}.py"), encoding="utf-8") as f:
        return _module(f.read(), name, framework)


CASES = {  # name -> (make the model from a module, the torchinfo arguments, the input's dtype)
    "convnet": (lambda fw: _example("mnist_convnet", fw).Net(), (64, 1, 28, 28), "float"),
    "mlp": (lambda fw: _example("mnist_mlp", fw).MLP(), (64, 1, 28, 28), "float"),
    "char_gpt": (lambda fw: _example("char_transformer", fw).CharGPT(65, 32, n_layer=2, n_head=4, n_embd=64),
                 (8, 32), "long"),
    "lstm": (lambda fw: _module(MODELS, "models", fw).Tagger(), (4, 12), "long"),
    "transformer": (lambda fw: _module(MODELS, "models", fw).Encoder(), (10, 4, 8), "float"),
}


def _rows(layers):
    return [(r.class_name, r.depth, r.depth_index, list(r.output_size), r.num_params, r.macs, r.is_leaf_layer)
            for r in layers]


@pytest.mark.parametrize("name", list(CASES))
def test_figures_equal_torchinfo(name, cpu_default_device):
    torch = pytest.importorskip("torch")
    torchinfo = pytest.importorskip("torchinfo")
    make, size, kind = CASES[name]
    theirs = torchinfo.summary(make("torch"), input_size=size, verbose=0, depth=10,
                               dtypes=[torch.long if kind == "long" else torch.float])
    ours = summary(make("tinynet"), input_size=size, verbose=0, depth=10,
                   dtypes=[tinynet.int64 if kind == "long" else tinynet.float32])
    assert (ours.total_params, ours.trainable_params) == (theirs.total_params, theirs.trainable_params)
    if name == "transformer":
        # tinynet's MultiheadAttention calls its out_proj, PyTorch's does not: here MultiheadAttention
        # is one leaf layer whose mult-adds and output count; torchinfo lists it as a container whose
        # figures stay out of the totals (and its in_proj out of the params size)
        mha = [r for r in theirs.summary_list if r.class_name == "MultiheadAttention"]
        assert len(mha) == 2 and all(r.macs > 0 and not r.is_leaf_layer for r in mha)
        assert ours.total_mult_adds == theirs.total_mult_adds + sum(r.macs for r in mha)
        assert ours.total_output_bytes == theirs.total_output_bytes + sum(2 * r.output_bytes for r in mha)
        assert ours.total_param_bytes == 4 * ours.total_params > theirs.total_param_bytes
        for r in mha:
            r.is_leaf_layer = True
    else:
        assert ours.total_mult_adds == theirs.total_mult_adds
        assert ours.total_output_bytes == theirs.total_output_bytes
        assert ours.total_param_bytes == theirs.total_param_bytes
    assert _rows(ours.summary_list) == _rows(theirs.summary_list)
    assert abs(ours.total_input - theirs.total_input) < 200  # torchinfo adds the storage object's own bytes


def test_reference_convnet_figures(cpu_default_device):
    """The figures of the main job's model, written out (torchinfo 1.8 prints the same)."""
    stats = summary(_example("mnist_convnet", "tinynet").Net(), input_size=(64, 1, 28, 28), verbose=0)
    assert isinstance(stats, ModelStatistics)
    assert (stats.total_params, stats.trainable_params, stats.non_trainable_params) == (21840, 21840, 0)
    assert stats.total_mult_adds == 31_206_400
    assert (stats.total_input, stats.total_output_bytes, stats.total_param_bytes) == (200_704, 3_635_200, 87_360)
    text = str(stats)
    for line in ("├─Conv2d: 1-1", "[64, 10, 24, 24]", "16,050", "Total params: 21,840", "Total mult-adds (M): 31.21",
                 "Input size (MB): 0.20", "Forward/backward pass size (MB): 3.64", "Params size (MB): 0.09",
                 "Estimated Total Size (MB): 3.92"):
        assert line in text, line


def _nested():
    return nn.Sequential(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Sequential(nn.Linear(8, 8), nn.Tanh())),
                         nn.Linear(8, 2))


def test_depth_cuts_the_tree_and_sums_the_cut_rows(cpu_default_device):
    model = _nested()
    full = summary(model, input_size=(3, 4), depth=10, col_names=("output_size", "num_params", "mult_adds"),
                   verbose=0)
    assert [(r.class_name, r.depth) for r in full.summary_list] == [
        ("Sequential", 0), ("Sequential", 1), ("Linear", 2), ("ReLU", 2), ("Sequential", 2), ("Linear", 3),
        ("Tanh", 3), ("Linear", 1)]
    text = str(full)
    assert "│    │    └─Linear: 3-1" in text and "Tanh: 3-2" in text
    cut = str(summary(model, input_size=(3, 4), depth=1, col_names=("num_params", "mult_adds"), verbose=0))
    assert "Linear: 2-1" not in cut
    line = next(x for x in cut.splitlines() if "Sequential: 1-1" in x)
    assert "112" in line and "336" in line  # 40 + 72 params; 3 * 40 + 3 * 72 mult-adds of the leaves below
    top = summary(model, input_size=(3, 4), depth=0, verbose=0)
    assert [r for r in str(top).splitlines() if "─" in r and ":" in r] == []
    assert full.total_params == top.total_params == 40 + 72 + 18
    with pytest.raises(ArgumentError, match="depth"):
        summary(model, input_size=(3, 4), depth=-1, verbose=0)


class _Two(nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = nn.Linear(3, 5), nn.Linear(4, 5)

    def forward(self, x, y):
        return self.a(x) + self.b(y)


def test_input_data_and_input_size_agree(cpu_default_device):
    model = _example("mnist_mlp", "tinynet").MLP()
    by_size = summary(model, input_size=(5, 1, 28, 28), verbose=0)
    x = tinynet.rand(5, 1, 28, 28)
    for data in (x, [x], (x,), x.numpy()):
        by_data = summary(model, input_data=data, verbose=0)
        assert _rows(by_data.summary_list) == _rows(by_size.summary_list)
        assert by_data.total_input == by_size.total_input == 5 * 784 * 4
    kw = summary(model, input_data={"x": x}, verbose=0)
    assert kw.total_mult_adds == by_size.total_mult_adds and kw.input_size == {"x": (5, 1, 28, 28)}
    several = summary(_Two(), input_size=[(6, 3), (6, 4)], verbose=0)
    assert several.summary_list[0].output_size == [6, 5] and several.input_size == [(6, 3), (6, 4)]
    assert several.total_mult_adds == 6 * (3 * 5 + 5) + 6 * (4 * 5 + 5)
    plain = summary(model, verbose=0)  # no input: parameters only
    assert plain.total_params == 203_530 and plain.total_mult_adds == 0 and "Output Shape" not in str(plain)
    with pytest.raises(ArgumentError, match="not both"):
        summary(model, input_size=(1, 784), input_data=x, verbose=0)
    with pytest.raises(ArgumentError, match="positive"):
        summary(model, input_size=(0, 784), verbose=0)
    with pytest.raises(ArgumentTypeError, match="input_size"):
        summary(model, input_size="1x784", verbose=0)
    with pytest.raises(ArgumentError, match="output_size"):
        summary(model, col_names=("output_size",), verbose=0)
    with pytest.raises(ArgumentError, match="unknown column"):
        summary(model, input_size=(1, 784), col_names=("flops",), verbose=0)


def test_summary_has_no_side_effects(cpu_default_device):
    model = _example("mnist_convnet", "tinynet").Net()
    model.fc1.train(False)  # a mixed mode survives
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    state = tinynet.get_rng_state()
    summary(model, input_size=(2, 1, 28, 28), mode="train", verbose=0)
    assert tinynet.get_rng_state().numpy().tobytes() == state.numpy().tobytes()
    assert model.training and not model.fc1.training and model.conv1.training
    assert not model._forward_hooks and not model.conv1._forward_pre_hooks
    for k, v in model.state_dict().items():
        numpy.testing.assert_array_equal(v.numpy(), before[k])


def test_shared_modules_and_parameters_count_once(cpu_default_device):
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)
            self.block = nn.Linear(4, 4)
            self.out = nn.Linear(4, 10, bias=False)
            self.out.weight = self.emb.weight

        def forward(self, x):
            return self.out(self.block(self.block(self.emb(x))))

    stats = summary(Tied(), input_data=tinynet.tensor([[1, 2, 3]]), verbose=0)
    assert stats.total_params == 40 + 20
    rows = [(r.class_name, r.is_recursive) for r in stats.summary_list]
    assert rows == [("Tied", False), ("Embedding", False), ("Linear", False), ("Linear", True), ("Linear", False)]
    assert "(recursive)" in str(stats)
    assert stats.total_mult_adds == 1 * 40 + 2 * 1 * 20 + 1 * 40  # the twice-called block counts twice


def test_input_that_does_not_fit_names_the_failing_layer(cpu_default_device, capsys):
    net = _example("mnist_convnet", "tinynet").Net()
    with pytest.raises(ShapeError, match=r"failed in the model's own forward \(Net\), after conv2_drop "
                                         r"\(Dropout2d\) returned \[1, 20, 10, 10\]: view") as info:
        summary(net, input_size=(1, 1, 32, 32))
    assert isinstance(info.value.__cause__, ShapeError)
    mlp = _example("mnist_mlp", "tinynet").MLP()
    with pytest.raises(ShapeError, match=r"failed in fc1 \(Linear, depth 1\)") as info:
        summary(mlp, input_size=(2, 1, 20, 20))
    assert "784" in str(info.value)
    seq = nn.Sequential(nn.Linear(4, 8), nn.Sequential(nn.ReLU(), nn.Linear(5, 2)))
    with pytest.raises(ShapeError, match=r"failed in 1 \(Linear, depth 2\), after 0 \(ReLU\) returned \[3, 8\]"):
        summary(seq, input_size=(3, 4))
    assert capsys.readouterr().out == ""  # nothing printed for a failed summary
    assert not seq[0]._forward_hooks and seq.training  # hooks removed, mode restored


def test_a_model_without_parameters(cpu_default_device):
    stats = summary(nn.ReLU(), input_size=(2, 3), verbose=0)
    assert [(r.class_name, r.output_size) for r in stats.summary_list] == [("ReLU", [2, 3])]
    assert (stats.total_params, stats.total_mult_adds, stats.total_output_bytes) == (0, 0, 0)
