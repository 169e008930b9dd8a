"""The torch-level in-place functions (``torch.exp_(x)``, ``torch.clamp_(x, min=0)``,
``torch.fill_(x, 1)``, ``torch.detach_(x)``, ...): each is the Tensor method of the same name
with the tensor passed first as ``input``, so autograd's in-place rules are those of
:mod:`.inplace` (a leaf that requires grad is refused, a non-leaf's history is rewritten).

Also the in-place methods this family adds to the Tensor (``nan_to_num_``,
``conj_physical_``, ``addmm_``/``addmv_``/``addbmm_``/``baddbmm_``/``addr_``, ``renorm_``, ``round_`` with
``decimals``), each an out-of-place function written back (``inplace_apply``).
"""
import inspect
import numbers

from .. import backend
from ..errors import ArgumentTypeError, ShapeError
from ..tensor import Tensor
from . import activation, blas, blas_products, inplace, inplace_methods, norms_torch, special_misc, unary
from .complex import conj_physical
from .inplace import composed_method, inplace_apply
from .util import check_tensor, named


def round_(self, *, decimals=0):
    """In-place :func:`tinynet.round` (``decimals`` as there); returns self."""
    return inplace_apply("round_", self, lambda t: unary.round(t, decimals=decimals))


def fill_diagonal_(self, fill_value, wrap=False):
    """Write ``fill_value`` on the main diagonal (``self[i, i, ..., i]``) in place; with ``wrap`` a
    tall matrix's diagonal starts again every ``ncols + 1`` rows (``numpy.fill_diagonal``'s rule).
    The diagonal gets no gradient. Returns self.

    Raises:
        ShapeError: fewer than 2 dims, or (more than 2 dims) dims of different lengths.
    """
    from .select import Where
    check_tensor("fill_diagonal_", "self", self)
    if self.ndim < 2:
        raise ShapeError(f"fill_diagonal_: dimensions must be larger than 1, got {self.ndim}")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise ShapeError(f"fill_diagonal_: all dimensions of input must be of equal length, got {tuple(self.shape)}")
    value = fill_value.item() if isinstance(fill_value, Tensor) and fill_value.numel() == 1 else fill_value
    if isinstance(value, bool) or not isinstance(value, numbers.Number):
        raise ArgumentTypeError(f"fill_diagonal_: fill_value must be a number, got {type(fill_value).__name__}")
    xp = backend.array_module(self.array)
    mask = xp.zeros(self.shape, dtype=bool)
    xp.fill_diagonal(mask, True, wrap=bool(wrap))
    return inplace_apply("fill_diagonal_", self, lambda t: Where(t.array.dtype).apply(mask, value, t))


# the in-place methods this module adds to the Tensor (ops/methods.py attaches them)
METHODS = {"round_": round_, "fill_diagonal_": fill_diagonal_,
           "nan_to_num_": composed_method("nan_to_num_", unary.nan_to_num),
           "conj_physical_": composed_method("conj_physical_", conj_physical),
           **{f"{f.__name__}_": composed_method(f"{f.__name__}_", f)
              for f in (blas.addmm, blas.addmv, blas.addbmm, blas.baddbmm, blas_products.addr, norms_torch.renorm)}}


def _detach(self):
    return Tensor.detach(self)


def _detach_(self):
    return Tensor.detach_(self)


def _get_device(self):
    return Tensor.get_device(self)


# where each torch-level function's method is defined: name -> the method (tensor first)
_SOURCES = {**{n: getattr(inplace, n) for n in ("exp_", "log_", "sqrt_", "abs_", "neg_", "floor_", "ceil_",
                                                 "reciprocal_", "square_", "clamp_", "clip_", "zero_", "fill_")},
            **{n: inplace_methods.METHODS[n] for n in (
                "acos_", "acosh_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_", "asin_",
                "asinh_", "atan_", "atanh_", "clamp_max_", "clamp_min_", "cos_", "cosh_", "deg2rad_", "erf_",
                "erfc_", "exp2_", "expm1_", "fix_", "frac_", "index_put_", "log10_", "log1p_", "log2_", "logit_",
                "negative_", "rad2deg_", "rsqrt_", "sin_", "sinc_", "sinh_", "tan_", "trunc_", "xlogy_")},
            "i0_": special_misc.METHODS["i0_"],
            "detach": _detach, "detach_": _detach_, "get_device": _get_device, **METHODS}


def _torch_level(name):
    """``torch.<name>(input, ...)``: the method ``_SOURCES[name]`` with its first parameter
    named ``input``; a call that does not fit the signature raises ArgumentTypeError."""
    method = _SOURCES[name]
    sig = inspect.signature(method)
    params = list(sig.parameters.values())
    sig = sig.replace(parameters=[params[0].replace(name="input")] + params[1:])

    def fn(*args, **kwargs):
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as exc:
            raise ArgumentTypeError(f"{name}: {exc}") from None
        check_tensor(name, "input", bound.arguments["input"])
        return method(*bound.args, **bound.kwargs)
    fn.__signature__ = sig
    doc = (method.__doc__ or "").strip().splitlines()
    return named(fn, name, f"``torch.{name}``: ``input.{name}(...)``. " + (doc[0] if doc else ""))


(abs_, acos_, acosh_, arccos_, arccosh_, arcsin_, arcsinh_, arctan_, arctanh_, asin_, asinh_, atan_, atanh_, ceil_,
 clamp_, clamp_max_, clamp_min_, clip_, cos_, cosh_, deg2rad_, erf_, erfc_, exp2_, exp_, expm1_, fill_, fix_,
 floor_, frac_, i0_, index_put_, log10_, log1p_, log2_, log_, logit_, neg_, negative_, rad2deg_, reciprocal_,
 rsqrt_, sin_, sinc_, sinh_, sqrt_, square_, tan_, trunc_, xlogy_, zero_, detach, detach_, get_device,
 nan_to_num_, conj_physical_, addmv_,) = (_torch_level(n) for n in (
    "abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ asinh_ atan_ atanh_ ceil_ clamp_ "
    "clamp_max_ clamp_min_ clip_ cos_ cosh_ deg2rad_ erf_ erfc_ exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ i0_ "
    "index_put_ log10_ log1p_ log2_ log_ logit_ neg_ negative_ rad2deg_ reciprocal_ rsqrt_ sin_ sinc_ sinh_ "
    "sqrt_ square_ tan_ trunc_ xlogy_ zero_ detach detach_ get_device nan_to_num_ conj_physical_ addmv_").split())
# round_ at the torch level (torch.round_(input, *, decimals=0)); sigmoid_ and tanh_ already take ``input``
torch_round_ = _torch_level("round_")
sigmoid_, tanh_ = activation.sigmoid_, activation.tanh_
