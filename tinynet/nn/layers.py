"""Layers: thin Modules over :mod:`tinynet.nn.functional`, PyTorch's names and defaults."""
import numpy

from .. import backend
from ..errors import ShapeError
from ..tensor import Tensor
from . import functional as F, init
from .module import Module, Parameter, check_input


def _param(*shape):
    xp = backend.xp
    return Parameter(Tensor._wrap(xp.zeros(shape, dtype=numpy.float32)))


class Identity(Module):
    """Returns its input unchanged. Shape: any."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x W^T + b``.

    Args:
        in_features (int), out_features (int), bias (bool, default True).

    Shape:
        input (*, in_features) -> output (*, out_features); float32 by default.

    Init: PyTorch's (kaiming_uniform_(a=sqrt 5); bias U(+-1/sqrt(in_features))).
    """

    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features, self.out_features = int(in_features), int(out_features)
        self.weight = _param(self.out_features, self.in_features)
        self.bias = _param(self.out_features) if bias else None
        if not bias:
            self.register_parameter("bias", None)
        init.default_layer_init_(self.weight, self.bias)

    def forward(self, input):
        if isinstance(input, Tensor) and (input.ndim < 1 or input.shape[-1] != self.in_features):
            raise ShapeError(f"{self!r}: expected input with {self.in_features} features in its last "
                             f"dim, got shape {input.shape}")
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Conv2d(Module):
    """2-D convolution over (N, C_in, H, W); see :func:`tinynet.nn.functional.conv2d`.

    Args:
        in_channels, out_channels (int); kernel_size (int or pair);
        stride=1, padding=0 (int, pair, 'same', 'valid'), dilation=1, groups=1, bias=True,
        padding_mode='zeros' (the only mode supported).

    Shape:
        input (N, C_in, H, W) -> output (N, C_out, H_out, W_out),
        ``H_out = floor((H + 2*padding - dilation*(kernel_size-1) - 1) / stride) + 1``.

    Raises:
        ValueError: channels not divisible by ``groups`` or an unsupported padding_mode.
    """

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros"):
        super().__init__()
        if padding_mode != "zeros":
            raise ValueError(f"Conv2d: only padding_mode='zeros' is supported, got {padding_mode!r}")
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"Conv2d: in_channels {in_channels} and out_channels {out_channels} must "
                             f"be divisible by groups {groups}")
        from .functional.conv import _pair
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size = _pair("Conv2d", "kernel_size", kernel_size)
        self.stride, self.dilation = _pair("Conv2d", "stride", stride), _pair("Conv2d", "dilation", dilation)
        self.padding = padding if isinstance(padding, str) else _pair("Conv2d", "padding", padding)
        self.groups = groups
        self.weight = _param(out_channels, in_channels // groups, *self.kernel_size)
        self.bias = _param(out_channels) if bias else None
        if not bias:
            self.register_parameter("bias", None)
        init.default_layer_init_(self.weight, self.bias)

    def forward(self, input):
        check_input(repr(self), input, (4,), "(N, C, H, W)")
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding not in ((0, 0), "valid"):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        return s + ("" if self.bias is not None else ", bias=False")


class MaxPool2d(Module):
    """Max pooling; see :func:`tinynet.nn.functional.max_pool2d`.

    Shape: (N, C, H, W) -> (N, C, H_out, W_out).
    """

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.dilation, self.ceil_mode = dilation, ceil_mode

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation, self.ceil_mode)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(Module):
    """Average pooling; see :func:`tinynet.nn.functional.avg_pool2d`.

    Shape: (N, C, H, W) -> (N, C, H_out, W_out).
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride, self.padding = kernel_size, stride or kernel_size, padding
        self.ceil_mode, self.count_include_pad, self.divisor_override = ceil_mode, count_include_pad, divisor_override

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    """Average pooling to ``output_size``. Shape: (N, C, H, W) -> (N, C, *output_size)."""

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class _BatchNorm(Module):
    _ndims, _layout = (2, 3, 4), "(N, C, *)"

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        xp = backend.xp
        if affine:
            self.weight = Parameter(Tensor._wrap(xp.ones(num_features, dtype=numpy.float32)))
            self.bias = Parameter(Tensor._wrap(xp.zeros(num_features, dtype=numpy.float32)))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor._wrap(xp.zeros(num_features, dtype=numpy.float32)))
            self.register_buffer("running_var", Tensor._wrap(xp.ones(num_features, dtype=numpy.float32)))
            self.register_buffer("num_batches_tracked", Tensor._wrap(xp.zeros((), dtype=numpy.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, input):
        check_input(repr(self), input, self._ndims, self._layout)
        if input.shape[1] != self.num_features:
            raise ShapeError(f"{self!r}: expected input with {self.num_features} channels (dim 1), "
                             f"got shape {input.shape}")
        use_batch = self.training or self.running_mean is None
        n = 1
        if self.training and self.track_running_stats:
            self.num_batches_tracked.data += 1
            if self.momentum is None:
                n = int(self.num_batches_tracked.data)  # cumulative average needs the count
        return F.batch_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                            use_batch, self.momentum, self.eps, n)

    def extra_repr(self):
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}"


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input. Shape: output = input.

    Args: num_features (C), eps=1e-5, momentum=0.1, affine=True, track_running_stats=True.
    """
    _ndims, _layout = (2, 3), "(N, C) or (N, C, L)"


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) input per channel. Shape: output = input.

    Args: num_features (C), eps=1e-5, momentum=0.1, affine=True, track_running_stats=True.
    """
    _ndims, _layout = (4,), "(N, C, H, W)"


class Dropout(Module):
    """Zero elements with probability ``p`` (default 0.5) in training mode. Shape: any."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"Dropout: p must be in [0, 1], got {p}")
        self.p = p

    def forward(self, input):
        return F.dropout(input, self.p, self.training)

    def extra_repr(self):
        return f"p={self.p}"


