"""Element types: the dtype names, the default float dtype and PyTorch's promotion rules.

A tinynet dtype *is* a ``numpy.dtype`` (CuPy uses the same objects), spelled as in
PyTorch: ``tinynet.float32`` (alias ``float``), ``float64`` (``double``), ``float16``
(``half``), ``bfloat16``, ``int64`` (``long``), ``int32`` (``int``), ``int16`` (``short``),
``int8``, ``uint8``, ``bool``, and ``complex64`` (``cfloat``) and ``complex128``
(``cdouble``), which only the ops listed in :mod:`tinynet.ops.complex` take
(docs/complex.md). Python's ``float``/``int``/``bool`` and NumPy spellings such as
``"float32"`` are accepted wherever a dtype is.

Type promotion follows PyTorch, not NumPy (the categories rank bool < integer < float <
complex): Python scalars and 0-d tensors do not widen a tensor of the same kind
(``float32 * 2.5`` and ``float32 + float64_0d`` stay float32), an integer tensor meeting
a float scalar becomes the *default* float dtype (``arange(3) * 0.5`` is float32), ints
meeting floats take the float's width (``int64 + float16`` is float16), and a real tensor
meeting a complex number or 0-d tensor becomes complex of its own width (``float32 * 1j``
is complex64; PyTorch gives float16 tensors complex32, which tinynet lacks: complex64).

``tests/test_ops_elementwise.py`` checks every pair of (tensor, 0-d tensor, Python number)
x (bool, uint8, int32, int64, float16, float32, float64) for the arithmetic, comparison,
bitwise, logical, ``where``, ``maximum`` and ``clamp`` ops against PyTorch: the result
dtypes agree everywhere. Where PyTorch refuses a pair tinynet raises too, except that
tinynet's ``maximum``/``minimum``/``logical_*`` and the comparison functions also take a
Python number (PyTorch's take tensors only), and ``clamp`` of a bool tensor by a bool.
"""
import ml_dtypes
import numpy

from .errors import DTypeError

float16 = half = numpy.dtype(numpy.float16)
float32 = numpy.dtype(numpy.float32)
float64 = double = numpy.dtype(numpy.float64)
int8 = numpy.dtype(numpy.int8)
int16 = short = numpy.dtype(numpy.int16)
int32 = numpy.dtype(numpy.int32)
int64 = long = numpy.dtype(numpy.int64)
uint8 = numpy.dtype(numpy.uint8)
bool_ = numpy.dtype(numpy.bool_)
# bfloat16 (8 exponent bits like float32, 7 mantissa bits) is ml_dtypes' NumPy extension type. NumPy
# files it under kind "V", so "is it a float" goes through is_floating below, never dtype.kind == "f";
# ops compute on it in float32 and round their results back (see autograd.node, docs/amp.md)
bfloat16 = numpy.dtype(ml_dtypes.bfloat16)
BF16_SEEN = [False]  # set when a bfloat16 dtype is first asked for: until then Op.apply skips its bfloat16 check
complex64 = cfloat = numpy.dtype(numpy.complex64)
complex128 = cdouble = numpy.dtype(numpy.complex128)
# set when complex data first appears (a complex dtype asked for, complex data or a complex Python number given):
# until then Op.apply skips its check that an op taking a complex input is one of those that support it
COMPLEX_SEEN = [False]
_COMPLEX_OF = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128}

_state = {"default": float32}
_FLOATS = (float16, float32, float64)
_WIDTH = {bfloat16: 1, float16: 1, float32: 2, float64: 3}  # float16 and bfloat16 rank alike: neither holds the other


def get_default_dtype():
    """The float dtype of factories and of Python floats (float32 unless changed)."""
    return _state["default"]


def set_default_dtype(d):
    """Set the default float dtype (as ``torch.set_default_dtype``).

    Args:
        d: ``tinynet.float16``, ``float32`` or ``float64``.

    Raises:
        DTypeError: ``d`` is not one of those floating-point dtypes.
    """
    dt = as_dtype(d, "set_default_dtype")
    if dt not in _FLOATS:
        raise DTypeError(f"set_default_dtype: only floating-point dtypes (float16, float32, float64) "
                         f"can be the default, got {dt}")
    _state["default"] = dt


