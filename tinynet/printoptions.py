"""How tensors print: ``tinynet.set_printoptions`` (PyTorch's ``torch.set_printoptions``), read by
``Tensor.__repr__``, which formats the values with ``numpy.array2string``.

Options: ``precision`` (digits after the point), ``threshold`` (more elements than this are
summarised with ``...``), ``edgeitems`` (elements shown at each end of a summarised dim),
``linewidth`` (characters per line), ``sci_mode`` (True: always scientific notation, False:
never, None: NumPy's choice). ``profile`` sets all of them at once: ``"default"``,
``"short"`` or ``"full"`` (PyTorch's three). tinynet's default summarises from 50 elements on
(PyTorch's from 1000); the ``"default"`` profile returns to tinynet's defaults.
"""
import math
import numbers

from .errors import ArgumentError, ArgumentTypeError

_DEFAULT = {"precision": 4, "threshold": 50, "edgeitems": 3, "linewidth": 75, "sci_mode": None}
_PROFILES = {"default": _DEFAULT, "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
             "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80}}
OPTIONS = dict(_DEFAULT)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None, sci_mode=None):
    """Set how tensors print (each argument left None keeps its current value; ``profile``
    first sets all four numbers, the others then override).

    Args:
        precision (int): digits after the decimal point (default 4).
        threshold (int or float): element count above which a tensor is summarised (default 50).
        edgeitems (int): items at the start and end of each summarised dim (default 3).
        linewidth (int): characters per line (default 75).
        profile (str): ``"default"``, ``"short"`` (2 digits) or ``"full"`` (never summarise).
        sci_mode (bool or None): force (True) or forbid (False) scientific notation; None lets
            NumPy choose. Unlike the others, it is set to the value given, None included.

    Raises:
        ArgumentError: an unknown profile or a negative number. ArgumentTypeError: a wrong type.
    """
    if profile is not None:
        if profile not in _PROFILES:
            raise ArgumentError(f"set_printoptions: profile must be one of {sorted(_PROFILES)}, got {profile!r}")
        OPTIONS.update(_PROFILES[profile])
    for name, v in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                    ("linewidth", linewidth)):
        if v is None:
            continue
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or (name != "threshold" and not isinstance(
                v, numbers.Integral)):
            raise ArgumentTypeError(f"set_printoptions: {name} must be an int, got {type(v).__name__}")
        if v < 0:
            raise ArgumentError(f"set_printoptions: {name} must be non-negative, got {v}")
        OPTIONS[name] = v
    if sci_mode is not None and not isinstance(sci_mode, bool):
        raise ArgumentTypeError(f"set_printoptions: sci_mode must be a bool or None, got {type(sci_mode).__name__}")
    OPTIONS["sci_mode"] = sci_mode


def array2string_kwargs():
    """``numpy.array2string``'s arguments for the options now set."""
    o = OPTIONS
    kwargs = {"precision": o["precision"], "threshold": o["threshold"] if o["threshold"] != math.inf else
              2 ** 63 - 1, "edgeitems": o["edgeitems"], "max_line_width": o["linewidth"]}
    if o["sci_mode"] is True:
        p = o["precision"]
        kwargs["formatter"] = {"float_kind": lambda x: f"{x:.{p}e}"}
    elif o["sci_mode"] is False:
        kwargs["suppress_small"] = True
    return kwargs