class Dropout2d(Dropout):
    """Zero whole channels with probability ``p`` in training mode. Shape: (N, C, H, W)."""

    def forward(self, input):
        return F.dropout2d(input, self.p, self.training)


class _Activation(Module):
    _fn = None

    def __init__(self, inplace=False):
        super().__init__()

    def forward(self, input):
        return type(self)._fn(input)


class ReLU(_Activation):
    """``max(x, 0)`` elementwise. Shape: any."""
    _fn = staticmethod(F.relu)


class Sigmoid(_Activation):
    """Logistic sigmoid elementwise. Shape: any."""
    _fn = staticmethod(F.sigmoid)


class Tanh(_Activation):
    """Hyperbolic tangent elementwise. Shape: any."""
    _fn = staticmethod(F.tanh)


class LeakyReLU(Module):
    """``x`` if ``x > 0`` else ``negative_slope * x`` (default 0.01). Shape: any."""

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}"


class GELU(Module):
    """Gaussian error linear unit; ``approximate='none'`` (erf) or ``'tanh'``. Shape: any."""

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, self.approximate)


class Softmax(Module):
    """Softmax along ``dim``. Shape: any; output = input."""

    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """Log-softmax along ``dim``. Shape: any; output = input."""

    def forward(self, input):
        return F.log_softmax(input, self.dim)


class Flatten(Module):
    """Flatten dims ``start_dim`` (default 1) to ``end_dim`` (default -1).

    Shape: (N, *) -> (N, prod(*)) with the defaults.
    """

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return F.flatten(input, self.start_dim, self.end_dim)


class Sequential(Module):
    """Modules applied in order. Supports ``len``, iteration, indexing and ``append``."""

    def __init__(self, *modules):
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], dict):
            for k, m in modules[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, i):
        mods = list(self._modules.values())
        if isinstance(i, slice):
            return Sequential(*mods[i])
        return mods[i]

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self


class ModuleList(Module):
    """A list of sub-modules, registered so their parameters are found."""

    def __init__(self, modules=None):
        super().__init__()
        for m in modules or []:
            self.append(m)

    def append(self, module):
        if not isinstance(module, Module):
            raise TypeError(f"ModuleList: expected a Module, got {type(module).__name__}")
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, i):
        mods = list(self._modules.values())
        return ModuleList(mods[i]) if isinstance(i, slice) else mods[i]
