"""One line for a PyTorch name that tinynet lacks.

When a program run by :mod:`tinynet.compat` stops on an ``AttributeError`` or ``ImportError``
whose owner is one of tinynet's modules or classes (or a class built on them, such as the
program's own ``nn.Module``), :func:`describe` turns it into one line naming the PyTorch name
(``torch.nn.functional.foo``, ``torch.Tensor.foo``, ``torch.onnx``) and the place in the
program that used it (``main.py:12: y = F.foo(x)``). Errors with any other owner are not
rewritten: the program's own bugs keep their tracebacks.
"""
import linecache
import os
import re
import sysconfig
import traceback
import types

from ._finder import ModuleView, target_of, torch_name_of

_TINYNET_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_STDLIB_DIRS = tuple({os.path.abspath(p) for p in (sysconfig.get_paths()["stdlib"],
                                                   sysconfig.get_paths()["platstdlib"])})
_MODULE_ATTR = re.compile(r"module '(?P<owner>[\w.]+)' has no attribute '(?P<name>\w+)'")
_OBJECT_ATTR = re.compile(r"'(?P<owner>[\w.]+)' object has no attribute '(?P<name>\w+)'")
_TYPE_ATTR = re.compile(r"type object '(?P<owner>[\w.]+)' has no attribute '(?P<name>\w+)'")
_CANNOT_IMPORT = re.compile(r"cannot import name '(?P<name>\w+)' from '(?P<owner>[\w.]+)'")


def _public_path(cls):
    """``torch.nn.Module`` for tinynet.nn.modules.module.Module: the shortest tinynet path
    that shows the class, in PyTorch's spelling."""
    import importlib
    module = cls.__module__
    parts = module.split(".")
    for n in range(1, len(parts) + 1):  # tinynet.Tensor before tinynet.tensor.Tensor
        prefix = ".".join(parts[:n])
        try:
            if getattr(importlib.import_module(prefix), cls.__name__, None) is cls:
                return torch_name_of(prefix) + "." + cls.__name__
        except ImportError:
            continue
    return torch_name_of(module) + "." + cls.__name__


def _is_tinynet(name):
    return name == "tinynet" or name.startswith("tinynet.")


def _missing_name(exc):
    """The PyTorch name behind ``exc``, or None when the error is not about a tinynet name."""
    if isinstance(exc, ModuleNotFoundError):
        if exc.name and target_of(exc.name) is not None:
            return exc.name
        return None
    if isinstance(exc, ImportError):
        m = _CANNOT_IMPORT.search(str(exc))
        if m and (_is_tinynet(m["owner"]) or target_of(m["owner"]) is not None):
            return torch_name_of(m["owner"]) + "." + m["name"]
        return None
    if not isinstance(exc, AttributeError):
        return None
    obj, name = getattr(exc, "obj", None), getattr(exc, "name", None)
    if obj is not None and name:
        if isinstance(obj, ModuleView):
            return obj.__name__ + "." + name
        if isinstance(obj, types.ModuleType):
            return torch_name_of(obj.__name__) + "." + name if _is_tinynet(obj.__name__) else None
        cls = obj if isinstance(obj, type) else type(obj)
        for base in cls.__mro__:  # the first tinynet class the object is built on
            if _is_tinynet(base.__module__):
                return _public_path(base) + "." + name
        return None
    text = str(exc)
    m = _MODULE_ATTR.search(text)
    if m and (_is_tinynet(m["owner"]) or target_of(m["owner"]) is not None):
        return torch_name_of(m["owner"]) + "." + m["name"]
    return None


def _is_program_file(filename):
    if not filename or filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    if path.startswith(_TINYNET_DIR + os.sep):
        return False
    return not path.startswith(_STDLIB_DIRS)


def program_frame(exc):
    """``(filename, lineno, source line)`` of the innermost frame of the program (not tinynet,
    not the standard library) in ``exc``'s traceback, or None."""
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if _is_program_file(frame.filename):
            found = frame
    if found is None:
        return None
    line = found.line or linecache.getline(found.filename, found.lineno).strip()
    return found.filename, found.lineno, line


def describe(exc, cwd=None):
    """One line for a missing PyTorch name, or None when ``exc`` is something else."""
    name = _missing_name(exc)
    if name is None:
        return None
    where = program_frame(exc)
    if where is None:
        place = "no program line in the traceback"
    else:
        filename, lineno, line = where
        shown = os.path.relpath(filename, cwd or os.getcwd())
        if shown.startswith(os.pardir + os.sep + os.pardir):
            shown = filename
        place = f"used at {shown}:{lineno}" + (f" ({line})" if line else "")
    kind = "module" if isinstance(exc, ModuleNotFoundError) else "name"
    detail = " ".join(str(exc).split())
    return f"tinynet.compat: the PyTorch {kind} {name} is not in tinynet, {place} [{type(exc).__name__}: {detail}]"
