"""Which ops autocast runs in which precision: PyTorch's op lists, for the ops tinynet has.

Each device type has its own table, as in PyTorch (``aten/src/ATen/autocast_mode.h`` and
``.cpp``, and the "Autocast Op Reference" of PyTorch's AMP documentation), keyed by the
name of tinynet's public function (which is PyTorch's):

- ``"lower"``: the float inputs are cast to the autocast dtype (float16 or bfloat16) and
  the op runs, and returns, in it (matrix products, convolutions: where tensor cores and
  halved memory traffic pay, and float32 accumulation keeps the sums accurate);
- ``"fp32"``: the float inputs are cast to float32 (reductions, exponentials and
  logarithms, normalisations and losses: where float16's range or precision is not
  enough);
- ``"promote"``: ops with several float inputs run in the widest of their dtypes;
- ``"banned"``: raises under autocast (PyTorch's binary_cross_entropy on CUDA, which is
  unsafe in float16: use binary_cross_entropy_with_logits).

An op in no table runs in whatever dtype its inputs have, with the usual promotion (ReLU,
pooling, reshapes, ``add`` of a float16 and a float32 tensor gives float32). float64
inputs are never cast. Composite functions that PyTorch decomposes get the policy their
parts give: ``cross_entropy`` is ``log_softmax`` + ``nll_loss`` (float32 on both device
types' lists through ``nll_loss``), ``softmin`` and ``normalize`` run as ``softmax`` and
``norm``; ``local_response_norm`` (one op in tinynet) is float32 on CUDA because PyTorch's
decomposition ends in ``pow``, which is.

The CPU table differs from the CUDA one: PyTorch's CPU autocast keeps softmax, exp, log,
sum and the norms in whatever dtype they get (they already compute in float32 inside and
round once), and casts only the losses and ``prod`` to float32. ``tests/test_amp.py``
checks every entry's output dtype against ``torch.autocast("cpu", ...)``.
"""

_LOWER_COMMON = ("linear", "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "prelu", "addmm",
                 "matmul", "einsum", "mm", "addbmm", "baddbmm", "bmm", "scaled_dot_product_attention",
                 "conv3d", "conv_transpose3d", "conv_tbc")

_FP32_LOSSES = ("nll_loss", "cross_entropy", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div",
                "poisson_nll_loss", "cosine_embedding_loss", "margin_ranking_loss", "soft_margin_loss",
                "binary_cross_entropy_with_logits")

CUDA = {
    **{name: "lower" for name in _LOWER_COMMON + ("addmv", "mv")},
    **{name: "fp32" for name in _FP32_LOSSES + (
        "exp", "expm1", "log", "log10", "log2", "log1p", "reciprocal", "rsqrt", "tan", "pow", "softplus",
        "layer_norm", "group_norm", "logsumexp", "interpolate", "prod", "softmax", "log_softmax", "softmin",
        "cumprod", "cumsum", "sum", "norm", "normalize", "acos", "asin", "cosh", "sinh", "cosine_similarity",
        "local_response_norm", "multilabel_margin_loss")},
    **{name: "promote" for name in ("dot", "scatter_add")},
    "binary_cross_entropy": "banned",
}

CPU = {
    **{name: "lower" for name in _LOWER_COMMON},
    **{name: "fp32" for name in _FP32_LOSSES + ("binary_cross_entropy", "prod")},
    # PyTorch's CPU list runs these in float32 as well (autocast_mode.cpp): 3-D pooling, CTC, grid sampling
    **{name: "fp32" for name in ("max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d",
                                 "max_unpool3d", "fractional_max_pool2d", "fractional_max_pool3d", "ctc_loss",
                                 "multilabel_margin_loss", "grid_sample")},
}

TABLES = {"cuda": CUDA, "cpu": CPU}
NAMES = frozenset(CUDA) | frozenset(CPU)  # every function that consults the tables (autocast.autocast_op)
