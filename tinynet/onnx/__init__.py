"""``tinynet.onnx``: :func:`export` a model to an ONNX file (PyTorch's ``torch.onnx.export``),
through the ``onnx`` package (``pip install 'tinynet[onnx]'``; ``onnxruntime`` runs the file).

The graph comes from one traced run of the model on ``args`` (see :mod:`._graph`): each
op applied becomes its ONNX node(s) (:mod:`._symbolics`), the parameters and buffers
become initializers named by their state-dict keys. Like any trace it follows the run's
path: Python branches, loop counts and tensors built inside ``forward`` (an ``arange``) are
fixed at their traced values; shapes given in ``dynamic_axes`` stay symbolic in the graph's
inputs and outputs, and reshapes keep sizes from their input where they can, so a batch
axis marked dynamic runs at other sizes.
"""
import enum
import inspect
import os

from .. import errors
from ..errors import (ArgumentError, ArgumentTypeError, OnnxExportError, PathNotWritableError,
                      UnsupportedOperatorError)
from ..nn.modules.module import Module
from ..optional import import_optional
from ..tensor import Tensor
from ._graph import Graph, trace
from ._symbolics import SYMBOLICS, emit

__all__ = ["export", "is_in_onnx_export", "errors", "UnsupportedOperatorError", "OnnxExporterError",
           "supported_ops", "TrainingMode", "OperatorExportTypes"]

OnnxExporterError = OnnxExportError  # PyTorch's name


