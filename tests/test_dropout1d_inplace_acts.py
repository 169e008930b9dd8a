"""F.dropout1d / nn.Dropout1d (whole channels of (N, C, L) signals) and the in-place
activations F.relu_, F.leaky_relu_ and leaky_relu(inplace=True): values against PyTorch,
the channel structure and scaling of the masks, eval mode, gradients, and bad arguments."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
import tinynet.nn.functional as F
from helpers import assert_close, rng, torch
from tinynet.errors import ShapeError

R = rng(71)


@pytest.mark.parametrize("shape", [(8, 16, 5), (16, 5)])
def test_dropout1d_drops_whole_channels_and_scales(shape, device):
    x = tinynet.tensor(R.uniform(1, 2, shape), device=device, requires_grad=True)
    y = F.dropout1d(x, 0.5)
    out = y.detach().numpy()
    zero = (out == 0).all(axis=-1)
    kept = (out != 0).all(axis=-1)
    assert (zero | kept).all()  # each channel is dropped or kept as a whole
    assert 0.2 < zero.mean() < 0.8
    numpy.testing.assert_allclose(out[kept], 2 * x.detach().numpy()[kept])
    y.sum().backward()
    numpy.testing.assert_allclose(x.grad.numpy(), numpy.where(kept[..., None], 2.0, 0.0)
                                  * numpy.ones(shape))
    assert F.dropout1d(x, 0.5, training=False) is x
    layer = nn.Dropout1d(0.3).eval()
    assert layer(x) is x and repr(layer) == repr(torch.nn.Dropout1d(0.3))
    with pytest.raises(ShapeError, match="dropout1d: expected input of shape"):
        F.dropout1d(tinynet.ones(2, 3, 4, 5, device=device))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_dropout_of_a_0d_tensor_keeps_its_shape(dtype, device):
    # the GPU kernel's launcher once made a 0-d input 1-d (cupy.ascontiguousarray): the backward then
    # returned a (1,) gradient for a () input (found by tests/test_fuzz_namespaces.py's checkpoint row)
    x = tinynet.tensor(1.5, dtype=dtype, device=device, requires_grad=True)
    seen = set()
    for _ in range(40):
        y = F.dropout(x, 0.5)
        assert y.shape == () and y.dtype == x.dtype
        y.backward()
        assert x.grad.shape == ()
        value, grad = float(y), float(x.grad)
        assert (value, grad) in {(0.0, 0.0), (3.0, 2.0)}
        seen.add(value)
        x.grad = None
    assert seen == {0.0, 3.0}


def test_inplace_activations_match_torch(device):
    a = R.standard_normal((3, 4))
    for ours, theirs in ((lambda t: F.relu_(t), lambda t: torch.nn.functional.relu_(t)),
                         (lambda t: F.leaky_relu_(t, 0.2), lambda t: torch.nn.functional.leaky_relu_(t, 0.2)),
                         (lambda t: F.leaky_relu(t, 0.2, inplace=True),
                          lambda t: torch.nn.functional.leaky_relu(t, 0.2, inplace=True))):
        x, tx = tinynet.tensor(a, device=device), torch.tensor(a)
        assert ours(x) is x
        theirs(tx)
        assert_close(x, tx, rtol=0, atol=0, what="in-place activation")
    # on a non-leaf that requires grad, the in-place form keeps the gradient right
    w = tinynet.tensor(a, device=device, requires_grad=True)
    tw = torch.tensor(a, requires_grad=True)
    F.leaky_relu_(w * 2, 0.1).sum().backward()
    torch.nn.functional.leaky_relu_(tw * 2, 0.1).sum().backward()
    assert_close(w.grad, tw.grad, rtol=1e-12, atol=1e-12, what="leaky_relu_ gradient")
