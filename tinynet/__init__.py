"""tinynet: a readable NumPy/CuPy deep-learning framework with PyTorch's API.

Tensors live on the CPU (NumPy arrays) or on NVIDIA GPUs (CuPy arrays), side by side;
``TINYNET_BACKEND`` (``auto``, ``numpy``, ``cupy``) picks the default device, see
:mod:`tinynet.backend`. The names here are PyTorch's ``torch.*``: the functions come from
:mod:`tinynet.ops`, the layers from :mod:`tinynet.nn`.
"""
import math as _math
from importlib import metadata as _metadata

import numpy as _numpy

try:
    __version__ = _metadata.version("tinynet")  # the installed distribution's version (pyproject.toml)
except _metadata.PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
from . import backend, devices, errors
from .devices import device
from .dtypes import (bfloat16, bool_, double, finfo, float16, float32, float64, get_default_dtype, half, int8,
                     int16, int32, int64, long, set_default_dtype, short, uint8)
from .dtypes import torch_promote_types as promote_types
from .dtypes import iinfo, torch_can_cast as can_cast
from .dtypes import cdouble, cfloat, complex64, complex128
from .layouts import (channels_last, channels_last_3d, contiguous_format, layout, memory_format, preserve_format,
                      strided)
from .dtypes import bool_ as bool  # noqa: A001  (torch.bool)
from .dtypes import float32 as float  # noqa: A001  (torch.float)
from .dtypes import int32 as int  # noqa: A001  (torch.int)
from .autograd import (enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
                       set_grad_enabled)
from .random import Generator, default_generator, get_rng_state, initial_seed, manual_seed, seed, set_rng_state
from .parallel import get_num_threads, set_num_threads
from .determinism import (are_deterministic_algorithms_enabled, is_deterministic_algorithms_warn_only_enabled,
                          use_deterministic_algorithms)
from .tensor import Tensor
from .size import Size
from . import ops  # noqa: E402  (attaches the Tensor methods)
from .ops.activation import log_softmax, relu, sigmoid, softmax, tanh
from .ops.arith import add, mul, multiply, neg, negative, positive, pow, sub, subtract
from .ops.division import div, divide, floor_divide, remainder, true_divide
from .ops.compare import (allclose, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, eq, equal, ge, greater,
                          greater_equal, gt, isclose, isfinite, isinf, isnan, isneginf, isposinf, le, less,
                          less_equal, logical_and, logical_not, logical_or, logical_xor, lt, ne, not_equal,
                          result_type)
from .ops.conversion import clone
from .ops.creation import (arange, as_tensor, asarray, empty, empty_like, eye, from_dlpack, from_numpy, full,
                           full_like, linspace, logspace, ones, ones_like, tensor, zeros, zeros_like)
from .ops.tensor_properties import (is_complex, is_floating_point, is_inference, is_same_size, is_signed, is_tensor,
                                    numel)
from .ops.gather import gather, scatter, scatter_add, take, take_along_dim
from .ops.indexing import argwhere, index_select, nonzero, nonzero_static
from .ops.join import cat, column_stack, concat, concatenate, dstack, hstack, row_stack, stack, vstack
from .ops.einsum import einsum
from .ops.embedding import torch_embedding as embedding
from .ops.layer_norm import torch_group_norm as group_norm, torch_instance_norm as instance_norm
from .ops.layer_norm import torch_layer_norm as layer_norm
from .ops.piecewise_activations import prelu
from .ops.smooth_activations import celu, celu_, selu, selu_
from .ops.blas import addbmm, addmm, addmv, baddbmm, bmm, dot, ger, matmul, mm, mv, outer
from .ops.blas_products import cross, inner, kron, tensordot, trace
from .ops.rearrange import flip, fliplr, flipud, repeat_interleave, roll, rot90, tile
from .ops.diagonal import block_diag, diag, diag_embed, diagflat, diagonal, tril, triu
from .ops.reduction import all, amax, amin, aminmax, any, argmax, argmin, count_nonzero, max, mean, min, prod, sum
from .ops.reduction_nan import nanmean, nanmedian, nansum
from .ops.scan import cummax, cummin, cumprod, cumsum, logcumsumexp
from .ops.select import masked_fill, masked_select, where
from .ops.compare_extrema import fmax, fmin, maximum, minimum
from .ops.stats import corrcoef, cov, logsumexp, norm, std, std_mean, var, var_mean
from .ops.sampling import (bernoulli, binomial, multinomial, normal, poisson, rand, rand_like, randint, randint_like,
                           randn, randn_like, randperm)
from .ops.split import chunk, dsplit, hsplit, narrow, split, tensor_split, unbind, vsplit
from .ops.sorting import argsort, kthvalue, median, mode, msort, sort, topk
from .ops.shape import (broadcast_to, expand, flatten, movedim, moveaxis, permute, ravel, reshape, squeeze, swapaxes,
                        swapdims, t, transpose, unflatten, unsqueeze, view)
