"""Folding BatchNorm into the convolution or linear layer before it, for inference
(``torch.nn.utils.fusion``'s functions and names, plus a model-level :func:`fuse_conv_bn`).

In eval mode BatchNorm is an affine map per channel with constants: ``y = g (x - m) / s + b``
with ``s = sqrt(running_var + eps)``. After a convolution ``x = W * in + c`` that is again
a convolution, with ``W' = W g / s`` (each output channel's filter scaled) and
``c' = (c - m) g / s + b``; one op instead of two, and one pass over the activations
fewer. The same holds for a linear layer (rows of ``W`` scaled). A transposed convolution
keeps its output channels in dim 1 of the weight (``transpose=True``).
"""
import copy

from ...errors import ArgumentError, ArgumentTypeError, ShapeError
from ...ops import creation
from ...ops.util import check_tensor
from ..modules.conv import Conv1d, Conv2d
from ..modules.conv_transpose import ConvTranspose1d, ConvTranspose2d
from ..modules.container import Sequential
from ..modules.linear import Identity, Linear
from ..modules.normalization import BatchNorm1d, BatchNorm2d, _BatchNorm
from ..modules.parameter import Parameter


class FusionError(ArgumentError):
    """The modules cannot be fused: a module in training mode (PyTorch asserts "Fusion only
    for eval!"), a BatchNorm without running statistics, or channel counts that differ."""


def _param(t, requires_grad):
    return Parameter(t.detach(), requires_grad)


