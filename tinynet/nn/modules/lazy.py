"""Lazy modules: layers whose input size is inferred from the first input they see
(PyTorch's ``torch.nn.modules.lazy`` and its ``Lazy*`` layers): ``LazyLinear``,
``LazyConv1d/2d/3d``, ``LazyConvTranspose1d/2d/3d``, ``LazyBatchNorm1d/2d/3d`` and
``LazyInstanceNorm1d/2d/3d``.

A lazy layer is built like its regular class but without the input size; its weights are
:class:`~tinynet.nn.UninitializedParameter` placeholders (and a lazy norm's running
statistics :class:`~tinynet.nn.UninitializedBuffer` ones), which carry only a device and a
dtype, so ``to()``, ``double()`` ... work before the first call. The first forward runs a
forward pre-hook that reads the input size (``in_features`` = the last dim, ``in_channels``
/ ``num_features`` = the channel dim), materialises the placeholders, initialises them as
the regular layer would (``reset_parameters``), removes the hook and turns the module into
its regular class (``cls_to_become``: a ``LazyLinear`` becomes a ``Linear``).

Loading a state dict of an initialised layer into a lazy one materialises the placeholders
to the checkpoint's shapes first (they then keep the loaded values at the first forward, which
takes the input size from them; PyTorch leaves ``in_features`` at 0 then).
"""
from ... import dtypes
from ...errors import ArgumentError, LazyModuleError, ShapeError
from ...ops.creation import tensor
from ...ops.util import check_int
from ...tensor import Tensor
from .conv import Conv1d, Conv2d, Conv3d, _tuple
from .conv_transpose import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .norm_layers import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .normalization import BatchNorm1d, BatchNorm2d, BatchNorm3d, reset_affine, reset_running_stats
from .parameter import UninitializedBuffer, UninitializedParameter, is_lazy


class LazyModuleMixin:
    """What every lazy layer shares: the initialising forward pre-hook, the state-dict
    materialisation and ``has_uninitialized_params``. A subclass defines
    ``initialize_parameters(input)`` and ``cls_to_become``."""

    cls_to_become: type | None = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def has_uninitialized_params(self):
        """True while a parameter or buffer is still a placeholder."""
        return any(is_lazy(t) for t in (*self._parameters.values(), *self._buffers.values()))

    def _initialized(self):
        """True once the placeholders are materialised (and never while the regular
        constructor runs, before the hook exists: its init would draw numbers for nothing)."""
        return "_initialize_hook" in self.__dict__ and not self.has_uninitialized_params()

    def initialize_parameters(self, *args, **kwargs):
        """Infer the sizes from the first call's arguments and materialise the placeholders."""
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def _infer_parameters(self, module, args, kwargs):
        self.initialize_parameters(*args, **kwargs)
        if self.has_uninitialized_params():
            raise LazyModuleError(f"{type(self).__name__}: module has not been fully initialized")
        self._initialize_hook.remove()
        del self._initialize_hook
        if self.cls_to_become is not None:
            self.__class__ = self.cls_to_become

    def _lazy_load(self, state_dict, prefix):
        """Before load_state_dict copies: give each placeholder the shape of its checkpoint entry."""
        for store in (self._parameters, self._buffers):
            for name, t in store.items():
                value = state_dict.get(prefix + name)
                if t is not None and is_lazy(t) and value is not None and not is_lazy(value) \
                        and hasattr(value, "shape"):
                    t.materialize(tuple(int(s) for s in value.shape))

    def _channels(self, input, dims, dim_from_end):
        """The channel count of ``input``: dim ``ndim - dim_from_end`` of an input of ``dims`` dims
        (``dim_from_end`` an int, or a function of ``ndim``)."""
        if not isinstance(input, Tensor):
            raise LazyModuleError(f"{type(self).__name__}: the first call needs a Tensor to infer its sizes, got "
                                  f"{type(input).__name__}")
        if input.ndim not in dims:
            raise ShapeError(f"{type(self).__name__}: expected a {' or '.join(f'{d}-D' for d in dims)} input to "
                             f"infer its sizes, got shape {tuple(input.shape)}")
        if callable(dim_from_end):
            dim_from_end = dim_from_end(input.ndim)
        return int(input.shape[input.ndim - dim_from_end])


