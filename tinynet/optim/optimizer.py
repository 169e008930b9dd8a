"""The Optimizer base class: parameter groups, ``zero_grad``, ``state_dict``."""
import copy

from .. import backend
from ..tensor import Tensor


class Optimizer:
    """Base class; subclasses implement ``step()`` updating ``p.array`` in place.

    Args:
        params: iterable of Parameters, or of dicts ``{"params": [...], <option>: value}``
            (parameter groups with their own options).
        defaults (dict): option values for groups that do not set them.

    Raises:
        ValueError: an empty parameter list, or a parameter in two groups.
        TypeError: something other than tensors in ``params``.
    """

    def __init__(self, params, defaults):
        self.defaults = dict(defaults)
        self.param_groups = []
        self.state = {}
        if isinstance(params, Tensor):
            raise TypeError(f"{type(self).__name__}: params must be an iterable of tensors or dicts, "
                            "got a single Tensor")
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group):
        """Add a dict ``{"params": [...], ...}``; missing options come from ``defaults``."""
        group = dict(group)
        ps = group["params"]
        group["params"] = [ps] if isinstance(ps, Tensor) else list(ps)
        for p in group["params"]:
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__}: parameters must be Tensors, got {type(p).__name__}")
            if not p.requires_grad:
                raise ValueError(f"{type(self).__name__}: can't optimize a tensor that does not require grad")
        existing = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in existing for p in group["params"]):
            raise ValueError(f"{type(self).__name__}: some parameters appear in more than one group")
        for k, v in self.defaults.items():
            group.setdefault(k, v)
        self.param_groups.append(group)

    def zero_grad(self, set_to_none=True):
        """Clear gradients: set to ``None`` (default) or to zeros."""
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad.array[...] = 0

    def step(self):
        raise NotImplementedError

    # ---- serialisation -------------------------------------------------------------------
    def state_dict(self):
        """``{"state": {index: {name: array or number}}, "param_groups": [...]}``; parameters
        are referred to by their index in group order, as in PyTorch."""
        index = {}
        groups = []
        for g in self.param_groups:
            entry = {k: v for k, v in g.items() if k != "params"}
            entry["params"] = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                entry["params"].append(index[id(p)])
            groups.append(entry)
        state = {}
        for g in self.param_groups:
            for p in g["params"]:
                if id(p) in self.state:
                    state[index[id(p)]] = {k: (v.copy() if hasattr(v, "copy") else v)
                                           for k, v in self.state[id(p)].items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore options and per-parameter state saved by :meth:`state_dict`.

        Raises:
            ValueError: the number of groups or of parameters per group differs.
        """
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(f"{type(self).__name__}.load_state_dict: expected {len(self.param_groups)} "
                             f"parameter groups, got {len(groups)}")
        params = {}
        for mine, saved in zip(self.param_groups, groups):
            if len(mine["params"]) != len(saved["params"]):
                raise ValueError(f"{type(self).__name__}.load_state_dict: a group has "
                                 f"{len(saved['params'])} parameters, expected {len(mine['params'])}")
            for p, i in zip(mine["params"], saved["params"]):
                params[int(i)] = p
            for k, v in saved.items():
                if k != "params":
                    mine[k] = copy.deepcopy(v)
        self.state = {}
        for i, st in state_dict["state"].items():
            p = params[int(i)]
            self.state[id(p)] = {k: _restore(v, p) for k, v in st.items()}

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines.extend(f"    {k}: {v}" for k, v in sorted(g.items()) if k != "params")
        return "\n".join(lines) + "\n)"


def _restore(value, param):
    """A saved state entry as the optimizer uses it: arrays (and tensors) on the
    parameter's device and dtype, 0-d arrays and NumPy scalars as Python numbers."""
    if isinstance(value, Tensor):
        value = value.array
    if getattr(value, "ndim", 0) > 0:
        return backend.to_device(value, param.device).astype(param.dtype)
    return value.item() if hasattr(value, "item") else value
