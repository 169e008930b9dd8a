"""Bad input at each public entry point gives a typed error naming the op and the
expected vs actual value, never a raw NumPy traceback."""
import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet import errors
from tinynet.errors import DTypeError, ShapeError

X4 = tinynet.zeros(2, 3, 8, 8)
X2 = tinynet.zeros(4, 5)
T = tinynet.tensor([0, 1, 2, 3])

BAD = [
    ("conv2d 2-D input", lambda: F.conv2d(tinynet.zeros(28, 28), tinynet.zeros(10, 1, 5, 5)),
     ShapeError, r"conv2d: expected input of shape \(C, H, W\) or \(N, C, H, W\), got \(28, 28\)"),
    ("conv2d channels", lambda: F.conv2d(X4, tinynet.zeros(4, 2, 3, 3)), ShapeError, "2 channels"),
    ("conv2d too small", lambda: F.conv2d(X4, tinynet.zeros(4, 3, 9, 9)), ShapeError, "too small"),
    ("conv2d stride", lambda: F.conv2d(X4, tinynet.zeros(4, 3, 3, 3), stride=0), ValueError, "stride"),
    ("conv2d same+stride", lambda: F.conv2d(X4, tinynet.zeros(4, 3, 3, 3), stride=2, padding="same"),
     ValueError, "same"),
    ("conv2d padding str", lambda: F.conv2d(X4, tinynet.zeros(4, 3, 3, 3), padding="full"), ValueError, "padding"),
    ("conv2d bias", lambda: F.conv2d(X4, tinynet.zeros(4, 3, 3, 3), tinynet.zeros(5)), ShapeError, "bias"),
    ("conv2d int input", lambda: F.conv2d(tinynet.zeros(2, 3, 8, 8, dtype="int64"), tinynet.zeros(4, 3, 3, 3)),
     DTypeError, "floating"),
    ("linear features", lambda: F.linear(X2, tinynet.zeros(3, 7)), ShapeError, "7 features"),
    ("linear weight", lambda: F.linear(X2, tinynet.zeros(5)), ShapeError, "weight"),
    ("max_pool2d 3-D", lambda: F.max_pool2d(tinynet.zeros(3, 8, 8), 2), ShapeError, "max_pool2d"),
    ("max_pool2d pad", lambda: F.max_pool2d(X4, 2, padding=2), ValueError, "padding"),
    ("max_pool2d kernel", lambda: F.max_pool2d(X4, "2"), TypeError, "kernel_size"),
    ("avg_pool2d big kernel", lambda: F.avg_pool2d(X4, 9), ShapeError, "too small"),
    ("adaptive size", lambda: F.adaptive_avg_pool2d(X4, 0), ValueError, "output_size"),
    ("batch_norm shape", lambda: F.batch_norm(X4, tinynet.zeros(2), tinynet.ones(2)), ShapeError, "running_mean"),
    ("batch_norm 1 value", lambda: F.batch_norm(tinynet.zeros(1, 3), None, None, training=True),
     ShapeError, "more than 1 value"),
    ("batch_norm eval no stats", lambda: F.batch_norm(X4, None, None), ValueError, "running_mean"),
    ("dropout p", lambda: F.dropout(X2, 1.5), ValueError, "p must be"),
    ("dropout2d 1-D", lambda: F.dropout2d(tinynet.zeros(5)), ShapeError, "at least 2 dimensions"),
    ("nll float target", lambda: F.nll_loss(X2, tinynet.zeros(4)), DTypeError, "integer class"),
    ("nll target shape", lambda: F.nll_loss(X2, tinynet.tensor([0, 1])), ShapeError, r"target of shape \(4,\)"),
    # checked on the CPU only: on the GPU the check would force a host sync every step
    ("nll out of range",
     lambda: F.nll_loss(tinynet.zeros(4, 5, device="cpu"), tinynet.tensor([0, 1, 2, 9], device="cpu")),
     errors.IndexOutOfRangeError, "out of bounds"),
    ("nll reduction", lambda: F.nll_loss(X2, T, reduction="avg"), ValueError, "reduction"),
    ("nll weight", lambda: F.nll_loss(X2, T, weight=tinynet.ones(3)), ShapeError, "weight"),
    ("cross_entropy smoothing", lambda: F.cross_entropy(X2, T, label_smoothing=2), ValueError, "label_smoothing"),
    ("cross_entropy probs", lambda: F.cross_entropy(X2, tinynet.zeros(4, 3)), ShapeError, "probability"),
    ("mse shapes", lambda: F.mse_loss(X2, tinynet.zeros(5, 4)), ShapeError, "mse_loss"),
    ("softmax dim", lambda: F.softmax(X2, 3), errors.IndexOutOfRangeError, r"softmax: dimension out of range.*got 3"),
    ("relu bool", lambda: F.relu(T > 1), DTypeError, "relu"),
    ("gelu approx", lambda: F.gelu(X2, approximate="fast"), ValueError, "approximate"),
    ("pad odd", lambda: F.pad(X2, (1,)), ValueError, "pad"),
    ("pad mode", lambda: F.pad(X2, (1, 1), mode="wrap"), ValueError, "mode"),
    ("flatten dims", lambda: F.flatten(X4, 3, 1), ShapeError, "flatten"),
    ("expand", lambda: X2.expand(3, 5), ShapeError, "expand"),
    ("mean int", lambda: T.mean(), DTypeError, "mean"),
    ("max empty", lambda: tinynet.zeros(0).max(), ShapeError, "empty"),
    ("tensor ragged", lambda: tinynet.tensor([[1], [1, 2]]), DTypeError, "tensor"),
]


@pytest.mark.parametrize("name,call,exc,pattern", BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_typed_error(name, call, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        call()
    assert isinstance(info.value, errors.TinynetError) or type(info.value) in (TypeError, ValueError, IndexError)


def test_error_hierarchy_inherits_builtins():
    assert issubclass(errors.ShapeError, ValueError)
    assert issubclass(errors.DTypeError, TypeError)
    assert issubclass(errors.DeviceMismatchError, ValueError)
    assert issubclass(errors.BackendError, RuntimeError)
    assert issubclass(errors.AutogradError, RuntimeError)
    assert issubclass(errors.DatasetNotFoundError, FileNotFoundError)
    assert issubclass(errors.ChecksumError, OSError)
    assert issubclass(errors.SerializationError, ValueError)
    for cls in (errors.ShapeError, errors.BackendError, errors.StateDictError):
        assert issubclass(cls, errors.TinynetError)


def test_numpy_scalar_on_left_defers_to_tensor():
    y = numpy.float32(2.0) * tinynet.ones(2, requires_grad=True)
    assert isinstance(y, tinynet.Tensor) and y.requires_grad
