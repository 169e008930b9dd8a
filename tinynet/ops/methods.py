"""The Tensor's math methods and operators, attached once to :class:`tinynet.Tensor`.

``x.exp()`` is ``tinynet.exp(x)``, ``x + y`` is ``tinynet.add(x, y)``, and so on: every
method is the function of the same name in :mod:`tinynet.ops` with the tensor as its
first argument (DeZero's way), so a method needs no code of its own and the ops need not
import :mod:`tinynet.tensor` back. Methods whose signature differs from the function
(``view(*shape)``, ``permute(*dims)``, ``where(condition, other)``) are small adapters here.
"""
from ..errors import ArgumentTypeError, ShapeError
from ..tensor import Tensor
from . import (activation, arith, blas, blas_products, calculus, compare, compare_extrema, conversion,
               counting, creation, diagonal, division, gather, index_update, indexing, inplace, inplace_methods,
               pointwise_binary, pointwise_sign, pointwise_special, quantile, rearrange, reduction, reduction_nan,
               scan, scatter_views, search, select, shape, sorting, stats, tensor_properties, unary)
from . import (inplace_torch, inplace_views, linalg_legacy, linalg_torch, norms_torch, piecewise_activations,
               pointwise_bits, sampling_inplace, scatter_reduce, strided, tensor_types, view_copies)
from . import complex as complex_ops, special_misc, stft as stft_ops
from . import split as split_ops
from .util import check_tensor, sizes

# name -> function taking the tensor first; attached as is
SAME_SIGNATURE = {
    arith: ["add", "sub", "mul", "pow", "neg", "negative", "multiply", "subtract", "positive"],
    division: ["div", "true_divide", "floor_divide", "remainder", "divide"],
    pointwise_binary: ["atan2", "arctan2", "hypot", "logaddexp", "fmod", "lerp", "addcmul", "addcdiv", "logaddexp2",
                       "float_power"],
    pointwise_sign: ["signbit", "copysign", "heaviside", "sgn", "fix"],
    pointwise_special: ["xlogy", "logit", "sinc"],
    search: ["unique"],
    calculus: ["diff"],
    blas_products: ["trace", "kron", "inner", "cross", "vdot", "addr"],
    counting: ["bincount", "histc", "unique_consecutive", "histogram"],
    index_update: ["index_add", "index_copy", "index_fill", "masked_scatter", "index_put"],
    select: ["masked_fill", "masked_select"],
    compare_extrema: ["maximum", "minimum", "fmax", "fmin"],
    unary: ["exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "reciprocal", "square", "abs",
            "absolute", "sin", "cos", "tan", "erf", "erfc", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
            "atanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "exp2", "sign", "floor", "ceil",
            "round", "trunc", "clamp", "clip", "clamp_min", "clamp_max", "deg2rad", "rad2deg", "frac", "nan_to_num"],
    activation: ["sigmoid", "tanh", "relu", "softmax", "log_softmax", "relu_", "sigmoid_", "tanh_"],
    compare: ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
              "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
              "bitwise_xor", "bitwise_not", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "isclose",
              "allclose", "equal"],
    reduction: ["sum", "mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin", "all", "any",
                "count_nonzero", "aminmax"],
    reduction_nan: ["nansum", "nanmean", "nanmedian"],
    stats: ["var", "std", "logsumexp", "norm", "cov", "corrcoef"],
    shape: ["reshape", "view", "view_as", "reshape_as", "permute", "transpose", "swapaxes", "swapdims", "t",
            "movedim", "moveaxis", "flatten", "unflatten", "squeeze", "unsqueeze", "expand", "expand_as",
            "broadcast_to", "ravel"],
    indexing: ["index_select", "nonzero", "argwhere", "nonzero_static"],
    gather: ["gather", "scatter", "scatter_add", "take_along_dim", "take"],
    blas: ["matmul", "mm", "bmm", "mv", "dot", "outer", "ger", "addmm", "addmv", "baddbmm", "addbmm"],
    conversion: ["to", "type", "type_as", "float", "double", "half", "bfloat16", "long", "int", "short", "char",
                 "byte", "bool", "cpu", "cuda", "clone", "contiguous"],
    split_ops: ["chunk", "split", "unbind", "tensor_split", "narrow", "unfold", "hsplit", "vsplit", "dsplit"],
    sorting: ["sort", "argsort", "msort", "topk", "kthvalue", "median", "mode"],
    scan: ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"],
    norms_torch: ["dist", "renorm"],
    stft_ops: ["stft", "istft"],
    linalg_legacy: ["cholesky_solve", "cholesky_inverse", "lu", "lu_solve", "triangular_solve"],
    piecewise_activations: ["prelu", "hardshrink"],
    rearrange: ["repeat", "repeat_interleave", "flip", "roll", "fliplr", "flipud", "rot90", "tile"],
    diagonal: ["tril", "triu", "diag", "diagonal", "diag_embed", "diagflat"],
    inplace: ["add_", "sub_", "mul_", "div_", "pow_", "zero_", "fill_", "copy_", "clamp_", "clip_", "uniform_",
              "normal_", "masked_fill_", "scatter_", "scatter_add_", "exp_", "log_",
              "sqrt_", "abs_", "neg_", "floor_", "ceil_", "round_", "sign_", "reciprocal_", "square_"],
}


def _where(self, condition, other):
    """``tinynet.where(condition, self, other)``."""
    return select.where(condition, self, other)


def _or(value, default):
    """``value``, or ``default`` when it is None (``or`` would ask an array or tensor for its truth)."""
    return default if value is None else value


