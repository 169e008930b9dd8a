"""Complex tensors: their parts and views, and the ops that build them.

``real``, ``imag``, ``view_as_real``, ``view_as_complex``, ``complex``, ``polar``, ``conj``
(with ``conj_physical``, ``resolve_conj``, ``resolve_neg``, ``is_conj``, ``is_neg``),
``angle`` and the modulus behind ``abs`` of a complex tensor.

Gradients follow PyTorch's convention for complex autograd (PyTorch's notes "Autograd for
Complex Numbers"): for a real loss ``L`` of a complex ``z = x + iy`` the gradient is
``dL/dx + i dL/dy``, so that ``z - lr * z.grad`` descends. For a holomorphic ``f`` the
backward multiplies by ``conj(f'(z))``; ``|z|`` gives ``gy * z / |z|`` (0 at 0), ``angle(z)``
gives ``gy * i z / |z|^2`` (0 at 0), ``real`` gives ``gy`` and ``imag`` gives ``i gy``; a real
input of an op with a complex result gets the real part of its gradient.

Complex dtypes are complex64 and complex128 (no complex32). Only the ops whose class says
``complex_ok`` take complex inputs (these, the FFTs of :mod:`.spectral`, add, sub, mul,
div, neg, exp, sum, mean, the casts and copies, and the ops that only move data: reshape,
permute, expand, indexing, cat, stack, flip, roll, split); any other op refuses one with a
DTypeError naming it (``Op.apply``), instead of a wrong gradient. docs/complex.md lists them.

Differences from PyTorch: ``conj`` returns a conjugated copy, not a lazy view
(``is_conj`` is always False); ``view_as_complex`` on CuPy arrays that CuPy cannot
reinterpret in place returns a copy.
"""
import numpy

from .. import dtypes
from ..autograd import Op
from ..errors import DTypeError, ShapeError
from .util import cast, check_tensor, unbroadcast


def _real_view(xp, z):
    """``z`` (complex) as a real array of shape ``z.shape + (2,)`` sharing its memory."""
    re = z.real  # a view of the real parts, z's strides
    return xp.lib.stride_tricks.as_strided(re, z.shape + (2,), re.strides + (re.itemsize,))


class _Part(Op):
    """``z.real`` or ``z.imag`` (the attribute the subclass's ``name`` says): a view of one
    part; the backward returns the gradient in ``z``'s complex dtype."""
    complex_ok = True
    twice_differentiable = True
    is_view = True

    def forward(self, xp, z):
        self.dtype = z.dtype
        return getattr(z, self.name)


class Real(_Part):
    """``z.real``: a view of the real parts; backward ``gy``."""
    name = "real"

    def backward(self, xp, gy):
        return (cast(xp, gy, self.dtype),)


class Imag(_Part):
    """``z.imag``: a view of the imaginary parts; backward ``i gy``."""
    name = "imag"

    def backward(self, xp, gy):
        return (cast(xp, gy, self.dtype) * 1j,)


class ViewAsReal(Op):
    """A complex tensor as real pairs ``(..., 2)``, sharing its memory."""
    name = "view_as_real"
    complex_ok = True
    twice_differentiable = True
    is_view = True

    def forward(self, xp, z):
        return _real_view(xp, z)

    def backward(self, xp, gy):
        return (ViewAsComplex().call(xp, gy),)


class ViewAsComplex(Op):
    """Real pairs ``(..., 2)`` as a complex tensor: a view when the memory allows (the
    public function checks PyTorch's layout rules), else a copy."""
    name = "view_as_complex"
    complex_ok = True
    twice_differentiable = True

    def forward(self, xp, x):
        cdt = dtypes.complex_for(x.dtype)
        try:
            z = x.view(cdt)[..., 0]
            self.is_view = True
        except ValueError:  # not laid out as pairs (a gradient arriving as any view): build it
            z = xp.empty(x.shape[:-1], cdt)
            z.real[...] = x[..., 0]
            z.imag[...] = x[..., 1]
        return z

    def backward(self, xp, gy):
        return (ViewAsReal().call(xp, gy),)


class MakeComplex(Op):
    """``real + i imag`` with broadcasting; backward the real and imaginary parts."""
    name = "complex"
    complex_ok = True  # (a complex result; Polar too)
    twice_differentiable = True

    def forward(self, xp, re, im):
        self.shapes = re.shape, im.shape
        z = xp.empty(numpy.broadcast_shapes(re.shape, im.shape), dtypes.complex_for(re.dtype))
        z.real[...] = re
        z.imag[...] = im
        return z

    def backward(self, xp, gy):
        sr, si = self.shapes
        gr = unbroadcast(xp, xp.real(gy), sr) if self.needs_input_grad[0] else None
        gi = unbroadcast(xp, xp.imag(gy), si) if self.needs_input_grad[1] else None
        return gr, gi


