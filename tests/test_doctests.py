"""Every ``>>>`` example in tinynet's docstrings runs and prints what it shows (doctest).

Modules are found by scanning the sources, so a new docstring example is tested without
being listed here. Examples that need an optional package (tensorboard) skip without it.
"""
import doctest
import importlib
import pathlib

import pytest

import tinynet

ROOT = pathlib.Path(tinynet.__file__).parent
MODULES = sorted("tinynet." + ".".join(p.relative_to(ROOT).with_suffix("").parts).replace(".__init__", "")
                 for p in ROOT.rglob("*.py") if ">>> " in p.read_text())
NEEDS = {"tinynet.utils.tensorboard": "tensorboard"}


def test_the_scan_finds_the_examples():
    assert {"tinynet.devices", "tinynet.utils.summary", "tinynet.utils.tensorboard"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    if name in NEEDS:
        pytest.importorskip(NEEDS[name])
    module = importlib.import_module(name)
    result = doctest.testmod(module, extraglobs={"tinynet": tinynet}, report=True,
                             optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
