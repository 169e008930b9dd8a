"""``tinynet.utils.tensorboard``: PyTorch's ``SummaryWriter`` (``torch.utils.tensorboard``),
writing TensorBoard event files with the ``tensorboard`` package's own writer
(``tensorboard.summary.writer.event_file_writer.EventFileWriter``) and protocol buffers; no
TensorFlow, PyTorch or Pillow needed.

    >>> import tempfile
    >>> from tinynet.utils.tensorboard import SummaryWriter
    >>> with SummaryWriter(tempfile.mkdtemp() + "/runs/mnist") as w:
    ...     for step, loss in enumerate([0.9, 0.5, 0.3]):
    ...         w.add_scalar("train/loss", loss, global_step=step)

then ``tensorboard --logdir runs``. Values may be tinynet tensors (CPU or GPU), NumPy arrays or
Python numbers. Methods: ``add_scalar``, ``add_scalars``, ``add_histogram``, ``add_image``,
``add_images``, ``add_text``, ``add_hparams``, ``flush``, ``close``, ``get_logdir`` and the
context manager; PyTorch's ``add_graph``, ``add_embedding``, ``add_figure``, ``add_audio``,
``add_video``, ``add_mesh`` and ``add_pr_curve`` are not there.

Importing the module without the ``tensorboard`` package raises
:class:`~tinynet.errors.MissingExtraError` (an ``ImportError``) saying
``pip install 'tinynet[tensorboard]'``, as importing ``torch.utils.tensorboard`` does.
"""
import datetime
import functools
import math
import numbers
import os
import socket
import struct
import time
import zlib

import numpy

from ..errors import ArgumentError, ArgumentTypeError, PathNotWritableError, ShapeError
from ..tensor import Tensor
from .extras import import_optional

_efw = import_optional("tensorboard.summary.writer.event_file_writer", "tensorboard", "tinynet.utils.tensorboard")
from google.protobuf import struct_pb2  # noqa: E402  (tensorboard depends on protobuf)
from tensorboard.compat.proto import event_pb2, summary_pb2, tensor_pb2, tensor_shape_pb2, types_pb2  # noqa: E402
from tensorboard.compat.proto.histogram_pb2 import HistogramProto  # noqa: E402
from tensorboard.plugins.hparams import api_pb2, metadata as hp_metadata, plugin_data_pb2  # noqa: E402
from tensorboard.plugins.text import metadata as text_metadata  # noqa: E402

__all__ = ["SummaryWriter"]


