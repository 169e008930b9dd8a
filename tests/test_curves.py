"""The main job's --summary, --logdir and --plot on 640 real MNIST images: the summary is
printed, the PNG is valid with both panels, the event files hold the logged values, a resumed
run continues the curves, and bad paths fail with one line before training."""
import importlib.util
import os
import time

import numpy
import pytest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SMALL = ["--train-subset", "640", "--batch-size", "64", "--test-batch-size", "1000", "--no-download"]


def _main(args):
    spec = importlib.util.spec_from_file_location("mnist_convnet", os.path.join(ROOT, "examples", "mnist_convnet.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.main(args), mod.main.results


def _scalars(logdir, tag):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    acc = EventAccumulator(str(logdir), size_guidance={"scalars": 0})
    acc.Reload()
    return [(e.step, e.value) for e in acc.Scalars(tag)]


def test_summary_logdir_and_plot_of_a_short_run(mnist_dir, tmp_path, capsys, cpu_default_device):
    pytest.importorskip("tensorboard")
    mpimg = pytest.importorskip("matplotlib.image")
    logdir, png, ck = tmp_path / "tb", tmp_path / "curves.png", tmp_path / "ck.npz"
    base = ["--data-dir", mnist_dir, "--log-interval", "2", "--logdir", str(logdir), "--plot", str(png),
            "--checkpoint", str(ck)] + SMALL
    code, rows = _main(base + ["--epochs", "2", "--summary"])
    assert code == 0
    out = capsys.readouterr().out
    for text in ("├─Conv2d: 1-1", "[64, 10, 24, 24]", "9,584,640", "Total params: 21,840",
                 "Total mult-adds (M): 31.21", f"saved the curves to {png}"):
        assert text in out, text
    # the PNG: a whole file matplotlib reads back, and no temporary file next to it
    data = png.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and data.endswith(b"IEND\xaeB`\x82")
    image = mpimg.imread(str(png))
    assert image.shape == (400, 1000, 4)  # 10 x 4 inches at 100 dpi, RGBA
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ck.npz", "curves.png", "tb"]
    # the event file: the loss of batches 0, 2, 4, 6, 8 of each epoch (steps 1, 3, ...), the epoch figures
    losses = _scalars(logdir, "train/loss")
    assert [s for s, _ in losses] == [1, 3, 5, 7, 9, 11, 13, 15, 17, 19]
    assert [[s, pytest.approx(v)] for s, v in losses] == [s for r in rows for s in r["steps"]]
    assert [v for _, v in _scalars(logdir, "train/lr")] == [numpy.float32(0.01)] * 10  # simple_value: float32
    acc = _scalars(logdir, "test/accuracy")
    assert [s for s, _ in acc] == [10, 20]
    numpy.testing.assert_allclose([v for _, v in acc], [r["accuracy"] for r in rows], rtol=1e-6)
    numpy.testing.assert_allclose([v for _, v in _scalars(logdir, "train/epoch_loss")],
                                  [r["train_loss"] for r in rows], rtol=1e-6)
    assert [s for s, _ in _scalars(logdir, "test/loss")] == [10, 20]

    # resumed for a third epoch: the plot keeps epochs 1-2 (their steps come back with the rows)
    # and TensorBoard's curves go on from step 21 (a new event file, made in a later second)
    time.sleep(1.05)
    code, rows3 = _main(base + ["--epochs", "3", "--resume", str(ck)])
    assert code == 0 and [r["epoch"] for r in rows3] == [1, 2, 3]
    assert rows3[0]["steps"] == rows[0]["steps"] and [s for s, _ in rows3[2]["steps"]] == [21, 23, 25, 27, 29]
    assert [s for s, _ in _scalars(logdir, "test/accuracy")] == [10, 20, 30]
    assert len(_scalars(logdir, "train/loss")) == 15

    import curves  # the examples' module, imported by the run
    fig = curves.make_figure(rows3, 10, "t")
    loss_ax, acc_ax = fig.axes
    steps_line, means = loss_ax.get_lines()
    assert list(steps_line.get_xdata()) == [1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29]
    assert list(means.get_xdata()) == [10, 20, 30]
    assert list(acc_ax.get_lines()[0].get_ydata()) == [r["accuracy"] for r in rows3]


def test_bad_plot_and_logdir_paths_fail_before_training(mnist_dir, tmp_path, capsys, cpu_default_device):
    missing = tmp_path / "no_such_folder" / "curves.png"
    code, _ = _main(["--data-dir", mnist_dir, "--epochs", "1", "--plot", str(missing)] + SMALL)
    out = capsys.readouterr().out
    assert code == 2 and "epoch" not in out
    assert out.strip() == f"error: --plot {missing}: the folder {missing.parent} does not exist"
    assert list(tmp_path.iterdir()) == []
    code, _ = _main(["--data-dir", mnist_dir, "--epochs", "1", "--plot", str(tmp_path)] + SMALL)
    assert code == 2 and "that is a folder" in capsys.readouterr().out
    pytest.importorskip("tensorboard")
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    code, _ = _main(["--data-dir", mnist_dir, "--epochs", "1", "--logdir", str(blocker / "tb")] + SMALL)
    out = capsys.readouterr().out
    assert code == 2 and "error: --logdir: SummaryWriter: cannot write event files to" in out
    assert "epoch  1" not in out and "Traceback" not in out


def test_missing_plot_package_is_one_line(monkeypatch, capsys, tmp_path):
    import sys
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    code, _ = _main(["--epochs", "1", "--plot", str(tmp_path / "c.png")] + SMALL)
    assert code == 2
    assert capsys.readouterr().out.strip() == ("error: --plot needs matplotlib, which is not installed: "
                                               "pip install 'tinynet[plot]'")


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples", f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_cifar10_and_char_transformer_flags(tmp_path, capsys, cpu_default_device):
    pytest.importorskip("tensorboard")
    pytest.importorskip("matplotlib")
    cifar = _load("cifar10_convnet")
    logdir, png = tmp_path / "tb", tmp_path / "cifar.png"
    assert cifar.main(["--synthetic", "96", "--epochs", "1", "--batch-size", "32", "--summary", "--logdir",
                       str(logdir), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "Total params: 1,068,298" in out and "LocalResponseNorm: 1-2" in out
    assert [s for s, _ in _scalars(logdir, "train/loss")] == [1]  # batch 0 of 3 (every 50)
    assert [s for s, _ in _scalars(logdir, "train/epoch_loss")] == [3]
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")  # no test set: an empty accuracy panel
    gpt = _load("char_transformer")
    assert gpt.main(["--steps", "1", "--eval-interval", "1", "--sample-chars", "5", "--n-layer", "1",
                     "--summary"]) == 0
    out = capsys.readouterr().out
    assert "├─Embedding: 1-1" in out and "CausalSelfAttention" in out and "Total mult-adds" in out