def as_dtype(dtype, op):
    """``dtype`` as a ``numpy.dtype`` (``None`` stays ``None``).

    Raises:
        DTypeError: not a dtype tinynet supports.
    """
    if dtype is None:
        return None
    if not isinstance(dtype, (type, numpy.dtype, str)):  # numpy.dtype() would take an array's .dtype
        raise DTypeError(f"{op}: unknown dtype {type(dtype).__name__} (a dtype such as tinynet.float32)")
    try:
        dt = numpy.dtype(dtype)  # Python's float/int/bool give float64/int64/bool, as in PyTorch
    except (TypeError, ValueError, SyntaxError):  # NumPy parses some strings ("01") as Python literals
        raise DTypeError(f"{op}: unknown dtype {dtype!r}") from None
    if dt.kind not in "biuf":
        if dt == bfloat16:
            BF16_SEEN[0] = True
        elif dt in (complex64, complex128):
            COMPLEX_SEEN[0] = True
        else:
            raise DTypeError(f"{op}: unsupported dtype {dt} (bool, integer, floating-point and complex64/complex128 "
                             "dtypes only)")
    return dt


def is_floating(dtype):
    """True for float16, bfloat16, float32 and float64 (NumPy files bfloat16 under kind "V")."""
    return dtype.kind == "f" or dtype == bfloat16


def is_complex(dtype):
    """True for complex64 and complex128."""
    return dtype.kind == "c"


def note_complex():
    """Record that complex data exists from now on (see ``COMPLEX_SEEN``)."""
    COMPLEX_SEEN[0] = True


def complex_for(dtype):
    """The complex dtype holding values of ``dtype``: complex64 for float16, bfloat16 and
    float32, complex128 for float64; a complex dtype itself; integers and bool give the
    complex dtype of the default float dtype (PyTorch's rule)."""
    if dtype.kind == "c":
        return dtype
    return _COMPLEX_OF[dtype if is_floating(dtype) else _state["default"]]


def real_for(dtype):
    """The float dtype of a complex dtype's parts (complex64 -> float32); other dtypes as they are."""
    return {complex64: float32, complex128: float64}.get(dtype, dtype)


def finfo(type=None):
    """Machine limits of a float dtype (``torch.finfo``): ``eps``, ``max``, ``min``, ``tiny``, ``bits``.

    Args:
        type: a floating-point dtype; default the default dtype (float32 unless changed).

    Raises:
        DTypeError: ``type`` is not a floating-point dtype.
    """
    dt = as_dtype(type, "finfo") if type is not None else _state["default"]
    dt = real_for(dt)  # a complex dtype's limits are those of its parts, as PyTorch's finfo
    if not is_floating(dt):
        raise DTypeError(f"finfo: expected a floating-point dtype, got {dt}")
    return ml_dtypes.finfo(dt) if dt == bfloat16 else numpy.finfo(dt)


def iinfo(type):
    """Limits of an integer dtype (``torch.iinfo``): ``bits``, ``max``, ``min``, ``dtype``.

    Raises:
        DTypeError: ``type`` is not an integer dtype (bool included, as PyTorch).
    """
    dt = as_dtype(type, "iinfo")
    if dt is None or dt.kind not in "iu":
        raise DTypeError(f"iinfo: requires an integer dtype, got {dt}; use tinynet.finfo for floating-point dtypes")
    return numpy.iinfo(dt)


def torch_can_cast(from_, to):
    """``torch.can_cast``: whether PyTorch's casting rules allow ``from_`` into ``to`` (no
    float into an integer or bool, no integer into bool).

    Raises:
        DTypeError: an argument is not a dtype tinynet supports.
    """
    return can_cast(*_two_dtypes("can_cast", from_, to))


