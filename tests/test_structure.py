"""The code's shape (docs/design.md): no import cycles, not even through imports inside
functions; imports that run down the layers only; modules of a readable size; CuPy imported
in one place only."""
import ast
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tinynet")
MAX_LINES = 420


def _modules():
    mods = {}
    for folder, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                name = "tinynet." + os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                mods[name[:-9] if name.endswith(".__init__") else name] = path
    return mods


def _imports(mods):
    """Module -> the tinynet modules it imports anywhere (module level or in functions)."""
    graph = {m: set() for m in mods}
    for m, path in mods.items():
        is_pkg = path.endswith("__init__.py")
        for node in ast.walk(ast.parse(open(path).read())):
            if isinstance(node, ast.ImportFrom) and node.level:
                parts = m.split(".")[:len(m.split(".")) - node.level + (1 if is_pkg else 0)]
                base = ".".join(parts + ([node.module] if node.module else []))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
            elif isinstance(node, ast.Import):
                graph[m].update(a.name for a in node.names if a.name in mods and a.name != m)
                continue
            else:
                continue
            for alias in node.names:
                target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in mods else base
                if target in mods and target != m:
                    graph[m].add(target)
    return graph


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycles():
    graph = _imports(_modules())
    # a package's __init__ re-exporting its own modules is not a cycle: drop those edges
    for m in graph:
        graph[m] = {t for t in graph[m] if not (t.startswith(m + ".") or m.startswith(t + "."))}
    assert _cycles(graph) == []


# tinynet's layers, lowest first (docs/design.md, Layout): a module imports only modules of its
# own layer or of the layers below it, at load time or inside a function. random.py (the
# generators' state) sits below kernels/ (the Philox launch reads that state), so it imports
# nothing from kernels/. Every top-level module or package has its place here (a new one fails
# test_every_module_has_a_layer until it is given one).
LAYERS = [
    {"errors"},
    {"optional", "dtypes", "layouts", "atomic", "parallel", "determinism", "capture", "backend", "devices", "size",
     "compat", "_shared_memory", "_weights_only_unpickler", "printoptions", "futures"},
    {"autograd", "tensor"},
    {"random"},
    {"kernels", "backends"},
    {"ops"},
    {"amp", "optim", "distributed", "serialization", "safetensors_format", "_pickled", "_torch_zip", "linalg",
     "testing", "fft", "special", "distributions"},
    {"cuda", "nn"},
    {"utils", "func", "multiprocessing", "accelerator", "profiler", "onnx", "jit"},
    {"data", "vision", "hub"},
    {"tinynet", "info"},
]


def _layer(module):
    """The index in LAYERS of a dotted module name's top-level part (None when unlisted)."""
    top = module.split(".")[1] if "." in module else "tinynet"
    return next((i for i, names in enumerate(LAYERS) if top in names), None)


def test_every_module_has_a_layer():
    unplaced = sorted({m.split(".")[1] for m in _modules() if "." in m and _layer(m) is None})
    assert unplaced == [], f"give these a layer in tests/test_structure.py's LAYERS: {unplaced}"


def test_imports_run_down_the_layers():
    up = []
    for m, targets in _imports(_modules()).items():
        for t in targets:
            lm, lt = _layer(m), _layer(t)
            if lm is not None and lt is not None and lt > lm:
                up.append(f"{m} imports {t} (layer {LAYERS[lt]} above {LAYERS[lm]})")
    assert up == [], "imports that run up (docs/design.md, Layout):\n" + "\n".join(sorted(up))


def test_random_state_does_not_import_the_kernels():
    """random.py holds the generators' state; the Philox launch that reads it is kernels/gpu_ops'.
    The one arrow that ran up (random -> kernels.cuda) stays gone, at load time and inside functions."""
    graph = _imports(_modules())
    assert not {t for t in graph["tinynet.random"] if t.startswith("tinynet.kernels")}


@pytest.mark.parametrize("name,path", sorted(_modules().items()))
def test_module_size(name, path):
    lines = sum(1 for _ in open(path))
    assert lines <= MAX_LINES, f"{name} has {lines} lines; split it (docs/design.md, Layout)"


def test_cupy_is_imported_by_the_backend_only():
    for name, path in _modules().items():
        tree = ast.parse(open(path).read())
        for node in ast.walk(tree):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            if any(n == "cupy" or n.startswith("cupy.") for n in names):
                assert name in ("tinynet.backend", "tinynet.cuda"), f"{name} imports cupy directly"
