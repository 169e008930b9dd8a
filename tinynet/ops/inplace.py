"""In-place ops (``add_``, ``mul_``, ``zero_``, ``copy_``, ``x[i] = v``, ...) and autograd's
rules for them, which are PyTorch's:

* An in-place op on a leaf that requires grad raises (outside ``no_grad``): it would
  change the value the gradient is taken at.
* An in-place op on a tensor in the graph rewrites its history: the tensor takes the
  place of the op's output, and the op's input is the tensor as it was. So
  ``y = x * 2; y.add_(1); y.sum().backward()`` works.
* Every in-place op bumps the tensor's version counter (shared by the views of one
  storage). When an op saved the tensor for backward, backward notices the change and
  raises, naming the op, instead of computing a wrong gradient:
  ``y = x.sigmoid(); y.mul_(2); y.sum().backward()`` raises.
* Not supported (tinynet raises a clear error where PyTorch rewrites the base's history):
  an in-place op on a *view* of a tensor that requires grad, such as
  ``y[0].mul_(2)`` or ``y[:, :2] += 1``; index assignment on ``y`` itself
  (``y[0] = 0``) works.

Without recording (no tensor involved requires grad, or under ``no_grad``) the result is
written straight into the tensor's memory. Results are cast to the tensor's dtype, with
PyTorch's rule (no float into an integer tensor), and must have its shape.
"""
import inspect
import numbers

import numpy

from .. import backend, dtypes, parallel
from ..autograd import grad_mode
from ..autograd.node import bump_version, next_seq
from ..autograd.order import note_rebase, place_rebase
from ..errors import ArgumentError, ArgumentTypeError, AutogradError, DTypeError, ShapeError
from ..tensor import Tensor
from . import arith, unary
from .util import array_of, check_tensor, named


def check_inplace(op, t):
    """Raise when ``t`` may not be changed in place now."""
    check_tensor(op, "self", t)
    if grad_mode._grad_enabled.get():
        if t.requires_grad and t._grad_fn is None and t._base is None:
            raise AutogradError(f"{op}: a leaf tensor that requires grad is being used in an in-place "
                                "operation; wrap the update in tinynet.no_grad() or use an out-of-place op")
        if t._base is not None and (t.requires_grad or t._base.requires_grad):
            raise AutogradError(f"{op}: in-place operations on a view of a tensor that requires grad are not "
                                "supported by tinynet (PyTorch rewrites the base's history); change the base "
                                "tensor with index assignment (x[idx] = v) or use out-of-place ops")
    a = t.array
    flags = a.flags
    # NumPy marks expand()'s views read-only; CuPy has no such flag, so there a zero stride
    # on a dimension longer than 1 tells the same
    if not getattr(flags, "writeable", True) or (
            not flags.c_contiguous and any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape))):
        raise ArgumentError(f"{op}: the tensor is a read-only view (e.g. from expand, where several elements "
                            "share one memory location); clone() it first")


def _write(op, t, src):
    """Copy array ``src`` (the op's result) into ``t``'s memory and bump its version."""
    if src.shape != t.array.shape:
        raise ShapeError(f"{op}: the result has shape {tuple(src.shape)} but the tensor being changed in "
                         f"place has shape {t.shape} (the other operands must broadcast to it)")
    if src.dtype != t.array.dtype and not dtypes.can_cast(src.dtype, t.array.dtype):
        raise DTypeError(f"{op}: result type {src.dtype} can't be cast to the tensor's dtype {t.dtype}")
    t.array[...] = src
    bump_version(t)


def _shadow(t):
    """A new tensor object standing for ``t`` as it is now (same memory, same history)."""
    s = Tensor._wrap(t.array)
    s.requires_grad, s._grad_fn, s._output_nr = t.requires_grad, t._grad_fn, t._output_nr
    s._vc, s._base = t._vc, t._base
    return s


