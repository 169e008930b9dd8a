"""``tinynet.utils.summary``: a model's layers, output shapes, parameters, mult-adds and memory,
in the style of ``torchinfo.summary`` (and with its figures).

    >>> import tinynet.nn as nn
    >>> from tinynet.utils import summary
    >>> model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    >>> stats = summary(model, input_size=(64, 784), verbose=0)
    >>> stats.total_params, stats.total_mult_adds
    (101770, 6513280)

The forward pass runs once with forward hooks on every module (in eval mode and without
autograd, unless ``mode="train"``) and records one :class:`~tinynet.utils._layer_info.LayerInfo`
per module call. The figures follow torchinfo 1.8 (``torchinfo/model_statistics.py``):

* **Total params**: the elements of the model's parameters, each parameter once (a tied
  weight is counted once; torchinfo counts it once per module holding it). Trainable: those
  with ``requires_grad``.
* **Total mult-adds**: the sum over the leaf layers' calls of torchinfo's per-layer rule
  (:meth:`LayerInfo.calculate_macs`); a module called twice counts twice. Functional ops
  (``F.relu``, ``F.max_pool2d``, ``F.scaled_dot_product_attention``, ...) count nothing.
  One deliberate difference: ``nn.MultiheadAttention`` is a leaf here (its mult-adds,
  ``in_proj`` and ``out_proj``, are counted), while torchinfo leaves them out of the total.
* **Input size**: bytes of the input tensors. torchinfo adds the few dozen bytes of the
  Python storage object (``sys.getsizeof``); both print ``0.00`` MB for one MNIST batch.
* **Forward/backward pass size**: twice the output bytes of every leaf call that has
  parameters (its output and its gradient).
* **Params size**: bytes of the parameters, each once (torchinfo: of the leaf layers only).
* **Estimated Total Size**: the three sizes added up. MB means 10**6 bytes, as in torchinfo.
"""
import io
import numbers

import numpy
from rich import box
from rich.console import Console, Group
from rich.measure import Measurement
from rich.table import Table

from .. import devices, dtypes as _dtypes, random as _random
from ..autograd import grad_mode
from ..errors import (ArgumentError, ArgumentTypeError, IndexOutOfRangeError, ShapeError, TinynetError)
from ..nn import Module
from ..ops.creation import tensor, zeros
from ..ops.sampling import rand
from ..tensor import Tensor
from ._layer_info import LAYER_MODULES, LayerInfo, add_missing_containers, link_children

__all__ = ["summary", "ModelStatistics", "LayerInfo", "SummaryError"]

COLUMNS = {"input_size": "Input Shape", "output_size": "Output Shape", "num_params": "Param #",
           "params_percent": "Param %", "kernel_size": "Kernel Shape", "mult_adds": "Mult-Adds",
           "trainable": "Trainable"}
ROW_SETTINGS = ("depth", "var_names", "ascii_only", "hide_recursive_layers")


class SummaryError(TinynetError, RuntimeError):
    """The model's forward failed in :func:`summary` with an error that is neither a
    ``ValueError``, ``TypeError`` nor ``IndexError`` (those keep their tinynet class)."""


