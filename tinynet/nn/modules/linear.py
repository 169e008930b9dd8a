"""Linear layers: ``Identity``, ``Linear``, ``Bilinear``."""
import math

from ...errors import DTypeError, ShapeError
from ...ops.util import check_int
from ...tensor import Tensor
from .. import functional as F, init
from .module import Module, Parameter


def float_tensor(layer, fill, *shape, device=None, dtype=None):
    """A tensor of ``shape`` filled with ``fill`` (0 or 1) on ``device`` (default: the
    default device) in float ``dtype`` (default float32): the layers' parameters and
    buffers made as PyTorch's factory kwargs ``device=``/``dtype=`` ask.

    Raises:
        DTypeError: ``dtype`` is not a floating dtype (the initialisers draw floats).
    """
    from ... import ops
    from ...dtypes import is_floating
    t = (ops.creation.ones if fill else ops.creation.zeros)(*shape, device=device, dtype=dtype)
    if not is_floating(t.dtype):
        raise DTypeError(f"{layer}: parameters must have a floating dtype, got dtype={dtype}")
    return t


def _param(*shape, layer="layer", device=None, dtype=None):
    """A zero-filled Parameter (the layers' init fills it): see :func:`float_tensor`."""
    return Parameter(float_tensor(layer, 0, *shape, device=device, dtype=dtype))


class Identity(Module):
    """Returns its input unchanged. Shape: any."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x W^T + b``.

    Args:
        in_features (int): size of each input sample.
        out_features (int): size of each output sample.
        bias (bool): default True.
        device, dtype: where and in which float dtype the parameters are made (PyTorch's
            factory kwargs); default the default device and float32.

    Shape:
        input (*, in_features) -> output (*, out_features); float32 by default.

    Init: PyTorch's (kaiming_uniform_(a=sqrt 5); bias U(+-1/sqrt(in_features))).
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = check_int("Linear", "in_features", in_features, 0)
        self.out_features = check_int("Linear", "out_features", out_features, 0)
        self.weight = _param(self.out_features, self.in_features, layer="Linear", device=device, dtype=dtype)
        if bias:
            self.bias = _param(self.out_features, layer="Linear", device=device, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        """PyTorch's default init (see Init above)."""
        init.default_layer_init_(self.weight, self.bias)

    def forward(self, input):
        if isinstance(input, Tensor):
            shape = input.array.shape  # (the array's tuple: no Size made on every call)
            if not shape or shape[-1] != self.in_features:
                raise ShapeError(f"{self!r}: expected input with {self.in_features} features in its last "
                                 f"dim, got shape {input.shape}")
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Bilinear(Module):
    """``y = x1^T A x2 + b`` per output feature; see :func:`tinynet.nn.functional.bilinear`.

    Args:
        in1_features (int): size of each first input sample.
        in2_features (int): size of each second input sample.
        out_features (int): size of each output sample.
        bias (bool): default True.
        device, dtype: PyTorch's factory kwargs; default the default device and float32.

    Shape:
        input1 (*, in1_features), input2 (*, in2_features) -> output (*, out_features).

    Init: PyTorch's: weight and bias U(-1/sqrt(in1_features), 1/sqrt(in1_features)).
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in1_features = check_int("Bilinear", "in1_features", in1_features, 0)
        self.in2_features = check_int("Bilinear", "in2_features", in2_features, 0)
        self.out_features = check_int("Bilinear", "out_features", out_features, 0)
        self.weight = _param(self.out_features, self.in1_features, self.in2_features, layer="Bilinear",
                             device=device, dtype=dtype)
        if bias:
            self.bias = _param(self.out_features, layer="Bilinear", device=device, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        bound = 1 / math.sqrt(self.in1_features) if self.in1_features > 0 else 0.0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")


class NonDynamicallyQuantizableLinear(Linear):
    """A :class:`Linear` under PyTorch's name for ``MultiheadAttention.out_proj`` (in PyTorch
    it only keeps dynamic quantization away; here it is the same layer)."""
