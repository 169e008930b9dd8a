"""Count how often public PyTorch code uses each PyTorch name: ``docs/pytorch_usage_counts.json``.

Run where the corpus mirrors are (bare git directories; no work tree is needed)::

    python docs/gen_usage_counts.py                       # rewrites docs/pytorch_usage_counts.json
    python docs/gen_usage_counts.py --mirror-root DIR     # mirrors elsewhere (DIR/owner+name/repo)
    python docs/gen_usage_counts.py --out FILE            # writes elsewhere

Every ``.py`` file at the HEAD commit of each repository in ``CORPUS`` is parsed with Python's
``ast`` (nothing is guessed from the text). Two kinds of use are counted:

* **Names reached from a torch import.** Per file, the names bound by ``import torch``,
  ``import torch.nn as nn``, ``from torch import nn``, ``from torch.nn import functional as F``,
  ``from torch.utils.data import DataLoader`` ... are resolved to the PyTorch path they stand for;
  each load of such a name, with the attribute chain written after it, is one use of the full
  path (``F.relu(x)`` is a use of ``torch.nn.functional.relu``). Scopes follow Python's rules: a
  name that a function, class body, lambda or comprehension binds only otherwise (a parameter,
  an assignment, a loop variable, ...) hides the import there, and its uses are not counted. A
  scope that binds a name both by a torch import and otherwise (``try: import torch`` /
  ``except ImportError: torch = None``) keeps the import. ``import`` lines themselves and
  names in strings are not uses; ``from torch import *`` binds nothing here.
* **Tensor methods.** Each call ``<receiver>.name(...)`` whose ``name`` is a method of
  ``torch.Tensor`` counts once for that method, unless the receiver is plainly not a tensor:
  ``self``, ``super()``, a literal or display (``"".join``, ``{...}.items``), or a name or
  attribute chain rooted at any import (``np.mean``, ``F.relu``, ``os.path.join``). Receivers
  carry no types, so this is an approximation: a dict's ``.values()`` or a NumPy array's
  ``.reshape()`` counts as well.

Chains are cut to the longest prefix that exists in the installed PyTorch and stops before a
private component, so the file holds PyTorch's names and their counts, nothing of the corpus's
code. Without the mirrors the script says which are absent and exits with status 2, leaving the
JSON as it is (CI has no mirrors; it only reads the committed JSON).
"""
import argparse
import ast
import collections
import importlib
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "docs" / "pytorch_usage_counts.json"
MIRROR_ROOT = pathlib.Path("/work/.mirror")

# (GitHub repository, mirror directory under the mirror root)
CORPUS = [
    ("pytorch/examples", "pytorch+examples"),
    ("karpathy/nanoGPT", "karpathy+nanoGPT"),
    ("karpathy/minGPT", "karpathy+minGPT"),
    ("huggingface/pytorch-image-models", "huggingface+pytorch-image-models"),
    ("lucidrains/vit-pytorch", "lucidrains+vit-pytorch"),
]

NOT_A_TENSOR = (ast.Constant, ast.JoinedStr, ast.Dict, ast.List, ast.Set, ast.Tuple,
                ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
          ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)

# A binding's value: a PyTorch path ("torch.nn.functional"), "" for an import of anything
# else, None for a binding by other means (assignment, parameter, loop variable, ...).


def _rank(value):
    return 2 if value else (1 if value == "" else 0)


class Scope:
    """The names one scope binds (module, function, class body, lambda or comprehension)."""

    def __init__(self, kind, parent, bindings, declared_global):
        self.kind, self.parent = kind, parent
        self.bindings, self.declared_global = bindings, declared_global

    def resolve(self, name):
        """What ``name`` is bound to where this scope's code reads it (Python's LEGB, no builtins)."""
        scope = self
        if name in scope.declared_global:
            while scope.parent is not None:
                scope = scope.parent
        first = True
        while scope is not None:
            if (first or scope.kind != "class") and name in scope.bindings:
                return scope.bindings[name]
            first, scope = False, scope.parent
        return None


def _bind(bindings, name, value):
    if name not in bindings or _rank(value) > _rank(bindings[name]):
        bindings[name] = value


