"""Lazy layers (nn.LazyLinear, LazyConv*/LazyConvTranspose*, LazyBatchNorm*, LazyInstanceNorm*),
their placeholders (UninitializedParameter, UninitializedBuffer) and nn.Buffer, against
PyTorch: signatures and reprs, the sizes inferred at the first call, the class each layer
becomes, dtype/device moves before the first call, loading a checkpoint into a lazy layer,
the first forward/backward equal to the regular layer's with the same weights, bad inputs."""
import inspect

import numpy
import pytest

import tinynet
import tinynet.nn as nn
from helpers import assert_close, rng, torch, torch_is_reference
from tinynet.errors import ArgumentError, LazyModuleError, ShapeError

R = rng(71)

# name -> (constructor args, input shape, the regular class it becomes)
LAZY = {
    "LazyLinear": ((5,), (3, 2, 4), "Linear"),
    "LazyConv1d": ((4, 3), (2, 6, 7), "Conv1d"),
    "LazyConv2d": ((4, 3, 1, 1, 1, 2), (2, 6, 5, 5), "Conv2d"),
    "LazyConv3d": ((4, 2), (2, 3, 3, 4, 3), "Conv3d"),
    "LazyConvTranspose1d": ((4, 3, 2), (2, 6, 5), "ConvTranspose1d"),
    "LazyConvTranspose2d": ((4, 3), (6, 4, 4), "ConvTranspose2d"),  # unbatched
    "LazyConvTranspose3d": ((4, 2), (2, 3, 2, 3, 2), "ConvTranspose3d"),
    "LazyBatchNorm1d": ((), (4, 3), "BatchNorm1d"),
    "LazyBatchNorm2d": ((), (4, 3, 2, 2), "BatchNorm2d"),
    "LazyBatchNorm3d": ((), (2, 3, 2, 2, 2), "BatchNorm3d"),
    "LazyInstanceNorm1d": ((), (2, 3, 5), "InstanceNorm1d"),
    "LazyInstanceNorm2d": ((), (2, 3, 4, 4), "InstanceNorm2d"),
    "LazyInstanceNorm3d": ((), (2, 3, 2, 3, 2), "InstanceNorm3d"),
}


@pytest.mark.parametrize("name", LAZY)
def test_signature_and_repr_match_pytorch(name):
    args, _, _ = LAZY[name]
    ours, theirs = getattr(nn, name), getattr(torch.nn, name)
    if not torch_is_reference():  # older releases lack BatchNorm's and InstanceNorm's bias=
        pytest.skip(f"signatures and printed forms follow PyTorch 2.13, not {torch.__version__}")
    assert list(inspect.signature(ours).parameters) == list(inspect.signature(theirs).parameters)
    assert repr(ours(*args)) == repr(theirs(*args))


@pytest.mark.parametrize("name", LAZY)
def test_first_call_infers_sizes_and_matches_the_regular_layer(name, device):
    args, shape, regular = LAZY[name]
    x = R.standard_normal(shape)
    layer = getattr(nn, name)(*args).double().to(device)  # moved before the first call
    assert layer.has_uninitialized_params()
    assert all(isinstance(p, nn.UninitializedParameter) for p in layer.parameters())
    ref = getattr(torch.nn, name)(*args).double()
    tref = ref(torch.tensor(x))  # PyTorch infers its sizes too; copy its initialised state below
    tx = tinynet.tensor(x, device=device, requires_grad=True)
    y = layer(tx)
    assert type(layer) is getattr(nn, regular) and type(ref) is getattr(torch.nn, regular)
    assert repr(layer) == repr(ref) or not torch_is_reference()  # 2.11 prints no bias=
    assert not any(nn.parameter.is_lazy(t) for t in layer.state_dict().values())
    assert all(type(p) is nn.Parameter and p.dtype == tinynet.float64 and p.device == tx.device
               for p in layer.parameters())
    assert [tuple(t.shape) for t in layer.state_dict().values()] == [tuple(t.shape) for t in ref.state_dict().values()]
    # the regular layer's behaviour from here on: PyTorch's weights in, the same outputs and gradients
    layer.load_state_dict({k: v.numpy() for k, v in ref.state_dict().items()})
    tx = tinynet.tensor(x, device=device, requires_grad=True)
    px = torch.tensor(x, requires_grad=True)
    y, ty = layer(tx), ref(px)
    assert_close(y, ty, rtol=1e-10, atol=1e-12)
    g = R.standard_normal(tuple(ty.shape))
    (y * tinynet.tensor(g, device=device)).sum().backward()
    (ty * torch.tensor(g)).sum().backward()
    assert_close(tx.grad, px.grad, rtol=1e-10, atol=1e-12)
    for (k, p), (_, q) in zip(layer.named_parameters(), ref.named_parameters()):
        assert_close(p.grad, q.grad, rtol=1e-10, atol=1e-12, what=k)
    assert tref.shape == ty.shape


