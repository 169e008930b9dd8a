"""``python -m tinynet.compat``: PyTorch programs run unmodified on tinynet.

The runner's contract (the aliases are tinynet's own modules, one line for a missing name, the
program's own errors untouched, ``sys.argv``/``__main__``), then the project's PyTorch-style
programs in tests/programs/, each run through the compat runner and through PyTorch on the same
file with the same seed: the weights and data come from NumPy, so the losses must agree to
float32 rounding (``RTOL``), not just statistically.
"""
import gzip
import json
import os
import subprocess
import sys

import numpy
import pytest

from conftest import find_mnist

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PROGRAMS = os.path.join(HERE, "programs")
RTOL = 1e-4  # float32 through a few optimizer steps: the two libraries round differently, no more


def _env(extra_path=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([p for p in (extra_path, ROOT, env.get("PYTHONPATH")) if p])
    env.pop("TINYNET_COMPAT_TRACEBACK", None)
    return env


def compat(script, *args, cwd, timeout=300):
    return subprocess.run([sys.executable, "-m", "tinynet.compat", str(script), *map(str, args)], cwd=cwd,
                          env=_env(), capture_output=True, text=True, timeout=timeout)


def pytorch(script, *args, cwd, extra_path=None, timeout=300):
    return subprocess.run([sys.executable, str(script), *map(str, args)], cwd=cwd, env=_env(extra_path),
                          capture_output=True, text=True, timeout=timeout)


def _script(tmp_path, body, name="prog.py"):
    path = tmp_path / name
    path.write_text(body)
    return path


# ---- the runner ----------------------------------------------------------------------------
def test_aliases_are_tinynets_own_modules(tmp_path):
    prog = _script(tmp_path, """
import sys
import torch, torch.nn as nn, torch.nn.functional as F, torch.optim as optim, tinynet
import torch.utils.data
import torch.nn.modules.sparse, torch.nn.modules.activation, torch.nn.modules.pixelshuffle as ps
import torchvision
from torchvision import datasets, transforms
from torchvision.utils import save_image
assert torch is tinynet and nn is tinynet.nn and F is tinynet.nn.functional and optim is tinynet.optim
assert torch.utils.data is tinynet.utils.data and sys.modules["torch.nn"] is tinynet.nn
assert datasets is tinynet.vision.datasets and transforms is tinynet.vision.transforms
assert torch.nn.modules.sparse.Embedding is nn.Embedding
assert torch.nn.modules.activation.MultiheadAttention is nn.MultiheadAttention
assert ps.PixelShuffle is nn.PixelShuffle
assert tinynet.__spec__.name == "tinynet" and tinynet.nn.__spec__.name == "tinynet.nn"
print("argv", sys.argv[1:], __name__, __file__.endswith("prog.py"))
""")
    out = compat(prog, "--flag", "x y", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "argv ['--flag', 'x y'] __main__ True"


@pytest.mark.parametrize("line,name", [
    ("torch.no_such_function(1)", "torch.no_such_function"),
    ("torch.nn.functional.no_such_op(x)", "torch.nn.functional.no_such_op"),
    ("x.no_such_method()", "torch.Tensor.no_such_method"),
    ("from torch.nn import NoSuchLayer", "torch.nn.NoSuchLayer"),
    ("import torch.no_such_module", "torch.no_such_module"),
    ("torch.nn.Linear(2, 2).no_such_method()", "torch.nn.Linear.no_such_method"),
    ("type('Net', (torch.nn.Module,), {})().no_such_method()", "torch.nn.Module.no_such_method"),
])
def test_a_missing_name_is_one_line_naming_it_and_the_program_line(tmp_path, line, name):
    prog = _script(tmp_path, f"import torch\nx = torch.ones(2)\n{line}\nprint('not reached')\n")
    out = compat(prog, cwd=tmp_path)
    assert out.returncode == 1
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert f"PyTorch {'module' if 'import torch.' in line else 'name'} {name} is not in tinynet" in lines[0]
    assert f"used at prog.py:3 ({line})" in lines[0]
    assert "not reached" not in out.stdout


def test_the_line_is_the_programs_own_even_inside_its_modules(tmp_path):
    _script(tmp_path, "import torch\n\n\ndef build():\n    return torch.not_there()\n", name="helper.py")
    prog = _script(tmp_path, "import helper\nhelper.build()\n")
    out = compat(prog, cwd=tmp_path)
    assert out.returncode == 1 and "torch.not_there" in out.stderr and "helper.py:5" in out.stderr


def test_the_programs_own_errors_keep_their_traceback(tmp_path):
    prog = _script(tmp_path, "class A:\n    pass\n\n\nA().missing\n")
    out = compat(prog, cwd=tmp_path)
    assert out.returncode == 1
    assert "Traceback" in out.stderr and "'A' object has no attribute 'missing'" in out.stderr
    assert "tinynet.compat:" not in out.stderr


def test_full_traceback_on_request(tmp_path):
    prog = _script(tmp_path, "import torch\ntorch.no_such_function()\n")
    env = _env()
    env["TINYNET_COMPAT_TRACEBACK"] = "1"
    out = subprocess.run([sys.executable, "-m", "tinynet.compat", str(prog)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 1 and "Traceback" in out.stderr and "no_such_function" in out.stderr


def test_usage_and_a_missing_file(tmp_path):
    out = subprocess.run([sys.executable, "-m", "tinynet.compat"], cwd=tmp_path, env=_env(), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 2 and "usage: python -m tinynet.compat SCRIPT" in out.stderr
    out = compat(tmp_path / "nope.py", cwd=tmp_path)
    assert out.returncode == 2 and "no such program file" in out.stderr


def test_code_and_module_forms_as_python_takes_them(tmp_path):
    """``-c CODE ARGS`` and ``-m MODULE ARGS``: the torch alias, sys.argv and sys.path as python sets them."""
    code = "import sys, torch; print(torch.__name__, float(torch.ones(3).sum()), sys.argv, sys.path[0] == '%s')"
    out = compat("-c", code % str(tmp_path), "a", "b", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["tinynet", "3.0", "['-c',", "'a',", "'b']", "True"]
    _script(tmp_path, "import sys, torch\nprint(__name__, torch.nn.Linear.__module__.split('.')[0], sys.argv[1:])\n",
            name="probe.py")
    out = compat("-m", "probe", "x", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["__main__", "tinynet", "['x']"]
    for flag in ("-c", "-m"):
        out = compat(flag, cwd=tmp_path)
        assert out.returncode == 2 and f"{flag} needs an argument" in out.stderr
    out = compat("-c", "import torch; torch.no_such_name", cwd=tmp_path)
    assert out.returncode == 1 and "torch.no_such_name" in out.stderr


def test_the_program_path_holds_tinynets_parent_not_its_package_folder(tmp_path):
    """The folder that holds ``tinynet/`` goes on ``sys.path`` (for spawned children), never the
    package folder itself: there ``import cuda`` (CuPy's ``cuda.pathfinder`` namespace package)
    found ``tinynet/cuda`` and CuPy could not be imported inside a compat run."""
    package = os.path.join(ROOT, "tinynet")
    code = ("import sys, os, importlib.util; spec = importlib.util.find_spec('cuda'); "
            "print([os.path.abspath(p or '.') for p in sys.path].count(%r), "
            "spec is None or 'tinynet' not in (spec.origin or ''))")
    env = _env()
    env["PYTHONPATH"] = ""  # only the compat runner can put tinynet's folder on the path
    out = subprocess.run([sys.executable, "-m", "tinynet.compat", "-c", code % package], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "True"]


def test_install_refuses_a_process_with_pytorch_imported():
    import tinynet.compat
    pytest.importorskip("torch")
    with pytest.raises(ImportError, match="PyTorch is already imported"):
        tinynet.compat.install()
    assert not tinynet.compat.installed()


# ---- the project's PyTorch-style programs, against PyTorch ---------------------------------------
def _compare(tmp_path, name, *args, extra_path=None, timeout=300):
    ours = compat(os.path.join(PROGRAMS, name), "--out", tmp_path / "tinynet.json", *args, cwd=tmp_path,
                  timeout=timeout)
    assert ours.returncode == 0, ours.stderr[-3000:]
    theirs = pytorch(os.path.join(PROGRAMS, name), "--out", tmp_path / "pytorch.json", *args, cwd=tmp_path,
                     extra_path=extra_path, timeout=timeout)
    assert theirs.returncode == 0, theirs.stderr[-3000:]
    a = json.loads((tmp_path / "tinynet.json").read_text())
    b = json.loads((tmp_path / "pytorch.json").read_text())
    assert a.keys() == b.keys()
    assert len(a["losses"]) == len(b["losses"]) > 0
    assert a["losses"] == pytest.approx(b["losses"], rel=RTOL), (a["losses"], b["losses"])
    return a, b


def test_rnn_over_image_rows(tmp_path):
    a, b = _compare(tmp_path, "rnn_rows.py")
    assert a["correct"] == b["correct"]


def test_vae(tmp_path):
    a, b = _compare(tmp_path, "vae.py")
    assert a["sample_mean"] == pytest.approx(b["sample_mean"], rel=RTOL)


def test_lbfgs_fit(tmp_path):
    a, b = _compare(tmp_path, "lbfgs_fit.py")
    assert a["tests"] == pytest.approx(b["tests"], rel=1e-6)  # float64 throughout


def test_scriptable_model(tmp_path):
    """torch.jit's names as model zoos use them (Final, ignore, is_scripting, annotate, script, trace)
    and torch._assert: tinynet runs them eagerly, PyTorch compiles the scripted parts."""
    a, b = _compare(tmp_path, "scriptable_model.py")
    assert a["traced_out"] == pytest.approx(b["traced_out"], rel=RTOL)
    assert a["refused"] is b["refused"] is True and a["scripting"] is b["scripting"] is False


def test_language_model_saved_whole(tmp_path):
    a, b = _compare(tmp_path, "language_model.py")
    for r in (a, b):
        assert r["eval_after"] == r["eval_before"] and r["refused"] and r["same_class"]
    assert a["eval_after"] == pytest.approx(b["eval_after"], rel=RTOL)


def test_hogwild(tmp_path):
    a, b = _compare(tmp_path, "hogwild.py")
    assert a["shared"] and b["shared"]
    assert a["end"] < a["start"]  # the parent saw the workers' updates
    assert a["end"] == pytest.approx(b["end"], rel=RTOL)


def _mnist_subset(mnist, root, n):
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for split in ("train", "t10k"):
        for kind, item in (("images-idx3", 28 * 28), ("labels-idx1", 1)):
            with gzip.open(os.path.join(mnist, f"{split}-{kind}-ubyte.gz"), "rb") as f:
                data = f.read()
            head = 16 if item > 1 else 8
            out = data[:4] + n.to_bytes(4, "big") + data[8:head] + data[head:head + n * item]
            (raw / f"{split}-{kind}-ubyte").write_bytes(out)
    return root


def _generated_mnist(root, n, seed=0):
    """MNIST-format files of the test's own, in torchvision's ``MNIST/raw``: dark 28x28 images, each
    with a bright noisy 7x7 patch where its label (0-9) puts it, so a few SGD steps learn something."""
    rng = numpy.random.default_rng(seed)
    labels = rng.integers(0, 10, n).astype(numpy.uint8)
    images = rng.integers(0, 40, (n, 28, 28)).astype(numpy.uint8)
    for img, label in zip(images, labels):
        r, c = 3 + 6 * (label // 4), 2 + 6 * (label % 4)
        img[r:r + 7, c:c + 7] = rng.integers(150, 256, (7, 7))
    raw = root / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for split, count in (("train", n), ("t10k", n // 4)):
        for kind, arr in (("images-idx3", images[:count]), ("labels-idx1", labels[:count])):
            head = bytes([0, 0, 8, arr.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in arr.shape)
            (raw / f"{split}-{kind}-ubyte").write_bytes(head + arr.tobytes())
    return root


def _vision_pipeline(tmp_path, root, reference_torchvision):
    a, b = _compare(tmp_path, "vision_pipeline.py", "--root", root, extra_path=reference_torchvision)
    for key in ("n", "label0", "crop_shape", "grid_shape", "data_shape", "targets"):
        assert a[key] == b[key], key
    for key in ("batch_mean", "crop_sum", "grid_mean"):
        assert a[key] == pytest.approx(b[key], rel=RTOL, abs=1e-6), key
    return a


def test_torchvision_pipeline_on_real_mnist(tmp_path, reference_torchvision):
    mnist = find_mnist()
    if mnist is None:
        pytest.skip("real MNIST not found (../shared/datasets/mnist or $TINYNET_DATA/mnist)")
    _vision_pipeline(tmp_path, _mnist_subset(mnist, tmp_path / "data", 256), reference_torchvision)


def test_torchvision_pipeline_on_generated_mnist(tmp_path, reference_torchvision):
    """The same program on generated files: needs no dataset beside the checkout."""
    a = _vision_pipeline(tmp_path, _generated_mnist(tmp_path / "data", 256), reference_torchvision)
    assert a["n"] == 256 and a["losses"][-1] < a["losses"][0]