class SummaryWriter:
    """Write scalars, histograms, images, text and hyperparameters to TensorBoard event files.

    Args:
        log_dir (str or PathLike): the folder of the event files, made if missing. Default
            ``runs/<Mon>DD_HH-MM-SS_<hostname><comment>``, as PyTorch.
        comment (str): appended to the default ``log_dir``; ignored when ``log_dir`` is given.
        purge_step (int): on a run resumed after a crash, the first step written again: events
            of the previous writer at steps >= ``purge_step`` are hidden by TensorBoard (a
            ``SessionLog.START`` event at that step, TensorBoard's own mechanism).
        max_queue (int): events held in memory before a write. Default 10.
        flush_secs (float): seconds between flushes to disk. Default 120.
        filename_suffix (str): appended to the event file names.

    Raises:
        PathNotWritableError: ``log_dir`` (or a folder above it) cannot be made or written to.
    """

    def __init__(self, log_dir=None, comment="", purge_step=None, max_queue=10, flush_secs=120,
                 filename_suffix=""):
        if not log_dir:
            stamp = datetime.datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = os.fspath(log_dir)
        self.purge_step = None if purge_step is None else _step("SummaryWriter", purge_step)
        self.max_queue, self.flush_secs, self.filename_suffix = max_queue, flush_secs, filename_suffix
        self.file_writer, self.all_writers = None, {}
        self._get_file_writer()

    # ---- the event files ------------------------------------------------------------------
    def _open(self, log_dir):
        try:
            writer = _efw.EventFileWriter(log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
        except OSError as exc:
            reason = exc.strerror or str(exc)
            raise PathNotWritableError(f"SummaryWriter: cannot write event files to {log_dir}: {reason}") from exc
        self.all_writers[log_dir] = writer
        return writer

    def _get_file_writer(self):
        """The main event file (opened again after :meth:`close`, as PyTorch's)."""
        if self.file_writer is None:
            self.file_writer = self._open(self.log_dir)
            if self.purge_step is not None:  # once: TensorBoard drops the older events from here on
                for event in (event_pb2.Event(step=self.purge_step, file_version="brain.Event:2"),
                              event_pb2.Event(step=self.purge_step,
                                              session_log=event_pb2.SessionLog(status=event_pb2.SessionLog.START))):
                    event.wall_time = time.time()
                    self.file_writer.add_event(event)
                self.file_writer.flush()
                self.purge_step = None
        return self.file_writer

    def _write(self, values, global_step, walltime, writer=None):
        event = event_pb2.Event(summary=summary_pb2.Summary(value=values),
                                wall_time=time.time() if walltime is None else float(walltime))
        if global_step is not None:
            event.step = _step("SummaryWriter", global_step)
        (writer or self._get_file_writer()).add_event(event)

    def get_logdir(self):
        """The folder the event files go to."""
        return self.log_dir

    # ---- what can be written ----------------------------------------------------------------
    def add_scalar(self, tag, scalar_value, global_step=None, walltime=None, new_style=False,
                   double_precision=False):
        """One number (a Python number, a one-element tensor or array) at ``global_step``.

        ``new_style`` writes it as a tensor of the ``scalars`` plugin (float64 with
        ``double_precision``) instead of a ``simple_value`` (float32), as PyTorch.

        Raises:
            ArgumentTypeError: ``tag`` not a str, a value that is not a number.
            ArgumentError: a value with more than one element.
        """
        value = _scalar("add_scalar", _check_tag("add_scalar", tag), scalar_value)
        if new_style:
            tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_DOUBLE if double_precision else types_pb2.DT_FLOAT,
                                            tensor_shape=tensor_shape_pb2.TensorShapeProto())
            (tensor.double_val if double_precision else tensor.float_val).append(value)
            plugin = summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars")
            meta = summary_pb2.SummaryMetadata(plugin_data=plugin)
            item = summary_pb2.Summary.Value(tag=tag, tensor=tensor, metadata=meta)
        else:
            item = summary_pb2.Summary.Value(tag=tag, simple_value=value)
        self._write([item], global_step, walltime)

    def add_scalars(self, main_tag, tag_scalar_dict, global_step=None, walltime=None):
        """Several numbers drawn in one chart: each ``tag`` goes to its own event file in
        ``log_dir/<main_tag>_<tag>`` (a "run" of its own) under the tag ``main_tag``, as PyTorch."""
        _check_tag("add_scalars", main_tag)
        if not isinstance(tag_scalar_dict, dict):
            raise ArgumentTypeError("add_scalars: tag_scalar_dict must be a dict, got "
                                    f"{type(tag_scalar_dict).__name__}")
        for tag, v in tag_scalar_dict.items():
            path = os.path.join(self._get_file_writer().get_logdir(), main_tag.replace("/", "_") + "_" + str(tag))
            writer = self.all_writers.get(path) or self._open(path)
            item = summary_pb2.Summary.Value(tag=main_tag, simple_value=_scalar("add_scalars", tag, v))
            self._write([item], global_step, walltime, writer)

    def add_histogram(self, tag, values, global_step=None, bins="tensorflow", walltime=None, max_bins=None):
        """The distribution of ``values`` (any shape, flattened).

        Args:
            bins: ``"tensorflow"`` (default): TensorFlow's buckets, edges at ``±1e-12 * 1.1**k``
                up to 1e20 and 0 (``tensorflow/core/lib/histogram/histogram.cc``); else NumPy's
                ``bins`` (an int, edges, or ``"auto"``, ``"fd"``, ...).
            max_bins (int): merge neighbouring buckets until at most this many remain.

        Raises:
            ArgumentError: no values, or NaN/infinite values.
        """
        _check_tag("add_histogram", tag)
        v = _to_numpy("add_histogram", values).astype(numpy.float64).ravel()
        if v.size == 0 or not numpy.isfinite(v).all():
            raise ArgumentError(f"add_histogram: values must be finite and not empty, got {v.size} values"
                                + ("" if v.size == 0 else f" ({int((~numpy.isfinite(v)).sum())} not finite)"))
        counts, edges = numpy.histogram(v, bins=_tensorflow_edges() if isinstance(bins, str) and bins == "tensorflow"
                                        else bins)
        if max_bins is not None and len(counts) > max_bins:
            group = math.ceil(len(counts) / max_bins)
            pad = -len(counts) % group
            counts = numpy.concatenate([counts, numpy.zeros(pad, counts.dtype)]).reshape(-1, group).sum(1)
            edges = numpy.concatenate([edges, numpy.full(pad, edges[-1])])[::group]
            edges = numpy.append(edges, edges[-1]) if len(edges) == len(counts) else edges
        nonzero = numpy.flatnonzero(counts)
        first, last = nonzero[0], nonzero[-1]
        # TensorBoard's buckets are (previous limit, limit]: one empty bucket before the first
        # filled one carries its left edge, as TensorFlow and PyTorch write them
        histo = HistogramProto(min=v.min(), max=v.max(), num=v.size, sum=v.sum(), sum_squares=v.dot(v),
                               bucket_limit=edges[first:last + 2].tolist(),
                               bucket=[0] + counts[first:last + 1].tolist())
        self._write([summary_pb2.Summary.Value(tag=tag, histo=histo)], global_step, walltime)

    def add_image(self, tag, img_tensor, global_step=None, walltime=None, dataformats="CHW"):
        """One image, written as a PNG.

        Args:
            img_tensor: ``(C, H, W)`` by default, C = 1 (grey), 3 (RGB) or 4 (RGBA); other
                layouts through ``dataformats`` (``"HWC"``, ``"HW"``, ``"WH"``, ...). uint8
                pixels are used as they are; any other dtype is taken as [0, 1], multiplied by
                255, clipped and truncated to uint8 (PyTorch's convention).

        Raises:
            ArgumentError: ``dataformats`` not a layout of C, H and W (C optional).
            ShapeError: the image's dims or channels do not fit ``dataformats``.
        """
        _check_tag("add_image", tag)
        image = _layout("add_image", _to_numpy("add_image", img_tensor), dataformats, "HWC")
        self._write([_image_value(tag, image)], global_step, walltime)

    def add_images(self, tag, img_tensor, global_step=None, walltime=None, dataformats="NCHW"):
        """A batch of images ``(N, C, H, W)`` (or another ``dataformats`` with N) as one PNG
        grid of up to 8 columns, as PyTorch's ``make_grid``. Same pixel rules as :meth:`add_image`."""
        _check_tag("add_images", tag)
        batch = _layout("add_images", _to_numpy("add_images", img_tensor), dataformats, "NHWC")
        n, h, w, c = batch.shape
        cols = max(1, min(n, 8))
        rows = math.ceil(n / cols)
        grid = numpy.zeros((rows * h, cols * w, c), batch.dtype)
        for i in range(n):
            r, q = divmod(i, cols)
            grid[r * h:(r + 1) * h, q * w:(q + 1) * w] = batch[i]
        self._write([_image_value(tag, grid)], global_step, walltime)

    def add_text(self, tag, text_string, global_step=None, walltime=None):
        """A string (Markdown in TensorBoard's Text tab), under ``<tag>/text_summary`` as PyTorch."""
        _check_tag("add_text", tag)
        if not isinstance(text_string, str):
            raise ArgumentTypeError(f"add_text: text_string must be a str, got {type(text_string).__name__}")
        shape = tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=1)])
        tensor = tensor_pb2.TensorProto(dtype=types_pb2.DT_STRING, string_val=[text_string.encode("utf-8")],
                                        tensor_shape=shape)
        meta = text_metadata.create_summary_metadata(display_name=None, description=None)
        self._write([summary_pb2.Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=tensor)],
                    global_step, walltime)

    def add_hparams(self, hparam_dict, metric_dict, hparam_domain_discrete=None, run_name=None, global_step=None):
        """One trial for TensorBoard's HParams tab, in a sub-run ``log_dir/<run_name>``
        (default: the current time), as PyTorch: the experiment (the names and types of the
        hyperparameters and metrics), the session start (the values) and end, then each metric
        as a scalar.

        Args:
            hparam_dict (dict): name -> bool, number, str (or a one-element tensor); None is skipped.
            metric_dict (dict): metric tag -> number.
            hparam_domain_discrete (dict): name -> the list of values the hyperparameter can take.

        Raises:
            ArgumentTypeError: not dicts, or a value of another type.
        """
        if not isinstance(hparam_dict, dict) or not isinstance(metric_dict, dict):
            raise ArgumentTypeError("add_hparams: hparam_dict and metric_dict must be dicts")
        domains = hparam_domain_discrete or {}
        infos, start = [], plugin_data_pb2.SessionStartInfo(start_time_secs=time.time())
        for name, value in hparam_dict.items():
            if value is None:
                continue
            value = _hparam("add_hparams", name, value)
            field, kind = (("bool_value", "DATA_TYPE_BOOL") if isinstance(value, bool) else
                           ("string_value", "DATA_TYPE_STRING") if isinstance(value, str) else
                           ("number_value", "DATA_TYPE_FLOAT64"))
            setattr(start.hparams[name], field, value)
            info = api_pb2.HParamInfo(name=name, type=api_pb2.DataType.Value(kind))
            if name in domains:
                choices = [_hparam("add_hparams", name, d) for d in domains[name]]
                info.domain_discrete.CopyFrom(struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d})
                                                                           for d in choices]))
            infos.append(info)
        experiment = api_pb2.Experiment(hparam_infos=infos, metric_infos=[
            api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict])
        end = plugin_data_pb2.SessionEndInfo(status=api_pb2.STATUS_SUCCESS)
        parts = ((hp_metadata.EXPERIMENT_TAG, plugin_data_pb2.HParamsPluginData(experiment=experiment)),
                 (hp_metadata.SESSION_START_INFO_TAG, plugin_data_pb2.HParamsPluginData(session_start_info=start)),
                 (hp_metadata.SESSION_END_INFO_TAG, plugin_data_pb2.HParamsPluginData(session_end_info=end)))
        run_dir = os.path.join(self._get_file_writer().get_logdir(), run_name or str(time.time()))
        empty = tensor_pb2.TensorProto(dtype=types_pb2.DT_FLOAT, tensor_shape=tensor_shape_pb2.TensorShapeProto(
            dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=0)]))  # the plugin's data rides in the metadata
        with SummaryWriter(run_dir) as w:
            for tag, data in parts:
                w._write([summary_pb2.Summary.Value(tag=tag, metadata=hp_metadata.create_summary_metadata(data),
                                                    tensor=empty)], global_step, None)
            for k, v in metric_dict.items():
                w.add_scalar(k, v, global_step)

    def flush(self):
        """Write the queued events of every event file to disk."""
        for writer in self.all_writers.values():
            writer.flush()

    def close(self):
        """Flush and close every event file; a later ``add_*`` opens a new one."""
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer, self.all_writers = None, {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---- conversions ------------------------------------------------------------------------------
def _check_tag(op, tag):
    if not isinstance(tag, str):
        raise ArgumentTypeError(f"{op}: tag must be a str, got {type(tag).__name__}")
    return tag


def _step(op, step):
    try:
        return int(step)
    except (TypeError, ValueError):
        raise ArgumentTypeError(f"{op}: global_step must be an int, got {step!r}") from None


def _to_numpy(op, value):
    """A tinynet tensor (CPU or GPU), CuPy or NumPy array, number or nested list as a NumPy array."""
    if isinstance(value, Tensor):
        value = value.detach().cpu().numpy()
    elif hasattr(value, "__cuda_array_interface__") and hasattr(value, "get"):
        value = value.get()  # a CuPy array
    arr = numpy.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise ArgumentTypeError(f"{op}: expected numbers (a tensor, an array or a number), got {type(value).__name__}")
    return arr


def _scalar(op, tag, value):
    arr = _to_numpy(op, value)
    if arr.size != 1:
        raise ArgumentError(f"{op}: the value of {tag!r} must be a single number, got shape {arr.shape}")
    return float(arr.reshape(()))


def _hparam(op, name, value):
    """A hyperparameter as a bool, str or float (one-element tensors and arrays included)."""
    if isinstance(value, (Tensor, numpy.ndarray, numpy.generic)):
        arr = _to_numpy(op, value)
        value = arr.reshape(()).item() if arr.size == 1 else value
    if isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Real):
        return float(value)
    raise ArgumentTypeError(f"{op}: hyperparameter {name!r} must be a bool, number or str, got {type(value).__name__}")