def promote_types(a, b):
    """PyTorch's ``promote_types``: the smallest dtype both ``a`` and ``b`` convert to,
    except that integers meeting floats take the float's width; float16 with bfloat16 is
    float32 (neither holds the other's range and precision)."""
    if a == b:
        return a
    if a.kind == "c" or b.kind == "c":  # complex wins; its parts as wide as the wider float part
        return complex_for(promote_types(real_for(a), real_for(b)))
    fa, fb = is_floating(a), is_floating(b)
    if fa and not fb:
        return a
    if fb and not fa:
        return b
    if fa:  # two floats: the wider; float16 and bfloat16 meet in float32
        wa, wb = _WIDTH[a], _WIDTH[b]
        return a if wa > wb else b if wb > wa else float32
    return numpy.promote_types(a, b)


def torch_promote_types(type1, type2):
    """``torch.promote_types``: the dtype :func:`promote_types` gives for two dtypes.

    Raises:
        DTypeError: an argument is not a dtype tinynet supports.
    """
    return promote_types(*_two_dtypes("promote_types", type1, type2))


def _two_dtypes(op, first, second):
    """Both arguments of ``op`` as dtypes (DTypeError for anything else, None included)."""
    a, b = as_dtype(first, op), as_dtype(second, op)
    if a is None or b is None:
        raise DTypeError(f"{op}: expected two dtypes, got {first!r} and {second!r}")
    return a, b


def _combine(higher, lower):
    """Merge the dtype of a higher-priority group (dimensioned tensors before 0-d tensors
    before Python scalars) with a lower one: a lower group counts only when it brings a
    higher category (bool < integer < float)."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.kind == "c":
        return higher
    if lower.kind == "c":  # a complex 0-d tensor or number meets a real tensor: complex of the tensor's width
        return complex_for(higher) if is_floating(higher) else promote_types(higher, lower)
    if is_floating(higher):
        return higher
    if higher.kind == "b" or is_floating(lower):
        return promote_types(higher, lower)
    return higher


def scalar_dtype(v):
    """The dtype a Python number stands for: bool, int64, the default float dtype, or for a
    complex number the complex dtype of the default float dtype."""
    if isinstance(v, (bool, numpy.bool_)):
        return bool_
    if isinstance(v, int):
        return int64
    if isinstance(v, complex):
        COMPLEX_SEEN[0] = True
        return _COMPLEX_OF[_state["default"]]
    return _state["default"]


def result_type(*operands):
    """PyTorch's result dtype of an op on arrays and Python numbers.

    ``operands`` are arrays (NumPy/CuPy; 0-d arrays count as 0-d tensors), NumPy scalars
    (as 0-d tensors) or Python numbers; ``None`` entries are skipped.
    """
    dim = zero = wrapped = None
    for o in operands:
        if o is None:
            continue
        dt = getattr(o, "dtype", None)
        if dt is None:
            w = scalar_dtype(o)
            wrapped = w if wrapped is None else promote_types(wrapped, w)
        elif getattr(o, "ndim", 0):
            dim = dt if dim is None else promote_types(dim, dt)
        else:
            zero = dt if zero is None else promote_types(zero, dt)
    out = _combine(dim, _combine(zero, wrapped))
    return out if out is not None else _state["default"]


def can_cast(src, dst):
    """PyTorch's rule for writing a result of dtype ``src`` into a tensor of dtype ``dst``
    (in-place ops, ``out=``): no complex into a real dtype, no float into an integer or bool,
    no integer into a bool."""
    if src.kind == "c" and dst.kind != "c":
        return False
    if is_floating(src) and dst.kind in "biu":
        return False
    if src.kind in "iu" and dst.kind == "b":
        return False
    return True


def float_for(dtype):
    """The float dtype an op with float output uses for input ``dtype``: the dtype itself
    if it is a float (or complex: the op then takes it or refuses it), else the default
    float dtype (``exp(int tensor)`` is float32)."""
    return dtype if is_floating(dtype) or dtype.kind == "c" else _state["default"]
