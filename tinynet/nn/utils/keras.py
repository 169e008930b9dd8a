"""Load weights trained in Keras/TensorFlow into a tinynet model (no TensorFlow needed).

Keras keeps images NHWC and tinynet (like PyTorch) NCHW, so the arrays change layout on
the way in:

* ``Conv2D`` kernel ``(kh, kw, in, out)`` (HWIO) becomes ``Conv2d.weight`` ``(out, in, kh, kw)``
  (OIHW): ``kernel.transpose(3, 2, 0, 1)``.
* ``Dense`` kernel ``(in, out)`` becomes ``Linear.weight`` ``(out, in)``: ``kernel.T``.
* The first ``Dense`` after a convolution reads a feature map that Keras flattened in
  NHWC order (``(h * W + w) * C + c``) and tinynet in NCHW order (``c * H * W + h * W + w``).
  Its input rows are permuted from the one order to the other. That is the layout trap
  of moving a CNN between the two frameworks (seed lecture 003): without the permutation
  the weights load without error and the network computes garbage.
* ``BatchNormalization``'s ``gamma, beta, moving_mean, moving_variance`` become
  ``weight, bias, running_mean, running_var``. Keras' default ``epsilon`` is 1e-3 and
  PyTorch's 1e-5: make the tinynet layer with ``eps=1e-3`` to compute what Keras computes.

Two file layouts are read with h5py (the ``keras`` extra): Keras 3's ``.weights.h5``
(``model.save_weights``; ``layers/<name>/vars/<i>``) and the legacy Keras 2 HDF5 files
(``layer_names`` and ``weight_names`` attributes, also inside a full-model file's
``model_weights`` group).
"""
import re

import numpy

from ...errors import ArgumentError, SerializationError, StateDictError
from ...optional import import_optional
from ..modules.normalization import _BatchNorm
from ..modules.conv import Conv2d
from ..modules.linear import Linear

__all__ = ["load_keras_weights"]

_KINDS = ((Conv2d, "conv"), (Linear, "dense"), (_BatchNorm, "batchnorm"))


def _kind_of_module(module):
    for cls, kind in _KINDS:
        if isinstance(module, cls):
            return kind
    return None


def _kind_of_arrays(arrays):
    if arrays[0].ndim == 4:
        return "conv"
    if arrays[0].ndim == 2:
        return "dense"
    if len(arrays) == 4 and all(a.ndim == 1 for a in arrays):
        return "batchnorm"
    return None


def _read_layers(f):
    """``[(layer name, [arrays in Keras' variable order]), ...]`` of the layers that hold
    weights, and whether the file keeps the layers' order (the legacy layout does)."""
    root = f["model_weights"] if "model_weights" in f else f
    if "layer_names" in root.attrs:  # legacy Keras 2 HDF5: ordered names
        layers = []
        for name in root.attrs["layer_names"]:
            name = name.decode() if isinstance(name, bytes) else str(name)
            group = root[name]
            weights = [w.decode() if isinstance(w, bytes) else str(w) for w in group.attrs.get("weight_names", [])]
            if weights:
                layers.append((name, [numpy.asarray(group[w]) for w in weights]))
        return layers, True
    if "layers" in f:  # Keras 3 .weights.h5: layers/<name>/vars/<i>, nested models below their own layers/
        layers = []

        def walk(group, prefix):
            for name in group:
                sub = group[name]
                if not hasattr(sub, "keys"):
                    continue
                path = f"{prefix}{name}"
                if "vars" in sub and len(sub["vars"]):
                    v = sub["vars"]
                    layers.append((path, [numpy.asarray(v[str(i)]) for i in range(len(v))]))
                if "layers" in sub:
                    walk(sub["layers"], path + "/")
        walk(f["layers"], "")
        return layers, False
    raise SerializationError("load_keras_weights: the file has neither Keras 3's 'layers' group nor the legacy "
                             "'layer_names' attribute; is it a Keras weights file?")


def _suffix_order(name):
    """Keras' automatic names count per class: conv2d, conv2d_1, conv2d_2, ..."""
    m = re.fullmatch(r"(.*?)(?:_(\d+))?", name.split("/")[-1])
    return (name.rsplit("/", 1)[0] if "/" in name else "", m.group(1), int(m.group(2) or 0))