def summary(model, input_size=None, input_data=None, dtypes=None, device=None, depth=3, col_names=None,
            mode="eval", row_settings=None, verbose=1, **kwargs):
    """Summarize ``model``: its layer tree, output shapes, parameter counts, mult-adds and
    memory estimate, as ``torchinfo.summary`` does; print it as a ``rich`` table and return it.

    Args:
        model (Module): the model.
        input_size (tuple or list): the shape of the one input, batch included
            (``(64, 1, 28, 28)``), or a list of shapes for several positional inputs. Floats
            are drawn uniformly from [0, 1) by a private generator (the global random state
            is left as it was); integer and bool inputs are zeros. Default None.
        input_data: the inputs themselves: a tensor or NumPy array (one input), a list or
            tuple (positional inputs) or a dict (keyword inputs). Give one of ``input_size``
            and ``input_data``; with neither, no forward runs and only the parameters are listed.
        dtypes (list): the dtype of each ``input_size`` input. Default: the default float dtype.
        device: where the model and the inputs go (``model.to(device)``, as torchinfo). Default
            None: the model stays; generated inputs go to its first parameter's device (the
            default device for a model without parameters); NumPy inputs too.
        depth (int): deepest level of the tree shown (the model is depth 0). Rows cut at this
            depth show their subtree's parameters and mult-adds. Default 3.
        col_names (iterable of str): columns among ``input_size``, ``output_size``,
            ``num_params``, ``params_percent``, ``kernel_size``, ``mult_adds``, ``trainable``.
            Default ``("output_size", "num_params")``, ``("num_params",)`` without an input.
        mode (str): ``"eval"`` (default) or ``"train"``: the mode the forward runs in; every
            module's own mode is restored afterwards.
        row_settings (iterable of str): among ``depth`` (default), ``var_names``,
            ``ascii_only``, ``hide_recursive_layers``.
        verbose (int): 0 prints nothing, 1 (default) the table, 2 also each layer's parameters.
        **kwargs: passed to ``model.forward`` as keyword arguments.

    Returns:
        ModelStatistics: the figures (``total_params``, ``trainable_params``,
        ``total_mult_adds``, ``total_input``, ``total_output_bytes``, ``total_param_bytes``,
        ``summary_list``); ``str()`` gives the table as text.

    Raises:
        ArgumentError / ArgumentTypeError: both or bad ``input_size``/``input_data``, a bad
            ``depth``, column, row setting, mode or ``verbose``, ``dtypes`` of another length.
        ShapeError (or the forward's own tinynet error class, or :class:`SummaryError`): the
            input does not fit the model; the message names the layer whose forward failed
            and the last layer that ran, and the original error is chained.
    """
    _check_options(model, input_size, input_data, depth, col_names, mode, row_settings, verbose)
    given = input_size is not None or input_data is not None
    columns = tuple(col_names) if col_names is not None else (
        ("output_size", "num_params") if given else ("num_params",))
    if not given and {"input_size", "output_size", "mult_adds"} & set(columns):
        raise ArgumentError("summary: the input_size, output_size and mult_adds columns need input_size or input_data")
    if device is not None:
        device = devices.device(device)
        model.to(device)
    args, kw, shapes = _make_inputs(model, input_size, input_data, dtypes, device)
    layers = _forward_pass(model, args, {**kw, **kwargs}, mode, given)
    stats = ModelStatistics(layers, shapes, _nbytes((args, kw)) if given else 0, model, depth, columns,
                            set(row_settings) if row_settings is not None else {"depth"}, verbose)
    if verbose:
        Console().print(stats, crop=False)  # wide tables stay whole on a narrow terminal
    return stats


def _check_options(model, input_size, input_data, depth, col_names, mode, row_settings, verbose):
    if not isinstance(model, Module):
        raise ArgumentTypeError(f"summary: model must be a tinynet.nn.Module, got {type(model).__name__}")
    if input_size is not None and input_data is not None:
        raise ArgumentError("summary: give one of input_size and input_data, not both")
    if isinstance(depth, bool) or not isinstance(depth, numbers.Integral) or depth < 0:
        raise ArgumentError(f"summary: depth must be an int >= 0, got {depth!r}")
    bad = [c for c in (col_names or ()) if c not in COLUMNS]
    if bad or isinstance(col_names, str):
        raise ArgumentError(f"summary: unknown column(s) {bad or col_names!r}; choose among {list(COLUMNS)}")
    bad = [r for r in (row_settings or ()) if r not in ROW_SETTINGS]
    if bad or isinstance(row_settings, str):
        raise ArgumentError(f"summary: unknown row setting(s) {bad or row_settings!r}; choose among {ROW_SETTINGS}")
    if mode not in ("eval", "train"):
        raise ArgumentError(f"summary: mode must be 'eval' or 'train', got {mode!r}")
    if verbose not in (0, 1, 2):
        raise ArgumentError(f"summary: verbose must be 0, 1 or 2, got {verbose!r}")