def _scope_nodes(nodes):
    """The nodes evaluated in this scope: nested scopes' bodies are left out (their decorators,
    defaults, bases and first iterable belong here; their names are bound here)."""
    stack = list(reversed(nodes))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, NESTED):
            stack.extend(reversed(_outer_parts(node)))
        else:
            stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _outer_parts(node):
    """The parts of a nested scope's node that the enclosing scope evaluates."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = node.args
        parts = [d for d in args.defaults + args.kw_defaults if d is not None]
        if not isinstance(node, ast.Lambda):
            every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
            parts += [a.annotation for a in every if a.annotation is not None]
            parts += node.decorator_list + ([node.returns] if node.returns else [])
        return parts
    if isinstance(node, ast.ClassDef):
        return node.decorator_list + node.bases + node.keywords
    return [node.generators[0].iter]  # a comprehension


def _collect(nodes, params=()):
    """Bindings and ``global`` names of the scope whose own nodes are ``nodes``."""
    bindings, declared_global, declared_nonlocal = {}, set(), set()
    for name in params:
        _bind(bindings, name, None)
    for node in _scope_nodes(nodes):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    _bind(bindings, alias.asname, alias.name if _is_torch(alias.name) else "")
                else:
                    top = alias.name.split(".")[0]
                    _bind(bindings, top, top if _is_torch(top) else "")
        elif isinstance(node, ast.ImportFrom):
            torch_module = node.level == 0 and _is_torch(node.module or "")
            for alias in node.names:
                if alias.name != "*":
                    _bind(bindings, alias.asname or alias.name,
                          f"{node.module}.{alias.name}" if torch_module else "")
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            _bind(bindings, node.id, None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            _bind(bindings, node.name, None)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            _bind(bindings, node.name, None)
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            _bind(bindings, node.name, None)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            _bind(bindings, node.rest, None)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            (declared_global if isinstance(node, ast.Global) else declared_nonlocal).update(node.names)
    for name in declared_global | declared_nonlocal:  # bound in another scope: not this one's
        bindings.pop(name, None)
    return bindings, declared_global


def _is_torch(module):
    return module == "torch" or module.startswith("torch.")


def _params(args):
    every = args.posonlyargs + args.args + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a]
    return [a.arg for a in every]


class _Counter:
    def __init__(self, tensor_methods):
        self.tensor_methods = tensor_methods
        self.names = collections.Counter()
        self.methods = collections.Counter()

    def module(self, tree):
        self.block(tree.body, Scope("module", None, *_collect(tree.body)))

    def block(self, nodes, scope):
        for node in nodes:
            self.visit(node, scope)

    def visit(self, node, scope):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            self.block(_outer_parts(node), scope)
            body = node.body if isinstance(node.body, list) else [node.body]
            inner = Scope("function", scope, *_collect(body, _params(node.args)))
            self.block(body, inner)
        elif isinstance(node, ast.ClassDef):
            self.block(_outer_parts(node), scope)
            self.block(node.body, Scope("class", scope, *_collect(node.body)))
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            self.visit(node.generators[0].iter, scope)
            first, *rest = node.generators
            parts = [first.target, *first.ifs] + [p for g in rest for p in (g.target, g.iter, *g.ifs)]
            parts += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            self.block(parts, Scope("comprehension", scope, *_collect(parts)))
        elif isinstance(node, (ast.Attribute, ast.Name)) and self.chain(node, scope):
            pass  # a use of a torch name, counted whole: its inner links are not uses of their own
        else:
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in self.tensor_methods and self.maybe_tensor(node.func.value, scope):
                    self.methods[node.func.attr] += 1
            for child in ast.iter_child_nodes(node):
                self.visit(child, scope)

    def chain(self, node, scope):
        """Count ``node`` when it is a torch name (or an attribute chain on one); say whether it was."""
        attrs = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or not isinstance(node.ctx, ast.Load):
            return False
        path = scope.resolve(node.id)
        if not path:
            return False
        self.names[".".join([path, *reversed(attrs)])] += 1
        return True

    def maybe_tensor(self, receiver, scope):
        if isinstance(receiver, NOT_A_TENSOR):
            return False
        if isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name) and receiver.func.id == "super":
            return False
        if isinstance(receiver, ast.Name) and receiver.id == "self":
            return False
        while isinstance(receiver, ast.Attribute):
            receiver = receiver.value
        return not isinstance(receiver, ast.Name) or scope.resolve(receiver.id) is None


def count_source(source, tensor_methods=frozenset()):
    """Uses in one file's source: (Counter of resolved torch paths, Counter of tensor-method calls).

    Raises SyntaxError (or ValueError for null bytes) when the source does not parse."""
    counter = _Counter(frozenset(tensor_methods))
    counter.module(ast.parse(source))
    return counter.names, counter.methods


def python_files(git_dir):
    """(path, bytes) of every .py file at HEAD of the bare repository ``git_dir``."""
    listing = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", "HEAD"],
                             check=True, capture_output=True).stdout.decode()
    blobs = []
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        mode, kind, sha = meta.split()
        if kind == "blob" and path.endswith(".py") and mode != "120000":
            blobs.append((path, sha))
    batch = subprocess.run(["git", "--git-dir", str(git_dir), "cat-file", "--batch"], check=True,
                           input="".join(f"{sha}\n" for _, sha in blobs).encode(), capture_output=True).stdout
    pos = 0
    for path, _ in blobs:
        header_end = batch.index(b"\n", pos)
        size = int(batch[pos:header_end].split()[2])
        yield path, batch[header_end + 1:header_end + 1 + size]
        pos = header_end + 1 + size + 1


def reachable(package, parts, stop_private=False):
    """``(names, missing)``: the longest run of ``parts`` reachable as attributes (or submodules
    its package does not import) from the imported ``package``, starting with its name, and the
    first part that is not (None when all are). ``stop_private`` stops before a part starting
    with an underscore."""
    obj, kept = package, [package.__name__]
    for part in parts:
        if stop_private and part.startswith("_"):
            return kept, part
        try:
            obj = getattr(obj, part)
        except Exception:
            try:  # a submodule that its package does not import
                obj = importlib.import_module(".".join([*kept, part]))
            except Exception:
                return kept, part
        kept.append(part)
    return kept, None


def torch_prefix(path, torch):
    """The longest prefix of dotted ``path`` that exists in PyTorch, stopping before a private part."""
    return ".".join(reachable(torch, path.split(".")[1:], stop_private=True)[0])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirror-root", type=pathlib.Path, default=MIRROR_ROOT)
    parser.add_argument("--out", type=pathlib.Path, default=OUT)
    args = parser.parse_args(argv)
    dirs = [(repo, args.mirror_root / mirror / "repo") for repo, mirror in CORPUS]
    absent = [f"{repo} ({path})" for repo, path in dirs if not (path / "HEAD").is_file()]
    if absent:
        print("gen_usage_counts: the corpus mirrors are absent, so nothing was counted and "
              f"{args.out} is unchanged; missing: " + ", ".join(absent), file=sys.stderr)
        return 2
    import torch
    tensor_methods = {n for n in dir(torch.Tensor) if not n.startswith("_") and callable(getattr(torch.Tensor, n))}
    names, methods, corpus = collections.Counter(), collections.Counter(), []
    for repo, git_dir in dirs:
        commit = subprocess.run(["git", "--git-dir", str(git_dir), "rev-parse", "HEAD"], check=True,
                                capture_output=True, text=True).stdout.strip()
        parsed = failed = 0
        for _, source in python_files(git_dir):
            try:
                file_names, file_methods = count_source(source, tensor_methods)
            except (SyntaxError, ValueError):
                failed += 1
                continue
            parsed += 1
            names.update(file_names)
            methods.update(file_methods)
        corpus.append({"repository": repo, "commit": commit, "files_parsed": parsed, "files_not_parsed": failed})
    cut = collections.Counter()
    for path, n in names.items():
        cut[torch_prefix(path, torch)] += n
    data = {
        "generated_by": "docs/gen_usage_counts.py",
        "torch_version": torch.__version__.split("+")[0],
        "python_version": ".".join(map(str, sys.version_info[:3])),
        "corpus": corpus,
        "files_parsed": sum(c["files_parsed"] for c in corpus),
        "names": dict(sorted(cut.items())),
        "tensor_method_calls": dict(sorted(methods.items())),
    }
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {args.out}: {data['files_parsed']} files, {len(cut)} torch names, {len(methods)} tensor methods")
    return 0


if __name__ == "__main__":
    sys.exit(main())
