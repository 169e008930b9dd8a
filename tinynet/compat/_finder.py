"""The import hook of :mod:`tinynet.compat`: ``torch`` and ``torch.*`` resolve to ``tinynet``
and ``tinynet.*``, ``torchvision`` and ``torchvision.*`` to ``tinynet.vision`` and its
modules, as the *same module objects* (``torch.nn is tinynet.nn``).

It is a :pep:`451` meta-path finder placed first on :data:`sys.meta_path`, with a loader that
hands back the already imported tinynet module and puts its own ``__spec__`` back after the
import system stamped the alias's spec on it. Nothing on disk changes and no tinynet module is
modified: :func:`uninstall` removes the finder (modules imported under ``torch.*`` names stay in
:data:`sys.modules` until then and are removed with it). The one other change a compat run
makes is in memory, in :mod:`multiprocessing` (:mod:`tinynet.compat._spawn`).

A few of PyTorch's module paths name a file that tinynet does not have (``torch.nn.modules
.pixelshuffle``; tinynet's PixelShuffle lives in ``tinynet.nn.modules.resample``). Importing
one of those gives a :class:`ModuleView`: a module whose names come from the listed tinynet
modules, first match wins.
"""
import importlib
import importlib.abc
import importlib.util
import sys
import types

ALIASES = {"torch": "tinynet", "torchvision": "tinynet.vision"}

# PyTorch module paths that tinynet has no file for -> the tinynet modules whose names the
# alias shows (first match wins). Other paths map one to one (torch.nn.functional ->
# tinynet.nn.functional; tinynet mirrors torch.nn.modules.sparse, .batchnorm, ... itself).
VIEWS = {
    # a view, so that the import system's setattr of a child view lands on it, not on tinynet.nn.modules
    "torch.nn.modules": ("tinynet.nn.modules", "tinynet.nn"),
    "torch.nn.modules.pixelshuffle": ("tinynet.nn",),
    "torch.nn.modules.upsampling": ("tinynet.nn",),
    "torch.nn.modules.channelshuffle": ("tinynet.nn",),
    "torch.nn.modules.fold": ("tinynet.nn",),
}


class ModuleView(types.ModuleType):
    """A module showing the names of several tinynet modules (see :data:`VIEWS`)."""

    def __init__(self, name, sources):
        super().__init__(name)
        self.__dict__["_sources"] = sources

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        for source in self._sources:
            module = importlib.import_module(source)
            if hasattr(module, attr):
                return getattr(module, attr)
        raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r}")

    def __dir__(self):
        names = set()
        for source in self._sources:
            names.update(n for n in dir(importlib.import_module(source)) if not n.startswith("_"))
        return sorted(names)


def target_of(fullname):
    """The tinynet module name an aliased name stands for, or None when it is not aliased."""
    for alias, target in ALIASES.items():
        if fullname == alias or fullname.startswith(alias + "."):
            return target + fullname[len(alias):]
    return None


def torch_name_of(tinynet_name):
    """The inverse of :func:`target_of` for messages: ``tinynet.nn.functional`` ->
    ``torch.nn.functional``, ``tinynet.vision.utils`` -> ``torchvision.utils``."""
    best = None
    for alias, target in ALIASES.items():
        if tinynet_name == target or tinynet_name.startswith(target + "."):
            if best is None or len(target) > len(best[1]):
                best = (alias, target)
    if best is None:
        return tinynet_name
    return best[0] + tinynet_name[len(best[1]):]


class _AliasLoader(importlib.abc.Loader):
    """Hands back the tinynet module (or view) found by the finder."""

    def __init__(self, module):
        self.module = module
        self.original_spec = getattr(module, "__spec__", None)

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # the import system set module.__spec__ to the alias's spec: give tinynet's back
        if not isinstance(module, ModuleView):
            module.__spec__ = self.original_spec


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``torch*`` / ``torchvision*`` names and answers with tinynet's modules."""

    def find_spec(self, fullname, path=None, target=None):
        real = target_of(fullname)
        if real is None:
            return None
        if fullname in VIEWS:
            module = ModuleView(fullname, VIEWS[fullname])
            first = importlib.import_module(VIEWS[fullname][0])
            if hasattr(first, "__path__"):  # a package: its submodules import through the view
                module.__path__ = list(first.__path__)
        else:
            try:
                module = importlib.import_module(real)
            except ModuleNotFoundError as exc:
                if exc.name is not None and (real == exc.name or real.startswith(exc.name + ".")):
                    return None  # tinynet has no such module: the import fails as "No module named torch.x"
                raise  # a third-party package that the tinynet module needs is missing: that error says more
        is_package = hasattr(module, "__path__")
        spec = importlib.util.spec_from_loader(fullname, _AliasLoader(module), is_package=is_package)
        if is_package and spec is not None:
            spec.submodule_search_locations = list(module.__path__)
        return spec


_FINDER = AliasFinder()


def install():
    """Put the finder first on ``sys.meta_path`` (idempotent).

    Raises:
        ImportError: PyTorch itself is already imported in this process (``import torch``
            would keep answering with it); run the program in a fresh process instead.
    """
    real = sys.modules.get("torch")
    if real is not None and not _is_alias_entry("torch"):
        raise ImportError("tinynet.compat: PyTorch is already imported in this process, so `import torch` "
                          "cannot be pointed at tinynet; run the program with python -m tinynet.compat")
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall():
    """Remove the finder and the ``torch*`` / ``torchvision*`` entries it put in ``sys.modules``."""
    while _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
    for name in list(sys.modules):
        if target_of(name) is not None and _is_alias_entry(name):
            del sys.modules[name]


def _is_alias_entry(name):
    module = sys.modules.get(name)
    if isinstance(module, ModuleView):
        return True
    spec = getattr(module, "__spec__", None)
    return spec is not None and spec.name != name


def installed():
    """Whether the finder is on ``sys.meta_path``."""
    return _FINDER in sys.meta_path
