"""Child processes of a compat run see the same aliases.

A process started with the ``spawn`` method is a fresh interpreter: it unpickles the
"preparation data" its parent sent, re-runs the program's main file as ``__mp_main__`` (whose
``import torch`` must find tinynet again), then unpickles the process object. :func:`enable`
wraps :func:`multiprocessing.spawn.get_preparation_data` so that this data carries one more
entry, a :class:`_InstallInChild`, whose unpickling installs the import hook in the child
*before* the main file runs (``multiprocessing.spawn.prepare`` ignores keys it does not
know). Forked children inherit the hook with the rest of the interpreter.
"""
import multiprocessing.spawn as _mp_spawn

_KEY = "tinynet_compat"


def _install_in_child():
    from . import _finder
    _finder.install()
    return True


class _InstallInChild:
    def __reduce__(self):
        return (_install_in_child, ())


def enable():
    """Make spawned children install the hook (idempotent)."""
    original = _mp_spawn.get_preparation_data
    if getattr(original, "_tinynet_compat", False):
        return

    def get_preparation_data(name):
        data = original(name)
        data[_KEY] = _InstallInChild()
        return data

    get_preparation_data._tinynet_compat = True
    get_preparation_data.original = original
    _mp_spawn.get_preparation_data = get_preparation_data


def disable():
    """Undo :func:`enable`."""
    current = _mp_spawn.get_preparation_data
    if getattr(current, "_tinynet_compat", False):
        _mp_spawn.get_preparation_data = current.original