from .ops.broadcast import atleast_1d, atleast_2d, atleast_3d, broadcast_shapes, broadcast_tensors
from .ops.unary import (abs, absolute, ceil, clamp, clamp_max, clamp_min, clip, cos, deg2rad, erf, exp, expm1, floor,
                        frac, log, log1p, log2, log10, nan_to_num, rad2deg, reciprocal, round, rsqrt, sign, sin, sqrt,
                        square, tan, trunc)
from .ops.distance import cdist, pdist
from .ops.grids import cartesian_prod, combinations, meshgrid, tril_indices, triu_indices, unravel_index, vander
from .ops.adaptive_max import torch_adaptive_max_pool1d as adaptive_max_pool1d
from .ops.linear import bilinear
from .ops.interpolate import channel_shuffle
from .ops.index_update import index_add, index_copy, index_fill, index_put, masked_scatter
from .ops.counting import bincount, histc, histogram, histogramdd, unique_consecutive
from .ops.complex import (angle, conj, conj_physical, imag, is_conj, is_neg, polar, real, resolve_conj, resolve_neg,
                          view_as_complex, view_as_real)
from .ops.complex import complex  # noqa: A001  (torch.complex)
from .ops.calculus import cumulative_trapezoid, diff, gradient, trapezoid, trapz
from .ops.linalg_torch import (cholesky, det, inverse, logdet, matrix_exp, matrix_power, pinverse, qr, slogdet,
                                svd)
from .ops.random_activations import alpha_dropout, feature_alpha_dropout, rrelu, rrelu_
from .ops.search import bucketize, isin, searchsorted, unique
from .ops.pointwise_binary import (addcdiv, addcmul, arctan2, atan2, float_power, fmod, hypot, lerp, logaddexp,
                                   logaddexp2)
from .ops.pointwise_sign import copysign, fix, heaviside, sgn, signbit
from .ops.pointwise_special import logit, sinc, xlogy
from .ops.quantile import nanquantile, quantile
from .ops.scatter_views import diagonal_scatter, select_scatter, slice_scatter
from .ops.unary import (acos, acosh, arccos, arccosh, arcsin, arcsinh, arctan, arctanh, asin, asinh, atan, atanh, cosh,
                        erfc, exp2, sinh)
from .ops.special_gamma import _standard_gamma, digamma, erfinv, igamma, igammac, lgamma, polygamma
from . import autograd, backends, cuda, distributed, nn, optim  # noqa: E402
from . import futures  # noqa: E402  (torch.futures)
from .backends.cuda import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402
from . import linalg  # noqa: E402  (torch.linalg)
from . import accelerator, multiprocessing  # noqa: E402
from . import fft, special  # noqa: E402  (torch.fft, torch.special)
from .ops.special_functions import i0  # noqa: E402
from .ops.special_misc import mvlgamma  # noqa: E402
from .ops.inplace_torch import (abs_, acos_, acosh_, addmv_, arccos_, arccosh_, arcsin_, arcsinh_,  # noqa: E402
                                arctan_, arctanh_, asin_, asinh_, atan_, atanh_, ceil_, clamp_, clamp_max_, clamp_min_,
                                clip_, conj_physical_, cos_, cosh_, deg2rad_, detach, detach_, erf_, erfc_, exp2_,
                                exp_, expm1_, fill_, fix_, floor_, frac_, get_device, i0_, index_put_, log10_,
                                log1p_, log2_, log_, logit_, nan_to_num_, neg_, negative_, rad2deg_, reciprocal_,
                                rsqrt_, sigmoid_, sin_, sinc_, sinh_, sqrt_, square_, tan_, tanh_, trunc_, xlogy_,
                                zero_)
from .ops.inplace_torch import torch_round_ as round_  # noqa: E402
from .ops.functional_torch import (alpha_dropout_, batch_norm, binary_cross_entropy_with_logits,  # noqa: E402
                                   constant_pad_nd, conv_tbc, convolution, cosine_embedding_loss, dropout, dropout_,
                                   embedding_renorm_, feature_alpha_dropout_, feature_dropout, feature_dropout_,
                                   hinge_embedding_loss, kl_div, margin_ranking_loss, max_pool1d_with_indices,
                                   native_batch_norm, native_channel_shuffle, native_dropout, native_group_norm,
                                   native_layer_norm, poisson_nll_loss, triplet_margin_loss)
from .ops.pointwise_bits import (bitwise_left_shift, bitwise_right_shift, frexp, gcd, gcd_, isreal,  # noqa: E402
                                 lcm, lcm_, ldexp, ldexp_, nextafter, rsub)
from .ops.blas_products import addr, vdot  # noqa: E402
from .ops.matrix_functions import chain_matmul  # noqa: E402
from .ops.norms_torch import dist, frobenius_norm, norm_except_dim, nuclear_norm, renorm  # noqa: E402
from .ops.creation_memory import (empty_permuted, empty_strided, fill, from_file, frombuffer,  # noqa: E402
                                  scalar_tensor, to_dlpack)
from .ops.creation_memory import range  # noqa: E402,A004  (torch.range)
from .ops.windows import (bartlett_window, blackman_window, hamming_window, hann_window,  # noqa: E402
                          kaiser_window)
