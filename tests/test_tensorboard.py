"""tinynet.utils.tensorboard.SummaryWriter: event files read back with TensorBoard's own reader
(``tensorboard.backend.event_processing.event_accumulator``) hold the values written."""
import io
import os
import subprocess
import sys
import time

import numpy
import pytest

import tinynet
from tinynet.errors import ArgumentError, ArgumentTypeError, MissingExtraError, PathNotWritableError, ShapeError

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.plugins.hparams import metadata as hp_metadata  # noqa: E402

from tinynet.utils.tensorboard import SummaryWriter  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def _read(path):
    acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "histograms": 0, "images": 0, "tensors": 0})
    acc.Reload()
    return acc


def test_scalars_from_tensors_arrays_and_numbers(tmp_path):
    values = [tinynet.tensor(0.5), numpy.float32(1.25), numpy.array([2.0]), 3,
              tinynet.tensor([[4.5]], dtype=tinynet.float64)]
    with SummaryWriter(tmp_path) as w:
        for step, v in enumerate(values):
            w.add_scalar("train/loss", v, global_step=step * 10, walltime=1000.0 + step)
        w.add_scalar("exact", 0.1, 0, new_style=True, double_precision=True)
        w.add_scalar("float", 0.1, 0, new_style=True)
        assert w.get_logdir() == str(tmp_path)
    acc = _read(tmp_path)
    events = acc.Scalars("train/loss")
    assert [(e.step, e.value, e.wall_time) for e in events] == [
        (0, 0.5, 1000.0), (10, 1.25, 1001.0), (20, 2.0, 1002.0), (30, 3.0, 1003.0), (40, 4.5, 1004.0)]
    assert acc.Tensors("exact")[0].tensor_proto.double_val == [0.1]
    assert acc.Tensors("float")[0].tensor_proto.float_val[0] == pytest.approx(0.1)
    assert acc.SummaryMetadata("exact").plugin_data.plugin_name == "scalars"


