"""tinynet.onnx.export: the reference convnet, the reference MLP and the char transformer,
exported, checked by onnx.checker and run in onnxruntime against tinynet's outputs (and the
PyTorch twins of the reference nets with the same weights) within 1e-5 in float32."""
import importlib.util
import io
import os
import sys

import numpy
import pytest

import tinynet
from helpers import torch
from tinynet import errors

onnx = pytest.importorskip("onnx", reason="onnx is not installed (pip install 'tinynet[onnx]')")
ort = pytest.importorskip("onnxruntime", reason="onnxruntime is not installed (pip install 'tinynet[onnx]')")

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import models  # noqa: E402  (the reference nets, for tinynet and PyTorch)


def _char_transformer():
    spec = importlib.util.spec_from_file_location("char_transformer", os.path.join(ROOT, "examples",
                                                                                   "char_transformer.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _session(proto):
    onnx.checker.check_model(proto, full_check=True)
    return ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])


def _host(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("name", ["convnet", "mlp"])
def test_reference_nets_match_tinynet_and_torch(name, device, tmp_path):
    tinynet.manual_seed(0)
    model = models.tinynet_model(name).to(device)
    x = tinynet.randn(4, 1, 28, 28, device=device)
    path = tmp_path / f"{name}.onnx"
    tinynet.onnx.export(model, (x,), str(path), input_names=["image"], output_names=["log_probs"],
                        dynamic_axes={"image": {0: "batch"}, "log_probs": {0: "batch"}})
    assert model.training  # put back in training mode after the eval-mode trace
    proto = onnx.load(str(path))
    sess = _session(proto)
    assert [i.name for i in sess.get_inputs()] == ["image"] and [o.name for o in sess.get_outputs()] == ["log_probs"]
    assert {"fc1.weight", "fc1.bias", "fc2.weight"} <= {i.name for i in proto.graph.initializer}
    ops = {n.op_type for n in proto.graph.node}
    assert {"Gemm", "Relu", "LogSoftmax"} <= ops and ("Conv" in ops) == (name == "convnet")
    twin = models.reference_model(torch, name)
    twin.load_state_dict({k: torch.tensor(_host(v)) for k, v in model.state_dict().items()})
    twin.eval()
    model.eval()
    for batch in (4, 7):  # the traced batch and another (the batch axis is dynamic)
        xb = tinynet.randn(batch, 1, 28, 28, device=device)
        (got,) = sess.run(None, {"image": _host(xb)})
        with tinynet.no_grad():
            want = _host(model(xb))
        numpy.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        with torch.no_grad():
            numpy.testing.assert_allclose(got, twin(torch.tensor(_host(xb))).numpy(), rtol=1e-5, atol=1e-5)


def test_char_transformer_runs_in_onnxruntime(device):
    ct = _char_transformer()
    tinynet.manual_seed(0)
    model = ct.CharGPT(vocab_size=40, block_size=16, n_layer=2, n_head=4, n_embd=32, dropout=0.1).to(device)
    idx = tinynet.randint(0, 40, (2, 16), device=device)
    buf = io.BytesIO()
    proto = tinynet.onnx.export(model, (idx,), buf, input_names=["idx"], output_names=["logits"],
                                dynamic_axes={"idx": [0], "logits": [0]}, opset_version=17)
    assert buf.getvalue() == proto.SerializeToString()
    sess = _session(proto)
    ops = [n.op_type for n in proto.graph.node]
    assert {"Gather", "LayerNormalization", "Softmax", "MatMul", "Erf", "Split"} <= set(ops)
    model.eval()
    for batch in (2, 3):
        x = tinynet.randint(0, 40, (batch, 16), device=device)
        (got,) = sess.run(None, {"idx": _host(x)})
        with tinynet.no_grad():
            logits, loss = model(x)
        assert loss is None and got.shape == (batch, 16, 40)
        numpy.testing.assert_allclose(got, _host(logits), rtol=1e-5, atol=1e-5)
    if onnx.defs.onnx_opset_version() >= 20:  # one Gelu node from opset 20
        proto20 = tinynet.onnx.export(model, (idx,), None, opset_version=20)
        assert "Gelu" in {n.op_type for n in proto20.graph.node}
        (got,) = _session(proto20).run(None, {"idx": _host(idx)})
        with tinynet.no_grad():
            numpy.testing.assert_allclose(got, _host(model(idx)[0]), rtol=1e-5, atol=1e-5)


def test_attention_with_a_mask_and_small_ops(device):
    class Net(tinynet.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = tinynet.nn.Linear(8, 8)
            self.ln = tinynet.nn.LayerNorm(8)

        def forward(self, x, mask):
            h = self.ln(self.lin(x)).view(2, 3, 2, 4).permute(0, 2, 1, 3)
            y = tinynet.nn.functional.scaled_dot_product_attention(h, h, h, attn_mask=mask)
            y = tinynet.cat([y, -y * 2.0 + 1.0], dim=-1).sigmoid()
            return (tinynet.nn.functional.softmax(y.tanh(), dim=-1), y / 3.0,
                    tinynet.nn.functional.gelu(y - 0.5, approximate="tanh"))

    tinynet.manual_seed(1)
    net = Net().to(device)
    x = tinynet.randn(2, 3, 8, device=device)
    mask = tinynet.tensor(numpy.tril(numpy.ones((3, 3), bool)) | numpy.eye(3, k=1, dtype=bool), device=device)
    proto = tinynet.onnx.export(net, (x, mask), None)
    sess = _session(proto)
    assert [i.name for i in sess.get_inputs()] == ["x", "mask"]  # forward's argument names
    got = sess.run(None, {"x": _host(x), "mask": _host(mask)})
    with tinynet.no_grad():
        want = net(x, mask)
    for g, w in zip(got, want):
        numpy.testing.assert_allclose(g, _host(w), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("opset", [17, 18])
def test_elementwise_ops_and_reductions(opset, device):
    class Net(tinynet.nn.Module):
        def forward(self, x):
            F = tinynet.nn.functional
            y = x.abs().sqrt().exp().log() - F.leaky_relu(x, 0.2) + x ** 2.0 + x.matmul(x.mT).sum() * 0.5
            y = y + x.mean(1, keepdim=True)
            return F.relu(y.to(tinynet.float64)).to(tinynet.float32), y.sum(), y.mean((0, 1)), y.sum(0)

    x = tinynet.randn(3, 4, device=device)
    proto = tinynet.onnx.export(Net(), (x,), None, opset_version=opset)
    assert {"ReduceSum", "ReduceMean", "LeakyRelu", "Cast", "Pow"} <= {n.op_type for n in proto.graph.node}
    got = _session(proto).run(None, {"x": _host(x)})
    for g, w in zip(got, Net()(x)):
        numpy.testing.assert_allclose(g, _host(w), rtol=1e-5, atol=1e-5)


def test_unsupported_op_and_bad_arguments(device):
    class Cum(tinynet.nn.Module):
        def forward(self, x):
            return x.cumsum(1)

    x = tinynet.randn(2, 3, device=device)
    with pytest.raises(errors.UnsupportedOperatorError, match=r"onnx.export: the op \w+ \('cumsum'\)"):
        tinynet.onnx.export(Cum(), (x,), None)
    mlp = models.tinynet_model("mlp").to(device)
    img = tinynet.randn(1, 1, 28, 28, device=device)
    with pytest.raises(errors.OnnxExportError, match="opset_version must be an int from 17"):
        tinynet.onnx.export(mlp, (img,), None, opset_version=11)
    with pytest.raises(errors.ArgumentError, match="dynamic_axes names 'nope'"):
        tinynet.onnx.export(mlp, (img,), None, dynamic_axes={"nope": [0]})
    with pytest.raises(errors.ArgumentTypeError, match="unexpected keyword argument 'bogus'"):
        tinynet.onnx.export(mlp, (img,), None, bogus=1)
    with pytest.raises(errors.ArgumentError, match="dynamic_shapes"):
        tinynet.onnx.export(mlp, (img,), None, dynamic_shapes={"x": {0: "b"}})
    assert tinynet.onnx.export(mlp, (img,), None, dynamo=True, do_constant_folding=False).graph.node
    bare = tinynet.onnx.export(mlp, (img,), None, export_params=False)  # the weights become graph inputs
    onnx.checker.check_model(bare)
    assert {"fc1.weight", "fc2.bias"} <= {i.name for i in bare.graph.input}
    assert not {"fc1.weight", "fc2.bias"} & {i.name for i in bare.graph.initializer}
    with pytest.raises(errors.ArgumentError, match="2 input_names for 1 tensor inputs"):
        tinynet.onnx.export(mlp, (img,), None, input_names=["a", "b"])

    class Scalar(tinynet.nn.Module):
        def forward(self, x):
            return 3

    with pytest.raises(errors.OnnxExportError, match="returned a int"):
        tinynet.onnx.export(Scalar(), (x,), None)
    assert isinstance(errors.UnsupportedOperatorError("x"), RuntimeError)
    assert tinynet.onnx.OnnxExporterError is errors.OnnxExportError and "conv2d" in tinynet.onnx.supported_ops()
    assert not tinynet.onnx.is_in_onnx_export()
