"""One row of :func:`tinynet.utils.summary`: a module call with its shapes, parameters and
mult-adds, following the conventions of torchinfo (``torchinfo/layer_info.py``) so that the
figures equal what torchinfo reports for the same PyTorch model."""
import copy

import numpy

from .. import nn
from ..tensor import Tensor

#: Modules that do their work with their own and their children's parameters without calling
#: the children (PyTorch's MultiheadAttention uses ``out_proj.weight`` directly): listed as one
#: leaf layer, their children are not hooked. torchinfo names this tuple ``LAYER_MODULES``.
LAYER_MODULES = (nn.MultiheadAttention,)


def prod(values):
    """The product of a (nested) list of ints; 1 for an empty list."""
    out = 1
    for v in values:
        out *= prod(v) if isinstance(v, (list, tuple)) else int(v)
    return out


def shape_and_itemsize(value):
    """``(shape as a list, bytes per element)`` of a layer's input or output, torchinfo's way:
    a tensor (or array) gives its own; a list or tuple its first item's (so an LSTM's
    ``(output, (h, c))`` gives ``output``'s); a dict its last value's; anything else ``([], 0)``."""
    if isinstance(value, Tensor):
        return list(value.shape), value.element_size()
    if isinstance(value, numpy.ndarray) or hasattr(value, "__cuda_array_interface__"):
        return list(value.shape), value.dtype.itemsize
    if isinstance(value, dict):
        return shape_and_itemsize(list(value.values())[-1]) if value else ([], 0)
    if isinstance(value, (list, tuple)) and value:
        return shape_and_itemsize(value[0])
    return [], 0