def test_add_scalars_writes_one_run_per_tag(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(3):
            w.add_scalars("loss/all", {"train": 1.0 / (step + 1), "test": 2.0 + step}, step)
    assert {p.name for p in tmp_path.iterdir() if p.is_dir()} == {"loss_all_train", "loss_all_test"}
    train, test = _read(tmp_path / "loss_all_train"), _read(tmp_path / "loss_all_test")
    assert [e.value for e in test.Scalars("loss/all")] == [2.0, 3.0, 4.0]
    assert [e.step for e in train.Scalars("loss/all")] == [0, 1, 2]


def test_histogram(tmp_path):
    x = numpy.random.default_rng(0).standard_normal(5000)
    with SummaryWriter(tmp_path) as w:
        w.add_histogram("weights", tinynet.tensor(x.reshape(50, 100)), global_step=7)
        w.add_histogram("auto", x, global_step=8, bins="auto", max_bins=10)
        w.add_histogram("ints", numpy.array([1, 1, 2, 5]), global_step=9, bins=4)
    acc = _read(tmp_path)
    (event,) = acc.Histograms("weights")
    h = event.histogram_value
    assert event.step == 7 and h.num == 5000 and sum(h.bucket) == 5000
    assert (h.min, h.max) == (x.min(), x.max())
    assert h.sum == pytest.approx(x.sum()) and h.sum_squares == pytest.approx(x.dot(x))
    assert h.bucket[0] == 0 and h.bucket_limit[0] <= x.min() and h.bucket_limit[-1] >= x.max()
    limits = numpy.array(h.bucket_limit)
    positive = limits[limits > 0]
    numpy.testing.assert_allclose(positive[1:] / positive[:-1], 1.1)  # TensorFlow's 1.1x buckets
    auto = acc.Histograms("auto")[0].histogram_value
    assert sum(auto.bucket) == 5000 and len(auto.bucket) <= 11
    ints = acc.Histograms("ints")[0].histogram_value
    assert list(ints.bucket) == [0, 2, 1, 0, 1] and list(ints.bucket_limit) == [1.0, 2.0, 3.0, 4.0, 5.0]
    with SummaryWriter(tmp_path / "bad") as w:
        with pytest.raises(ArgumentError, match="finite"):
            w.add_histogram("h", numpy.array([1.0, numpy.nan]))
        with pytest.raises(ArgumentError, match="not empty"):
            w.add_histogram("h", numpy.zeros(0))


def test_images_are_pngs_with_the_pixels(tmp_path):
    mpimg = pytest.importorskip("matplotlib.image")
    rng = numpy.random.default_rng(1)
    rgb = rng.integers(0, 256, size=(3, 6, 9), dtype=numpy.uint8)
    grey = rng.random((5, 7))
    with SummaryWriter(tmp_path) as w:
        w.add_image("rgb", tinynet.tensor(rgb), 1)  # CHW
        w.add_image("hwc", rgb.transpose(1, 2, 0), 2, dataformats="HWC")
        w.add_image("grey", grey, 3, dataformats="HW")
        w.add_images("batch", rng.random((10, 1, 4, 5)), 4)
        with pytest.raises(ShapeError, match="3-d image"):
            w.add_image("bad", grey)
        with pytest.raises(ShapeError, match="channels"):
            w.add_image("bad", rng.random((2, 4, 4)))
        with pytest.raises(ArgumentError, match="dataformats"):
            w.add_image("bad", grey, dataformats="XY")
    acc = _read(tmp_path)

    def pixels(tag):
        event = acc.Images(tag)[0]
        data = event.encoded_image_string
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
        return event, numpy.round(mpimg.imread(io.BytesIO(data), format="png") * 255).astype(numpy.uint8)

    event, got = pixels("rgb")
    assert (event.step, event.width, event.height) == (1, 9, 6)
    numpy.testing.assert_array_equal(got, rgb.transpose(1, 2, 0))
    numpy.testing.assert_array_equal(pixels("hwc")[1], rgb.transpose(1, 2, 0))
    event, got = pixels("grey")
    numpy.testing.assert_array_equal(got, (grey * 255).astype(numpy.uint8))  # PyTorch's scaling: x255, truncated
    event, got = pixels("batch")
    assert (event.width, event.height) == (8 * 5, 2 * 4)  # 8 columns, 2 rows


def test_text_and_hparams(tmp_path):
    with SummaryWriter(tmp_path) as w:
        w.add_text("notes", "lr **0.01**, Grüße", 5)
        w.add_hparams({"lr": 0.01, "batch": tinynet.tensor(64), "opt": "sgd", "nesterov": False, "unused": None},
                      {"hparam/accuracy": 98.5}, hparam_domain_discrete={"opt": ["sgd", "adam"]}, run_name="trial1")
        with pytest.raises(ArgumentTypeError, match="hyperparameter 'f'"):
            w.add_hparams({"f": object()}, {})
    acc = _read(tmp_path)
    (text,) = acc.Tensors("notes/text_summary")
    assert text.step == 5 and text.tensor_proto.string_val == ["lr **0.01**, Grüße".encode()]
    assert acc.SummaryMetadata("notes/text_summary").plugin_data.plugin_name == "text"
    trial = _read(tmp_path / "trial1")
    content = trial.PluginTagToContent("hparams")
    experiment = hp_metadata.parse_experiment_plugin_data(content[hp_metadata.EXPERIMENT_TAG])
    assert [(i.name, i.type) for i in experiment.hparam_infos] == [("lr", 3), ("batch", 3), ("opt", 1), ("nesterov", 2)]
    assert [v.string_value for v in experiment.hparam_infos[2].domain_discrete.values] == ["sgd", "adam"]
    assert [m.name.tag for m in experiment.metric_infos] == ["hparam/accuracy"]
    start = hp_metadata.parse_session_start_info_plugin_data(content[hp_metadata.SESSION_START_INFO_TAG])
    assert start.hparams["lr"].number_value == 0.01 and start.hparams["batch"].number_value == 64
    assert start.hparams["opt"].string_value == "sgd" and start.hparams["nesterov"].bool_value is False
    assert "unused" not in start.hparams
    end = hp_metadata.parse_session_end_info_plugin_data(content[hp_metadata.SESSION_END_INFO_TAG])
    assert end.status == 1  # STATUS_SUCCESS
    assert trial.Scalars("hparam/accuracy")[0].value == 98.5


def test_purge_step_hides_the_steps_a_resumed_run_writes_again(tmp_path):
    with SummaryWriter(tmp_path) as w:
        for step in range(10):
            w.add_scalar("loss", float(step), step)
    # TensorBoard reads a folder's event files in name order, and the names start with the
    # second they were made in (a resumed run is a later process): a new second for the new file
    time.sleep(1.05)
    with SummaryWriter(tmp_path, purge_step=6) as w:  # the run resumed from a checkpoint at step 6
        for step in range(6, 9):
            w.add_scalar("loss", 100.0 + step, step)
    assert [(e.step, e.value) for e in _read(tmp_path).Scalars("loss")] == [
        (0, 0.0), (1, 1.0), (2, 2.0), (3, 3.0), (4, 4.0), (5, 5.0), (6, 106.0), (7, 107.0), (8, 108.0)]


def test_default_log_dir_close_and_reopen(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    assert w.get_logdir().startswith("runs" + os.sep) and w.get_logdir().endswith("_lr0.1")
    w.add_scalar("a", 1.0, 0)
    w.close()
    w.add_scalar("a", 2.0, 1)  # a closed writer opens a new event file, as PyTorch's
    w.flush()
    w.close()
    assert len(os.listdir(w.get_logdir())) == 2
    assert [e.value for e in _read(w.get_logdir()).Scalars("a")] == [1.0, 2.0]


def test_bad_values(tmp_path):
    with SummaryWriter(tmp_path) as w:
        with pytest.raises(ArgumentError, match="single number"):
            w.add_scalar("x", tinynet.ones(3))
        with pytest.raises(ArgumentTypeError, match="tag must be a str"):
            w.add_scalar(3, 1.0)
        with pytest.raises(ArgumentTypeError, match="numbers"):
            w.add_scalar("x", "1.0")
        with pytest.raises(ArgumentTypeError, match="global_step"):
            w.add_scalar("x", 1.0, global_step="one")
        with pytest.raises(ArgumentTypeError, match="text_string"):
            w.add_text("x", 3)


def test_unwritable_log_dir_is_a_typed_error(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    for bad in (blocker, blocker / "run"):
        with pytest.raises(PathNotWritableError, match="cannot write event files to .*a_file") as info:
            SummaryWriter(bad)
        assert isinstance(info.value, OSError)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_file"]  # nothing left behind


def test_missing_tensorboard_says_which_extra(tmp_path):
    code = ("import sys; sys.modules['tensorboard'] = None\n"  # as if it were not installed
            "from tinynet.errors import MissingExtraError\n"
            "try:\n    import tinynet.utils.tensorboard\n"
            "except MissingExtraError as e:\n    print(type(e).__name__, isinstance(e, ImportError), e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT), timeout=120)
    assert out.stdout.strip() == ("MissingExtraError True tinynet.utils.tensorboard needs tensorboard, which is not "
                                  "installed: pip install 'tinynet[tensorboard]'"), out.stderr
    assert issubclass(MissingExtraError, ImportError)
