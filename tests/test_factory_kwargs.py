"""PyTorch's factory kwargs on the layers: ``nn.Linear(3, 2, device=..., dtype=...)`` and the
like make their parameters and buffers there, in that dtype, under the same names; on the
CPU in float32 they draw the same initial values as a layer made with the defaults (same
seed); a non-float dtype is refused with a typed error."""
import numpy
import pytest

import tinynet
import tinynet.nn as nn
from tinynet.errors import DTypeError

from conftest import DEVICES

LAYERS = {
    "Linear": lambda **kw: nn.Linear(3, 2, **kw),
    "Conv1d": lambda **kw: nn.Conv1d(2, 4, 3, **kw),
    "Conv2d": lambda **kw: nn.Conv2d(2, 4, 3, padding=1, **kw),
    "ConvTranspose2d": lambda **kw: nn.ConvTranspose2d(2, 4, 3, stride=2, **kw),
    "BatchNorm1d": lambda **kw: nn.BatchNorm1d(4, **kw),
    "BatchNorm2d": lambda **kw: nn.BatchNorm2d(4, **kw),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layer", LAYERS)
@pytest.mark.parametrize("dtype", [tinynet.float32, tinynet.float64])
def test_layers_take_device_and_dtype(layer, device, dtype):
    tinynet.manual_seed(0)
    plain = LAYERS[layer]().to(device)
    tinynet.manual_seed(0)
    made = LAYERS[layer](device=device, dtype=dtype)
    for (name, a), (_, b) in zip(plain.state_dict().items(), made.state_dict().items()):
        assert b.device.type == tinynet.device(device).type, (name, b.device)
        if b.is_floating_point():
            assert b.dtype == dtype, name
        if device == "cpu" and dtype == tinynet.float32:  # the same generator and dtype: the same draws
            numpy.testing.assert_array_equal(b.numpy(), a.numpy(), err_msg=name)
    assert list(plain.state_dict()) == list(made.state_dict())


@pytest.mark.parametrize("layer", LAYERS)
def test_integer_dtype_is_refused(layer):
    with pytest.raises(DTypeError, match=f"{layer}: parameters must have a floating dtype"):
        LAYERS[layer](dtype=tinynet.int64)


def test_same_signature_as_pytorch():
    torch = pytest.importorskip("torch")
    import inspect
    for name in LAYERS:
        ours = list(inspect.signature(getattr(nn, name)).parameters)
        theirs = list(inspect.signature(getattr(torch.nn, name)).parameters)
        if name.startswith("BatchNorm") and "bias" not in theirs:  # BatchNorm's bias= came in PyTorch 2.13
            ours.remove("bias")
        assert ours == theirs, name
