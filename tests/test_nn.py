"""nn.Module API, layers and their default initialisation."""
import math

import numpy
import pytest

import tinynet
import tinynet.nn as nn
from tinynet.errors import ShapeError, StateDictError


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(4 * 4 * 4, 3))

    def forward(self, x):
        return self.head(nn.functional.relu(self.bn(self.conv(x))))


def test_parameters_buffers_children_modules():
    m = Small()
    names = [n for n, _ in m.named_parameters()]
    assert names == ["conv.weight", "conv.bias", "bn.weight", "bn.bias", "head.1.weight", "head.1.bias"]
    assert [n for n, _ in m.named_buffers()] == ["bn.running_mean", "bn.running_var", "bn.num_batches_tracked"]
    assert len(list(m.children())) == 3 and len(list(m.modules())) == 6
    assert all(p.requires_grad for p in m.parameters())
    sd = m.state_dict()
    assert list(sd) == ["conv.weight", "conv.bias", "bn.weight", "bn.bias", "bn.running_mean",
                        "bn.running_var", "bn.num_batches_tracked", "head.1.weight", "head.1.bias"]
    assert "Conv2d(1, 4, kernel_size=(3, 3)" in repr(m) and "(head): Sequential(" in repr(m)


def test_shared_parameter_listed_once():
    lin = nn.Linear(2, 2)
    m = nn.Sequential(lin, lin)
    assert len(list(m.parameters())) == 2


def test_train_eval_and_zero_grad(device):
    m = Small().to(device)
    x = tinynet.randn(2, 1, 6, 6, device=device)
    m(x).sum().backward()
    assert m.conv.weight.grad is not None
    m.zero_grad()
    assert m.conv.weight.grad is None
    m.eval()
    assert not m.bn.training and not m.head[1].training
    m.train()
    assert m.bn.training


def test_state_dict_roundtrip_and_strict_errors():
    a, b = Small(), Small()
    b.load_state_dict(a.state_dict())
    for (k, va), vb in zip(a.state_dict().items(), b.state_dict().values()):
        assert (va.detach().numpy() == vb.detach().numpy()).all(), k
    sd = a.state_dict()
    sd.pop("conv.bias")
    sd["extra.weight"] = tinynet.zeros(1)
    sd["head.1.weight"] = tinynet.zeros(3, 5)
    c = Small()
    before = c.conv.weight.detach().numpy().copy()
    with pytest.raises(StateDictError) as err:
        c.load_state_dict(sd)
    msg = str(err.value)
    assert "conv.bias" in msg and "extra.weight" in msg and "size mismatch for head.1.weight" in msg
    assert (c.conv.weight.detach().numpy() == before).all()  # a failed load copies nothing
    sd2 = a.state_dict()
    sd2.pop("conv.bias")
    res = c.load_state_dict(sd2, strict=False)
    assert res.missing_keys == ["conv.bias"] and res.unexpected_keys == []
    assert (c.conv.weight.detach().numpy() == a.conv.weight.detach().numpy()).all()


def test_register_buffer_and_setattr_rules():
    m = nn.Module()
    m.register_buffer("stat", tinynet.zeros(2))
    m.register_buffer("tmp", tinynet.zeros(1), persistent=False)
    assert list(m.state_dict()) == ["stat"]
    m.stat = tinynet.ones(2)
    assert m.state_dict()["stat"].tolist() == [1.0, 1.0]
    with pytest.raises(TypeError):
        m.stat = 3
    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="Parameter"):
        lin.weight = tinynet.zeros(2, 2)
    with pytest.raises(AttributeError):
        lin.missing


def _uniform_bound_ok(t, bound):
    a = t.detach().numpy()
    return a.min() >= -bound and a.max() <= bound and a.max() > 0.8 * bound


def test_default_init_matches_pytorch_formulas():
    lin = nn.Linear(320, 50)
    assert _uniform_bound_ok(lin.weight, 1 / math.sqrt(320)) and _uniform_bound_ok(lin.bias, 1 / math.sqrt(320))
    conv = nn.Conv2d(10, 20, 5)
    assert _uniform_bound_ok(conv.weight, 1 / math.sqrt(250))
    w = tinynet.zeros(200, 100)
    nn.init.kaiming_normal_(w, nonlinearity="relu")
    assert abs(w.detach().numpy().std() - math.sqrt(2 / 100)) < 0.01
    nn.init.xavier_uniform_(w)
    assert _uniform_bound_ok(w, math.sqrt(6 / 300))
    nn.init.kaiming_uniform_(w)
    assert _uniform_bound_ok(w, math.sqrt(6 / 100))  # a=0: gain sqrt(2)
    nn.init.normal_(w, 1.0, 0.5)
    assert abs(w.detach().numpy().mean() - 1) < 0.01
    nn.init.uniform_(w, 2, 3)
    assert 2 <= w.detach().numpy().min()
    nn.init.zeros_(w)
    assert not w.detach().numpy().any()
    nn.init.ones_(w)
    assert w.detach().numpy().all()
    with pytest.raises(ValueError):
        nn.init.kaiming_uniform_(tinynet.zeros(3))


