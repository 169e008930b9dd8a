"""Run the official PyTorch examples (github.com/pytorch/examples) unmodified on tinynet, through
``python -m tinynet.compat``, and on PyTorch itself, and compare.

    python benchmarks/pytorch_examples.py --examples-dir /path/to/pytorch-examples

``--examples-dir`` is a checkout of that repository, kept OUTSIDE this project (none of its code
is copied here). Each program runs twice, in separate processes, on the same small data and
arguments: ``python -m tinynet.compat SCRIPT ARGS`` and ``python SCRIPT ARGS`` with PyTorch.
On a GPU machine pass ``--accel``: mnist_rnn, mnist_hogwild, word_language_model and dcgan train
on the CPU unless given their accelerator flag (``ACCEL_FLAG``); mnist and vae use it by default.
Per program the table gives: whether it ran on tinynet (else the first PyTorch name tinynet
lacks, from the compat runner's one-line message, or the error), the first and last loss each
side printed and whether they agree, and the speed ratio (PyTorch's wall time / tinynet's:
above 1 means tinynet was faster; whole processes, start-up and data loading included).

Losses cannot match digit for digit: the two libraries draw different random numbers (initial
weights, shuffling, dropout masks), so "agree" means within the program's tolerance (relative
``TOLERANCE`` unless the program sets its own), a check that both train the same model on the
same data, not that they compute the same numbers (tests/test_compat.py checks that, on the
project's own programs with weights copied in).

Small data, no downloads: MNIST subsets (``--train-images``, ``--test-images``) from
``--mnist`` (default ../shared/datasets/mnist) are written as torchvision's uncompressed files
in ``<work>/data/MNIST/raw``, where both torchvision and tinynet.vision read them; the word
language model trains on the first 200 kB of wikitext-2's ``valid.txt`` from the checkout
(``train.txt`` is too large for the 2-core machine) and validates and tests on 40 kB slices of
``test.txt``. Programs that write files next to themselves (``vae``'s ``results/``,
``time_sequence_prediction``'s ``traindata.pt``) run in a scratch folder that has them.

PyTorch's side needs torchvision for the MNIST programs and dcgan. The torchvision wheel of the
package registry is built against another PyTorch build and cannot load its compiled operators
beside torch 2.13's CPU build, so ``--torchvision-dir`` (default ``<work>/torchvision``) gets
the wheel's Python files only (``pip download --no-deps``; datasets, transforms and utils are
pure Python) and a ``sitecustomize.py`` that lets its fake-kernel registrations of the missing
operators pass; :func:`reference_torchvision` does this once.

Results: ``benchmarks/results/pytorch_examples.json`` (``--out``), and the Markdown table in
docs/compat.md (``--markdown`` prints it).
"""
import argparse
import gzip
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOLERANCE = 0.25
TORCHVISION_FOR = {"2.13": "0.28.0"}  # torch version -> the torchvision release made for it
MISSING = re.compile(r"tinynet\.compat: the PyTorch (?:name|module) (\S+) is not in tinynet")
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # terminal colours in an error message
ERROR_LINE = re.compile(r"^[\w.]*(Error|Exception|Interrupt)\b.*:")
LOSS = re.compile(r"(?i)loss[^0-9\n]*?(-?\d+\.\d+(?:e[-+]?\d+)?)")


# The programs whose accelerator is opt-in, and the flag that opts in (mnist and vae use it by
# default and take --no-accel; the others have no accelerator flag): --accel adds these
ACCEL_FLAG = {"mnist_rnn": "--accel", "mnist_hogwild": "--cuda", "word_language_model": "--accel", "dcgan": "--accel"}

# PyTorch's side of a program that fails on PyTorch itself, run with PyTorch's own opt-out so that
# there is a time to compare: time_sequence_prediction saves a NumPy array with torch.save, which
# torch.load's weights_only default (2.6+) refuses (tinynet's structured format loads it as data)
TORCH_ENV = {"time_sequence_prediction": {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}}


def programs(wiki, accel=False):
    """(name, script, args, setup scripts, tolerance) of each program, in the issue's order;
    with ``accel`` each program whose accelerator is opt-in gets its flag (``ACCEL_FLAG``)."""
    specs = _programs(wiki)
    if not accel:
        return specs
    return [(name, script, args + [ACCEL_FLAG[script.split("/")[0]]] if script.split("/")[0] in ACCEL_FLAG else args,
             setup, tol) for name, script, args, setup, tol in specs]


