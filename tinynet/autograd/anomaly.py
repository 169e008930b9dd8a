"""Anomaly detection: ``detect_anomaly`` / ``set_detect_anomaly``, as ``torch.autograd``'s.

While it is on, every op recorded on the tape keeps the user-code stack that created it,
and two checks run:

* forward: an op whose float output holds a NaN although none of its float inputs did
  raises at once (an ``inf`` alone is not flagged: masks fill scores with ``-inf`` on
  purpose);
* backward: an op whose backward returns a gradient holding a NaN raises (PyTorch's check:
  "Function ... returned nan values").

Either error is an :class:`~tinynet.errors.AnomalyError` (a ``RuntimeError``) naming the
op, which output or input, and the file, line and code that created the op, with the
stack of user frames below. Costs: a stack walk per op and a scan of every output and
gradient, so it is for finding a bug, not for training (PyTorch says the same). Off, it
costs one list look-up per op.
"""
import contextlib
import os
import traceback

import numpy

from .. import backend
from ..errors import AnomalyError, check_type

STATE = [False, True]  # [enabled, check_nan]: read by node.Op.apply and the engine's loop
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tinynet/


def is_anomaly_enabled():
    """True while anomaly detection is on."""
    return STATE[0]


def is_anomaly_check_nan_enabled():
    """True while anomaly detection also checks for NaN (the default when it is on)."""
    return STATE[0] and STATE[1]


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn anomaly detection on or off for good (``torch.set_anomaly_enabled``; the function form
    of :class:`set_detect_anomaly`, which also restores the setting as a context manager).

    Raises:
        ArgumentTypeError: ``enabled`` or ``check_nan`` is not a bool.
    """
    check_type("set_anomaly_enabled", "enabled", enabled, bool, "a bool")
    check_type("set_anomaly_enabled", "check_nan", check_nan, bool, "a bool")
    STATE[:] = [enabled, check_nan]


class set_detect_anomaly(contextlib.ContextDecorator):
    """Turn anomaly detection on or off: at once when called, and back to the previous
    setting when used as a context manager (or decorator) and left, as PyTorch's.

    Args:
        mode (bool): on or off.
        check_nan (bool): also check for NaN (without it only the creation stacks are kept).
            Default True.

    Raises:
        ArgumentTypeError: ``mode`` or ``check_nan`` is not a bool.
    """

    def __init__(self, mode, check_nan=True):
        check_type("set_detect_anomaly", "mode", mode, bool, "a bool")
        check_type("set_detect_anomaly", "check_nan", check_nan, bool, "a bool")
        self.prev = list(STATE)
        STATE[:] = [mode, check_nan]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        STATE[:] = self.prev
        return False


class detect_anomaly(contextlib.ContextDecorator):
    """Anomaly detection on inside a ``with`` block (or a decorated function).

    Example::

        with tinynet.autograd.detect_anomaly():
            loss = model(x).log().sum()   # a NaN here names the op and this line
            loss.backward()               # as does one in any op's backward

    Args:
        check_nan (bool): raise on NaN (see the module doc). Default True.
    """

    def __init__(self, check_nan=True):
        check_type("detect_anomaly", "check_nan", check_nan, bool, "a bool")
        self.check_nan = check_nan

    def __enter__(self):
        self.prev = list(STATE)
        STATE[:] = [True, self.check_nan]
        return self

    def __exit__(self, *exc):
        STATE[:] = self.prev
        return False


def _user_stack():
    """The calling frames outside the tinynet package, innermost last."""
    frames = traceback.extract_stack()[:-3]
    return [f for f in frames if not os.path.abspath(f.filename).startswith(_PACKAGE + os.sep)]


def _where(op):
    stack = getattr(op, "_anomaly_stack", None)
    if not stack:
        return "the creating code is unknown (the op was recorded while anomaly detection was off)"
    last = stack[-1]
    lines = "".join(traceback.format_list(stack[-8:]))
    return f"it was created at {last.filename}:{last.lineno}: {last.line}\nuser stack of the forward call:\n{lines}"


def _has_nan(a):
    return getattr(a, "dtype", None) is not None and a.dtype.kind in "fc" and a.size and bool(
        (backend.cupy if backend.is_gpu_array(a) else numpy).isnan(a).any())


def forward_hook(op, arrays, y):
    """Called by ``Op.apply`` after forward while detection is on: keep the creation stack,
    and raise when a NaN appeared in an output from inputs without one."""
    op._anomaly_stack = _user_stack()
    if not STATE[1]:
        return
    outs = y if type(y) is tuple else (y,)
    for k, out in enumerate(outs):
        if _has_nan(out) and not any(_has_nan(a) for a in arrays):
            raise AnomalyError(f"detect_anomaly: the forward of '{op.name}' produced NaN values in its "
                               f"output {k} from inputs without NaN; {_where(op)}")


def backward_hook(op, input_grads):
    """Called by the engine after an op's backward while detection is on."""
    if not STATE[1]:
        return
    grads = input_grads if type(input_grads) in (tuple, list) else (input_grads,)
    for i, g in enumerate(grads):
        if g is not None and _has_nan(getattr(g, "array", g)):
            raise AnomalyError(f"detect_anomaly: Function '{op.name}Backward' returned nan values in its "
                               f"{i}th output (the gradient of input {i}); {_where(op)}")
