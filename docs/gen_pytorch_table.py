"""Generate ``docs/pytorch_coverage.md``: which of PyTorch's public names tinynet has.

Run with PyTorch installed (``pip install torch``)::

    python docs/gen_pytorch_table.py            # rewrites docs/pytorch_coverage.md
    python docs/gen_pytorch_table.py OUT.md     # writes elsewhere (the test's use)

For each namespace pair (``torch.nn`` / ``tinynet.nn``, ...) it lists PyTorch's public
names (no leading underscore, no submodules) and checks whether the tinynet namespace has
an attribute of that name. The missing names are ordered by how often public PyTorch code
uses them, from ``docs/pytorch_usage_counts.json`` (written by ``docs/gen_usage_counts.py``,
which needs the corpus mirrors; this script only reads the JSON).
``tests/test_docs_site.py`` regenerates the page and compares it with the committed one, so
the page cannot go stale silently.
"""
import collections
import importlib
import inspect
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "docs"))
from gen_usage_counts import reachable  # noqa: E402  (the sibling script: one attribute walk for both)
PAGE = ROOT / "docs" / "pytorch_coverage.md"
COUNTS = ROOT / "docs" / "pytorch_usage_counts.json"
NEXT = 25  # names in the page's "Next to add, by use" list

# (PyTorch namespace, tinynet namespace); a ".Tensor" suffix means the class's methods
PAIRS = [
    ("torch", "tinynet"),
    ("torch.Tensor", "tinynet.Tensor"),
    ("torch.nn", "tinynet.nn"),
    ("torch.nn.functional", "tinynet.nn.functional"),
    ("torch.optim", "tinynet.optim"),
    ("torch.optim.lr_scheduler", "tinynet.optim.lr_scheduler"),
    ("torch.autograd", "tinynet.autograd"),
    ("torch.utils.data", "tinynet.utils.data"),
    ("torch.distributed", "tinynet.distributed"),
    ("torch.nn.parallel", "tinynet.nn.parallel"),
    ("torch.linalg", "tinynet.linalg"),
    ("torch.fft", "tinynet.fft"),
    ("torch.special", "tinynet.special"),
    ("torch.distributions", "tinynet.distributions"),
    ("torch.func", "tinynet.func"),
    ("torch.autograd.functional", "tinynet.autograd.functional"),
    ("torch.utils.checkpoint", "tinynet.utils.checkpoint"),
    ("torch.testing", "tinynet.testing"),
    ("torch.profiler", "tinynet.profiler"),
    ("torch.accelerator", "tinynet.accelerator"),
    ("torch.nn.utils.parametrize", "tinynet.nn.utils.parametrize"),
    ("torch.nn.utils.parametrizations", "tinynet.nn.utils.parametrizations"),
    ("torch.nn.utils.prune", "tinynet.nn.utils.prune"),
    ("torch.onnx", "tinynet.onnx"),
    ("torch.multiprocessing", "tinynet.multiprocessing"),
    ("torch.jit", "tinynet.jit"),
    ("torch.hub", "tinynet.hub"),
]
# Tensor methods that Python's built-in types also have: their call counts are mostly not tensors
BUILTIN_METHODS = {n for t in (dict, list, str, bytes, set, tuple, int, float, complex)
                   for n in dir(t) if not n.startswith("_")}


def resolve(dotted):
    """The module or class that ``dotted`` names (``torch.Tensor`` is the class)."""
    try:
        return importlib.import_module(dotted)
    except ImportError:
        module, _, attr = dotted.rpartition(".")
        return getattr(importlib.import_module(module), attr)


def foreign(value):
    """True for a class, function or typing construct defined outside PyTorch that a module
    imported for its own use (``typing.Any``, ``contextlib.contextmanager``): not PyTorch API."""
    module = getattr(value, "__module__", None)
    if not isinstance(module, str) or module.split(".")[0] in ("torch", "builtins"):
        return False
    return inspect.isclass(value) or inspect.isfunction(value) or type(value).__module__ == "typing"