class TrainingMode(enum.IntEnum):
    """``torch.onnx.TrainingMode``, the ``training`` argument of :func:`export`: ``EVAL`` (0, the
    default) and ``PRESERVE`` (1) export in eval mode here; ``TRAINING`` (2) is refused."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    """``torch.onnx.OperatorExportTypes``, the ``operator_export_type`` argument of :func:`export`:
    accepted, with no effect (tinynet's exporter writes standard ONNX operators only, and names an
    op it cannot translate with ``UnsupportedOperatorError`` instead of falling back to ATen)."""
    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3
_exporting = [False]


def is_in_onnx_export():
    """True while :func:`export` runs the model (so a ``forward`` can take an export-only path)."""
    return _exporting[0]


def supported_ops():
    """The names of the tinynet ops :func:`export` translates."""
    return sorted(SYMBOLICS)


def _flatten(result):
    if isinstance(result, Tensor):
        return [result]
    if isinstance(result, (tuple, list)):
        return [t for r in result for t in _flatten(r)]
    if isinstance(result, dict):
        return [t for r in result.values() for t in _flatten(r)]
    if result is None:
        return []
    raise OnnxExportError(f"onnx.export: the model returned a {type(result).__name__}; outputs must be tensors "
                          "(or tuples, lists and dicts of them)")


def _dynamic(fn, dynamic_axes, names):
    """``dynamic_axes`` as {value name: {axis: dim name}}."""
    out = {}
    for key, axes in (dynamic_axes or {}).items():
        if key not in names:
            raise ArgumentError(f"{fn}: dynamic_axes names '{key}', which is neither an input nor an output name "
                                f"({', '.join(names)})")
        if isinstance(axes, dict):
            pairs = list(axes.items())
        elif isinstance(axes, (list, tuple)):
            pairs = [(a, f"{key}_dynamic_axes_{i + 1}") for i, a in enumerate(axes)]
        else:
            raise ArgumentTypeError(f"{fn}: dynamic_axes['{key}'] must be a list of axes or a dict axis -> name, "
                                    f"got {type(axes).__name__}")
        for a, n in pairs:
            if isinstance(a, bool) or not isinstance(a, int) or not isinstance(n, str):
                raise ArgumentTypeError(f"{fn}: dynamic_axes['{key}'] must map int axes to str names, got "
                                        f"{a!r}: {n!r}")
        out[key] = dict(pairs)
    return out


def _names(fn, what, names):
    """``input_names``/``output_names`` as a list of str (None: empty)."""
    if names is None:
        return []
    if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) for n in names):
        raise ArgumentTypeError(f"{fn}: {what} must be a list of str, got {names!r:.80}")
    return list(names)


def _check_call(model, args, kwargs):
    """Raise ArgumentTypeError unless ``model`` is callable and takes ``args`` and ``kwargs``."""
    if not callable(model):
        raise ArgumentTypeError(f"onnx.export: model must be a Module or a callable, got {type(model).__name__}")
    if isinstance(model, Module) and type(model).forward is Module.forward:
        raise ArgumentTypeError(f"onnx.export: the model {type(model).__name__} has no forward to trace")
    try:
        sig = inspect.signature(getattr(model, "forward", model))
    except (TypeError, ValueError):
        return
    try:
        sig.bind(*args, **kwargs)
    except TypeError as exc:
        raise ArgumentTypeError(f"onnx.export: args do not fit the model's forward{sig}: {exc}") from None


def _value_info(g, name, t, dynamic):
    dims = [dynamic.get(name, {}).get(i, d) for i, d in enumerate(t.shape)]
    return g.helper.make_tensor_value_info(name, g.tensor_type(t.array.dtype), dims)


# torch.onnx.export's options that change nothing here (tinynet has one exporter, this tracer)
_NO_EFFECT = {"dynamo", "external_data", "optimize", "verify", "report", "profile", "dump_exported_program",
              "artifacts_dir", "fallback", "operator_export_type", "custom_opsets", "export_modules_as_functions",
              "autograd_inlining", "custom_translation_table", "do_constant_folding", "verbose"}


def export(model, args=(), f=None, *, kwargs=None, export_params=True, input_names=None, output_names=None,
           opset_version=None, dynamic_axes=None, keep_initializers_as_inputs=False, training=None,
           dynamic_shapes=None, **options):
    """Trace ``model(*args)`` and write it as an ONNX model to ``f`` (a path or a binary file);
    returns the ``onnx.ModelProto``.

    Args:
        model: a :class:`tinynet.nn.Module` (or a callable of tensors).
        args: a tensor or a tuple of them (a trailing dict: keyword arguments).
        f: where to write (None: only return the model).
        input_names, output_names: the graph's value names (default: ``forward``'s argument
            names; ``output``, ``output_1``, ...).
        opset_version (int): 17 (the default) up to what the installed ``onnx`` knows; from 20
            GELU is one ``Gelu`` node.
        dynamic_axes (dict): ``{name: [axis, ...]}`` or ``{name: {axis: "dim name"}}``: those
            sizes are symbolic in the graph.
        export_params (bool): False leaves the weights out (the initializers become inputs).
        training: only eval-mode export (the default): the model is put in eval mode for the
            run and back after.
        dynamo, optimize, verbose, do_constant_folding, ...: PyTorch's other options, accepted
            with no effect (one exporter here).

    Raises:
        MissingExtraError: ``onnx`` is not installed. UnsupportedOperatorError: an op without
        a translation (named by its class). OnnxExportError: a bad opset or output.
        ArgumentError: ``dynamic_axes`` naming an unknown value, or names of the wrong count.
        ArgumentTypeError: a model that is not callable or does not take ``args``, names that
        are not a list of str, ``kwargs``/``dynamic_axes`` not dicts, an ``f`` that is
        neither a path nor a file. PathNotWritableError: ``f`` cannot be written.
    """
    for key in options:
        if key not in _NO_EFFECT:
            raise ArgumentTypeError(f"onnx.export: unexpected keyword argument '{key}'")
    if dynamic_shapes is not None:
        raise ArgumentError("onnx.export: dynamic_shapes (torch.export's form) is not supported; name the "
                            "dynamic sizes with dynamic_axes")
    onnx = import_optional("onnx", "onnx", "tinynet.onnx.export")
    newest = onnx.defs.onnx_opset_version()
    opset = 17 if opset_version is None else opset_version
    if isinstance(opset, bool) or not isinstance(opset, int) or not 17 <= opset <= newest:
        raise OnnxExportError(f"onnx.export: opset_version must be an int from 17 to {newest} (the installed onnx's "
                              f"newest), got {opset_version!r}")
    mode = getattr(training, "name", None) or str(training).split(".")[-1]  # TrainingMode (tinynet's or PyTorch's)
    if not (training is None or (type(training) in (bool, int) and not training) or mode in ("EVAL", "PRESERVE")):
        raise OnnxExportError("onnx.export: only eval-mode export is supported (training=TrainingMode.EVAL)")
    if kwargs is not None and not isinstance(kwargs, dict):
        raise ArgumentTypeError(f"onnx.export: kwargs must be a dict or None, got {type(kwargs).__name__}")
    if dynamic_axes is not None and not isinstance(dynamic_axes, dict):
        raise ArgumentTypeError(f"onnx.export: dynamic_axes must be a dict or None, got {type(dynamic_axes).__name__}")
    if f is not None and not isinstance(f, (str, bytes, os.PathLike)) and not hasattr(f, "write"):
        raise ArgumentTypeError(f"onnx.export: f must be a path or a binary file, got {type(f).__name__}")
    args = args if isinstance(args, tuple) else (args,)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):
        args, kwargs = args[:-1], {**args[-1], **kwargs}
    _check_call(model, args, kwargs)
    inputs = [a for a in args if isinstance(a, Tensor)]
    default_in = _input_names(model, len(inputs))
    in_names = _names("onnx.export", "input_names", input_names)
    if len(in_names) > len(inputs):
        raise ArgumentError(f"onnx.export: {len(in_names)} input_names for {len(inputs)} tensor inputs")
    in_names += default_in[len(in_names):]
    modes = [(m, m.training) for m in model.modules()] if hasattr(model, "modules") else []
    for m, _ in modes:
        m.training = False
    _exporting[0] = True
    try:
        records, result = trace(model, args, kwargs)
    finally:
        _exporting[0] = False
        for m, was in modes:
            m.training = was
    outputs = _flatten(result)
    if not outputs:
        raise OnnxExportError("onnx.export: the model returned no tensor")
    out_names = _names("onnx.export", "output_names", output_names)
    if len(out_names) > len(outputs):
        raise ArgumentError(f"onnx.export: {len(out_names)} output_names for {len(outputs)} outputs")
    out_names += ["output" if i == 0 else f"output_{i}" for i in range(len(out_names), len(outputs))]
    dynamic = _dynamic("onnx.export", dynamic_axes, in_names + out_names)
    g = Graph(onnx, opset)
    for t, name in zip(inputs, in_names):
        g.bind(t, name)
    params = []
    if hasattr(model, "state_dict"):
        for name, t in model.state_dict(keep_vars=True).items():
            if isinstance(t, Tensor) and id(t) not in g.names:
                g.bind(t, name)
                params.append((name, t))
    for op, a, out in records:
        outs = list(out) if isinstance(out, tuple) else [out]
        names = emit(g, op, a, outs)
        for t, n in zip(outs, names):
            g.bind(t, n)
    return _finish(onnx, g, model, f, inputs, in_names, outputs, out_names, params, dynamic, export_params,
                   keep_initializers_as_inputs, opset)


def _input_names(model, n):
    fn = getattr(model, "forward", model)
    try:
        names = [p.name for p in inspect.signature(fn).parameters.values()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        names = []
    names = names[:n]
    return names + [f"input_{i}" for i in range(len(names), n)]


def _finish(onnx, g, model, f, inputs, in_names, outputs, out_names, params, dynamic, export_params, as_inputs,
            opset):
    used = {i for n in g.nodes for i in n.input}
    for t, name in zip(outputs, out_names):
        g.node("Identity", [g.value(t)], outputs=[name])
        used.add(g.value(t))
    weights = [onnx.numpy_helper.from_array(_host_array(t), name) for name, t in params if name in used]
    graph_inputs = [_value_info(g, n, t, dynamic) for t, n in zip(inputs, in_names)]
    if not export_params or as_inputs:
        graph_inputs += [_value_info(g, w.name, t, {}) for (n, t), w in zip([p for p in params if p[0] in used],
                                                                            weights)]
    graph = onnx.helper.make_graph(g.nodes, getattr(model, "_get_name", lambda: "tinynet")(), graph_inputs,
                                   [_value_info(g, n, t, dynamic) for t, n in zip(outputs, out_names)],
                                   initializer=(weights if export_params else []) + g.initializers)
    proto = onnx.helper.make_model(graph, producer_name="tinynet", opset_imports=[onnx.helper.make_opsetid("", opset)])
    proto.ir_version = min(proto.ir_version, 10)  # what current onnxruntime releases read
    if f is not None:
        data = proto.SerializeToString()
        if isinstance(f, (str, bytes, os.PathLike)):
            try:
                with open(f, "wb") as fh:
                    fh.write(data)
            except OSError as exc:
                raise PathNotWritableError(f"onnx.export: cannot write {f!r}: {exc}") from None
            except ValueError as exc:  # a NUL byte in the path
                raise ArgumentError(f"onnx.export: f is not a usable path ({exc}), got {f!r}") from None
        else:
            f.write(data)
    return proto


def _host_array(t):
    from ._graph import host
    return host(t).copy()