def _programs(wiki):
    wlm = ["--data", wiki, "--epochs", "1", "--log-interval", "10"]
    return [
        ("mnist", "mnist/main.py", ["--dry-run", "--epochs", "1"], [], TOLERANCE),
        ("mnist_rnn", "mnist_rnn/main.py", ["--dry-run", "--epochs", "1"], [], TOLERANCE),
        ("mnist_forward_forward", "mnist_forward_forward/main.py",
         ["--epochs", "100", "--train_size", "1000", "--test_size", "1000"], [], TOLERANCE),
        ("mnist_hogwild", "mnist_hogwild/main.py", ["--epochs", "1", "--num-processes", "2", "--log-interval", "8"],
         [], TOLERANCE),
        ("vae", "vae/main.py", ["--epochs", "1", "--log-interval", "4"], [], TOLERANCE),
        ("regression", "regression/main.py", [], [], None),  # stops below 1e-3: only "it converged" compares
        ("time_sequence_prediction", "time_sequence_prediction/train.py", ["--steps", "2"],
         ["time_sequence_prediction/generate_sine_wave.py"], TOLERANCE),
        ("word_language_model LSTM", "word_language_model/main.py", wlm + ["--model", "LSTM"], [], TOLERANCE),
        ("word_language_model GRU", "word_language_model/main.py", wlm + ["--model", "GRU"], [], TOLERANCE),
        ("word_language_model RNN_TANH", "word_language_model/main.py", wlm + ["--model", "RNN_TANH"], [],
         TOLERANCE),
        ("word_language_model Transformer", "word_language_model/main.py", wlm + ["--model", "Transformer"], [],
         TOLERANCE),
        ("dcgan", "dcgan/main.py", ["--dataset", "fake", "--dry-run", "--manualSeed", "1"], [], TOLERANCE),
    ]


def _idx(raw_gz, count, out):
    """The first ``count`` items of an IDX file as an uncompressed IDX file (header rewritten)."""
    with gzip.open(raw_gz, "rb") as f:
        raw = f.read()
    ndim = raw[3]
    dims = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    item = 1
    for d in dims[1:]:
        item *= d
    count = min(count, dims[0])
    head = raw[:4] + count.to_bytes(4, "big") + raw[8:4 + 4 * ndim]
    body = raw[4 + 4 * ndim:4 + 4 * ndim + count * item]
    with open(out, "wb") as f:
        f.write(head + body)


def mnist_subset(mnist, root, n_train, n_test):
    """``root/MNIST/raw`` with the first images of each split, as torchvision's uncompressed files."""
    raw = os.path.join(root, "MNIST", "raw")
    os.makedirs(raw, exist_ok=True)
    for split, n in (("train", n_train), ("t10k", n_test)):
        for kind in ("images-idx3", "labels-idx1"):
            name = f"{split}-{kind}-ubyte"
            _idx(os.path.join(mnist, name + ".gz"), n, os.path.join(raw, name))
    return root


def wiki_subset(examples_dir, folder):
    """train.txt (200 kB of valid.txt), valid.txt and test.txt (40 kB slices of test.txt)."""
    src = os.path.join(examples_dir, "word_language_model", "data", "wikitext-2")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(src, "valid.txt"), encoding="utf8") as f:
        valid = f.read()
    with open(os.path.join(src, "test.txt"), encoding="utf8") as f:
        test = f.read()
    cut = lambda text, a, b: text[a:b].rsplit("\n", 1)[0] + "\n"  # noqa: E731  (whole lines)
    for name, text in (("train.txt", cut(valid, 0, 200_000)), ("valid.txt", cut(test, 0, 40_000)),
                       ("test.txt", cut(test, len(test) - 40_000, len(test)).split("\n", 1)[1])):
        with open(os.path.join(folder, name), "w", encoding="utf8") as f:
            f.write(text)
    return folder


_SITECUSTOMIZE = '''"""Written by tinynet's benchmarks/pytorch_examples.py: torchvision's Python files without
its compiled operators register fake kernels for operators that are then missing; let those
registrations pass (datasets, transforms and utils need none of them)."""
import torch.library as _library

_register_fake = _library.register_fake


def _tolerant(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    if isinstance(op, str) and op.startswith("torchvision::"):
        return func if func is not None else (lambda f: f)
    return _register_fake(op, func, lib=lib, _stacklevel=_stacklevel + 1, allow_override=allow_override)


_library.register_fake = _tolerant
'''


