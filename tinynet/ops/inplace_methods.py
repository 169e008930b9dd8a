"""The Tensor's in-place methods that are an out-of-place function written back into the
tensor (``x.sin_()``, ``x.atan2_(y)``, ``x.lt_(y)``, ``x.tril_()``, ``x.cumsum_(0)``,
``x.index_add_(...)``, ...), with autograd's in-place rules (:mod:`.inplace`); ``METHODS``
maps each name to its method, and :mod:`.methods` attaches them.

A float result into an integer tensor is refused, as PyTorch refuses it. A comparison
written in place stores 1 and 0 in ``x``'s own dtype, as PyTorch does. ``float_power_``
needs a float64 tensor (PyTorch refuses to write its float64 result into another dtype).
"""
from .. import dtypes
from ..errors import DTypeError
from . import (arith, compare, diagonal, division, index_update, pointwise_binary, pointwise_sign, pointwise_special,
               scan, unary)
from .inplace import composed_method, inplace_apply, unary_inplace
from .util import named

_UNARY = ["sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin",
          "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "erf", "erfc", "exp2", "expm1", "log2", "log10",
          "log1p", "rsqrt", "trunc", "absolute"]

# the elementwise math methods (``x.sin_()``, ...): tests/test_inplace_math.py walks this table
MATH_INPLACE = {**{f"{n}_": unary_inplace(f"{n}_", getattr(unary, n)) for n in _UNARY},
                "negative_": unary_inplace("negative_", arith.neg),
                **{f"{f.__name__}_": composed_method(f"{f.__name__}_", f)
                   for f in (unary.deg2rad, unary.rad2deg, pointwise_special.sinc, unary.frac, pointwise_special.logit,
                             pointwise_special.xlogy)}}

# binary, logical/bitwise, triangle and scan functions: the result written back as it is
_BINARY = {"multiply_": arith.mul, "subtract_": arith.sub, "divide_": division.div, "true_divide_": division.div,
           "floor_divide_": division.floor_divide, "remainder_": division.remainder, "fmod_": pointwise_binary.fmod,
           "atan2_": pointwise_binary.atan2, "arctan2_": pointwise_binary.atan2, "hypot_": pointwise_binary.hypot,
           "lerp_": pointwise_binary.lerp, "addcmul_": pointwise_binary.addcmul, "addcdiv_": pointwise_binary.addcdiv,
           "clamp_min_": unary.clamp_min, "clamp_max_": unary.clamp_max,
           "tril_": diagonal.tril, "triu_": diagonal.triu, "cumsum_": scan.cumsum, "cumprod_": scan.cumprod,
           "logical_and_": compare.logical_and, "logical_or_": compare.logical_or,
           "logical_xor_": compare.logical_xor, "logical_not_": compare.logical_not,
           "bitwise_and_": compare.bitwise_and, "bitwise_or_": compare.bitwise_or,
           "bitwise_xor_": compare.bitwise_xor, "bitwise_not_": compare.bitwise_not}
_SIGNS = {"copysign_": pointwise_sign.copysign, "heaviside_": pointwise_sign.heaviside, "sgn_": pointwise_sign.sgn,
          "fix_": pointwise_sign.fix}
_INDEX = {"index_add_": index_update.index_add, "index_put_": index_update.index_put,
          "index_copy_": index_update.index_copy, "index_fill_": index_update.index_fill,
          "masked_scatter_": index_update.masked_scatter}
_COMPARISONS = {f"{n}_": getattr(compare, n) for n in ("eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal",
                                                         "less", "less_equal", "not_equal")}


def _comparison_inplace(name, fn):
    def method(self, other):
        return inplace_apply(name, self, lambda t: fn(t.detach(), other).to(t.dtype))
    return named(method, name, f"In-place ``{name[:-1]}``: 1 where true, 0 where false, in this tensor's dtype; "
                               "returns self.")


_float_power_composed = composed_method("float_power_", pointwise_binary.float_power)


def _float_power_(self, exponent):
    """In-place :func:`float_power`; the tensor must be float64 already (PyTorch refuses to
    write the float64 result into another dtype)."""
    if self.array.dtype != dtypes.float64:
        raise DTypeError(f"float_power_: the base has dtype {self.dtype}, but the result is float64; call "
                         "float_power_ on a float64 tensor (as PyTorch)")
    return _float_power_composed(self, exponent)


METHODS = {**MATH_INPLACE, **{n: composed_method(n, f) for n, f in {**_BINARY, **_SIGNS, **_INDEX}.items()},
           **{n: _comparison_inplace(n, f) for n, f in _COMPARISONS.items()}, "float_power_": _float_power_}
