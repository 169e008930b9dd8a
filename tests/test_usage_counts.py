"""docs/gen_usage_counts.py counts uses of PyTorch names with ``ast``; docs/gen_pytorch_table.py ranks by them.

The counter runs here on small sources written for the test (no corpus is needed): import
aliases, ``from torch import nn``, ``F.relu``, nested attribute chains, Tensor method calls and
names that a local binding hides. The script itself must refuse to run without the corpus
mirrors and leave the JSON alone (CI has no mirrors); the committed JSON must name its corpus.
"""
import importlib.util
import json
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "docs" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


usage = load("gen_usage_counts")
table = load("gen_pytorch_table")


def names(source, methods=()):
    return dict(usage.count_source(textwrap.dedent(source), methods)[0])


def method_calls(source, methods):
    return dict(usage.count_source(textwrap.dedent(source), methods)[1])


def test_import_aliases_resolve_to_the_torch_path():
    assert names("""
        import torch as th
        import torch.nn as nn
        import torch.nn.functional as F
        th.zeros(3); th.zeros(4)
        nn.Linear(2, 3)
        F.relu(x)
    """) == {"torch.zeros": 2, "torch.nn.Linear": 1, "torch.nn.functional.relu": 1}


def test_from_imports_resolve_to_the_torch_path():
    assert names("""
        from torch import nn, optim as o
        from torch.nn import functional as F
        from torch.utils.data import DataLoader
        nn.Conv2d(1, 2, 3)
        o.SGD(params, lr=0.1)
        F.gelu(x)
        DataLoader(ds)
    """) == {"torch.nn.Conv2d": 1, "torch.optim.SGD": 1, "torch.nn.functional.gelu": 1,
             "torch.utils.data.DataLoader": 1}


def test_a_nested_chain_is_one_use_of_its_full_path():
    # `import torch.nn` binds `torch`; the chain counts once, not once per link
    assert names("""
        import torch.nn
        torch.nn.init.zeros_(w)
        torch.nn.functional.softmax(x, dim=-1).sum()
    """) == {"torch.nn.init.zeros_": 1, "torch.nn.functional.softmax": 1}


def test_non_torch_relative_and_star_imports_bind_no_torch_name():
    assert names("""
        import numpy as np
        from .torch import nn
        from torch import *
        from mylib import torch
        np.zeros(3); nn.Linear(1, 2); zeros(3); torch.cat(xs)
    """) == {}


def test_a_local_binding_hides_the_import_in_its_scope_only():
    assert names("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        def by_parameter(nn):
            return nn.Linear(1, 2)          # a parameter: not torch

        def by_assignment():
            F = make_functional()
            return F.relu(x)                # assigned in this function: not torch

        def reads_the_module():
            return F.relu(x)                # counted

        class Holder:
            torch = None
            a = torch.cat                   # the class body's own binding: not torch
            def method(self):
                return torch.cat(xs)        # methods do not see class names: counted

        ys = [torch.stack(t) for torch in groups]   # the comprehension's variable
        out = (lambda torch: torch.ones(1))(thing)  # the lambda's parameter
    """) == {"torch.nn.functional.relu": 1, "torch.cat": 1}


def test_decorators_defaults_and_bases_are_read_in_the_enclosing_scope():
    assert names("""
        import torch
        from torch import nn

        class Block(nn.Module):
            def __init__(self, act=nn.GELU, nn=None):
                self.act = act()

            @torch.no_grad()
            def forward(self, x: torch.Tensor):
                return x
    """) == {"torch.nn.Module": 1, "torch.nn.GELU": 1, "torch.no_grad": 1, "torch.Tensor": 1}


def test_an_import_or_none_fallback_keeps_the_import():
    assert names("""
        try:
            import torch
        except ImportError:
            torch = None
        torch.ones(2)
    """) == {"torch.ones": 1}


def test_tensor_method_calls_count_on_receivers_that_may_be_tensors():
    source = """
        import numpy as np
        import torch
        import torch.nn.functional as F
        y = x.view(2, 3).add(1)     # two calls on possible tensors
        z = model(x).view(-1)       # a call's result
        w = self.weight.add(1)      # an attribute of self
        self.view(x)                # a call on self: a module's own method
        super().add(1)
        np.add(a, b)                # a module function, not a method
        torch.add(a, b)             # a torch name, counted as such
        F.view(x)
        "a,b".split(",")            # a literal's method, and not one of the asked names
        x.reshape                   # not a call
    """
    assert method_calls(source, {"view", "add"}) == {"view": 2, "add": 2}
    assert names(source) == {"torch.add": 1, "torch.nn.functional.view": 1}


def test_a_source_that_does_not_parse_raises_syntax_error():
    with pytest.raises(SyntaxError):
        usage.count_source("print 'python 2'\n")


def test_python_files_reads_every_py_file_at_head(tmp_path):
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    (repo / "a.py").write_text("import torch\n")
    (repo / "notes.txt").write_text("not python\n")
    (repo / "sub" / "b.py").write_text("x = 1\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "files"], check=True)
    (repo / "c.py").write_text("uncommitted\n")
    got = dict(usage.python_files(repo / ".git"))
    assert got == {"a.py": b"import torch\n", "sub/b.py": b"x = 1\n"}


def test_without_the_mirrors_the_script_fails_and_leaves_the_json_alone(tmp_path):
    out = tmp_path / "counts.json"
    out.write_text("{}\n")
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "gen_usage_counts.py"),
                           "--mirror-root", str(tmp_path / "none"), "--out", str(out)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "mirrors are absent" in proc.stderr and "pytorch/examples" in proc.stderr
    assert out.read_text() == "{}\n"


def test_the_committed_counts_name_their_corpus_and_hold_counts_only():
    data = json.loads((ROOT / "docs" / "pytorch_usage_counts.json").read_text())
    assert [c["repository"] for c in data["corpus"]] == [repo for repo, _ in usage.CORPUS]
    assert all(re.fullmatch(r"[0-9a-f]{40}", c["commit"]) and c["files_parsed"] > 0 for c in data["corpus"])
    assert data["files_parsed"] == sum(c["files_parsed"] for c in data["corpus"])
    assert all(re.fullmatch(r"torch(\.[A-Za-z0-9]\w*)*", k) for k in data["names"])
    assert all(isinstance(n, int) and n > 0 for n in [*data["names"].values(), *data["tensor_method_calls"].values()])


def test_the_page_ranks_missing_names_by_use_then_alphabetically(tmp_path):
    counts = tmp_path / "counts.json"
    counts.write_text(json.dumps({"names": {"torch.nn.init.zeros_": 3, "torch.nn.init": 1, "torch.b": 2},
                                  "tensor_method_calls": {"values": 7}}))
    _, uses = table.load_counts(counts)
    assert uses["torch.nn.init"] == 4 and uses["torch.nn"] == 4 and uses["torch.Tensor.values"] == 7
    ranked = table.by_use("torch", ["zeta", "b", "Alpha", "nn", "a"], uses)
    assert ranked == [("nn", 4), ("b", 2), ("a", 0), ("Alpha", 0), ("zeta", 0)]
    assert table.missing_line("torch", ranked) == (
        "**Missing (5),** most used first: `nn` (4), `b` (2); not used in the corpus: `a`, `Alpha`, `zeta`")
    assert table.missing_line("torch.Tensor", [("values", 7)]) == "**Missing (1),** most used first: `values` (7†)"