def public_names(obj):
    """Public names of a module or class: no leading underscore, no submodules, nothing
    imported from outside PyTorch (see :func:`foreign`)."""
    names = set()
    for name in dir(obj):
        if name.startswith("_"):
            continue
        try:
            value = getattr(obj, name)
        except Exception:  # a lazy attribute that fails to load is still a public name
            value = None
        if inspect.ismodule(value) or foreign(value):
            continue
        names.add(name)
    return sorted(names, key=lambda s: (s.lower(), s))


def has(obj, name):
    try:
        getattr(obj, name)
    except Exception:
        return False
    return True


def spans(names):
    return ", ".join(f"`{n}`" for n in names) if names else "(none)"


def load_counts(path=COUNTS):
    """(the JSON's data, uses of each dotted torch name): a use of ``torch.nn.init.zeros_`` also
    counts for ``torch.nn.init``; Tensor method calls count for ``torch.Tensor.<method>``."""
    data = json.loads(pathlib.Path(path).read_text())
    uses = collections.Counter()
    for chain, n in data["names"].items():
        parts = chain.split(".")
        for i in range(1, len(parts) + 1):
            uses[".".join(parts[:i])] += n
    for method, n in data["tensor_method_calls"].items():
        uses[f"torch.Tensor.{method}"] += n
    return data, uses


def by_use(torch_name, names, uses):
    """``names`` as (name, uses): most used first, ties and unused names alphabetical."""
    counted = [(n, uses.get(f"{torch_name}.{n}", 0)) for n in names]
    return sorted(counted, key=lambda nc: (-nc[1], nc[0].lower(), nc[0]))


def mark(torch_name, name):
    """"†" for a Tensor method that Python's built-in types also have (its count is mostly theirs)."""
    return "†" if torch_name == "torch.Tensor" and name in BUILTIN_METHODS else ""


def missing_line(torch_name, ranked):
    used = ", ".join(f"`{n}` ({c}{mark(torch_name, n)})" for n, c in ranked if c)
    unused = ", ".join(f"`{n}`" for n, c in ranked if not c)
    if not ranked:
        return "**Missing (0):** (none)"
    if not used:
        return f"**Missing ({len(ranked)}),** none used in the corpus: {unused}"
    return f"**Missing ({len(ranked)}),** most used first: {used}" + (f"; not used in the corpus: {unused}"
                                                                       if unused else "")


def tinynet_lacks(torch_path):
    """The shortest prefix of ``torch_path`` whose tinynet counterpart does not exist, or None."""
    import tinynet
    kept, missing = reachable(tinynet, torch_path.split(".")[1:])
    return None if missing is None else ".".join(["torch", *kept[1:], missing])


def elsewhere(data, listed):
    """(uses, path) of what the corpus uses that tinynet lacks and the sections do not list."""
    uses = collections.Counter()
    for chain, n in data["names"].items():
        gap = tinynet_lacks(chain)
        if gap is not None and gap not in listed:
            uses[gap] += n
    return sorted(((n, path) for path, n in uses.items()), key=lambda np: (-np[0], np[1].lower(), np[1]))


def numbered(ranked):
    return [f"{i}. `{name}` ({count})" for i, (count, name) in enumerate(ranked[:NEXT], 1)]


