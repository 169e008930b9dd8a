"""nn.ZeroPad1d/2d, ConstantPad1d/2d, ReflectionPad1d/2d, ReplicationPad1d/2d and
CircularPad1d/2d against PyTorch's layers: output and input gradient (batched and unbatched,
int and per-side widths, cropping), the printed layer, and PyTorch's errors at forward."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
from tinynet.errors import ArgumentError, ArgumentTypeError, TinynetError

torch = pytest.importorskip("torch")

R = numpy.random.default_rng(0)
CASES = [  # (layer name, constructor args, input shape)
    ("ZeroPad1d", (2,), (2, 3, 5)), ("ZeroPad1d", ((1, 3),), (3, 5)), ("ZeroPad1d", ((-1, 2),), (2, 3, 5)),
    ("ZeroPad2d", (1,), (2, 3, 4, 5)), ("ZeroPad2d", ((1, 0, 2, 1),), (3, 4, 5)),
    ("ZeroPad2d", ((1, 2),), (2, 2, 3, 4)),
    ("ConstantPad1d", (2, 3.5), (2, 3, 5)), ("ConstantPad1d", ((0, 2), -1.0), (2, 3, 4, 5)),
    ("ConstantPad2d", ((1, 0, 2, 1), -1.5), (2, 3, 4, 5)), ("ConstantPad2d", (1, 2.0), (3, 4, 5)),
    ("ReflectionPad1d", (2,), (2, 3, 5)), ("ReflectionPad1d", ((3, 1),), (3, 5)),
    ("ReflectionPad2d", ((1, 0, 2, 1),), (2, 3, 4, 5)), ("ReflectionPad2d", (2,), (3, 4, 5)),
    ("ReplicationPad1d", ((4, 1),), (2, 3, 5)), ("ReplicationPad2d", (3,), (2, 3, 4, 5)),
    ("ReplicationPad2d", ((0, 2, 1, 0),), (3, 4, 5)),
    ("CircularPad1d", (2,), (2, 3, 5)), ("CircularPad2d", ((1, 2, 0, 3),), (2, 3, 4, 5)),
]


@pytest.mark.parametrize("name,args,shape", CASES, ids=[f"{n}{a}{s}" for n, a, s in CASES])
def test_layer_matches_pytorch(name, args, shape, device):
    x = R.standard_normal(shape)
    ours, theirs = getattr(nn, name)(*args), getattr(torch.nn, name)(*args)
    assert repr(ours) == repr(theirs)
    assert ours.padding == theirs.padding
    t = tinynet.tensor(x, device=device, requires_grad=True)
    p = torch.tensor(x, requires_grad=True)
    y, z = ours(t), theirs(p)
    assert tuple(y.shape) == tuple(z.shape)
    numpy.testing.assert_allclose(y.detach().numpy(), z.detach().numpy(), rtol=0, atol=0)
    g = R.standard_normal(tuple(z.shape))
    y.backward(tinynet.tensor(g, device=device))
    z.backward(torch.tensor(g))
    numpy.testing.assert_allclose(t.grad.numpy(), p.grad.numpy(), rtol=1e-12, atol=1e-12)
    assert list(ours.state_dict()) == [] and list(ours.parameters()) == []


@pytest.mark.parametrize("name,args,shape", [
    ("ReflectionPad1d", (5,), (2, 3, 5)),          # a reflection as wide as the dim
    ("ReflectionPad1d", (1,), (2, 3, 4, 5)),       # a 1d padding of a 4-D input
    ("ReplicationPad2d", (1,), (5,)),              # a 2d padding of a 1-D input
    ("CircularPad1d", (6,), (2, 3, 5)),            # wider than the dim
    ("ZeroPad2d", ("a",), (2, 3, 4, 5)),           # not a width
])
def test_pytorch_refuses_and_so_does_tinynet(name, args, shape, device):
    x = R.standard_normal(shape)
    with pytest.raises((RuntimeError, ValueError, TypeError, NotImplementedError)):
        getattr(torch.nn, name)(*args)(torch.tensor(x))
    with pytest.raises(TinynetError) as info:
        getattr(nn, name)(*args)(tinynet.tensor(x, device=device))
    assert "pad" in str(info.value)


def test_widths_kept_as_pytorch_keeps_them():
    assert nn.ZeroPad2d(1).padding == (1, 1, 1, 1) and nn.ZeroPad1d(2).padding == (2, 2)
    assert nn.ConstantPad2d((1, 2), 0.5).padding == (1, 2)  # a short sequence pads fewer dims
    assert nn.ReflectionPad2d(1.5).padding == (1.5, 1.5, 1.5, 1.5)  # checked at forward, as PyTorch
    with pytest.raises(ArgumentTypeError, match="pad: pad must be ints"):
        nn.ReflectionPad2d(1.5)(tinynet.zeros(1, 1, 4, 4))
    # a documented difference (docs/pytorch.md): PyTorch crops with a negative width in every mode,
    # tinynet only in the constant mode
    with pytest.raises(ArgumentError, match="negative padding"):
        nn.ReplicationPad1d((-1, 1))(tinynet.zeros(2, 3, 5))