def _pair(targets, layers, ordered, mapping):
    """Pairs (tinynet name, module, kind, keras name, arrays) and the problems found."""
    problems, pairs = [], []
    by_name = dict(layers)
    if mapping is not None:
        modules = {name: (module, kind) for name, module, kind in targets}
        for tname, kname in mapping.items():
            if tname not in modules:
                problems.append(f"mapping names {tname!r}, which is not a Conv2d, Linear or BatchNorm of the model")
            elif kname not in by_name:
                problems.append(f"mapping names Keras layer {kname!r}, which the file does not hold")
            else:
                pairs.append((tname, modules[tname][0], modules[tname][1], kname, by_name[kname]))
        used = set(mapping.values())
        problems += [f"Keras layer {k!r} is not mapped to a tinynet module" for k, _ in layers if k not in used]
        return pairs, problems
    if ordered:
        queues = {None: list(layers)}
        wanted = {None: targets}
    else:  # Keras 3 files do not keep the order: pair each kind in the order of Keras' names
        queues, wanted = {}, {}
        for k, arrays in sorted(layers, key=lambda kv: _suffix_order(kv[0])):
            queues.setdefault(_kind_of_arrays(arrays), []).append((k, arrays))
        for t in targets:
            wanted.setdefault(t[2], []).append(t)
        for kind, ks in queues.items():
            if kind not in wanted and kind is not None:
                problems += [f"Keras layer {k!r} ({kind}) has no {kind} module left in the model to go to"
                             for k, _ in ks]
        if None in queues:
            problems += [f"Keras layer {k!r} holds weights of an unsupported kind (shapes "
                         f"{[a.shape for a in arrays]})" for k, arrays in queues.pop(None)]
    for kind, ts in wanted.items():
        ks = queues.get(kind, [])
        for (tname, module, tkind), (kname, arrays) in zip(ts, ks):
            pairs.append((tname, module, tkind, kname, arrays))
        problems += [f"tinynet {tkind} {tname!r} has no Keras layer to load from" for tname, _, tkind in ts[len(ks):]]
        problems += [f"Keras layer {kname!r} has no tinynet module to go to" for kname, _ in ks[len(ts):]]
    return pairs, problems


def _convert(tname, module, kind, kname, arrays, feature_shape, after_conv, problems):
    """The state-dict entries of one layer in tinynet's layout, or {} with problems noted."""
    akind = _kind_of_arrays(arrays)
    if akind != kind:
        problems.append(f"{tname!r} is a {kind} layer but Keras layer {kname!r} holds {akind or 'unknown'} "
                        f"weights (shapes {[a.shape for a in arrays]})")
        return {}
    has_bias = getattr(module, "bias", None) is not None
    if kind == "batchnorm":
        names = ["weight", "bias", "running_mean", "running_var"]
        values = list(arrays)
    else:
        kernel = arrays[0]
        if kind == "conv":
            values = [kernel.transpose(3, 2, 0, 1)]
        else:
            values = [kernel.T]
            if after_conv is not None:
                values = [_nhwc_rows_to_nchw(tname, kernel, after_conv, feature_shape, problems)]
        names = ["weight"]
        if has_bias != (len(arrays) > 1):
            problems.append(f"{tname!r} {'has' if has_bias else 'has no'} bias but Keras layer {kname!r} "
                            f"{'has none' if has_bias else 'has one'}")
            return {}
        if has_bias:
            names.append("bias")
            values.append(arrays[1])
    out = {}
    state = dict(module.named_parameters(recurse=False)) | dict(module.named_buffers(recurse=False))
    for name, value in zip(names, values):
        if value is None:
            return {}
        want = tuple(state[name].shape)
        if tuple(value.shape) != want:
            problems.append(f"{tname}.{name}: expected shape {want} in tinynet's layout, Keras layer {kname!r} "
                            f"gives {tuple(value.shape)}")
            continue
        out[f"{tname}.{name}" if tname else name] = numpy.ascontiguousarray(value)
    return out