def _new(maker):
    def new(self, *size, dtype=None, device=None, requires_grad=False):
        return maker(*size, dtype=_or(dtype, self.dtype), device=_or(device, self.device), requires_grad=requires_grad)
    new.__doc__ = f"``tinynet.{maker.__name__}(size)`` with this tensor's dtype and device by default."
    return new


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """``tinynet.full(size, fill_value)`` with this tensor's dtype and device by default."""
    return creation.full(size, fill_value, dtype=_or(dtype, self.dtype), device=_or(device, self.device),
                         requires_grad=requires_grad)


def _new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """``tinynet.tensor(data)`` with this tensor's dtype and device by default."""
    return creation.tensor(data, dtype=_or(dtype, self.dtype), device=_or(device, self.device),
                           requires_grad=requires_grad)


def _sum_to_size(self, *size):
    """``self`` summed down to ``size``, a shape that broadcasts to ``self``'s (dims that
    broadcasting adds or stretches are summed, stretched ones kept with size 1). Differentiable.

    Raises:
        ShapeError: ``size`` does not broadcast to ``self``'s shape.
    """
    check_tensor("sum_to_size", "self", self)
    if not size:
        raise ArgumentTypeError("sum_to_size: missing the required argument size")
    shape = sizes("sum_to_size", size, "size")
    lead = self.ndim - len(shape)
    if lead < 0 or any(n not in (1, m) for n, m in zip(shape, self.shape[lead:])):
        raise ShapeError(f"sum_to_size: size {list(shape)} is not expandable to size {list(self.shape)}")
    out = reduction.sum(self, tuple(range(lead))) if lead else self
    stretched = tuple(k for k, (n, m) in enumerate(zip(shape, out.shape)) if n == 1 and m != 1)
    return reduction.sum(out, stretched, keepdim=True) if stretched else out


def _iter(self):
    if self.ndim == 0:
        raise ArgumentTypeError("iter: iteration over a 0-d tensor")
    return (indexing.getitem(self, i) for i in range(self.shape[0]))


def _contains(self, element):
    return bool(compare.eq(self, element).array.any())


def _floordiv_(self, other):
    return inplace.div_(self, other, rounding_mode="floor")


OPERATORS = {
    "__add__": arith.add, "__radd__": lambda s, o: arith.add(o, s),
    "__sub__": arith.sub, "__rsub__": lambda s, o: arith.sub(o, s),
    "__mul__": arith.mul, "__rmul__": lambda s, o: arith.mul(o, s),
    "__truediv__": division.div, "__rtruediv__": lambda s, o: division.div(o, s),
    "__floordiv__": division.floor_divide, "__rfloordiv__": lambda s, o: division.floor_divide(o, s),
    "__mod__": division.remainder, "__rmod__": lambda s, o: division.remainder(o, s),
    "__pow__": arith.pow, "__rpow__": lambda s, o: arith.pow(o, s),
    "__matmul__": blas.matmul, "__rmatmul__": lambda s, o: blas.matmul(o, s),
    "__neg__": arith.neg, "__pos__": lambda s: s, "__abs__": unary.abs, "__invert__": compare.bitwise_not,
    "__and__": compare.bitwise_and, "__rand__": lambda s, o: compare.bitwise_and(o, s),
    "__or__": compare.bitwise_or, "__ror__": lambda s, o: compare.bitwise_or(o, s),
    "__xor__": compare.bitwise_xor, "__rxor__": lambda s, o: compare.bitwise_xor(o, s),
    "__eq__": compare.eq, "__ne__": compare.ne, "__lt__": compare.lt, "__le__": compare.le,
    "__gt__": compare.gt, "__ge__": compare.ge,
    "__getitem__": indexing.getitem, "__setitem__": inplace.setitem,
    "__iadd__": inplace.add_, "__isub__": inplace.sub_, "__imul__": inplace.mul_, "__itruediv__": inplace.div_,
    "__ifloordiv__": _floordiv_, "__ipow__": inplace.pow_,
    "__iter__": _iter, "__contains__": _contains,
}

ADAPTERS = {
    "where": _where, "sum_to_size": _sum_to_size, "new_zeros": _new(creation.zeros),
    "new_ones": _new(creation.ones),
    "new_empty": _new(creation.empty), "new_full": _new_full, "new_tensor": _new_tensor,
}

PROPERTIES = {"T": shape.T, "mT": shape.mT, **complex_ops.PROPERTIES, **tensor_types.PROPERTIES,
              **view_copies.PROPERTIES}


def attach():
    """Attach every method, operator and property to :class:`tinynet.Tensor` (once, at import)."""
    for module, names in SAME_SIGNATURE.items():
        for name in names:
            setattr(Tensor, name, getattr(module, name))
    for name, fn in {**inplace_methods.METHODS, **tensor_properties.METHODS, **quantile.METHODS,
                     **scatter_views.METHODS, **linalg_torch.METHODS, **complex_ops.METHODS,
                     **special_misc.METHODS, **inplace_torch.METHODS, **tensor_types.METHODS,
                     **pointwise_bits.METHODS, **view_copies.METHODS,
                     **strided.METHODS, **inplace_views.METHODS, **scatter_reduce.METHODS,
                     **sampling_inplace.METHODS}.items():
        setattr(Tensor, name, fn)
    for name, fn in tensor_properties.PROPERTIES.items():
        setattr(Tensor, name, property(fn, doc=f"PyTorch's Tensor.{name}."))
    for name, fn in {**OPERATORS, **ADAPTERS}.items():
        setattr(Tensor, name, fn)
    for name, fn in PROPERTIES.items():
        setattr(Tensor, name, property(fn, doc=fn.__doc__))
    Tensor.__hash__ = object.__hash__  # __eq__ is elementwise; tensors hash by identity


attach()