def _defaults(weight, bias, bn_rm, bn_w, bn_b):
    """The fused bias's dtype and requires_grad (the layer's bias's, else the weight's dtype
    and False), and the layer bias, BatchNorm weight and bias detached, with PyTorch's
    stand-ins (zeros, ones, zeros) for the missing ones."""
    b_dtype = bias.dtype if bias is not None else weight.dtype
    b_grad = bias.requires_grad if bias is not None else False
    bias = bias.detach() if bias is not None else creation.zeros_like(bn_rm)
    bn_w = bn_w.detach() if bn_w is not None else creation.ones_like(bn_rm)
    bn_b = bn_b.detach() if bn_b is not None else creation.zeros_like(bn_rm)
    return b_dtype, b_grad, bias, bn_w, bn_b


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The weight and bias of the convolution that equals ``conv`` followed by eval-mode BatchNorm.

    ``W' = W * (bn_w / sqrt(bn_rv + eps))`` per output channel (dim 0 of the weight, dim 1
    when ``transpose``) and ``b' = (conv_b - bn_rm) * bn_w / sqrt(bn_rv + eps) + bn_b``,
    computed in the promoted dtype and returned in the convolution's dtypes, as PyTorch.

    Args:
        conv_w (Tensor): (C_out, C_in/groups, k...) or, with ``transpose``, (C_in, C_out/groups, k...).
        conv_b (Tensor or None): (C_out,); None counts as zeros.
        bn_rm, bn_rv (Tensor): running mean and variance, (C_out,).
        bn_eps (float): BatchNorm's eps.
        bn_w, bn_b (Tensor or None): BatchNorm's affine weight and bias (None: 1 and 0).
        transpose (bool): the weight is a transposed convolution's. Default False.

    Returns:
        (Parameter, Parameter): the fused weight (requires grad as ``conv_w``) and bias.

    Raises:
        ArgumentTypeError: a weight or statistic is not a Tensor.
        ShapeError: the statistics do not have one value per output channel.
    """
    for name, t in (("conv_w", conv_w), ("bn_rm", bn_rm), ("bn_rv", bn_rv)):
        check_tensor("fuse_conv_bn_weights", name, t)
    if not transpose and bn_rm.shape != (conv_w.shape[0],):  # (a transposed weight holds C_out / groups)
        raise ShapeError(f"fuse_conv_bn_weights: expected running statistics of shape ({conv_w.shape[0]},) for "
                         f"conv_w {tuple(conv_w.shape)}, got {tuple(bn_rm.shape)}")
    w_dtype = conv_w.dtype
    b_dtype, b_grad, conv_b, bn_w, bn_b = _defaults(conv_w, conv_b, bn_rm, bn_w, bn_b)
    rsqrt = (bn_rv.detach() + bn_eps).rsqrt()
    shape = [1, -1] if transpose else [-1, 1]
    shape += [1] * (conv_w.ndim - 2)
    fused_w = (conv_w.detach() * (bn_w * rsqrt).reshape(shape)).to(w_dtype)
    fused_b = ((conv_b - bn_rm.detach()) * rsqrt * bn_w + bn_b).to(b_dtype)
    return _param(fused_w, conv_w.requires_grad), _param(fused_b, b_grad)


def _check_eval(op, *modules):
    if any(m.training for m in modules):
        raise FusionError(f"{op}: fusion only for eval! Call model.eval() first (BatchNorm in training mode uses "
                          "batch statistics, which cannot be folded)")


def _check_bn(op, bn):
    if not isinstance(bn, _BatchNorm):
        raise ArgumentTypeError(f"{op}: bn must be a BatchNorm module, got {type(bn).__name__}")
    if bn.running_mean is None or bn.running_var is None:
        raise FusionError(f"{op}: the BatchNorm has no running statistics (track_running_stats=False)")


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A new convolution equal to ``bn(conv(x))`` for eval-mode ``conv`` and ``bn``
    (``torch.nn.utils.fusion.fuse_conv_bn_eval``); the inputs are not changed.

    Args:
        conv: Conv1d/Conv2d (ConvTranspose1d/2d with ``transpose=True``).
        bn: BatchNorm1d/BatchNorm2d with running statistics, ``num_features == C_out``.
        transpose (bool): ``conv`` is a transposed convolution. Default False.

    Returns:
        A deep copy of ``conv`` with the fused weight and bias.

    Raises:
        FusionError (an ArgumentError, a ValueError): either module in training mode, no
            running statistics, or channel counts that differ.
        ArgumentTypeError: not a convolution or a BatchNorm.
    """
    op = "fuse_conv_bn_eval"
    kinds = (ConvTranspose1d, ConvTranspose2d) if transpose else (Conv1d, Conv2d)
    if not isinstance(conv, kinds):
        raise ArgumentTypeError(f"{op}: conv must be one of {[k.__name__ for k in kinds]}, got {type(conv).__name__}")
    _check_bn(op, bn)
    _check_eval(op, conv, bn)
    if conv.out_channels != bn.num_features:
        raise FusionError(f"{op}: conv has {conv.out_channels} output channels but bn has {bn.num_features} features")
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(conv.weight, conv.bias, bn.running_mean, bn.running_var, bn.eps,
                                                    bn.weight, bn.bias, transpose)
    return fused


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The weight and bias of the linear layer that equals ``linear`` followed by eval-mode
    BatchNorm1d: ``W' = W * s[:, None]``, ``b' = (b - bn_rm) * s + bn_b`` with
    ``s = bn_w / sqrt(bn_rv + eps)`` (a BatchNorm of one feature broadcasts).

    Args:
        linear_w (Tensor): (out_features, in_features).
        linear_b (Tensor or None): (out_features,); None counts as zeros.
        bn_rm, bn_rv (Tensor): (out_features,) or (1,).
        bn_eps (float): BatchNorm's eps.
        bn_w, bn_b (Tensor): BatchNorm's affine weight and bias.

    Returns:
        (Parameter, Parameter): the fused weight and bias in the linear layer's dtypes.

    Raises:
        ArgumentTypeError: a weight or statistic is not a Tensor.
    """
    for name, t in (("linear_w", linear_w), ("bn_rm", bn_rm), ("bn_rv", bn_rv)):
        check_tensor("fuse_linear_bn_weights", name, t)
    w_dtype = linear_w.dtype
    b_dtype, b_grad, linear_b, bn_w, bn_b = _defaults(linear_w, linear_b, bn_rm, bn_w, bn_b)
    scale = bn_w * (bn_rv.detach() + bn_eps).rsqrt()
    fused_w = linear_w.detach() * scale.unsqueeze(-1).to(w_dtype)
    fused_b = ((linear_b - bn_rm.detach()) * scale + bn_b).to(b_dtype)
    return _param(fused_w, linear_w.requires_grad), _param(fused_b, b_grad)


def fuse_linear_bn_eval(linear, bn):
    """A new Linear equal to ``bn(linear(x))`` for eval-mode modules
    (``torch.nn.utils.fusion.fuse_linear_bn_eval``).

    Raises:
        FusionError: a module in training mode, no running statistics, or
            ``bn.num_features`` neither ``linear.out_features`` nor 1.
        ArgumentTypeError: not a Linear or a BatchNorm.
    """
    op = "fuse_linear_bn_eval"
    if not isinstance(linear, Linear):
        raise ArgumentTypeError(f"{op}: linear must be a Linear, got {type(linear).__name__}")
    _check_bn(op, bn)
    _check_eval(op, linear, bn)
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise FusionError(f"{op}: to fuse, linear.out_features ({linear.out_features}) must equal bn.num_features "
                          f"({bn.num_features}) or bn.num_features must equal 1")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(linear.weight, linear.bias, bn.running_mean, bn.running_var,
                                                      bn.eps, bn.weight, bn.bias)
    return fused


_PAIRS = ((Conv2d, BatchNorm2d, False), (Conv1d, BatchNorm1d, False), (ConvTranspose2d, BatchNorm2d, True),
          (ConvTranspose1d, BatchNorm1d, True))


def _fusable(a, b):
    for conv, bn, transpose in _PAIRS:
        if type(a) is conv and type(b) is bn and b.running_mean is not None and a.out_channels == b.num_features:
            return transpose
    return None


def fuse_conv_bn(model, pairs=()):
    """Fold every convolution -> BatchNorm pair of an eval-mode ``model`` in place and return it.

    In every :class:`~tinynet.nn.Sequential` of the model (at any depth), a Conv2d followed
    directly by a BatchNorm2d (likewise Conv1d/BatchNorm1d and the transposed kinds) becomes
    the fused convolution and an :class:`~tinynet.nn.Identity` in the BatchNorm's place, so
    indices and state-dict keys of the other layers stay. A model that calls named
    submodules in its own ``forward`` (``self.bn1(self.conv1(x))``) names such pairs in
    ``pairs``, as dotted names: ``fuse_conv_bn(model, pairs=[("conv1", "bn1")])``; tinynet
    does not trace ``forward`` to find them.

    Args:
        model (Module): in eval mode.
        pairs: (conv name, BatchNorm name) pairs of submodules applied one after the other.

    Returns:
        ``model`` (changed in place).

    Raises:
        FusionError: the model is in training mode, or a named pair cannot be fused.
        ArgumentError: a name in ``pairs`` is not a submodule.
    """
    op = "fuse_conv_bn"
    if any(m.training for m in model.modules()):
        raise FusionError(f"{op}: fusion only for eval! Call model.eval() first")
    for _, seq in list(model.named_modules()):
        if not isinstance(seq, Sequential):
            continue
        keys = list(seq._modules)
        for k1, k2 in zip(keys, keys[1:]):
            a, b = seq._modules[k1], seq._modules[k2]
            transpose = _fusable(a, b)
            if transpose is not None:
                seq._modules[k1] = fuse_conv_bn_eval(a, b, transpose)
                seq._modules[k2] = Identity()
    modules = dict(model.named_modules())
    for conv_name, bn_name in pairs:
        for name in (conv_name, bn_name):
            if name not in modules:
                raise ArgumentError(f"{op}: {name!r} is not a submodule of the model")
        transpose = _fusable(modules[conv_name], modules[bn_name])
        if transpose is None:
            raise FusionError(f"{op}: cannot fuse {conv_name!r} ({type(modules[conv_name]).__name__}) with "
                              f"{bn_name!r} ({type(modules[bn_name]).__name__})")
        fused = fuse_conv_bn_eval(modules[conv_name], modules[bn_name], transpose)
        for name, new in ((conv_name, fused), (bn_name, Identity())):
            parent, _, leaf = name.rpartition(".")
            modules[parent]._modules[leaf] = new  # modules[""] is the model itself
    return model