def reference_torchvision(folder, python=sys.executable):
    """A folder to put on PYTHONPATH so that this Python's PyTorch imports torchvision (module
    doc); made once. Returns the folder, or raises RuntimeError saying why it could not."""
    if os.path.isfile(os.path.join(folder, "torchvision", "__init__.py")):
        return folder
    version = subprocess.run([python, "-c", "import torch; print(torch.__version__)"], capture_output=True,
                             text=True, check=True).stdout.strip()
    release = TORCHVISION_FOR.get(".".join(version.split(".")[:2]))
    if release is None:
        raise RuntimeError(f"no torchvision release known for torch {version}")
    with tempfile.TemporaryDirectory() as tmp:
        got = subprocess.run([python, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp,
                              f"torchvision=={release}"], capture_output=True, text=True)
        wheels = [w for w in os.listdir(tmp) if w.endswith(".whl")]
        if got.returncode != 0 or not wheels:
            raise RuntimeError(f"pip download torchvision=={release} failed: {got.stderr.strip()[-300:]}")
        os.makedirs(folder, exist_ok=True)
        with zipfile.ZipFile(os.path.join(tmp, wheels[0])) as z:
            z.extractall(folder, [n for n in z.namelist() if not n.endswith(".so") and ".libs/" not in n])
    with open(os.path.join(folder, "sitecustomize.py"), "w") as f:
        f.write(_SITECUSTOMIZE)
    return folder


def _run(cmd, cwd, env, timeout):
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err, rc = f"timed out after {timeout} s", -1
    return {"rc": rc, "seconds": round(time.perf_counter() - start, 2), "stdout": out, "stderr": err}


def _scratch(work, name, side, data_root):
    """The program's folder: ``data`` (and ``../data``) point at the data root; ``results/`` exists."""
    base = os.path.join(work, re.sub(r"\W+", "_", name), side)
    run_dir = os.path.join(base, "run")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(os.path.join(run_dir, "results"))
    os.symlink(data_root, os.path.join(base, "data"))
    os.symlink(data_root, os.path.join(run_dir, "data"))
    return run_dir


def _outcome(result, side):
    if result["rc"] == 0:
        return "runs", None
    m = MISSING.search(result["stderr"])
    if m:
        return "missing", m.group(1)
    text = ANSI.sub("", result["stderr"])
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    raised = [ln for ln in lines if ERROR_LINE.match(ln)]  # the exception's own line, not its wrapped tail
    shown = raised[-1] if raised else (lines[-1] if lines else f"exit code {result['rc']}")
    return "fails", shown[:200]


def _losses(text):
    return [float(m.group(1)) for m in LOSS.finditer(text)]


def _agree(a, b, tol):
    if tol is None or a is None or b is None:
        return None
    return abs(a - b) <= tol * max(abs(a), abs(b), 1e-12)


def run_program(spec, examples_dir, work, data_root, tv_dir, timeout):
    name, script, args, setup, tol = spec
    record = {"program": name, "args": args, "tolerance": tol}
    sides = {"tinynet": [sys.executable, "-m", "tinynet.compat"], "pytorch": [sys.executable]}
    for side, prefix in sides.items():
        env = dict(os.environ)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # both sides start from compiled bytecode (see main)
        paths = [ROOT] if side == "tinynet" else ([tv_dir] if tv_dir else [])
        env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [env.get("PYTHONPATH")] if p])
        env.setdefault("MPLBACKEND", "Agg")
        if side == "pytorch":
            env.update(TORCH_ENV.get(name, {}))
        cwd = _scratch(work, name, side, data_root)
        for s in setup:
            _run(prefix + [os.path.join(examples_dir, s)], cwd, env, timeout)
        result = _run(prefix + [os.path.join(examples_dir, script)] + args, cwd, env, timeout)
        status, detail = _outcome(result, side)
        losses = _losses(result["stdout"])
        record[side] = {"status": status, "detail": detail, "seconds": result["seconds"],
                        "first_loss": losses[0] if losses else None, "last_loss": losses[-1] if losses else None,
                        "losses_seen": len(losses), "stderr_tail": result["stderr"][-600:]}
    t, p = record["tinynet"], record["pytorch"]
    both = t["status"] == "runs" and p["status"] == "runs"
    record["speed_ratio"] = round(p["seconds"] / t["seconds"], 2) if both and t["seconds"] else None
    record["first_agrees"] = _agree(t["first_loss"], p["first_loss"], tol) if both else None
    record["last_agrees"] = _agree(t["last_loss"], p["last_loss"], tol) if both else None
    if both and tol is None:  # regression: both must have converged (their stop criterion)
        record["last_agrees"] = all(x is not None and x < 1e-3 for x in (t["last_loss"], p["last_loss"]))
    return record


