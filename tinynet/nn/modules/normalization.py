"""Normalisation layers: ``BatchNorm1d``, ``BatchNorm2d``, ``BatchNorm3d``."""
from ... import ops
from ...autograd import no_grad
from ...errors import ShapeError
from ...ops.util import check_int, check_number
from .. import functional as F
from .linear import float_tensor
from .module import Module, Parameter, check_input


def reset_running_stats(module):
    """Zeros, ones and 0 into a norm layer's ``running_mean``, ``running_var`` and
    ``num_batches_tracked`` (those it has)."""
    with no_grad():
        for name, value in (("running_mean", 0), ("running_var", 1), ("num_batches_tracked", 0)):
            buf = getattr(module, name, None)
            if buf is not None:
                buf.fill_(value)


def reset_affine(module):
    """Ones into a norm layer's ``weight`` and zeros into its ``bias`` (those it has)."""
    with no_grad():
        for name, value in (("weight", 1), ("bias", 0)):
            p = getattr(module, name, None)
            if p is not None:
                p.fill_(value)


class _BatchNorm(Module):
    _ndims: tuple[int, ...] = (2, 3, 4)
    _layout = "(N, C, *)"

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        layer = type(self).__name__
        kw = {"device": device, "dtype": dtype}
        num_features = check_int(layer, "num_features", num_features, 0)
        check_number(layer, "eps", eps)
        if momentum is not None:
            check_number(layer, "momentum", momentum)
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(float_tensor(layer, 1, num_features, **kw))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(float_tensor(layer, 0, num_features, **kw))
        else:
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", float_tensor(layer, 0, num_features, **kw))
            self.register_buffer("running_var", float_tensor(layer, 1, num_features, **kw))
            self.register_buffer("num_batches_tracked", ops.creation.zeros((), dtype=ops.creation.dtypes.int64,
                                                                           device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def reset_running_stats(self):
        """Running mean to zeros, running variance to ones, the batch count to 0."""
        reset_running_stats(self)

    def reset_parameters(self):
        """The running statistics reset, weight to ones and bias to zeros."""
        reset_running_stats(self)
        reset_affine(self)

    def forward(self, input):
        check_input(self, input, self._ndims, self._layout)
        if input.shape[1] != self.num_features:
            raise ShapeError(f"{self!r}: expected input with {self.num_features} channels (dim 1), "
                             f"got shape {input.shape}")
        use_batch = self.training or self.running_mean is None
        n = 1
        if self.training and self.track_running_stats:
            self.num_batches_tracked.array += 1
            if self.momentum is None:
                n = int(self.num_batches_tracked.array)  # cumulative average needs the count
        return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                            use_batch, self.momentum, self.eps, n)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input. Shape: output = input.

    Args: num_features (C), eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
    device=None, dtype=None (where and in which float dtype parameters and buffers are made),
    keyword-only bias=True (with ``affine``, learn the shift too; PyTorch 2.13's argument).
    """
    _ndims, _layout = (2, 3), "(N, C) or (N, C, L)"


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) input per channel. Shape: output = input.

    Args: num_features (C), eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
    device=None, dtype=None (where and in which float dtype parameters and buffers are made),
    keyword-only bias=True (with ``affine``, learn the shift too; PyTorch 2.13's argument).
    """
    _ndims, _layout = (4,), "(N, C, H, W)"


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of (N, C, D, H, W) input per channel (over N, D, H, W). Shape:
    output = input.

    Args: num_features (C), eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
    device=None, dtype=None (where and in which float dtype parameters and buffers are made),
    keyword-only bias=True (with ``affine``, learn the shift too).

    Raises:
        ArgumentError / ArgumentTypeError (construction): a bad num_features, eps or momentum.
        ShapeError (call): input not 5-D or with another number of channels.
    """
    _ndims, _layout = (5,), "(N, C, D, H, W)"


# PyTorch's torch.nn.modules.normalization holds these (tinynet's live in norm_layers and distance)
from .distance import RMSNorm  # noqa: E402,F401
from .norm_layers import GroupNorm, LayerNorm, LocalResponseNorm  # noqa: E402,F401