def _normalise_sizes(input_size):
    """``(1, 28, 28)`` -> ``[(1, 28, 28)]``; ``[(2, 3), (2, 5)]`` stays a list of shapes."""
    if not isinstance(input_size, (list, tuple)) or not input_size:
        raise ArgumentTypeError(f"summary: input_size must be a non-empty tuple or list of sizes, got {input_size!r}")
    sizes = [tuple(input_size)] if all(isinstance(s, numbers.Integral) for s in input_size) else list(input_size)
    for s in sizes:
        if not isinstance(s, (list, tuple)) or not all(isinstance(d, numbers.Integral) and not isinstance(d, bool)
                                                        for d in s):
            raise ArgumentTypeError(f"summary: input_size must hold ints or tuples of ints, got {input_size!r}")
        if any(d <= 0 for d in s):
            raise ArgumentError(f"summary: input sizes must be positive, got {tuple(s)}")
    return [tuple(int(d) for d in s) for s in sizes]


def _make_inputs(model, input_size, input_data, dtypes, device):
    """``(positional args, keyword args, input shapes for the report)``."""
    first = next(model.parameters(), None)
    where = device or (first.device if first is not None else devices.default_device())
    if input_size is not None:
        sizes = _normalise_sizes(input_size)
        dts = list(dtypes) if dtypes is not None else [_dtypes.get_default_dtype()] * len(sizes)
        if len(dts) != len(sizes):
            raise ArgumentError(f"summary: dtypes has {len(dts)} entries for {len(sizes)} input sizes")
        gen = _random.Generator().manual_seed(0)  # inputs that leave the global random state alone
        args = []
        for size, dt in zip(sizes, dts):
            dt = _dtypes.as_dtype(dt, "summary")
            args.append(rand(*size, generator=gen, dtype=dt, device=where) if _dtypes.is_floating(dt)
                        else zeros(*size, dtype=dt, device=where))
        return args, {}, sizes
    if input_data is None:
        return [], {}, []

    def place(x):
        if isinstance(x, numpy.ndarray):
            return tensor(x, device=where)
        return x.to(device) if device is not None and isinstance(x, Tensor) else x

    data = _map_tensors(input_data, place)
    shapes = _map_tensors(data, lambda t: tuple(t.shape))
    if isinstance(data, dict):
        return [], data, shapes
    return (list(data) if isinstance(data, (list, tuple)) else [data]), {}, shapes


def _map_tensors(data, fn):
    """Apply ``fn`` to every tensor and NumPy array in nested lists, tuples and dicts."""
    if isinstance(data, (Tensor, numpy.ndarray)):
        return fn(data)
    if isinstance(data, dict):
        return {k: _map_tensors(v, fn) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_map_tensors(v, fn) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_map_tensors(v, fn) for v in data)
    return data


def _nbytes(data):
    total = []
    _map_tensors(data, lambda t: total.append(t.nbytes))
    return sum(total)