class LazyLinear(LazyModuleMixin, Linear):
    """A :class:`~tinynet.nn.Linear` whose ``in_features`` is the last dim of its first input.

    Args:
        out_features (int): size of each output sample.
        bias (bool): default True.
        device, dtype: where and in which float dtype the parameters will be made.

    Raises:
        ArgumentError / ArgumentTypeError: a bad ``out_features`` (construction).
        LazyModuleError: the first call's input is not a Tensor. ShapeError: a 0-d one.
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = check_int("LazyLinear", "out_features", out_features, 0)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        """Linear's init, once the parameters exist."""
        if self._initialized() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_features = self._channels(input, range(1, 64), 1)
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self.reset_parameters()
        elif self.in_features == 0:  # materialised by load_state_dict: the size is the weight's
            self.in_features = int(self.weight.shape[1])


class _LazyConvMixin(LazyModuleMixin):
    """Lazy convolutions: ``in_channels`` from the channel dim of the first (batched or
    unbatched) input."""

    def _lazy_init(self, out_channels, groups, device, dtype):
        layer = type(self).__name__
        out_channels = _tuple(layer, "out_channels", out_channels, 1, 1)[0]
        if out_channels % groups:
            raise ArgumentError(f"{layer}: out_channels must be divisible by groups, got out_channels={out_channels}, "
                                f"groups={groups}")
        self.in_channels, self.out_channels = 0, out_channels
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if self._lazy_bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        """The regular layer's init, once the parameters exist."""
        if self._initialized() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            nd = self._nd
            self.in_channels = self._channels(input, (nd + 1, nd + 2), nd + 1)
            if self.in_channels % self.groups:
                raise ShapeError(f"{type(self).__name__}: in_channels ({self.in_channels}, from the input of shape "
                                 f"{tuple(input.shape)}) must be divisible by groups ({self.groups})")
            g = self.groups
            shape = ((self.in_channels, self.out_channels // g) if self.transposed else
                     (self.out_channels, self.in_channels // g)) + self.kernel_size
            self.weight.materialize(shape)
            if self.bias is not None:
                self.bias.materialize((self.out_channels,))
            self.reset_parameters()
        elif self.in_channels == 0:  # materialised by load_state_dict: the size is the weight's
            w = self.weight.shape
            self.in_channels = int(w[0] if self.transposed else w[1] * self.groups)


def _lazy_conv(base, nd):
    """The lazy class of convolution ``base`` (Conv1d ... Conv3d)."""

    class LazyConv(_LazyConvMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                     padding_mode="zeros", device=None, dtype=None):
            self._lazy_bias = bias
            # built with groups in/out channels (valid for the checks), no init: see reset_parameters
            super().__init__(_groups(groups), _groups(groups), kernel_size, stride, padding, dilation, groups, False,
                             padding_mode, device, dtype)
            self._lazy_init(out_channels, groups, device, dtype)

    LazyConv.__name__ = LazyConv.__qualname__ = f"LazyConv{nd}d"
    LazyConv.__doc__ = (f"A :class:`~tinynet.nn.Conv{nd}d` whose ``in_channels`` is the channel dim of its first "
                        f"input.\n\n    Args: as Conv{nd}d without ``in_channels``: out_channels, kernel_size, "
                        "stride=1, padding=0, dilation=1, groups=1, bias=True, padding_mode='zeros', device=None, "
                        f"dtype=None.\n\n    Raises:\n        as Conv{nd}d; ShapeError at the first call: an input "
                        f"not {nd + 1}-D/{nd + 2}-D, or channels not divisible by groups.\n    ")
    return LazyConv


def _lazy_conv_transpose(base, nd):
    """The lazy class of transposed convolution ``base``."""

    class LazyConvTranspose(_LazyConvMixin, base):
        cls_to_become = base

        def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1, bias=True,
                     dilation=1, padding_mode="zeros", device=None, dtype=None):
            self._lazy_bias = bias
            super().__init__(_groups(groups), _groups(groups), kernel_size, stride, padding, output_padding, groups,
                             False, dilation, padding_mode, device, dtype)
            self._lazy_init(out_channels, groups, device, dtype)

    LazyConvTranspose.__name__ = LazyConvTranspose.__qualname__ = f"LazyConvTranspose{nd}d"
    LazyConvTranspose.__doc__ = (
        f"A :class:`~tinynet.nn.ConvTranspose{nd}d` whose ``in_channels`` is the channel dim of its first input."
        f"\n\n    Args: as ConvTranspose{nd}d without ``in_channels``: out_channels, kernel_size, stride=1, "
        "padding=0, output_padding=0, groups=1, bias=True, dilation=1, padding_mode='zeros', device=None, "
        f"dtype=None.\n\n    Raises:\n        as ConvTranspose{nd}d; ShapeError at the first call: an input not "
        f"{nd + 1}-D/{nd + 2}-D, or channels not divisible by groups.\n    ")
    return LazyConvTranspose


def _groups(groups):
    """``groups`` when it is a valid count (the regular constructor then checks the rest), else 1
    so that the regular constructor reports the bad ``groups`` itself."""
    return groups if isinstance(groups, int) and not isinstance(groups, bool) and groups >= 1 else 1


LazyConv1d, LazyConv2d, LazyConv3d = (_lazy_conv(b, n) for b, n in ((Conv1d, 1), (Conv2d, 2), (Conv3d, 3)))
LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d = (
    _lazy_conv_transpose(b, n) for b, n in ((ConvTranspose1d, 1), (ConvTranspose2d, 2), (ConvTranspose3d, 3)))


class _LazyNormMixin(LazyModuleMixin):
    """Lazy batch and instance norm: ``num_features`` from the first input's channel dim."""

    def _lazy_init(self, affine, track_running_stats, bias, device, dtype):
        self.affine, self.track_running_stats = bool(affine), bool(track_running_stats)
        if self.affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if self.track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=dtypes.int64, device=device)

    def reset_parameters(self):
        """Running statistics to zeros/ones, weight to ones, bias to zeros, once they exist."""
        if self._initialized() and self.num_features != 0:
            reset_running_stats(self)
            reset_affine(self)

    def initialize_parameters(self, input, *args, **kwargs):
        if self.num_features == 0:  # also when load_state_dict materialised the placeholders
            self.num_features = self._channels(input, self._lazy_dims, self._lazy_channel_from_end)
        if self.has_uninitialized_params():
            for name in ("weight", "bias", "running_mean", "running_var"):
                t = getattr(self, name, None)
                if t is not None and is_lazy(t):
                    t.materialize((self.num_features,))
            self.reset_parameters()


def _lazy_batch_norm(base, dims):
    class LazyBatchNorm(_LazyNormMixin, base):
        cls_to_become = base
        _lazy_dims = dims

        def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                     bias=True):
            super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
            self._lazy_init(affine, track_running_stats, bias, device, dtype)

        @staticmethod
        def _lazy_channel_from_end(ndim):
            return ndim - 1  # dim 1

    return LazyBatchNorm