def inplace_apply(op, t, compute, composed=False):
    """Run ``compute`` (a function of one tensor returning the new value as a new tensor)
    on ``t`` and write the result into ``t``, with autograd's in-place rules; returns ``t``.

    Only the last op ``compute`` records has its saved tensors guarded against the write-back
    (:func:`_preserve`); ``composed=True`` says ``compute`` records several ops (a function
    composed of tinynet's ops), which then run on a copy of ``t``."""
    check_inplace(op, t)
    if not grad_mode._grad_enabled.get():
        _write(op, t, compute(t).array)
        return t
    old = _shadow(t)
    first = next_seq()  # the ops compute records get later sequence numbers
    r = compute(old.clone() if composed else old)
    node = r._grad_fn
    if node is not None and node.saved:
        _preserve(node, old, r)
    _write(op, t, r.array)
    if r.requires_grad:
        t.requires_grad, t._grad_fn, t._output_nr = True, node, r._output_nr
        if node is not None and node is not old._grad_fn:  # a new history: its place in the backward order
            place_rebase(node, old, first)
            note_rebase(t, first, old)  # earlier consumers of t keep sending gradients to old
        if t._retains_grad and node is not None:
            node.retain(r._output_nr, t)
    return t


def _preserve(node, old, out):
    """When ``node`` saved ``old``'s memory, which the write is about to change, give it a
    copy taken now (so backward sees the values it was computed from)."""
    arr = old.array
    if not any(hasattr(s, "shape") and s is arr for s in node.saved):
        return
    copy = arr.copy()
    node.saved = tuple(copy if s is arr else s for s in node.saved)
    old.array, old._vc, old._base = copy, [0, 0], None


def _number(op, name, v, expected="a number"):
    """``v`` when it is a real number (bools included, as PyTorch), else an ArgumentTypeError
    naming ``op``, ``name`` and ``expected``."""
    if not isinstance(v, (numbers.Number, numpy.generic)) or isinstance(v, (complex, numpy.complexfloating)):
        raise ArgumentTypeError(f"{op}: {name} must be {expected}, got {type(v).__name__}")
    return v


def _direct(op, t, ufunc, other):
    """``ufunc(t, other, out=t)``: the unrecorded fast path of add_/sub_/mul_/div_."""
    check_inplace(op, t)
    if not isinstance(other, Tensor) and not hasattr(other, "shape"):  # arrays: tinynet's own callers
        _number(op, "other", other, "a Tensor or a number")
    o = array_of(other)
    if hasattr(o, "shape"):
        if backend.array_module(o) is not backend.array_module(t.array):
            from ..errors import DeviceMismatchError
            raise DeviceMismatchError(f"{op}: expected all tensors on the same device, got {t.device} and "
                                      f"{other.device}")
        try:
            if numpy.broadcast_shapes(o.shape, t.shape) != t.shape:
                raise ValueError
        except ValueError:
            raise ShapeError(f"{op}: operand of shape {tuple(o.shape)} does not broadcast to the tensor's shape "
                             f"{t.shape}") from None
    res = dtypes.result_type(t.array, o)
    if op == "div_":
        res = dtypes.float_for(res)
    if res != t.array.dtype and not dtypes.can_cast(res, t.array.dtype):
        raise DTypeError(f"{op}: result type {res} can't be cast to the tensor's dtype {t.dtype}")
    xp = backend.array_module(t.array)
    getattr(xp, ufunc)(t.array, o, out=t.array, casting="unsafe")
    bump_version(t)
    return t


def _alpha_direct(op, t, ufunc, other, alpha):
    """``ufunc(t, other * alpha, out=t)`` for C-ordered float NumPy tensors of one dtype and shape
    (not overlapping) and a Python number ``alpha``: product and update per piece, large tensors
    over tinynet's threads: the same elementwise operations as the whole product first, so the
    same bits (an optimizer loop's ``p.data.add_(p.grad, alpha=-lr)`` on 1.4M-entry gradients).
    Returns None where it does not apply."""
    a, o = t.array, other.array if type(other) is Tensor else None
    if (o is None or type(alpha) not in (int, float) or type(a) is not numpy.ndarray or type(o) is not numpy.ndarray
            or a.dtype != o.dtype or a.dtype.kind != "f" or a.shape != o.shape or not a.flags.c_contiguous
            or not o.flags.c_contiguous or (o is not a and numpy.may_share_memory(a, o))):
        return None
    check_inplace(op, t)
    af, of = a.reshape(-1), o.reshape(-1)
    parts = parallel.ranges(af.size, 3 * a.nbytes)

    def piece(i):
        lo, hi = parts[i]
        ufunc(af[lo:hi], numpy.multiply(of[lo:hi], alpha), out=af[lo:hi])

    parallel.parallel_for(len(parts), piece)
    bump_version(t)
    return t