def _nhwc_rows_to_nchw(tname, kernel, channels, feature_shape, problems):
    """A Dense kernel (H*W*C, out) read from an NHWC flatten, as a Linear weight (out, C*H*W)."""
    rows, out = kernel.shape
    if feature_shape is not None:
        c, h, w = feature_shape
    else:
        c = channels
        side = int(round((rows / c) ** 0.5)) if c and rows % c == 0 else 0
        if side * side * c != rows:
            problems.append(f"{tname!r}: cannot tell the (C, H, W) of the {rows} features flattened before it "
                            f"(the last convolution has {c} channels); pass feature_shape=(C, H, W)")
            return None
        h = w = side
    if c * h * w != rows:
        problems.append(f"{tname!r}: feature_shape {(c, h, w)} has {c * h * w} values, the Keras kernel {rows} rows")
        return None
    return kernel.reshape(h, w, c, out).transpose(2, 0, 1, 3).reshape(rows, out).T


def load_keras_weights(model, path, mapping=None, feature_shape=None):
    """Load a Keras weights file into ``model``'s ``Conv2d``, ``Linear`` and BatchNorm
    layers, converting Keras' NHWC layouts to tinynet's NCHW ones (see the module's text).

    Layers are paired in the file's order (legacy HDF5 keeps it). Keras 3's
    ``.weights.h5`` does not keep the order, so there each kind is paired in the order of
    Keras' automatic names (``conv2d``, ``conv2d_1``, ...). ``mapping`` pairs them
    explicitly instead. Every problem is found before anything is copied and reported in
    one error; the model is left untouched then.

    Args:
        model (Module): the tinynet model (eval or train mode).
        path (str or os.PathLike): a Keras ``.weights.h5`` or legacy ``.h5`` file.
        mapping (dict, optional): ``{tinynet module name: Keras layer name}`` for every
            layer with weights (module names as ``model.named_modules()`` gives them).
        feature_shape (tuple, optional): ``(C, H, W)`` of the feature map flattened
            before the first ``Linear`` that follows a convolution. Default: ``C`` from
            that convolution and a square ``H = W``.

    Returns:
        list of ``(tinynet module name, Keras layer name)`` pairs, in loading order.

    Raises:
        StateDictError: layers or weights missing, extra, of the wrong kind or shape
            (all listed, each named).
        SerializationError: the file is not readable HDF5 or not a Keras weights file.
        MissingExtraError: h5py is not installed (``pip install 'tinynet[keras]'``).
        ArgumentError: a malformed ``feature_shape`` or ``mapping``.
    """
    h5py = import_optional("h5py", "keras", "load_keras_weights")
    if feature_shape is not None and (len(tuple(feature_shape)) != 3 or any(int(v) < 1 for v in feature_shape)):
        raise ArgumentError(f"load_keras_weights: feature_shape must be (C, H, W) of positive ints, "
                            f"got {feature_shape!r}")
    if mapping is not None and not isinstance(mapping, dict):
        raise ArgumentError(f"load_keras_weights: mapping must be a dict, got {type(mapping).__name__}")
    try:
        with h5py.File(path, "r") as f:
            layers, ordered = _read_layers(f)
    except (OSError, KeyError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise SerializationError(f"load_keras_weights: {str(path)!r} is not a readable Keras HDF5 file "
                                 f"({exc})") from None
    targets = [(name, m, kind) for name, m in model.named_modules() if (kind := _kind_of_module(m)) is not None]
    pairs, problems = _pair(targets, layers, ordered, mapping)
    state, last_conv_channels, done = {}, None, []
    order = {name: i for i, (name, _, _) in enumerate(targets)}
    for tname, module, kind, kname, arrays in sorted(pairs, key=lambda p: order[p[0]]):
        after = last_conv_channels if kind == "dense" else None
        state.update(_convert(tname, module, kind, kname, arrays, feature_shape, after, problems))
        if kind == "conv":
            last_conv_channels = module.out_channels
        elif kind == "dense":
            last_conv_channels = None
        done.append((tname, kname))
    if problems:
        raise StateDictError("load_keras_weights: nothing was loaded from " + repr(str(path)) + ":\n  "
                             + "\n  ".join(problems))
    model.load_state_dict(state, strict=False)
    return done