def _forward_pass(model, args, kwargs, mode, run):
    """Hook every module, run the forward once (or, without input, walk the tree), and
    return the rows in call order with the never-called containers put back in the tree."""
    rows, running, handles = [], [], {}  # handles: id(module) -> its two hook handles
    called = set()

    def pre_hook(var_name, depth, parent):
        def hook(module, inputs):
            info = LayerInfo(var_name, module, depth, parent)
            info.calculate_num_params()
            info.is_recursive = id(module) in called
            called.add(id(module))
            rows.append(info)
            running.append(info)
        return hook

    def post_hook(module, inputs, output):
        info = running.pop()
        info.record_call(inputs, output)

    stack = [(type(model).__name__, model, 0, None)]
    while stack:  # depth first, children in order, as torchinfo's apply_hooks
        var_name, module, depth, parent = stack.pop()
        info = LayerInfo(var_name, module, depth, parent)  # the tree's row: parent of the children's rows
        hook = pre_hook(var_name, depth, parent)
        if not run:
            hook(module, None)
            running.pop()
        else:  # a module found twice in the tree keeps the hooks of its last place, as torchinfo's
            for h in handles.pop(id(module), ()):
                h.remove()
            handles[id(module)] = (module.register_forward_pre_hook(hook), module.register_forward_hook(post_hook))
        if not isinstance(module, LAYER_MODULES):
            stack += [(name, child, depth + 1, info) for name, child in reversed(module._modules.items())
                      if child is not None]
    if not run:
        link_children(rows)
        return rows
    modes = {m: m.training for m in model.modules()}
    # dropout draws in train mode: keep the host generator and the GPU Philox seed/offset (the
    # module's own dict, as cuda.set_rng_state would also drop the CuPy generator it seeded)
    rng, gpu_rng = _random.get_rng_state(), dict(_random._device)
    try:
        model.train(mode == "train")
        with grad_mode.no_grad():
            model(*args, **kwargs)
    except Exception as exc:
        raise _forward_error(exc, running, rows) from exc
    finally:
        for pair in handles.values():
            for h in pair:
                h.remove()
        for m, training in modes.items():
            m.training = training
        _random.set_rng_state(rng)
        _random._device.update(gpu_rng)
    rows = add_missing_containers(rows)
    link_children(rows)
    return rows


def _forward_error(exc, running, rows):
    """The forward's error, retyped as tinynet's, naming the failing layer and the last one that ran."""
    where = running[-1] if running else None
    name = "the model" if where is None else (
        f"{where.var_name} ({where.class_name}, depth {where.depth})" if where.depth else f"the model's own forward "
        f"({where.class_name})")
    done = [r for r in rows if r.executed]
    after = f", after {done[-1].var_name} ({done[-1].class_name}) returned {done[-1].output_size}" if done else ""
    msg = f"summary: the forward pass failed in {name}{after}: {exc}"
    if isinstance(exc, TinynetError):
        try:
            return type(exc)(msg)
        except Exception:  # noqa: BLE001  (a subclass with another constructor)
            pass
    for builtin, cls in ((ValueError, ShapeError), (TypeError, ArgumentTypeError), (IndexError, IndexOutOfRangeError)):
        if isinstance(exc, builtin):
            return cls(msg)
    return SummaryError(msg)