LAYERS = [
    (lambda: nn.Linear(5, 3), (4, 5), (4, 3)),
    (lambda: nn.Conv2d(3, 6, 3, stride=2, padding=1), (2, 3, 9, 9), (2, 6, 5, 5)),
    (lambda: nn.Conv2d(4, 4, 3, padding="same", groups=4), (2, 4, 5, 5), (2, 4, 5, 5)),
    (lambda: nn.MaxPool2d(2), (2, 3, 8, 8), (2, 3, 4, 4)),
    (lambda: nn.AvgPool2d(3, 2, 1), (2, 3, 8, 8), (2, 3, 4, 4)),
    (lambda: nn.AdaptiveAvgPool2d(1), (2, 3, 8, 8), (2, 3, 1, 1)),
    (lambda: nn.BatchNorm1d(5), (4, 5), (4, 5)),
    (lambda: nn.BatchNorm2d(3), (2, 3, 4, 4), (2, 3, 4, 4)),
    (lambda: nn.Dropout(0.2), (4, 5), (4, 5)),
    (lambda: nn.Dropout2d(0.2), (2, 3, 4, 4), (2, 3, 4, 4)),
    (lambda: nn.ReLU(), (4, 5), (4, 5)),
    (lambda: nn.LeakyReLU(0.1), (4, 5), (4, 5)),
    (lambda: nn.Sigmoid(), (4, 5), (4, 5)),
    (lambda: nn.Tanh(), (4, 5), (4, 5)),
    (lambda: nn.GELU(), (4, 5), (4, 5)),
    (lambda: nn.Softmax(dim=1), (4, 5), (4, 5)),
    (lambda: nn.LogSoftmax(dim=1), (4, 5), (4, 5)),
    (lambda: nn.Flatten(), (2, 3, 4), (2, 12)),
    (lambda: nn.Identity(), (2, 3), (2, 3)),
]


@pytest.mark.parametrize("make,shape_in,shape_out", LAYERS, ids=lambda v: getattr(v, "__name__", str(v)))
def test_layer_shapes_and_backward(make, shape_in, shape_out, device):
    layer = make().to(device)
    x = tinynet.randn(*shape_in, device=device, requires_grad=True)
    y = layer(x)
    assert y.shape == shape_out and y.device == device
    y.sum().backward()
    assert x.grad is not None and x.grad.shape == shape_in
    assert repr(layer)


def test_batchnorm_running_stats_match_torch():
    torch = pytest.importorskip("torch")
    x = numpy.random.default_rng(0).standard_normal((8, 3, 4, 4)) * 2 + 1
    ours, theirs = nn.BatchNorm2d(3), torch.nn.BatchNorm2d(3)
    for _ in range(3):
        ours(tinynet.tensor(x, dtype="float32"))
        theirs(torch.tensor(x, dtype=torch.float32))
    numpy.testing.assert_allclose(ours.running_mean.detach().numpy(), theirs.running_mean.detach().numpy(), rtol=1e-5)
    numpy.testing.assert_allclose(ours.running_var.detach().numpy(), theirs.running_var.detach().numpy(), rtol=1e-5)
    assert int(ours.num_batches_tracked.item()) == 3
    ours.eval()
    theirs.eval()
    numpy.testing.assert_allclose(ours(tinynet.tensor(x, dtype="float32")).detach().numpy(),
                                  theirs(torch.tensor(x, dtype=torch.float32)).detach().numpy(), atol=1e-5)


def test_sequential_and_modulelist():
    s = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    s.append(nn.Linear(3, 1))
    assert len(s) == 3 and isinstance(s[0], nn.Linear) and len(s[1:]) == 2
    ml = nn.ModuleList([nn.Linear(2, 2)])
    ml.append(nn.Linear(2, 2))
    assert len(list(ml.parameters())) == 4
    with pytest.raises(TypeError):
        ml.append(3)


def test_layer_input_errors_name_the_layer():
    with pytest.raises(ShapeError, match=r"Linear\(in_features=320, out_features=50.*784"):
        nn.Linear(320, 50)(tinynet.zeros(64, 784))
    with pytest.raises(ShapeError, match=r"Conv2d\(1, 10.*\(28, 28\)"):
        nn.Conv2d(1, 10, 5)(tinynet.zeros(28, 28))
    with pytest.raises(ShapeError, match="3 channels|expected input with 1 channels"):
        nn.Conv2d(1, 10, 5)(tinynet.zeros(2, 3, 28, 28))
    with pytest.raises(ShapeError, match="BatchNorm2d.*4 channels"):
        nn.BatchNorm2d(4)(tinynet.zeros(2, 3, 5, 5))
    with pytest.raises(ValueError, match="groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError):
        nn.Dropout(1.5)