from .ops.view_copies import (adjoint, alias_copy, detach_copy, diagonal_copy, expand_copy,  # noqa: E402
                              narrow_copy, permute_copy, select, select_copy, slice_copy, split_copy,
                              split_with_sizes, split_with_sizes_copy, squeeze_copy, t_copy, transpose_copy,
                              unbind_copy, unfold_copy, unsafe_chunk, unsafe_split, unsafe_split_with_sizes,
                              unsqueeze_copy, view_as_complex_copy, view_as_real_copy, view_copy)
from .ops.strided import as_strided, as_strided_copy, as_strided_scatter  # noqa: E402
from .ops.inplace_views import as_strided_, resize_as_  # noqa: E402
from .ops.scatter_reduce import index_reduce, put, scatter_reduce  # noqa: E402
from .ops.linalg_legacy import (cholesky_inverse, cholesky_solve, lu, lu_solve, lu_unpack,  # noqa: E402
                                pca_lowrank, svd_lowrank, triangular_solve)
from .ops.stft import istft, stft  # noqa: E402
from .ops.rnn_torch import (gru, gru_cell, lstm, lstm_cell, rnn_relu, rnn_relu_cell, rnn_tanh,  # noqa: E402
                            rnn_tanh_cell)
from .ops.tensor_types import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor, DoubleTensor,  # noqa: E402
                               FloatTensor, HalfTensor, IntTensor, LongTensor, ShortTensor, set_default_tensor_type,
                               typename)
# torch.* spellings of functional ops (same functions as tinynet.nn.functional's; the
# signatures are PyTorch's for both)
from .nn.functional import conv3d, conv_transpose3d  # noqa: E402  (torch.conv3d and friends: the same functions)
from .nn.functional import (adaptive_avg_pool1d, avg_pool1d, conv1d, conv2d, conv_transpose1d,  # noqa: E402
                            conv_transpose2d, cosine_similarity, hardshrink, max_pool1d, max_pool2d,
                            pairwise_distance, pixel_shuffle, pixel_unshuffle, relu_, rms_norm, threshold, threshold_)
from . import amp  # noqa: E402
from . import func  # noqa: E402  (torch.func: above nn, for functional_call)
from . import testing  # noqa: E402  (torch.testing: assert_close, make_tensor)
from . import profiler  # noqa: E402  (torch.profiler: records ops only while a profile runs)
from . import jit  # noqa: E402  (torch.jit's eager pass-throughs: no TorchScript compiler)
from . import onnx  # noqa: E402  (torch.onnx: the onnx package is imported by export, not here)
from . import distributions  # noqa: E402  (torch.distributions)
from .amp import autocast, get_autocast_dtype, is_autocast_available, is_autocast_enabled  # noqa: E402
from .amp import GradScaler, clear_autocast_cache, is_autocast_cache_enabled  # noqa: E402
from .amp.autocast_mode import (get_autocast_cpu_dtype, get_autocast_gpu_dtype,  # noqa: E402
                                is_autocast_cpu_enabled)
from .autograd.anomaly import is_anomaly_check_nan_enabled, is_anomaly_enabled, set_anomaly_enabled  # noqa: E402
from .func import vmap  # noqa: E402  (torch.vmap is torch.func.vmap)
from .printoptions import set_printoptions  # noqa: E402
from .cuda.compiled import compile  # noqa: E402  (CUDA graphs of a whole step; eager without a GPU)
from .serialization import load, save
from . import serialization  # noqa: E402
serialization.register_default([nn.Parameter, Size])  # a data-only type: weights_only loads rebuild it

dtype = _numpy.dtype  # torch.dtype: the class of tinynet's dtypes (NumPy's dtype objects, see tinynet.dtypes)
pi = _math.pi          # torch.pi, torch.e, torch.inf, torch.nan, torch.newaxis
e = _math.e
inf = _math.inf
nan = _math.nan
newaxis = None

backends.cudnn.check_always()  # TINYNET_CUDNN=always must fail loudly at import

__version__ = "0.1.0"


def __getattr__(name):
    if name in ("data", "utils", "hub"):  # imported lazily: they pull in rich and the dataset code
        import importlib
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'tinynet' has no attribute {name!r}")


def _assert(condition, message):
    """``assert condition, message`` as a function (``torch._assert``, which model code calls so
    that tracing tools can see the check): raises AssertionError with ``message`` when
    ``condition`` (a bool, or a one-element tensor) is false."""
    assert condition, message


def get_default_device():
    """The device factories use when none is given: the one :func:`set_default_device` chose,
    else ``cuda:<current>`` on the CuPy backend, else ``cpu``."""
    return devices.default_device()


set_default_device = devices.set_default_device


def is_nonzero(input):
    """True when the one-element ``input`` is nonzero.

    Raises:
        ArgumentTypeError: ``input`` is not a Tensor.
        ArgumentError: ``input`` does not have exactly one element.
    """
    errors.check_type("is_nonzero", "input", input, Tensor, "a Tensor")
    return input.__bool__()


__all__ = [name for name in dir() if not name.startswith("_")] + ["data", "utils"]