class Polar(Op):
    """``abs * (cos(angle) + i sin(angle))``; backward ``Re(conj(gy) dz/dr)`` and
    ``Re(conj(gy) dz/dtheta)`` with ``dz/dr = e^{i theta}``, ``dz/dtheta = i z``."""
    name = "polar"
    complex_ok = True

    def forward(self, xp, r, theta):
        self.shapes = r.shape, theta.shape
        unit = xp.empty(theta.shape, dtypes.complex_for(theta.dtype))
        unit.real[...] = xp.cos(theta)
        unit.imag[...] = xp.sin(theta)
        z = r * unit
        self.save_for_backward(unit, z)
        return z

    def backward(self, xp, gy):
        unit, z = self.saved
        sr, st = self.shapes
        gr = unbroadcast(xp, (xp.conj(gy) * unit).real, sr) if self.needs_input_grad[0] else None
        gt = unbroadcast(xp, (xp.conj(gy) * z * 1j).real, st) if self.needs_input_grad[1] else None
        return gr, gt


class Conj(Op):
    """The complex conjugate (a copy); backward ``conj(gy)``."""
    name = "conj"
    complex_ok = True
    twice_differentiable = True

    def forward(self, xp, z):
        return xp.conj(z)

    def backward(self, xp, gy):
        return (xp.conj(gy),)


class ComplexAbs(Op):
    """``|z|``, a real tensor; backward ``gy * z / |z|`` (0 where ``z == 0``)."""
    name = "abs"
    complex_ok = True

    def forward(self, xp, z):
        y = xp.abs(z)
        if self.needs_input_grad[0]:
            self.save_for_backward(z, y)
        return y

    def backward(self, xp, gy):
        z, y = self.saved
        safe = xp.where(y == 0, 1, y)
        return (xp.where(y == 0, 0, gy * z / safe),)


class Angle(Op):
    """``atan2(imag, real)``; backward ``gy * i z / |z|^2`` (0 where ``z == 0``). For real
    input: 0 or pi (NaN stays NaN) with a zero gradient, as PyTorch."""
    name = "angle"
    complex_ok = True

    def forward(self, xp, z):
        if self.needs_input_grad[0]:
            self.save_for_backward(z)
        return xp.angle(z).astype(dtypes.real_for(z.dtype), copy=False)

    def backward(self, xp, gy):
        z, = self.saved
        if z.dtype.kind != "c":
            return (xp.zeros_like(gy),)
        sq = (z * xp.conj(z)).real
        safe = xp.where(sq == 0, 1, sq)
        return (xp.where(sq == 0, 0, gy * z * 1j / safe),)


# ---- public functions -----------------------------------------------------------------
def _complex_input(op, input):
    check_tensor(op, "input", input)
    if input.array.dtype.kind != "c":
        raise DTypeError(f"{op}: expected a complex tensor (complex64 or complex128), got {input.dtype}")
    return input


def real(input):
    """The real parts of a complex tensor, as a float view sharing its memory (float32 for
    complex64, float64 for complex128); a real tensor itself. Gradient: ``gy`` as complex.

    Raises:
        ArgumentTypeError: ``input`` is not a Tensor.
    """
    check_tensor("real", "input", input)
    return Real().apply(input) if input.array.dtype.kind == "c" else input


def imag(input):
    """The imaginary parts of a complex tensor, as a float view sharing its memory.
    Gradient: ``i gy``.

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: a real tensor (as PyTorch).
    """
    check_tensor("imag", "input", input)
    if input.array.dtype.kind != "c":
        raise DTypeError(f"imag: not implemented for tensors with non-complex dtypes, got {input.dtype}")
    return Imag().apply(input)


def view_as_real(input):
    """A complex tensor of shape ``S`` as a float tensor of shape ``S + (2,)`` (real and
    imaginary parts last), sharing its memory.

    Raises:
        ArgumentTypeError: not a Tensor. DTypeError: not a complex tensor.
    """
    return ViewAsReal().apply(_complex_input("view_as_real", input))