class LayerInfo:
    """What the summary knows about one call of one module (a module called twice has two).

    Attributes (torchinfo's names):
        module, class_name, var_name (the attribute name in the parent), depth (0: the model),
        depth_index (1-based position among the rows of that depth, over the whole table),
        parent_info (the parent's LayerInfo), children (every row below this one in the tree),
        executed (the module's forward ran), is_leaf_layer (no child modules, or one of
        :data:`LAYER_MODULES`), is_recursive (the module already had a row: its parameters
        count once), input_size / output_size (lists of ints; ``[]`` before a forward),
        kernel_size, num_params / trainable_params (elements, children included),
        param_bytes, output_bytes (bytes of the output tensor), macs (mult-adds of this call).
    """

    def __init__(self, var_name, module, depth, parent_info=None):
        self.module, self.layer_id = module, id(module)
        self.class_name = type(module).__name__
        self.var_name, self.depth, self.parent_info = var_name, depth, parent_info
        self.depth_index, self.children = None, []
        self.executed = self.is_recursive = False
        self.is_leaf_layer = isinstance(module, LAYER_MODULES) or not any(True for _ in module.children())
        self.input_size, self.output_size = [], []
        k = getattr(module, "kernel_size", None)
        self.kernel_size = list(k) if isinstance(k, (list, tuple)) else k
        self.num_params = self.trainable_params = self.param_bytes = self.output_bytes = self.macs = 0
        self.inner_layers = {}

    def __repr__(self):
        return f"{self.class_name}: {self.depth}"

    def calculate_num_params(self):
        """Count the module's parameters (its children's included) and list them by name for
        ``verbose=2`` (``inner_layers``: name -> (shape, elements))."""
        self.num_params = self.trainable_params = self.param_bytes = 0
        self.inner_layers = {}
        for name, p in self.module.named_parameters():
            n = p.numel()
            self.num_params += n
            self.param_bytes += n * p.element_size()
            if p.requires_grad:
                self.trainable_params += n
            if self.parent_info is not None or "." not in name:
                self.inner_layers[name] = (list(p.shape), n)

    def record_call(self, inputs, output):
        """Fill in the shapes, the output bytes and the mult-adds after the forward ran."""
        self.input_size, _ = shape_and_itemsize(inputs)
        self.output_size, itemsize = shape_and_itemsize(output)
        self.output_bytes = itemsize * prod(self.output_size)
        self.executed = True
        self.calculate_macs()

    def calculate_macs(self):
        """Mult-adds of this call, torchinfo's rules (the batch included):

        * a parameter named ``weight`` or ``bias`` of a layer whose class name contains
          "Conv": elements x output positions, ``params * N * prod(output spatial dims)``
          (the output channels are in the weight already);
        * ``weight``/``bias`` of any other layer (Linear, Embedding, norms): ``params *
          output_size[0]`` -- only the first output dim, so a Linear on ``(N, L, E)`` counts
          ``N`` and not ``N * L`` rows, as torchinfo does;
        * other names containing "weight" or "bias" (RNN's ``weight_ih_l0``, attention's
          ``in_proj_weight``): ``params * output_size[0] * output_size[1]`` (sequence x batch).
        """
        out = self.output_size
        self.macs = 0
        if not out:
            return
        for name, p in self.module.named_parameters():
            n = p.numel()
            if name in ("weight", "bias"):
                self.macs += n * (prod(out[:1] + out[2:]) if "Conv" in self.class_name else out[0])
            elif "weight" in name or "bias" in name:
                self.macs += n * prod(out[:2])

    # ---- figures of the rows, torchinfo's conventions ----------------------------------------
    def leftover_params(self):
        """Parameters of this module that no row below it counts (a container's own)."""
        return self.num_params - sum(c.num_params if c.is_leaf_layer else c.leftover_params()
                                     for c in self.children if not c.is_recursive)

    def leftover_trainable_params(self):
        return self.trainable_params - sum(c.trainable_params if c.is_leaf_layer else c.leftover_trainable_params()
                                           for c in self.children if not c.is_recursive)

    @property
    def trainable(self):
        """"True", "False", "Partial" (some parameters frozen) or "--" (no parameters)."""
        if self.num_params == 0:
            return "--"
        if self.trainable_params == 0:
            return "False"
        return "True" if self.trainable_params == self.num_params else "Partial"

    def num_params_str(self, reached_max_depth):
        """"--", "(recursive)", the count (in parentheses when frozen), or a container's leftover."""
        if self.num_params == 0:
            return "--"
        if self.is_recursive:
            return "(recursive)"
        if reached_max_depth or self.is_leaf_layer:
            text = f"{self.num_params:,}"
            return text if self.trainable_params else f"({text})"
        left = self.leftover_params()
        return f"{left:,}" if left > 0 else "--"

    def params_percent_str(self, total_params, reached_max_depth):
        if total_params == 0:
            return "--"
        if self.is_recursive:
            return "(recursive)"
        n = self.num_params if reached_max_depth or self.is_leaf_layer else self.leftover_params()
        return f"{n / total_params:.2%}" if n else "--"

    def macs_str(self, reached_max_depth):
        """A leaf's mult-adds; a row cut at ``depth`` shows its leaf children's sum."""
        if self.macs <= 0:
            return "--"
        if self.is_leaf_layer:
            return f"{self.macs:,}"
        if reached_max_depth:
            return f"{sum(c.macs for c in self.children if c.is_leaf_layer):,}"
        return "--"

    def layer_name(self, show_var_name=False, show_depth=True):
        """``Conv2d: 1-1``, or ``Conv2d (conv1): 1-1`` with ``show_var_name``."""
        name = self.class_name
        if show_var_name and self.var_name:
            name += f" ({self.var_name})"
        if show_depth and self.depth > 0:
            name += f": {self.depth}" + (f"-{self.depth_index}" if self.depth_index is not None else "")
        return name


def add_missing_containers(layers):
    """Insert the containers whose forward never ran (a ModuleList, a parent that called its
    children's parameters directly) above their first executed descendant, as torchinfo's
    ``add_missing_container_layers`` does, so the table keeps the tree. Returns a new list."""
    seen = {info.layer_id for info in layers}
    out, open_at = [], {}  # depth -> the module whose row is open at that depth
    for info in layers:
        chain, parent = [], info.parent_info
        while parent is not None and parent.depth > 0:
            chain.append(parent)
            parent = parent.parent_info
        for anc in reversed(chain):
            if open_at.get(anc.depth) is not anc.module:
                if anc.layer_id in seen:  # shown before: a second row, counted once
                    anc = copy.copy(anc)
                    anc.is_recursive = True
                anc.calculate_num_params()
                out.append(anc)
                seen.add(anc.layer_id)
                open_at[anc.depth] = anc.module
        out.append(info)
        open_at[info.depth] = info.module
        for d in [d for d in open_at if d > info.depth]:
            del open_at[d]
    return out


def link_children(layers):
    """Set every row's ``depth_index`` (counted per depth over the whole table, as torchinfo)
    and ``children`` (the rows below it that are deeper)."""
    counters = {}
    for i, info in enumerate(layers):
        counters[info.depth] = counters.get(info.depth, 0) + 1
        info.depth_index = counters[info.depth]
        j = i + 1
        while j < len(layers) and layers[j].depth > info.depth:
            j += 1
        info.children = layers[i + 1:j]