def test_initialisation_follows_the_regular_layers():
    tinynet.manual_seed(0)
    lin = nn.LazyLinear(200)
    lin(tinynet.zeros(2, 25))
    w, b = lin.weight.detach().numpy(), lin.bias.detach().numpy()
    assert numpy.abs(w).max() <= 1 / 5 and numpy.abs(w).max() > 0.9 / 5  # kaiming_uniform(a=sqrt 5): 1/sqrt(25)
    assert numpy.abs(b).max() <= 1 / 5 and w.std() > 0.05
    bn = nn.LazyBatchNorm2d()
    bn(tinynet.ones(2, 3, 2, 2))
    assert bn.num_features == 3 and int(bn.num_batches_tracked.item()) == 1
    assert_close(bn.running_mean, numpy.full(3, 0.1, numpy.float32))  # 0.9 * 0 + 0.1 * mean 1
    assert_close(bn.weight, numpy.ones(3, numpy.float32))
    assert isinstance(bn.running_mean, nn.Buffer) and not isinstance(bn.running_mean, nn.UninitializedBuffer)
    # an unbatched input's channels are at dim 0 (PyTorch 2.13 reads dim 1 there, then refuses its own input)
    inorm = nn.LazyInstanceNorm2d()
    assert inorm(tinynet.randn(3, 4, 5)).shape == (3, 4, 5) and inorm.num_features == 3


def test_state_dict_round_trip_into_a_lazy_layer(device):
    full = nn.LazyConv2d(4, 3).to(device)
    full(tinynet.tensor(R.standard_normal((1, 2, 5, 5)), device=device, dtype=tinynet.float32))
    lazy = nn.LazyConv2d(4, 3).to(device)
    lazy.load_state_dict(full.state_dict())
    assert tuple(lazy.weight.shape) == (4, 2, 3, 3) and type(lazy) is nn.LazyConv2d
    x = tinynet.tensor(R.standard_normal((1, 2, 5, 5)), device=device, dtype=tinynet.float32)
    assert_close(lazy(x), full(x))  # the loaded values stay at the first call
    assert type(lazy) is nn.Conv2d
    seq = nn.Sequential(nn.LazyLinear(3), nn.ReLU(), nn.LazyLinear(2))  # nested lazy layers
    seq.load_state_dict({"0.weight": numpy.ones((3, 4)), "0.bias": numpy.zeros(3), "2.weight": numpy.ones((2, 3)),
                         "2.bias": numpy.zeros(2)})
    assert_close(seq(tinynet.ones(1, 4)), numpy.full((1, 2), 12.0, numpy.float32))


def test_lazy_model_trains():
    model = nn.Sequential(nn.LazyConv2d(3, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.LazyLinear(2))
    x = tinynet.randn(4, 2, 5, 5)
    model(x)  # the dry run PyTorch's documentation asks for
    opt = tinynet.optim.SGD(model.parameters(), lr=0.1)
    loss0 = None
    for _ in range(5):
        loss = (model(x) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        loss0 = loss0 if loss0 is not None else float(loss.item())
    assert float(loss.item()) < loss0
    assert [type(m).__name__ for m in model] == ["Conv2d", "ReLU", "Flatten", "Linear"]


def test_buffers_and_placeholders(device):
    m = nn.Module()
    t = tinynet.ones(3, device=device)
    m.kept = nn.Buffer(t)
    m.scratch = nn.Buffer(tinynet.zeros(2, device=device), persistent=False)
    assert [n for n, _ in m.named_buffers()] == ["kept", "scratch"]
    assert list(m.state_dict()) == ["kept"]
    m.kept.add_(1.0)
    assert_close(t, numpy.full(3, 2.0, numpy.float32))  # a Buffer shares its data's memory, as PyTorch's
    ub = nn.UninitializedBuffer(device=device, dtype=tinynet.float64)
    m.register_buffer("later", ub)
    assert repr(ub) == "<UninitializedBuffer>" and nn.parameter.is_lazy(ub)
    ub.materialize((2, 3))
    assert type(ub) is nn.Buffer and ub.shape == (2, 3) and ub.dtype == tinynet.float64 and ub.device == t.device
    up = nn.UninitializedParameter()
    assert repr(up) == "<UninitializedParameter>" and up.requires_grad
    up.materialize((4,), dtype=tinynet.float64)
    assert type(up) is nn.Parameter and up.shape == (4,) and up.dtype == tinynet.float64 and up.requires_grad
    assert list(inspect.signature(nn.Buffer).parameters) == list(inspect.signature(torch.nn.Buffer).parameters)
    for cls in ("UninitializedParameter", "UninitializedBuffer"):
        assert list(inspect.signature(getattr(nn, cls)).parameters) == \
            list(inspect.signature(getattr(torch.nn, cls)).parameters)


def test_bad_inputs_raise_typed_errors():
    with pytest.raises(ShapeError, match="LazyConv2d: expected a 3-D or 4-D input"):
        nn.LazyConv2d(4, 3)(tinynet.ones(2, 3))
    with pytest.raises(ShapeError, match="must be divisible by groups"):
        nn.LazyConv2d(4, 3, groups=2)(tinynet.ones(1, 3, 5, 5))
    with pytest.raises(ArgumentError, match="LazyConv1d: out_channels must be divisible by groups"):
        nn.LazyConv1d(5, 3, groups=2)
    with pytest.raises(ArgumentError):
        nn.LazyLinear(-1)
    with pytest.raises(LazyModuleError, match="LazyLinear: the first call needs a Tensor"):
        nn.LazyLinear(2)([1.0, 2.0])
    with pytest.raises(ShapeError, match="LazyBatchNorm2d: expected a 4-D input"):
        nn.LazyBatchNorm2d()(tinynet.ones(2, 3))
    with pytest.raises(LazyModuleError, match="share_memory_"):
        nn.UninitializedParameter().share_memory_()