def _recording(*ts):
    return grad_mode._grad_enabled.get() and any(isinstance(x, Tensor) and x.requires_grad for x in ts)


# ---- the in-place methods ------------------------------------------------------------------
def add_(self, other, *, alpha=1):
    """``self += alpha * other`` in place; returns self."""
    from .arith import add
    _number("add_", "alpha", alpha)
    if not _recording(self, other):
        if alpha != 1:
            done = _alpha_direct("add_", self, numpy.add, other, alpha)
            if done is not None:
                return done
            other = (other * alpha) if isinstance(other, (Tensor, numbers.Number)) else other
        return _direct("add_", self, "add", other)
    return inplace_apply("add_", self, lambda s: add(s, other, alpha=alpha))


def sub_(self, other, *, alpha=1):
    """``self -= alpha * other`` in place; returns self."""
    from .arith import sub
    _number("sub_", "alpha", alpha)
    if not _recording(self, other):
        if alpha != 1:
            done = _alpha_direct("sub_", self, numpy.subtract, other, alpha)
            if done is not None:
                return done
            other = (other * alpha) if isinstance(other, (Tensor, numbers.Number)) else other
        return _direct("sub_", self, "subtract", other)
    return inplace_apply("sub_", self, lambda s: sub(s, other, alpha=alpha))


def mul_(self, other):
    """``self *= other`` in place; returns self."""
    from .arith import mul
    if not _recording(self, other):
        return _direct("mul_", self, "multiply", other)
    return inplace_apply("mul_", self, lambda s: mul(s, other))


def div_(self, other, *, rounding_mode=None):
    """``self /= other`` in place (``rounding_mode`` as :func:`tinynet.div`); returns self."""
    from .division import div
    if rounding_mode is None and not _recording(self, other):
        return _direct("div_", self, "true_divide", other)
    return inplace_apply("div_", self, lambda s: div(s, other, rounding_mode=rounding_mode))


def pow_(self, exponent):
    """``self **= exponent`` in place; returns self."""
    from .arith import pow
    return inplace_apply("pow_", self, lambda s: pow(s, exponent))


def _fill(op, self, make):
    """Overwrite every element with ``make()`` (a tensor or number): the old values get no gradient."""
    from .select import Where
    check_inplace(op, self)
    value = make()
    if not _recording(self, value):
        src = array_of(value)
        if hasattr(src, "shape") and backend.array_module(src) is not backend.array_module(self.array):
            src = backend.to_device(src, self.device)
        if hasattr(src, "shape") and src.dtype != self.array.dtype and not dtypes.can_cast(src.dtype, self.dtype):
            raise DTypeError(f"{op}: can't write {src.dtype} values into a {self.dtype} tensor")
        try:
            self.array[...] = src
        except ValueError:
            raise ShapeError(f"{op}: values of shape {getattr(src, 'shape', ())} do not broadcast to {self.shape}") \
                from None
        bump_version(self)
        return self
    xp = backend.array_module(self.array)
    everywhere = xp.ones((), dtype=bool)
    return inplace_apply(op, self, lambda s: Where(s.array.dtype).apply(everywhere, value, s))


def zero_(self):
    """Fill with zeros in place; returns self."""
    return _fill("zero_", self, lambda: 0)


def fill_(self, value):
    """Fill with ``value`` (a number or 0-d tensor) in place; returns self."""
    if isinstance(value, Tensor):
        if value.ndim:
            raise ShapeError(f"fill_: value must be a number or a 0-d tensor, got shape {value.shape}")
    else:
        _number("fill_", "value", value)
    return _fill("fill_", self, lambda: value)


