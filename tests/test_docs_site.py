"""The documentation site builds strictly, and the tutorials' code runs.

``mkdocs build --strict`` fails on broken links, missing references and docstrings griffe
cannot parse; it needs the ``docs`` extra (mkdocs-material, mkdocstrings[python]) and is
skipped without it. The ```python blocks of every ``docs/tutorials/*.md`` page run in order,
in one namespace (```py blocks are shown but not run: e.g. the real-MNIST download).
"""
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
TUTORIALS = sorted((ROOT / "docs" / "tutorials").glob("*.md"))
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra (mkdocs-material, mkdocstrings[python]) is not installed")
    pytest.importorskip("mkdocstrings", reason="the docs extra (mkdocstrings[python]) is not installed")
    pytest.importorskip("mkdocstrings_handlers.python", reason="the docs extra (mkdocstrings[python]) is not installed")
    pytest.importorskip("material", reason="the docs extra (mkdocs-material) is not installed")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-8000:]
    assert (tmp_path / "site" / "api" / "nn" / "index.html").is_file()
    assert (tmp_path / "site" / "tutorials" / "mnist_convnet" / "index.html").is_file()


@pytest.mark.parametrize("page", TUTORIALS + [ROOT / "docs" / "getting-started.md"], ids=lambda p: p.name)
def test_docs_code_runs(page, tmp_path, monkeypatch):
    blocks = PYTHON_BLOCK.findall(page.read_text())
    assert blocks, f"{page.name} has no ```python blocks"
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__docs__"}
    for i, block in enumerate(blocks):
        exec(compile(block, f"{page.name}[block {i}]", "exec"), namespace)
