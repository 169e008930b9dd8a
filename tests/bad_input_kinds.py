"""Argument kinds and hypothesis strategies for the bad-input walk (tests/test_bad_input_walk.py).

Each parameter of a public entry point gets a *kind*, guessed from its default value or
its name (``dim`` is a dimension, ``kernel_size`` a size, ``p`` a number, ...). A kind has
a strategy of *plausible* values (right type, random and often wrong value: a dim out of
range, a shape that does not broadcast, an int tensor where a float one is needed) and
every kind also draws from ``GARBAGE`` (a str, None, a list of str, a float where an int
is needed, a negative size, a NumPy array, ...). Tensors are drawn as :class:`TensorSpec`
recipes (readable in a falsifying example) and made on the test's device by :func:`make`.
"""
import numpy
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tinynet


class TensorSpec:
    """A tensor to make on the test's device: shape, dtype and layout (``contiguous``, or a
    ``transposed``/``sliced`` non-contiguous view with the same shape)."""

    def __init__(self, shape, dtype, layout="contiguous", low=-3, high=3, requires_grad=False):
        self.shape, self.dtype, self.layout, self.low, self.high = tuple(shape), dtype, layout, low, high
        self.requires_grad = requires_grad

    def __repr__(self):
        return (f"T{self.shape}:{self.dtype}" + ("" if self.layout == "contiguous" else f":{self.layout}")
                + (":grad" if self.requires_grad else ""))

    def make(self, device):
        rng = numpy.random.default_rng(len(self.shape))
        shape = self.shape[::-1] if self.layout == "transposed" else self.shape
        if self.layout == "sliced" and shape:
            shape = shape[:-1] + (2 * shape[-1],)
        if self.dtype == "bool":
            a = rng.random(shape) < 0.5
        elif self.dtype == "int64":
            a = rng.integers(self.low, self.high + 1, shape)
        else:
            a = rng.uniform(self.low, self.high, shape).astype(self.dtype)
        t = tinynet.tensor(a, device=device, requires_grad=self.requires_grad and self.layout == "contiguous")
        if self.layout == "transposed":
            t = t.permute(*reversed(range(t.ndim)))
        elif self.layout == "sliced" and shape:
            t = t[..., ::2]
        return t


class Built:
    """Any other object to make on the test's device (a module, an optimizer): ``build(device)``."""

    def __init__(self, label, build):
        self.label, self.build = label, build

    def __repr__(self):
        return self.label

    def make(self, device):
        return self.build(device)


def make(value, device):
    """``value`` with every TensorSpec or Built inside (lists, tuples, dicts) made on ``device``."""
    if isinstance(value, (TensorSpec, Built)):
        return value.make(device)
    if isinstance(value, (list, tuple)):
        return type(value)(make(v, device) for v in value)
    if isinstance(value, dict):
        return {k: make(v, device) for k, v in value.items()}
    return value


class Opaque:
    """An object of no type any op takes."""

    def __repr__(self):
        return "Opaque()"


SHAPES = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=4)
LAYOUTS = st.sampled_from(["contiguous", "contiguous", "transposed", "sliced"])


def tensors(dtypes=("float32", "float64", "int64", "bool"), shapes=SHAPES, low=-3, high=3):
    return st.builds(TensorSpec, shapes, st.sampled_from(dtypes), LAYOUTS, st.just(low), st.just(high))


# Bad values that fit no parameter (or only by accident): the wrong type, a negative or
# zero count, non-finite floats, an empty or a huge-rank tensor, a NumPy array, ...
GARBAGE = st.one_of(
    st.sampled_from(["a", "", None, 1.5, -0.5, float("nan"), float("inf"), -1, -7, 0, 7, True, 1j, b"x",
                     [1, "x"], ["a"], [], (2, -3), (1.5,), {}, Opaque()]),
    st.builds(numpy.zeros, st.sampled_from([(2, 3), (0,), ()])),
    st.builds(TensorSpec, st.sampled_from([(0,), (2, 0, 3), (1, 1, 1, 1, 1, 2)]),
              st.sampled_from(["float32", "int64", "bool"])),
    st.text(max_size=4),
)

SMALL_INT = st.integers(-3, 6)
FLOAT = st.one_of(st.floats(-2, 3, allow_nan=False, width=32), st.sampled_from([0.0, 1.0, float("nan")]))
STRINGS = st.sampled_from(["mean", "sum", "none", "avg", "zeros", "reflect", "replicate", "circular",
                           "constant", "nearest", "bilinear", "linear", "tanh", "relu", "gelu",
                           "floor", "trunc", "valid", "same", "ij,jk->ik", "i,i->", "ii", "...", "ortho", "forward",
                           "backward"])
DTYPES = st.sampled_from([tinynet.float32, tinynet.float64, tinynet.int64, tinynet.bool, tinynet.float16,
                          "float32", "float33", numpy.float64, int, float])
DEVICES = st.sampled_from(["cpu", "cuda:9", "tpu", "cpu:1", -1, tinynet.device("cpu")])
SIZE = st.one_of(st.integers(-1, 4), st.lists(st.integers(-1, 4), max_size=4).map(tuple))