def view_as_complex(input):
    """A float32/float64 tensor of shape ``S + (2,)`` as a complex tensor of shape ``S``
    (complex64/complex128), sharing its memory.

    Raises:
        ArgumentTypeError: not a Tensor.
        DTypeError: not float32 or float64 (float16 would need complex32, which tinynet lacks).
        ShapeError: the last dimension is not of size 2 with unit stride, or another stride
            is odd (PyTorch's rules).
    """
    check_tensor("view_as_complex", "input", input)
    a = input.array
    if a.dtype not in (dtypes.float32, dtypes.float64):
        raise DTypeError(f"view_as_complex: expected a float32 or float64 tensor, got {input.dtype}")
    if a.ndim == 0 or a.shape[-1] != 2:
        raise ShapeError(f"view_as_complex: the tensor must have a last dimension of size 2, got shape "
                         f"{tuple(a.shape)}")
    if a.strides[-1] != a.itemsize:
        raise ShapeError(f"view_as_complex: the tensor must have a last dimension with stride 1, got "
                         f"{a.strides[-1] // a.itemsize}")
    if any(s % (2 * a.itemsize) for n, s in zip(a.shape[:-1], a.strides[:-1]) if n > 1):
        raise ShapeError(f"view_as_complex: the tensor must have a stride divisible by 2 for all but the last "
                         f"dimension, got strides {tuple(s // a.itemsize for s in a.strides)}")
    dtypes.note_complex()
    return ViewAsComplex().apply(input)


def _parts(op, first, second, names):
    for name, t in zip(names, (first, second)):
        check_tensor(op, name, t)
        if t.array.dtype not in (dtypes.float32, dtypes.float64):
            raise DTypeError(f"{op}: expected {name} of dtype float32 or float64, got {t.dtype}")
    if first.dtype != second.dtype:
        raise DTypeError(f"{op}: expected {names[0]} and {names[1]} of the same dtype, got {first.dtype} and "
                         f"{second.dtype}")
    try:
        numpy.broadcast_shapes(first.shape, second.shape)
    except ValueError:
        raise ShapeError(f"{op}: shapes {tuple(first.shape)} and {tuple(second.shape)} cannot be broadcast "
                         "together") from None
    dtypes.note_complex()


def complex(real, imag):
    """The complex tensor ``real + i imag`` (``torch.complex``): float32 parts give complex64,
    float64 complex128; the two broadcast. Gradients: the real and imaginary parts of ``gy``.

    Raises:
        ArgumentTypeError: not Tensors. DTypeError: not float32/float64, or different dtypes.
        ShapeError: the shapes do not broadcast.
    """
    _parts("complex", real, imag, ("real", "imag"))
    return MakeComplex().apply(real, imag)


def polar(abs, angle):
    """The complex tensor ``abs * (cos(angle) + i sin(angle))`` (``torch.polar``), float32
    parts giving complex64 and float64 complex128; the two broadcast.

    Raises:
        ArgumentTypeError: not Tensors. DTypeError: not float32/float64, or different dtypes.
        ShapeError: the shapes do not broadcast.
    """
    _parts("polar", abs, angle, ("abs", "angle"))
    return Polar().apply(abs, angle)


def conj(input):
    """The complex conjugate (a copy for a complex tensor; PyTorch returns a lazy view);
    a real tensor itself. Gradient ``conj(gy)``.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    check_tensor("conj", "input", input)
    return Conj().apply(input) if input.array.dtype.kind == "c" else input


def conj_physical(input):
    """The complex conjugate, computed now (a copy); a real tensor itself.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    check_tensor("conj_physical", "input", input)
    return Conj().apply(input) if input.array.dtype.kind == "c" else input


def resolve_conj(input):
    """``input`` itself: tinynet's ``conj`` is never lazy, so there is nothing to resolve.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    return check_tensor("resolve_conj", "input", input)


def resolve_neg(input):
    """``input`` itself: tinynet has no lazy negation.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    return check_tensor("resolve_neg", "input", input)


def is_conj(input):
    """False: tinynet's ``conj`` makes a copy, never a lazy conjugate view.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    check_tensor("is_conj", "input", input)
    return False


def is_neg(input):
    """False: tinynet has no lazy negation.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    check_tensor("is_neg", "input", input)
    return False


def angle(input):
    """Elementwise argument ``atan2(imag, real)`` in radians, a real tensor (float32 for
    complex64); for real input 0 where ``input >= 0`` and pi where it is negative (NaN
    stays NaN), integers giving the default float dtype. Gradient (complex input):
    ``gy * i z / |z|^2``, 0 at 0; for real input 0.

    Raises:
        ArgumentTypeError: not a Tensor.
    """
    check_tensor("angle", "input", input)
    if input.array.dtype.kind in "biu":
        input = input.to(dtypes.get_default_dtype())
    return Angle().apply(input)


def complex_abs(input):
    """``|z|`` of a complex tensor (what ``tinynet.abs`` runs for one): a real tensor."""
    return ComplexAbs().apply(input)


METHODS = {"conj": conj, "conj_physical": conj_physical, "resolve_conj": resolve_conj, "resolve_neg": resolve_neg,
           "is_conj": is_conj, "is_neg": is_neg, "angle": angle}
PROPERTIES = {"real": real, "imag": imag}