def copy_(self, src, non_blocking=False):
    """Copy ``src`` (broadcast, cast, and moved across devices) into self; differentiable
    with respect to ``src``. Returns self."""
    from .conversion import to
    check_tensor("copy_", "src", src)
    return _fill("copy_", self, lambda: to(src, self.device) if src.device != self.device else src)


def clamp_(self, min=None, max=None):
    """Clip to ``[min, max]`` in place; returns self."""
    from .unary import clamp
    return inplace_apply("clamp_", self, lambda s: clamp(s, min, max))


clip_ = clamp_


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fill with samples from U[a, b) in place; returns self."""
    from .sampling import rand
    _number("uniform_", "a", a), _number("uniform_", "b", b)
    return _fill("uniform_", self, lambda: rand(*self.shape, generator=generator, dtype=self.dtype,
                                                 device=self.device) * (b - a) + a)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with samples from N(mean, std^2) in place; returns self."""
    from .sampling import randn
    return _fill("normal_", self, lambda: randn(*self.shape, generator=generator, dtype=self.dtype,
                                                 device=self.device) * std + mean)


def masked_fill_(self, mask, value):
    """Set ``value`` where the bool ``mask`` (broadcast) is true, in place; returns self."""
    from .select import masked_fill
    return inplace_apply("masked_fill_", self, lambda s: masked_fill(s, mask, value))


def scatter_(self, dim, index, src=None, *, value=None):
    """In-place :func:`tinynet.scatter`; returns self."""
    from .gather import scatter
    return inplace_apply("scatter_", self, lambda s: scatter(s, dim, index, src, value=value))


def scatter_add_(self, dim, index, src):
    """In-place :func:`tinynet.scatter_add`; returns self."""
    from .gather import scatter_add
    return inplace_apply("scatter_add_", self, lambda s: scatter_add(s, dim, index, src))


def setitem(self, index, value):
    """``self[index] = value`` (numbers, tensors or arrays; broadcast and cast to self's dtype)."""
    from .indexing import IndexPut, index_errors, put_index
    check_inplace("setitem", self)
    idx, value = put_index("setitem", self, index, value)
    if not _recording(self, value):
        v = array_of(value)
        if hasattr(v, "dtype") and v.dtype != self.array.dtype and not dtypes.can_cast(v.dtype, self.array.dtype):
            raise DTypeError(f"setitem: can't assign {v.dtype} values to a {self.dtype} tensor")
        with index_errors("setitem", f"index {index!r}", self.shape, getattr(v, "shape", ())):
            self.array[idx] = v
        bump_version(self)
        return
    inplace_apply("setitem", self, lambda s: IndexPut(idx).apply(s, value))


def unary_inplace(name, fn):
    def method(self):
        return inplace_apply(name, self, fn)
    return named(method, name, f"In-place :func:`tinynet.{name[:-1]}`; returns self.")


exp_ = unary_inplace("exp_", unary.exp)
log_ = unary_inplace("log_", unary.log)
sqrt_ = unary_inplace("sqrt_", unary.sqrt)
abs_ = unary_inplace("abs_", unary.abs)
neg_ = unary_inplace("neg_", arith.neg)
floor_ = unary_inplace("floor_", unary.floor)
ceil_ = unary_inplace("ceil_", unary.ceil)
round_ = unary_inplace("round_", unary.round)
sign_ = unary_inplace("sign_", unary.sign)
reciprocal_ = unary_inplace("reciprocal_", unary.reciprocal)
square_ = unary_inplace("square_", unary.square)


def composed_method(name, fn):
    """The Tensor method ``name`` that writes ``fn(self, *args, **kwargs)`` back into self
    (``fn`` composed of tinynet's ops: see ``inplace_apply(composed=True)``). A call that does
    not fit ``fn``'s signature raises ArgumentTypeError naming the method."""
    sig = inspect.signature(fn)

    def method(self, *args, **kwargs):
        try:
            sig.bind(self, *args, **kwargs)
        except TypeError as exc:
            raise ArgumentTypeError(f"{name}: {exc}") from None
        return inplace_apply(name, self, lambda t: fn(t, *args, **kwargs), composed=True)
    method.__signature__ = sig
    return named(method, name, f"In-place :func:`tinynet.{name[:-1]}`; returns self.")