PARAMS = st.lists(st.builds(TensorSpec, SHAPES, st.sampled_from(["float32", "float64"]),
                           requires_grad=st.booleans()), max_size=2)
OPTIMIZER = st.just(Built("SGD([T(2,):grad], lr=0.1)",
                          lambda d: tinynet.optim.SGD([tinynet.zeros(2, device=d, requires_grad=True)], lr=0.1)))

KINDS = {
    "tensor": tensors(),
    "index": tensors(("int64",), low=-5, high=5),
    "mask": tensors(("bool",)),
    "tensors": st.lists(tensors(), max_size=3),
    "dim": st.one_of(st.integers(-5, 5), st.none(), st.lists(st.integers(-5, 5), max_size=3).map(tuple)),
    "size": SIZE,
    "int": SMALL_INT,
    "float": FLOAT,
    "floats": st.lists(FLOAT, min_size=1, max_size=3).map(tuple),
    "bool": st.booleans(),
    "str": STRINGS,
    "dtype": DTYPES,
    "device": DEVICES,
    "callable": st.sampled_from([abs, None, "relu", tinynet.relu]),
    "params": PARAMS,
    "optimizer": OPTIMIZER,
}

_NAME_KINDS = {
    "index": ["index", "indices"],
    "mask": ["mask", "condition", "attn_mask", "key_padding_mask", "src_mask", "tgt_mask", "memory_mask",
             "src_key_padding_mask", "tgt_key_padding_mask", "memory_key_padding_mask"],
    "tensors": ["tensors", "operands", "inputs", "values", "args", "modules"],
    "params": ["params", "parameters"],
    "optimizer": ["optimizer"],
    "dim": ["dim", "dims", "dim0", "dim1", "dim2", "start_dim", "end_dim", "source", "destination",
            "dimension"],
    "size": ["size", "shape", "s", "sizes", "sizes_", "more_dims", "output_size", "normalized_shape",
             "unflattened_size", "kernel_size", "stride", "padding", "dilation", "output_padding", "pad",
             "split_size_or_sections", "indices_or_sections", "repeats", "shifts"],
    "int": ["n", "m", "k", "chunks", "steps", "diagonal", "offset", "length", "num_classes", "ignore_index",
            "padding_idx", "start", "end", "step", "decimals", "low", "high", "seed", "num_samples", "groups",
            "in_features", "out_features", "in_channels", "out_channels", "num_features", "input_size",
            "hidden_size", "num_layers", "num_embeddings", "embedding_dim", "num_groups", "num_channels",
            "embed_dim", "num_heads", "d_model", "nhead", "dim_feedforward", "upscale_factor",
            "downscale_factor", "num_parameters", "num_chunks", "proj_size", "kdim", "vdim", "d",
            "num_encoder_layers", "num_decoder_layers", "step_size", "T_max", "T_0", "T_mult",
            "total_iters", "total_steps", "epochs", "steps_per_epoch", "last_epoch", "patience"],
    "float": ["p", "eps", "momentum", "lr", "weight_decay", "alpha", "beta", "rtol", "atol", "margin",
              "scale_factor", "threshold", "negative_slope", "min_val", "max_val", "label_smoothing",
              "max_norm", "norm_type", "delta", "dropout", "dropout_p", "scale", "rho", "lr_decay",
              "initial_accumulator_value", "momentum_decay", "dampening", "layer_norm_eps", "init",
              "fill_value", "min_value", "max_value", "base", "correction", "lambd", "gamma", "max_lr",
              "eta_min", "factor", "start_factor", "end_factor", "power", "pct_start", "div_factor"],
    "floats": ["betas"],
    "bool": ["size_average", "reduce", "align_corners", "recompute_scale_factor"],
    "str": ["reduction", "mode", "padding_mode", "nonlinearity", "approximate", "rounding_mode", "equation", "norm"],
    "dtype": ["dtype"],
    "device": ["device", "map_location"],
    "callable": ["activation", "hook", "f", "lr_lambda"],
}
NAME_KIND = {name: kind for kind, names in _NAME_KINDS.items() for name in names}


def kind_of(param):
    """The kind of an ``inspect.Parameter``: from its name, else from its default's type,
    else a tensor (most parameters of a tensor library are tensors)."""
    if param.name in NAME_KIND:
        return NAME_KIND[param.name]
    default = param.default
    for kind, types in (("bool", bool), ("int", int), ("float", float), ("str", str)):
        if isinstance(default, types):
            return kind
    return "tensor"


# A flag (``inplace``) or a mode string is tested as PyTorch does, by truth value or ``==``:
# there a NumPy array raises NumPy's own "truth value of an array is ambiguous" before any
# check could run (in PyTorch too), so those kinds get no arrays.
NO_ARRAYS = GARBAGE.filter(lambda v: not isinstance(v, numpy.ndarray))


def values(kind):
    """Plausible values of ``kind`` (twice as likely) or garbage."""
    return st.one_of(KINDS[kind], KINDS[kind], NO_ARRAYS if kind in ("bool", "str") else GARBAGE)