@functools.lru_cache(maxsize=None)
def _tensorflow_edges():
    """TensorFlow's default histogram bucket edges: ``±1e-12 * 1.1**k`` below 1e20, 0, and ±DBL_MAX."""
    pos, v = [], 1e-12
    while v < 1e20:
        pos.append(v)
        v *= 1.1
    big = numpy.finfo(numpy.float64).max
    return numpy.array([-big] + [-x for x in reversed(pos)] + [0.0] + pos + [big])


def _layout(op, arr, dataformats, target):
    """Transpose ``arr`` from ``dataformats`` to ``target`` ("HWC" or "NHWC"), adding a channel
    dim of 1 when the layout has none, and convert it to uint8 pixels."""
    fmt = str(dataformats).upper()
    letters = set(target) - {"C"}
    if sorted(fmt) not in (sorted(target), sorted(letters)) or len(set(fmt)) != len(fmt):
        raise ArgumentError(f"{op}: dataformats must be an order of {''.join(sorted(letters))} with an optional C, "
                            f"got {dataformats!r}")
    if arr.ndim != len(fmt):
        raise ShapeError(f"{op}: dataformats {fmt!r} needs a {len(fmt)}-d image, got shape {arr.shape}")
    if "C" not in fmt:
        arr, fmt = arr[..., None], fmt + "C"
    arr = arr.transpose([fmt.index(ch) for ch in target])
    if arr.shape[-1] not in (1, 3, 4):
        raise ShapeError(f"{op}: images need 1, 3 or 4 channels, got {arr.shape[-1]} (shape {arr.shape} as {target})")
    if arr.dtype != numpy.uint8:
        arr = (numpy.nan_to_num(arr.astype(numpy.float32)) * 255).clip(0, 255).astype(numpy.uint8)
    return arr


def _image_value(tag, image):
    h, w, c = image.shape
    img = summary_pb2.Summary.Image(height=h, width=w, colorspace=c, encoded_image_string=_png(image))
    return summary_pb2.Summary.Value(tag=tag, image=img)


def _png(image):
    """PNG bytes of an ``(H, W, C)`` uint8 image, C = 1, 3 or 4: 8-bit greyscale, RGB or RGBA,
    one IDAT chunk, filter type 0 on every row (PNG specification, ISO/IEC 15948)."""
    h, w, c = image.shape
    rows = numpy.concatenate([numpy.zeros((h, 1), numpy.uint8), image.reshape(h, w * c)], axis=1)

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", w, h, 8, {1: 0, 3: 2, 4: 6}[c], 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6))
            + chunk(b"IEND", b""))
