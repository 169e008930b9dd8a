"""``tinynet.jit``: the names of ``torch.jit`` that eager PyTorch code uses.

tinynet has no TorchScript compiler: its programs run eagerly (``tinynet.compile`` captures CUDA
graphs instead, see docs/gpu.md). Model code written to be scriptable still runs here unchanged,
because in eager PyTorch these names are pass-throughs too: ``@torch.jit.ignore``, ``@unused``,
``@export`` return the function, ``is_scripting()`` / ``is_tracing()`` are False outside a
compilation, ``annotate(T, v)`` is ``v``, ``Final`` is :data:`typing.Final`, ``Attribute(v, T)`` is
the named tuple ``(value, type)``, and ``fork``/``wait`` run the call at once and hand its result
through a :class:`tinynet.futures.Future` (PyTorch's eager ``fork`` also runs synchronously).

The differences (docs/compat.md): :func:`script` and :func:`trace` return their argument, which
keeps running eagerly, where PyTorch returns a compiled ``ScriptModule``/``ScriptFunction``
(the results are the same; ``trace``'s freezing of data-dependent control flow does not happen);
:class:`ScriptModule` and :class:`ScriptFunction` exist for ``isinstance`` checks, which are
False for everything tinynet makes. ``torch.jit.save``/``load`` (TorchScript archives) have no
counterpart: use :func:`tinynet.save` / :func:`tinynet.load`.
"""
import collections
import inspect
import typing

from ..errors import ArgumentTypeError
from ..futures import Future
from ..nn.modules.module import Module
from . import annotations

__all__ = ["Attribute", "Final", "ScriptFunction", "ScriptModule", "annotate", "annotations", "export", "fork",
           "ignore", "interface", "is_scripting", "is_tracing", "script", "trace", "unused", "wait"]

Final = typing.Final
Attribute = collections.namedtuple("Attribute", ["value", "type"])
Attribute.__doc__ = """``Attribute(value, type)``: in eager code, the pair itself (TorchScript reads the type)."""


class ScriptModule(Module):
    """PyTorch's class of compiled modules, for ``isinstance`` checks only: tinynet compiles no
    module, so no tinynet module is one (:func:`script` returns the module it is given)."""


class ScriptFunction:
    """PyTorch's class of compiled functions, for ``isinstance`` checks only (see :class:`ScriptModule`)."""


def _callable(op, name, obj):
    if not callable(obj) or (inspect.isclass(obj) and obj.__module__ == "builtins"):
        raise ArgumentTypeError(f"{op}: {name} must be a Module, a function or a class to compile, "
                                f"got {type(obj).__name__}")
    return obj


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``obj`` itself, to run eagerly: tinynet has no TorchScript compiler (module docstring).

    Args:
        obj: a Module, function or class. optimize, _frames_up, _rcb, example_inputs: PyTorch's
            arguments, accepted and not used.

    Returns:
        ``obj``.

    Raises:
        ArgumentTypeError: ``obj`` is not callable, or a built-in class (PyTorch: TypeError).
    """
    return _callable("jit.script", "obj", obj)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-05,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """``func`` itself, after one call on the example inputs, as PyTorch's trace with
    ``check_trace=False`` makes (its side effects, a BatchNorm's running statistics in training
    mode, happen once; PyTorch's default ``check_trace=True`` runs a module four more times, a
    function two more, to compare the traced graph with Python).

    Args:
        func: a Module or function. example_inputs: a tensor or a tuple of them (the positional
            arguments of that call). example_kwarg_inputs (dict): keyword arguments instead.
            The others: PyTorch's, accepted and not used (no graph is recorded to check).

    Returns:
        ``func``, which keeps running eagerly (control flow that depends on the data is not
        frozen, unlike PyTorch's trace).

    Raises:
        ArgumentTypeError: ``func`` not callable; neither ``example_inputs`` nor
            ``example_kwarg_inputs`` given; ``example_kwarg_inputs`` not a dict.
    """
    _callable("jit.trace", "func", func)
    if example_inputs is None and example_kwarg_inputs is None:
        raise ArgumentTypeError("jit.trace: give example_inputs (a tensor or a tuple of tensors) or "
                                "example_kwarg_inputs (a dict)")
    if example_kwarg_inputs is not None:
        if not isinstance(example_kwarg_inputs, dict):
            raise ArgumentTypeError(f"jit.trace: example_kwarg_inputs must be a dict, got "
                                    f"{type(example_kwarg_inputs).__name__}")
        func(**example_kwarg_inputs)
    else:
        func(*(example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)))
    return func


def ignore(drop=False, **kwargs):
    """Leave a function to Python (PyTorch: TorchScript calls it through the interpreter): the
    function itself, as ``@ignore`` or ``@ignore(drop=...)``.

    Raises:
        ArgumentTypeError: ``drop`` neither a function nor a bool (PyTorch: RuntimeError).
    """
    if callable(drop):
        return drop
    if not isinstance(drop, bool):
        raise ArgumentTypeError(f"jit.ignore: the argument must be a bool or a function, got {type(drop).__name__}")
    return lambda fn: fn


def unused(fn):
    """The function itself (TorchScript replaces its body by an exception)."""
    return fn


def export(fn):
    """The method itself (TorchScript compiles it as an entry point)."""
    return fn


def interface(obj):
    """The class itself (TorchScript makes it an interface type)."""
    return obj


def is_scripting():
    """False: tinynet code is never being compiled by TorchScript (nor is eager PyTorch code)."""
    return False


def is_tracing():
    """False: :func:`trace` records no graph (in eager PyTorch it is True only while tracing)."""
    return False


def annotate(the_type, the_value):
    """``the_value`` (TorchScript takes ``the_type`` as its static type)."""
    return the_value


def fork(func, *args, **kwargs):
    """Run ``func(*args, **kwargs)`` now and return a :class:`tinynet.futures.Future` of its
    result (PyTorch's eager ``fork`` also runs the call before returning).

    Raises:
        ArgumentTypeError: ``func`` not callable. An exception of ``func`` itself is raised by
            :func:`wait` (it is set on the Future).
    """
    if not callable(func):
        raise ArgumentTypeError(f"jit.fork: func must be callable, got {type(func).__name__}")
    fut = Future()
    try:
        fut.set_result(func(*args, **kwargs))
    except Exception as e:  # handed to the waiter, as a Future's error
        fut.set_exception(e)
    return fut


def wait(future):
    """The result of a :func:`fork` (``future.wait()``).

    Raises:
        ArgumentTypeError: ``future`` is not a :class:`tinynet.futures.Future`.
    """
    if not isinstance(future, Future):
        raise ArgumentTypeError(f"jit.wait: future must be a tinynet.futures.Future, got {type(future).__name__}")
    return future.wait()
