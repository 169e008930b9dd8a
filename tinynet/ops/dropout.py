"""Dropout (Srivastava et al., 2014, JMLR 15) and channel dropout (Tompson et al., 2015).

In training, each element (``dropout``) or each whole (n, c) feature map
(``dropout1d``/``dropout2d``/``dropout3d``) is zeroed with probability ``p`` and the survivors are scaled by
``1 / (1 - p)`` so the expectation is unchanged; in evaluation both are the identity.
Masks come from tinynet's generator (:func:`tinynet.manual_seed` makes them repeatable).
"""
import warnings

from .. import random as _random
from ..autograd import Op
from ..errors import ShapeError
from ..kernels import cuda, gpu_ops
from ..tensor import Tensor
from .util import check_number, check_tensor, is_graph


class Dropout(Op):
    """``x * mask``: the mask holds 0 or ``1/(1-p)``, per element or per (n, c) map.

    Both paths save the mask with a scale (the generic one a scaled float mask and 1, the
    GPU kernel a uint8 mask and ``1/(1-p)``), and the generic backward multiplies by both,
    so a ``create_graph`` backward reuses the mask instead of drawing a new one.
    """
    name = "dropout"
    twice_differentiable = True
    gpu_saves_generic = True
    bf16_kernel_gpu = True  # tinynet_dropout_fwd/bwd_bf16 (dropout.cu)

    def __init__(self, p, mask_shape):
        self.p, self.mask_shape = p, mask_shape

    def forward(self, xp, x):
        if self.p >= 1.0:
            mask = xp.zeros(self.mask_shape, dtype=x.dtype)
        else:
            u = _random.generator_for(xp).random(self.mask_shape, dtype="float32")
            mask = (u >= self.p).astype(x.dtype) * x.dtype.type(1.0 / (1.0 - self.p))
        if x.ndim == 4 and mask.shape[2:] == (1, 1):  # dropout2d: the mask in x's memory order
            laid_out = xp.empty_like(x[:, :, :1, :1], dtype=mask.dtype)
            laid_out[...] = mask
            mask = laid_out
        self.save_for_backward(mask, 1)
        return _scale(xp, x, mask)

    def backward(self, xp, gy):
        mask, scale = self.saved
        if is_graph(xp):
            return (gy * mask * scale,)
        return (_scale(xp, gy, mask if scale == 1 else mask * scale),)

    def forward_gpu(self, xp, x):
        if not cuda.supported(x, half=True):
            return self.forward(xp, x)
        y, mask, scale = gpu_ops.dropout_fwd(x, self.p, self.mask_shape)
        self.save_for_backward(mask, scale)
        self.dtype = x.dtype  # the kernel's type (its scale argument is of it, float32 for the half types)
        return y

    def backward_gpu(self, xp, gy):
        mask, scale = self.saved
        if mask.dtype != xp.uint8:  # forward fell back to the generic path
            return self.backward(xp, gy)
        return (gpu_ops.dropout_bwd(gy.astype(self.dtype, copy=False), mask, scale),)


def _scale(xp, x, mask):
    """``x * mask``, the result in ``x``'s memory layout (a batch-last convolution output
    stays batch-last instead of turning back into C order)."""
    return xp.multiply(x, mask, out=xp.empty_like(x, dtype=xp.result_type(x, mask)))


def _check_p(op, p):
    """``p`` as a float in [0, 1] (ArgumentTypeError for a non-number, ArgumentError outside)."""
    return check_number(op, "p", p, 0.0, 1.0)


def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1/(1-p)``.

    Args:
        input: float tensor of any shape. p (float): drop probability, default 0.5.
        training (bool): identity when False. Default True.

    Raises:
        ValueError: ``p`` outside [0, 1].
    """
    check_tensor("dropout", "input", input)
    p = _check_p("dropout", p)
    if not training or p == 0.0:
        return input
    return Dropout(float(p), input.shape).apply(input)


def _channel_dropout(op, input, p, training, spatial, layouts):
    """Whole channels zeroed: the mask has the input's shape with its last ``spatial`` dims
    set to 1 (dropout1d: 1, dropout2d: 2); ``layouts`` names the accepted shapes."""
    p = _check_p(op, p)
    if not isinstance(input, Tensor) or input.ndim not in (spatial + 1, spatial + 2):
        got = getattr(input, "shape", type(input).__name__)
        raise ShapeError(f"{op}: expected input of shape {layouts}, got {got}")
    if not training or p == 0.0:
        return input
    return Dropout(float(p), input.shape[:-spatial] + (1,) * spatial).apply(input)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels: each (n, c) signal of a (N, C, L) or (C, L) input with
    probability ``p``, the others scaled by ``1 / (1 - p)``.

    Raises:
        ValueError: ``p`` outside [0, 1]. ShapeError: input is not 2-D or 3-D.
    """
    return _channel_dropout("dropout1d", input, p, training, 1, "(N, C, L) or (C, L)")


_DROPOUT2D_RANK = ("dropout2d: Received a {}-D input to dropout2d, which is deprecated and will result in an error "
                   "in a future release. To retain the behavior and silence this warning, please use dropout "
                   "instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial "
                   "dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).")
_DROPOUT2D_3D = ("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
                 "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
                 "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
                 "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d "
                 "instead.")


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels: each (n, c) map of a (N, C, H, W) input with probability ``p``,
    the others scaled by ``1 / (1 - p)``.

    Other ranks behave as in PyTorch 2.13, each with PyTorch's ``UserWarning`` (in training
    and in evaluation alike): a 3-D input is read as (N, C, L), so each (n, c) row is dropped
    whole (PyTorch's historical behaviour, not (C, H, W)); a 2-D input (N, C) drops single
    elements; 5-D and more drop (n, c) blocks. The dimensions after the first two always share
    one mask value.

    Raises:
        ValueError: ``p`` outside [0, 1]. ShapeError: input with fewer than 2 dimensions.
    """
    p = _check_p("dropout2d", p)
    check_tensor("dropout2d", "input", input)
    if input.ndim not in (3, 4):
        warnings.warn(_DROPOUT2D_RANK.format(input.ndim), UserWarning, stacklevel=2)
    if input.ndim == 3:
        warnings.warn(_DROPOUT2D_3D, UserWarning, stacklevel=2)
    if input.ndim < 2:
        raise ShapeError(f"dropout2d: Feature dropout requires at least 2 dimensions in the input, got shape "
                         f"{tuple(input.shape)}")
    if not training or p == 0.0:
        return input
    return Dropout(float(p), input.shape[:2] + (1,) * (input.ndim - 2)).apply(input)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels: each (n, c) volume of a (N, C, D, H, W) input with probability ``p``.

    Raises:
        ValueError: ``p`` outside [0, 1]. ShapeError: input is not 4-D or 5-D.
    """
    return _channel_dropout("dropout3d", input, p, training, 3, "(N, C, D, H, W) or (C, D, H, W)")

