"""``tinynet.nn.functional`` (PyTorch's ``F``): the layer math as functions, with
PyTorch's names and argument orders. Every name is re-exported from :mod:`tinynet.ops`,
where the op, its backward and its GPU path live.
"""
from ..ops.activation import bias_relu, gelu, leaky_relu, leaky_relu_, log_softmax, relu, relu_, sigmoid, softmax, tanh
from ..ops.arith import add, mul, pow, sub
from ..ops.division import div, remainder
from ..ops.attention import scaled_dot_product_attention
from ..ops.compare_extrema import maximum, minimum
from ..ops.select import where
from ..ops.conv import conv1d, conv2d
from ..ops.conv_transpose import conv_transpose1d, conv_transpose2d
from ..ops.interpolate import (channel_shuffle, interpolate, pixel_shuffle, pixel_unshuffle, upsample,
                               upsample_bilinear, upsample_nearest)
from ..ops.dropout import dropout, dropout1d, dropout2d, dropout3d
from ..ops.linear import bilinear, linear
from ..ops.loss import cross_entropy, mse_loss, nll_loss
from ..ops.loss_binary import (binary_cross_entropy, binary_cross_entropy_with_logits, cosine_embedding_loss,
                               margin_ranking_loss, soft_margin_loss)
from ..ops.loss_pointwise import gaussian_nll_loss, huber_loss, kl_div, l1_loss, poisson_nll_loss, smooth_l1_loss
from ..ops.normalization import batch_norm, normalize, rms_norm
from ..ops.layer_norm import group_norm, instance_norm, layer_norm
from ..ops.local_response_norm import local_response_norm
from ..ops.embedding import embedding, one_hot
from ..ops.smooth_activations import (celu, celu_, elu, elu_, glu, logsigmoid, mish, selu, selu_, silu, softmin,
                                      softplus, softsign, tanhshrink)
from ..ops.piecewise_activations import (hardshrink, hardsigmoid, hardswish, hardtanh, hardtanh_, prelu, relu6,
                                         softshrink, threshold, threshold_)
from ..ops.pooling import adaptive_avg_pool2d, avg_pool2d, max_pool2d
from ..ops.pooling1d import (adaptive_avg_pool1d, avg_pool1d, max_pool1d, max_pool1d_with_indices,
                             max_pool2d_with_indices)
from ..ops.unpool import max_unpool1d, max_unpool2d
from ..ops.embedding_bag import embedding_bag
from ..ops.adaptive_max import adaptive_max_pool1d, adaptive_max_pool2d
from ..ops.pooling_lp import lp_pool1d, lp_pool2d
from ..ops.random_activations import alpha_dropout, feature_alpha_dropout, gumbel_softmax, rrelu, rrelu_
from ..ops.loss_distance import hinge_embedding_loss, multilabel_soft_margin_loss, triplet_margin_loss
from ..ops.loss_distance import multi_margin_loss, triplet_margin_with_distance_loss
from ..ops.unfold import fold, unfold
from ..ops.distance import cosine_similarity, pairwise_distance, pdist
from ..ops.reduction import amax, amin, argmax, argmin, max, mean, min, sum
from ..ops.stats import var
from ..ops.join import cat, stack
from ..ops.pad import pad
from ..ops.shape import expand, flatten, permute, reshape, squeeze, transpose, unsqueeze
from ..ops.unary import abs, clamp, exp, log, sqrt

__all__ = [
    "bias_relu", "gelu", "leaky_relu", "log_softmax", "relu", "sigmoid", "softmax", "tanh", "conv2d", "linear",
    "dropout", "dropout2d", "cross_entropy", "mse_loss", "nll_loss", "batch_norm", "adaptive_avg_pool2d",
    "avg_pool2d", "max_pool2d", "pad", "scaled_dot_product_attention",
    "layer_norm", "group_norm", "instance_norm", "local_response_norm", "embedding", "one_hot", "normalize", "silu",
    "softplus", "elu",
    "elu_", "selu", "selu_", "celu", "celu_", "mish", "logsigmoid", "softsign", "tanhshrink", "glu", "softmin",
    "hardtanh", "hardtanh_", "relu6", "hardswish", "hardsigmoid", "prelu",
    "conv1d", "conv_transpose1d", "conv_transpose2d", "interpolate", "upsample", "upsample_nearest",
    "upsample_bilinear", "pixel_shuffle", "pixel_unshuffle",
    # kept for code written against tinynet's earlier F namespace (PyTorch's F does not have these)
    "abs", "add", "amax", "amin", "argmax", "argmin", "cat", "clamp", "div", "exp", "expand", "flatten", "log",
    "max", "maximum", "mean", "min", "minimum", "mul", "permute", "pow", "remainder", "reshape", "sqrt", "squeeze",
    "stack", "sub", "sum", "transpose", "unsqueeze", "var", "where",
]
__all__ += ["binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss", "margin_ranking_loss",
            "soft_margin_loss", "gaussian_nll_loss", "huber_loss", "kl_div", "l1_loss", "poisson_nll_loss",
            "smooth_l1_loss"]