def corpus_text(data):
    repos = ", ".join(f"[{c['repository']}](https://github.com/{c['repository']}/tree/{c['commit']}) "
                      f"at `{c['commit'][:12]}` ({c['files_parsed']} files)" for c in data["corpus"])
    return (f"Missing names are listed most used first, with the number of uses beside each, then the "
            f"names never used, alphabetically. The uses are counted in {data['files_parsed']} Python files of "
            f"public PyTorch code: {repos}. `docs/gen_usage_counts.py` parses every `.py` file with Python's "
            "`ast`, resolves per file the names bound by torch imports (`import torch.nn as nn`, "
            "`from torch.nn import functional as F`, ...; a local binding of the same name hides the import "
            "in its scope) and counts each use of a name reached through them (`F.relu(x)` is a use of "
            "`torch.nn.functional.relu`; a use of `torch.nn.init.zeros_` also counts for `torch.nn.init`). "
            "For `torch.Tensor` it also counts calls `x.name(...)` of a Tensor method on any receiver other "
            "than `self`, a literal or an imported module; receivers carry no types, so this is an "
            "approximation: a NumPy array's `.reshape()` counts too, and names marked † are also methods of "
            "Python's built-in types (a dict's `.values()`, a list's `.index()`), whose counts are mostly not "
            "tensors; they are left out of \"Next to add, by use\". The counts (names and numbers only) are in "
            "`docs/pytorch_usage_counts.json`; to redo them with the repositories' mirrors at hand, run "
            "`python docs/gen_usage_counts.py`, then `python docs/gen_pytorch_table.py`.")


def render():
    import torch
    data, uses = load_counts()
    rows, sections, candidates, listed = [], [], [], set()
    for torch_name, tn_name in PAIRS:
        theirs = public_names(resolve(torch_name))
        listed.update(f"{torch_name}.{n}" for n in theirs)
        ours = resolve(tn_name)
        present = [n for n in theirs if has(ours, n)]
        missing = by_use(torch_name, [n for n in theirs if not has(ours, n)], uses)
        candidates += [(c, f"{torch_name}.{n}") for n, c in missing if c and not mark(torch_name, n)]
        pct = 100.0 * len(present) / len(theirs) if theirs else 100.0
        rows.append(f"| `{torch_name}` | `{tn_name}` | {len(present)} / {len(theirs)} | {pct:.0f}% |")
        sections.append(f"## `{torch_name}`\n\n{len(present)} of {len(theirs)} names ({pct:.0f}%) "
                        f"are in `{tn_name}`.\n\n**Present ({len(present)}):** {spans(present)}\n\n"
                        f"{missing_line(torch_name, missing)}\n")
    ranked = sorted(set(candidates), key=lambda cn: (-cn[0], cn[1].lower(), cn[1]))
    others = elsewhere(data, listed)
    head = [
        "<!-- Generated by docs/gen_pytorch_table.py from docs/pytorch_usage_counts.json; do not edit. "
        "Regenerate with: python docs/gen_pytorch_table.py (needs torch) -->",
        "",
        "# PyTorch API coverage",
        "",
        f"Which public names of PyTorch {torch.__version__.split('+')[0]} exist in tinynet, namespace by "
        "namespace: a name counts as present when the tinynet namespace has an attribute of that "
        "name (it says nothing about every argument being supported; see "
        "[For PyTorch users](pytorch.md) for the known differences). Public means no leading "
        "underscore; submodules, and the classes and functions a module imported from outside "
        "PyTorch for its own use (`typing.Any`, ...), are left out. For `torch.Tensor` the names are the class's "
        "methods and properties.",
        "",
        corpus_text(data),
        "",
        "This page is generated from the code by `docs/gen_pytorch_table.py`; "
        "`tests/test_docs_site.py` fails when it is out of date.",
        "",
        "| PyTorch | tinynet | present | share |",
        "| --- | --- | --- | --- |",
        *rows,
        "",
        "## Next to add, by use",
        "",
        (f"The {NEXT} missing names of the namespaces below that the corpus uses most:" if len(ranked) > NEXT else
         f"Every missing name of the namespaces below that the corpus uses at all ({len(ranked)}), most used "
         "first; the other missing names are not used in it:"),
        "",
        *numbered(ranked),
        "",
        "Outside those namespaces (a submodule or a name tinynet lacks, shown at its shortest missing path; "
        f"uses of all the names under it counted together), the {min(NEXT, len(others))} most used:",
        "",
        *numbered(others),
        "",
    ]
    return "\n".join(head) + "\n" + "\n".join(sections)


def main(argv):
    sys.path.insert(0, str(ROOT))
    out = pathlib.Path(argv[1]) if len(argv) > 1 else PAGE
    out.write_text(render())
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv)