def _fmt(x):
    return "-" if x is None else (f"{x:.4g}" if isinstance(x, float) else str(x))


def markdown(records):
    rows = ["| program | on tinynet | first loss (tinynet / PyTorch) | last loss (tinynet / PyTorch) | agree | "
            "time s (tinynet / PyTorch) | speed ratio |", "|---|---|---|---|---|---|---|"]
    for r in records:
        t, p = r["tinynet"], r["pytorch"]
        state = "runs" if t["status"] == "runs" else (f"missing `{t['detail']}`" if t["status"] == "missing"
                                                     else f"fails: {t['detail']}")
        if p["status"] != "runs":
            state += f" (PyTorch: {p['status']}: {p['detail']})"
        agree = {None: "-", True: "yes", False: "no"}
        ag = agree[r["first_agrees"]] + " / " + agree[r["last_agrees"]] if r["first_agrees"] is not None \
            else agree[r["last_agrees"]]
        rows.append(f"| {r['program']} | {state} | {_fmt(t['first_loss'])} / {_fmt(p['first_loss'])} | "
                    f"{_fmt(t['last_loss'])} / {_fmt(p['last_loss'])} | {ag} | "
                    f"{_fmt(t['seconds'])} / {_fmt(p['seconds'])} | {_fmt(r['speed_ratio'])} |")
    return "\n".join(rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--examples-dir", help="a checkout of github.com/pytorch/examples")
    ap.add_argument("--work", default=None, help="scratch folder (default: a temporary one)")
    ap.add_argument("--mnist", default=os.path.join(ROOT, "..", "shared", "datasets", "mnist"))
    ap.add_argument("--train-images", type=int, default=2048)
    ap.add_argument("--test-images", type=int, default=1024)
    ap.add_argument("--torchvision-dir", default=None, help="PyTorch's torchvision (default: made in the work folder)")
    ap.add_argument("--only", nargs="*", help="program names to run (default: all)")
    ap.add_argument("--accel", action="store_true",
                    help="add the accelerator flag to the programs where it is opt-in (the GPU machine's runs)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per run")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "pytorch_examples.json"))
    ap.add_argument("--markdown", action="store_true", help="print the docs table")
    ap.add_argument("--table", metavar="JSON", help="only print the docs table of a results file")
    args = ap.parse_args(argv)
    if args.table:
        with open(args.table) as f:
            print(markdown(json.load(f)["programs"]))
        return 0
    if not args.examples_dir:
        ap.error("--examples-dir is required")
    examples_dir = os.path.abspath(args.examples_dir)
    work = os.path.abspath(args.work or tempfile.mkdtemp(prefix="pytorch-examples-"))
    os.makedirs(work, exist_ok=True)
    data_root = mnist_subset(os.path.abspath(args.mnist), os.path.join(work, "data"), args.train_images,
                             args.test_images)
    wiki = wiki_subset(examples_dir, os.path.join(work, "wikitext-small"))
    try:
        tv_dir = reference_torchvision(args.torchvision_dir or os.path.join(work, "torchvision"))
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        print(f"PyTorch's side runs without torchvision: {exc}", file=sys.stderr)
        tv_dir = None
    records = []
    # PyTorch's wheel arrives with its .pyc files; tinynet's tree may have none (a fresh checkout,
    # or PYTHONDONTWRITEBYTECODE): compile it once, so no run pays ~0.4 s of compiling at import
    subprocess.run([sys.executable, "-m", "compileall", "-q", os.path.join(ROOT, "tinynet")], check=False)
    for spec in programs(wiki, args.accel):
        if args.only and spec[0] not in args.only:
            continue
        r = run_program(spec, examples_dir, work, data_root, tv_dir, args.timeout)
        records.append(r)
        t, p = r["tinynet"], r["pytorch"]
        print(f"{r['program']:34s} tinynet {t['status']:8s} {(t['detail'] or '')[:60]:60s} "
              f"loss {_fmt(t['first_loss'])}->{_fmt(t['last_loss'])} vs {_fmt(p['first_loss'])}->"
              f"{_fmt(p['last_loss'])}  {t['seconds']}s vs {p['seconds']}s  ratio {_fmt(r['speed_ratio'])}",
              flush=True)
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    meta = {"machine": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
            "tinynet_commit": commit, "train_images": args.train_images, "test_images": args.test_images,
            "accel": args.accel,
            "date": time.strftime("%Y-%m-%d")}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"meta": meta, "programs": records}, f, indent=1)
    if args.markdown:
        print(markdown(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