__all__ += ["cosine_similarity", "pairwise_distance", "threshold", "threshold_", "hardshrink", "softshrink",
            "rms_norm"]
__all__ += ["max_pool1d", "avg_pool1d", "adaptive_avg_pool1d"]
__all__ += ["adaptive_max_pool1d", "adaptive_max_pool2d", "bilinear", "channel_shuffle", "lp_pool1d", "lp_pool2d",
            "pdist", "multi_margin_loss", "triplet_margin_with_distance_loss"]
__all__ += ["alpha_dropout", "dropout3d", "feature_alpha_dropout", "gumbel_softmax", "rrelu", "rrelu_"]
__all__ += ["hinge_embedding_loss", "triplet_margin_loss"]
__all__ += ["unfold", "fold"]
__all__ += ["relu_", "leaky_relu_", "dropout1d", "multilabel_soft_margin_loss"]
__all__ += ["max_pool1d_with_indices", "max_pool2d_with_indices", "max_unpool1d", "max_unpool2d"]
__all__ += ["embedding_bag"]
from ..ops.conv3d import conv3d  # noqa: E402
from ..ops.conv_transpose3d import conv_transpose3d  # noqa: E402
from ..ops.pooling3d import avg_pool3d, max_pool3d, max_pool3d_with_indices  # noqa: E402
from ..ops.adaptive_pool3d import (adaptive_avg_pool3d, adaptive_max_pool3d,  # noqa: E402
                                   adaptive_max_pool3d_with_indices)
from ..ops.adaptive_max import adaptive_max_pool1d_with_indices, adaptive_max_pool2d_with_indices  # noqa: E402
from ..ops.pooling_lp import lp_pool3d  # noqa: E402
from ..ops.unpool import max_unpool3d  # noqa: E402

__all__ += ["conv3d", "conv_transpose3d", "avg_pool3d", "max_pool3d", "max_pool3d_with_indices",
            "adaptive_avg_pool3d", "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices",
            "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices", "lp_pool3d", "max_unpool3d"]
from ..ops.ctc_loss import ctc_loss  # noqa: E402
from ..ops.loss_multilabel import multilabel_margin_loss  # noqa: E402
from ..ops.conv_tbc import conv_tbc  # noqa: E402
from ..ops.interpolate import native_channel_shuffle  # noqa: E402
from ..ops.linear_cross_entropy import linear_cross_entropy  # noqa: E402

__all__ += ["ctc_loss", "multilabel_margin_loss", "conv_tbc", "native_channel_shuffle", "linear_cross_entropy"]
from ..ops.grid_sample import (GRID_SAMPLE_INTERPOLATION_MODES, GRID_SAMPLE_PADDING_MODES,  # noqa: E402,F401
                               affine_grid, grid_sample)
from ..ops.fractional_pool import (fractional_max_pool2d, fractional_max_pool2d_with_indices,  # noqa: E402
                                   fractional_max_pool3d, fractional_max_pool3d_with_indices)

__all__ += ["affine_grid", "grid_sample",
            "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
            "fractional_max_pool3d_with_indices"]
from ..ops.mha import multi_head_attention_forward  # noqa: E402

__all__ += ["multi_head_attention_forward"]
from ..ops.grouped_mm import ScalingType, SwizzleType, grouped_mm, scaled_grouped_mm, scaled_mm  # noqa: E402
from ..ops.torch_function import (handle_torch_function, has_torch_function, has_torch_function_unary,  # noqa: E402
                                  has_torch_function_variadic)
from ..ops.functional_support import (assert_int_or_pair, boolean_dispatch, reproducibility_notes,  # noqa: E402,F401
                                      tf32_notes)
from ..tensor import Tensor  # noqa: E402  (PyTorch's F re-exports the tensor class too)

__all__ += ["ScalingType", "SwizzleType", "grouped_mm", "scaled_grouped_mm", "scaled_mm", "handle_torch_function",
            "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic", "assert_int_or_pair",
            "boolean_dispatch", "Tensor"]
from ..ops.functional_support import BroadcastingList1, BroadcastingList2, BroadcastingList3  # noqa: E402,F401
# (constants and annotations, like GRID_SAMPLE_*_MODES and the notes above, stay out of __all__: it lists the functions)