def _lazy_instance_norm(base, dims):
    class LazyInstanceNorm(_LazyNormMixin, base):
        cls_to_become = base
        _lazy_dims = dims

        def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None, *,
                     bias=True):
            super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
            self._lazy_init(affine, track_running_stats, bias, device, dtype)

        def _lazy_channel_from_end(self, ndim):
            return self._no_batch_dim  # the channel dim of a batched or an unbatched input

    return LazyInstanceNorm


def _named(cls, name, base, layout):
    cls.__name__ = cls.__qualname__ = name
    cls.__doc__ = (f"A :class:`~tinynet.nn.{base}` whose ``num_features`` is the channel dim of its first input "
                   f"({layout}).\n\n    Args: eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, "
                   "device=None, dtype=None, keyword-only bias=True (PyTorch's defaults for the lazy layers).\n\n"
                   f"    Raises:\n        ShapeError at the first call: an input of another rank.\n    ")
    return cls


LazyBatchNorm1d = _named(_lazy_batch_norm(BatchNorm1d, (2, 3)), "LazyBatchNorm1d", "BatchNorm1d", "(N, C) or (N, C, L)")
LazyBatchNorm2d = _named(_lazy_batch_norm(BatchNorm2d, (4,)), "LazyBatchNorm2d", "BatchNorm2d", "(N, C, H, W)")
LazyBatchNorm3d = _named(_lazy_batch_norm(BatchNorm3d, (5,)), "LazyBatchNorm3d", "BatchNorm3d", "(N, C, D, H, W)")
LazyInstanceNorm1d = _named(_lazy_instance_norm(InstanceNorm1d, (2, 3)), "LazyInstanceNorm1d", "InstanceNorm1d",
                            "(N, C, L) or (C, L)")
LazyInstanceNorm2d = _named(_lazy_instance_norm(InstanceNorm2d, (3, 4)), "LazyInstanceNorm2d", "InstanceNorm2d",
                            "(N, C, H, W) or (C, H, W)")
LazyInstanceNorm3d = _named(_lazy_instance_norm(InstanceNorm3d, (4, 5)), "LazyInstanceNorm3d", "InstanceNorm3d",
                            "(N, C, D, H, W) or (C, D, H, W)")
