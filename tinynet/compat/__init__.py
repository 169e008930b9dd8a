"""Run an unmodified PyTorch program on tinynet: ``python -m tinynet.compat SCRIPT [ARGS...]``
(also ``-c CODE [ARGS...]`` and ``-m MODULE [ARGS...]``, as ``python`` takes them).

The program's ``import torch`` (and ``torch.nn``, ``torch.utils.data``, ...) gets tinynet's
modules, the same objects (``torch.nn is tinynet.nn``), and ``import torchvision`` gets
:mod:`tinynet.vision` (the datasets, transforms and image utilities such programs use). The
script runs as ``__main__`` with ``sys.argv = [SCRIPT, ARGS...]`` and its folder first on
``sys.path``, as ``python SCRIPT ARGS...`` would run it; child processes started with the
``spawn`` or ``fork`` methods (``torch.multiprocessing``, DataLoader workers) see the same
aliases. Nothing is changed on disk: an import hook (:mod:`tinynet.compat._finder`) answers the
``torch*`` names.

When the program stops on a PyTorch name that tinynet does not have, the run ends with one
line on stderr naming it and the program line that used it, and exit status 1::

    tinynet.compat: the PyTorch name torch.foo is not in tinynet, used at main.py:3 (torch.foo(1)) [...]

``TINYNET_COMPAT_TRACEBACK=1`` shows the full traceback instead. Any other error keeps its
traceback.

In a program: :func:`install` / :func:`uninstall` the hook, :func:`run_path` runs a file,
:func:`run_code` a string and :func:`run_module` a module.
"""
import builtins
import contextlib
import os
import runpy
import sys

from .. import devices
from . import _finder, _spawn
from ._finder import ALIASES, installed
from ._missing import describe

__all__ = ["install", "uninstall", "installed", "run_path", "run_code", "run_module", "main", "describe",
           "ALIASES"]

USAGE = "usage: python -m tinynet.compat SCRIPT [ARGS...] | -c CODE [ARGS...] | -m MODULE [ARGS...]"


def install():
    """Point ``torch`` / ``torchvision`` imports of this process (and of the processes it
    spawns) at tinynet.

    Raises:
        ImportError: PyTorch is already imported in this process.
    """
    _finder.install()
    _spawn.enable()


def uninstall():
    """Undo :func:`install`: the hook goes, and the ``torch*`` entries it made in
    ``sys.modules`` with it."""
    _finder.uninstall()
    _spawn.disable()


def run_path(path, args=()):
    """Run the file ``path`` as ``__main__`` on tinynet, with ``sys.argv = [path, *args]``.

    Args:
        path (str or os.PathLike): the program.
        args (sequence of str): its command-line arguments.

    Returns:
        The program's globals after it ran (as :func:`runpy.run_path`).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        Whatever the program raises (``SystemExit`` included).
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"tinynet.compat: no such program file: {path!r}")
    with _program([path, *args], os.path.dirname(os.path.abspath(path))):
        return runpy.run_path(path, run_name="__main__")


def run_code(code, args=()):
    """Run the Python source ``code`` as ``__main__`` on tinynet, as ``python -c CODE ARGS``
    (``sys.argv = ["-c", *args]``, the current folder first on ``sys.path``).

    Returns:
        The namespace the code ran in. Raises: whatever the code raises.
    """
    with _program(["-c", *args], os.getcwd()):
        namespace = {"__name__": "__main__", "__builtins__": builtins}
        exec(compile(code, "<string>", "exec"), namespace)
        return namespace


def run_module(name, args=()):
    """Run the module ``name`` as ``__main__`` on tinynet, as ``python -m MODULE ARGS``.

    Returns:
        The module's globals after it ran. Raises: ImportError when there is no such module;
        whatever the module raises.
    """
    with _program([name, *args], os.getcwd()):
        return runpy.run_module(name, run_name="__main__", alter_sys=True)


@contextlib.contextmanager
def _program(argv, folder):
    """The process as ``python`` sets it up for a program: the hook installed, ``sys.argv``,
    ``folder`` first on ``sys.path``, the CPU as the default device; all restored after."""
    install()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds tinynet/
    old_argv, old_path = sys.argv, list(sys.path)
    sys.argv = list(argv)
    if sys.path and sys.path[0] in ("", os.getcwd()):
        sys.path[0] = folder  # what `python SCRIPT` puts first
    else:
        sys.path.insert(0, folder)
    if not any(os.path.abspath(p or ".") == root for p in sys.path):
        sys.path.append(root)  # so that spawned children import this tinynet
    # PyTorch's factories make CPU tensors unless told otherwise, whatever GPU is present: so do
    # the program's (TINYNET_BACKEND=cupy would make them CUDA tensors), in spawned children too
    old_default, old_backend = devices._chosen_default[0], os.environ.get("TINYNET_BACKEND")
    devices.set_default_device("cpu")
    os.environ["TINYNET_BACKEND"] = "numpy"  # (the children's default; CUDA stays usable on request)
    try:
        yield
    finally:
        sys.argv = old_argv
        sys.path[:] = old_path
        devices._chosen_default[0] = old_default
        if old_backend is None:
            os.environ.pop("TINYNET_BACKEND", None)
        else:
            os.environ["TINYNET_BACKEND"] = old_backend


def main(argv=None):
    """The command line: ``python -m tinynet.compat SCRIPT [ARGS...]`` (or ``-c CODE``, ``-m MODULE``);
    returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE + "\n\n" + __doc__.split("\n\n")[1], file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    if argv[0] in ("-c", "-m") and len(argv) < 2:
        print(f"{USAGE}\ntinynet.compat: {argv[0]} needs an argument", file=sys.stderr)
        return 2
    try:
        if argv[0] == "-c":
            run_code(argv[1], argv[2:])
        elif argv[0] == "-m":
            run_module(argv[1], argv[2:])
        else:
            run_path(argv[0], argv[1:])
    except (AttributeError, ImportError) as exc:
        line = describe(exc)
        if line is None or os.environ.get("TINYNET_COMPAT_TRACEBACK"):
            raise
        sys.stdout.flush()
        print(line, file=sys.stderr)
        return 1
    except FileNotFoundError as exc:
        if exc.filename is None and str(exc).startswith("tinynet.compat"):
            print(exc, file=sys.stderr)
            return 2
        raise
    return 0