class ModelStatistics:
    """The result of :func:`summary` (torchinfo's class and attribute names).

    Attributes:
        summary_list (list of LayerInfo): the rows, in call order.
        input_size: the input shapes (list of tuples, or the dict/list structure of ``input_data``).
        total_params, trainable_params (int): parameter elements; ``non_trainable_params`` the rest.
        total_mult_adds (int): mult-adds of one forward pass, batch included.
        total_input (int): bytes of the inputs. total_output_bytes (int): forward/backward pass
            bytes. total_param_bytes (int): parameter bytes. ``total_bytes``: their sum.
    """

    def __init__(self, summary_list, input_size, total_input, model, depth, col_names, row_settings, verbose):
        self.summary_list, self.input_size, self.total_input = summary_list, input_size, total_input
        self.depth, self.col_names, self.row_settings, self.verbose = depth, col_names, row_settings, verbose
        params = list(model.parameters())  # each parameter once
        self.total_params = sum(p.numel() for p in params)
        self.trainable_params = sum(p.numel() for p in params if p.requires_grad)
        self.total_param_bytes = sum(p.numel() * p.element_size() for p in params)
        self.total_mult_adds = self.total_output_bytes = 0
        for info in summary_list:
            if info.is_leaf_layer:
                self.total_mult_adds += info.macs
                if info.num_params > 0:
                    self.total_output_bytes += 2 * info.output_bytes  # the output and its gradient

    @property
    def non_trainable_params(self):
        return self.total_params - self.trainable_params

    @property
    def total_bytes(self):
        """Estimated total size in bytes: inputs + forward/backward pass + parameters."""
        return self.total_input + self.total_output_bytes + self.total_param_bytes

    @staticmethod
    def to_megabytes(num):
        """Bytes to MB (10**6 bytes, torchinfo's unit)."""
        return num / 1e6

    @staticmethod
    def to_readable(num):
        """``(unit, value)``: millions (M), billions (G) or trillions (T), torchinfo's mult-adds units."""
        for unit, scale in (("T", 1e12), ("G", 1e9)):
            if num >= scale:
                return unit, num / scale
        return "M", num / 1e6

    def _rows(self):
        show_depth, show_var = "depth" in self.row_settings, "var_names" in self.row_settings
        ascii_only = "ascii_only" in self.row_settings
        for info in self.summary_list:
            if info.depth > self.depth or ("hide_recursive_layers" in self.row_settings and info.is_recursive):
                continue
            cut = info.depth == self.depth
            branch = "" if info.depth == 0 else ("+ " if ascii_only else "├─") if info.depth == 1 else (
                ("|    " if ascii_only else "│    ") * (info.depth - 1) + ("+ " if ascii_only else "└─"))
            values = {"input_size": _dashes(info.input_size), "output_size": _dashes(info.output_size),
                      "num_params": info.num_params_str(cut),
                      "params_percent": info.params_percent_str(self.total_params, cut),
                      "kernel_size": _dashes(info.kernel_size), "mult_adds": info.macs_str(cut),
                      "trainable": info.trainable}
            yield branch + info.layer_name(show_var, show_depth), [values[c] for c in self.col_names]
            if self.verbose == 2:
                pad = ("|    " if ascii_only else "│    ") * info.depth + ("+ " if ascii_only else "└─")
                for name, (shape, n) in info.inner_layers.items():
                    yield pad + name, [str(shape) if c == "kernel_size" else f"{n:,}" if c == "num_params" else ""
                                       for c in self.col_names]

    def __rich_console__(self, console, options):
        """Rich's rendering hook: the table at its natural width even on a narrow terminal
        (rich would otherwise cut the cells with an ellipsis), then the totals."""
        table, totals = self._renderables()
        width = max(options.max_width, Measurement.get(console, options.update_width(10_000), table).maximum)
        yield from console.render(Group(table, totals), options.update_width(width))

    def _renderables(self):
        ascii_only = "ascii_only" in self.row_settings
        extra = (" (var_name)" if "var_names" in self.row_settings else "") + (
            ":depth-idx" if "depth" in self.row_settings else "")
        table = Table(box=box.ASCII if ascii_only else box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
        table.add_column(f"Layer (type{extra})", no_wrap=True)
        for c in self.col_names:
            table.add_column(COLUMNS[c], no_wrap=True)
        for name, values in self._rows():
            table.add_row(name, *values)
        lines = [f"Total params: {self.total_params:,}", f"Trainable params: {self.trainable_params:,}",
                 f"Non-trainable params: {self.non_trainable_params:,}"]
        if self.input_size:
            unit, value = self.to_readable(self.total_mult_adds)
            mb = self.to_megabytes
            lines += [f"Total mult-adds ({unit}): {value:.2f}", "",
                      f"Input size (MB): {mb(self.total_input):.2f}",
                      f"Forward/backward pass size (MB): {mb(self.total_output_bytes):.2f}",
                      f"Params size (MB): {mb(self.total_param_bytes):.2f}",
                      f"Estimated Total Size (MB): {mb(self.total_bytes):.2f}"]
        return table, "\n".join(lines)

    def __str__(self):
        out = io.StringIO()
        Console(file=out, width=250, color_system=None, force_terminal=False, highlight=False).print(self)
        return "\n".join(line.rstrip() for line in out.getvalue().splitlines())

    __repr__ = __str__


def _dashes(value):
    return str(value) if value else "--"
