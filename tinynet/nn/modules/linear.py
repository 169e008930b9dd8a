"""Linear layers: ``Identity``, ``Linear``."""
from ...errors import ShapeError
from ...ops.util import check_int
from ...tensor import Tensor
from .. import functional as F, init
from .module import Module, Parameter


def _param(*shape):
    """A zero-filled float32 Parameter on the default device (the layers' init fills it)."""
    from ... import ops
    return Parameter(ops.creation.zeros(*shape))


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

    Shape:
        input (*, in_features) -> output (*, out_features); float32 by default.

    Init: PyTorch's (kaiming_uniform_(a=sqrt 5); bias U(+-1/sqrt(in_features))).
    """

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features = check_int("Linear", "in_features", in_features, 0)
        self.out_features = check_int("Linear", "out_features", out_features, 0)
        self.weight = _param(self.out_features, self.in_features)
        if bias:
            self.bias = _param(self.out_features)
        else:
            self.register_parameter("bias", None)
        init.default_layer_init_(self.weight, self.bias)

    def forward(self, input):
        if isinstance(input, Tensor) and (input.ndim < 1 or input.shape[-1] != self.in_features):
            raise ShapeError(f"{self!r}: expected input with {self.in_features} features in its last "
                             f"dim, got shape {input.shape}")
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"
