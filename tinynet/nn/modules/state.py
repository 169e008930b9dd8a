"""What a Module's tensors hold: ``state_dict``/``load_state_dict`` with PyTorch's keys and
messages, and the device and dtype conversions (``to``, ``cuda``, ``half``, ``type``...).

Keys are dotted paths (``features.0.weight``); parameters come before the persistent
buffers of each module, then its children in registration order. Loading checks every key
first and copies only when nothing is wrong, so a failed load leaves the module as it was
(PyTorch copies what it can before raising).
"""
import collections
import collections.abc
import warnings

import numpy

from ...dtypes import is_floating
from ... import _shared_memory, backend, devices, dtypes, layouts
from ...autograd import no_grad
from ...autograd.node import bump_version
from ...errors import ArgumentTypeError, DTypeError, StateDictError
from ...ops.conversion import _parse_to
from ...ops.conversion import type as _cast
from ...tensor import Tensor
from .parameter import Parameter

EXTRA_STATE = "_extra_state"


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What ``load_state_dict`` returns: the missing and the unexpected keys."""

    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def has_extra_state(module, method):
    """True when ``module``'s class overrides Module's ``get_extra_state``/``set_extra_state``."""
    return not getattr(getattr(type(module), method, None), "module_default", False)


def collect_state(module, args, destination, prefix, keep_vars):
    """``Module.state_dict``: see there."""
    if args:
        warnings.warn("Positional args are being deprecated, use kwargs instead (state_dict(destination=..., "
                      "prefix=..., keep_vars=...))", FutureWarning, stacklevel=3)
        destination = args[0] if destination is None else destination
        prefix = args[1] if len(args) > 1 and prefix == "" else prefix
        keep_vars = args[2] if len(args) > 2 and keep_vars is False else keep_vars
    if destination is None:
        destination = collections.OrderedDict()
    _collect(module, destination, prefix, keep_vars)
    return destination


def _collect(module, destination, prefix, keep_vars):
    module._save_to_state_dict(destination, prefix, keep_vars)
    for name, child in module._modules.items():
        if child is not None:
            child.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)


def save_own(module, destination, prefix, keep_vars):
    """``Module._save_to_state_dict``: this module's own parameters and persistent buffers."""
    for name, p in module._parameters.items():
        if p is not None:
            destination[prefix + name] = p if keep_vars else p.detach()
    skip = module._non_persistent_buffers_set
    for name, b in module._buffers.items():
        if b is not None and name not in skip:
            destination[prefix + name] = b if keep_vars else b.detach()
    if has_extra_state(module, "get_extra_state"):
        destination[prefix + EXTRA_STATE] = module.get_extra_state()


def _as_array(value):
    """The array behind a checkpoint value (tinynet Tensor, NumPy/CuPy array, torch tensor), or None."""
    if isinstance(value, Tensor):
        return value.array
    if isinstance(value, numpy.generic):
        return numpy.asarray(value)
    if isinstance(value, (numpy.ndarray, backend._CUPY_NDARRAY)):
        return value
    if type(value).__module__.split(".")[0] == "torch" and hasattr(value, "detach"):
        t = value.detach().cpu()
        try:
            return t.numpy()
        except TypeError:  # bfloat16 and other dtypes NumPy lacks
            return t.float().numpy()
    return None


def _plan(module, sd, prefix, missing, unexpected, errors, plan):
    """Check this module's keys (PyTorch's ``_load_from_state_dict``) and note the copies to make."""
    lazy = getattr(module, "_lazy_load", None)
    if lazy is not None:  # a lazy module materialises its placeholders to the checkpoint's shapes first
        lazy(sd, prefix)
    local = {k: v for k, v in module._parameters.items() if v is not None}
    local.update((k, v) for k, v in module._buffers.items()
                 if v is not None and k not in module._non_persistent_buffers_set)
    for name, target in local.items():
        key = prefix + name
        if key not in sd:
            missing.append(key)
            continue
        value = sd[key]
        array = _as_array(value)
        if array is None:
            errors.append(f'While copying the parameter named "{key}", expected a Tensor or array from checkpoint '
                          f"but received {type(value)}")
            continue
        if target.ndim == 0 and array.shape == (1,):  # checkpoints of 0.3-era PyTorch
            array = array.reshape(())
        if tuple(array.shape) != tuple(target.shape):
            errors.append(f"size mismatch for {key}: copying a param with shape {tuple(array.shape)} from "
                          f"checkpoint, the shape in current model is {tuple(target.shape)}.")
            continue
        plan.append((module, name, target, value, array))
    extra_key = prefix + EXTRA_STATE
    if has_extra_state(module, "set_extra_state"):
        if extra_key in sd:
            plan.append((module, None, None, sd[extra_key], None))
        else:
            missing.append(extra_key)
    elif extra_key in sd:
        unexpected.append(extra_key)
    for key in sd:
        if key.startswith(prefix) and key != extra_key:
            head = key[len(prefix):].split(".", 1)
            if len(head) > 1:
                if head[0] not in module._modules:
                    unexpected.append(key)
            elif head[0] not in local:
                unexpected.append(key)
    for name, child in module._modules.items():
        if child is not None:
            child_prefix = prefix + name + "."
            child_sd = {k: v for k, v in sd.items() if k.startswith(child_prefix)}
            _plan(child, child_sd, child_prefix, missing, unexpected, errors, plan)


def load_state(module, sd, strict, assign):
    """``Module.load_state_dict``: see there."""
    if not isinstance(sd, collections.abc.Mapping):
        raise ArgumentTypeError(f"{type(module).__name__}.load_state_dict: expected state_dict to be dict-like, "
                                f"got {type(sd)}")
    missing, unexpected, errors, plan = [], [], [], []
    _plan(module, collections.OrderedDict(sd), "", missing, unexpected, errors, plan)
    if strict:
        if unexpected:
            errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected)))
        if missing:
            errors.insert(0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing)))
    if errors:
        raise StateDictError("Error(s) in loading state_dict for {}:\n\t{}".format(type(module).__name__,
                                                                                    "\n\t".join(errors)))
    for owner, name, target, value, array in plan:
        if name is None:
            owner.set_extra_state(value)
        elif assign:
            _assign(owner, name, target, value, array)
        else:
            src = backend.to_device(array, target.device)
            target.array[...] = src.astype(target.dtype, copy=False)
            bump_version(target)
    return _IncompatibleKeys(missing, unexpected)


def _assign(owner, name, target, value, array):
    """``assign=True``: the module keeps the checkpoint's tensor (its dtype and device)."""
    if not isinstance(value, Tensor) or tuple(value.shape) != tuple(array.shape):
        value = Tensor._wrap(array)
    if name in owner._parameters:
        if not isinstance(value, Parameter):
            value = Parameter(value, requires_grad=False)
        if target.requires_grad and is_floating(value.array.dtype):
            value.requires_grad_(True)
        else:
            value.requires_grad = False
        owner._parameters[name] = value
    else:
        owner._buffers[name] = value


class StateMixin:
    """Module's state-dict and conversion methods (mixed into :class:`Module`)."""

    def get_extra_state(self):
        """Override (with :meth:`set_extra_state`) to save more state under ``<prefix>_extra_state``."""
        raise NotImplementedError("get_extra_state: override it in a subclass")

    def set_extra_state(self, state):
        """Restore what :meth:`get_extra_state` saved."""
        raise NotImplementedError("set_extra_state: override it in a subclass")

    # marks the defaults, so that state_dict can tell an override from them (mypy cannot type function attributes)
    get_extra_state.module_default = set_extra_state.module_default = True  # type: ignore[attr-defined]

    # ---- devices and dtypes ----------------------------------------------------------------
    def _apply(self, fn):
        """Replace the array of every parameter, gradient and buffer by ``fn(array)`` (children first)."""
        for m in self.children():
            m._apply(fn)
        with no_grad():
            for p in self._parameters.values():
                if p is not None:
                    p.array = fn(p.array)
                    if p.grad is not None:
                        p.grad.array = fn(p.grad.array)
            for b in self._buffers.values():
                if b is not None:
                    b.array = fn(b.array)
        return self

    def share_memory(self):
        """Move every CPU parameter, gradient and buffer into shared memory
        (:meth:`tinynet.Tensor.share_memory_`), so that processes started by
        :mod:`tinynet.multiprocessing` that receive this module update the same values
        (hogwild training); returns self."""
        return self._apply(_shared_memory.share)

    def to(self, *args, **kwargs):
        """Move and/or cast the floating-point parameters, gradients and buffers in place; returns self.

        Call forms as :meth:`tinynet.Tensor.to`: ``to(device)``, ``to(dtype)``,
        ``to(device, dtype)``, ``to(tensor)``, or keywords ``device=``/``dtype=``;
        ``memory_format=tinynet.channels_last`` stores the 4-D parameters and buffers
        (convolution weights) NHWC, as PyTorch does (other ranks are left as they are).

        Raises:
            DeviceError: an unknown device, or cuda without a GPU.
            DTypeError: a dtype that is not floating point.
        """
        kwargs = dict(kwargs)
        fmt = layouts.check("Module.to", kwargs.pop("memory_format", None), layouts.preserve_format)
        device, dtype, _ = _parse_to(args, kwargs)
        dev = devices.resolve(device, "Module.to") if device is not None else None
        dt = dtypes.as_dtype(dtype, "Module.to")
        if dt is not None and not is_floating(dt):
            raise DTypeError(f"Module.to: only floating-point dtypes are accepted, got {dt}")

        def convert(a):
            if dev is not None:
                a = backend.to_device(a, dev)
            a = a.astype(dt) if dt is not None and is_floating(a.dtype) and a.dtype != dt else a
            if fmt.rank is not None and a.ndim == fmt.rank and not layouts.is_laid_out(a, fmt):
                a = layouts.store(backend.array_module(a), a, layouts.axes("Module.to", fmt, a.ndim))
            elif fmt is layouts.contiguous_format and not a.flags.c_contiguous:
                a = backend.array_module(a).ascontiguousarray(a)
            return a
        return self._apply(convert)

    def cpu(self):
        """Move to the CPU; returns self."""
        return self.to("cpu")

    def cuda(self, device=None):
        """Move to GPU ``device`` (default the current one); returns self."""
        return self.to("cuda" if device is None else devices.device("cuda", device) if isinstance(device, int)
                       else device)

    def type(self, dst_type):
        """Cast every parameter and buffer (floating point or not) to ``dst_type``: a dtype or a
        type name such as ``"torch.DoubleTensor"``; returns self."""
        return self._apply(lambda a: _cast(Tensor._wrap(a), dst_type).array)

    def float(self):
        """Cast floating-point parameters and buffers to float32; returns self."""
        return self.to(dtype=dtypes.float32)

    def double(self):
        """Cast floating-point parameters and buffers to float64; returns self."""
        return self.to(dtype=dtypes.float64)

    def half(self):
        """Cast floating-point parameters and buffers to float16; returns self."""
        return self.to(dtype=dtypes.float16)

    # ---- state ---------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """Ordered ``{dotted_name: Tensor}`` of parameters and persistent buffers.

        Args:
            destination (dict, optional): filled and returned instead of a new OrderedDict.
            prefix (str): put before every key. Default ``""``.
            keep_vars (bool): the tensors themselves instead of detached ones sharing their memory.
        """
        return collect_state(self, args, destination, prefix, keep_vars)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        save_own(self, destination, prefix, keep_vars)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values from ``state_dict`` (tinynet tensors, NumPy arrays or torch tensors)
        into the parameters and buffers, casting to their dtype and device.

        Args:
            state_dict (Mapping): as produced by :meth:`state_dict`.
            strict (bool): require exactly this module's keys. Default True.
            assign (bool): keep the state dict's tensors (their dtype and device) instead of
                copying into the existing ones; parameters keep ``requires_grad``.

        Returns:
            namedtuple ``(missing_keys, unexpected_keys)``.

        Raises:
            StateDictError: PyTorch's message: with ``strict``, every missing and unexpected
                key; always, every shape mismatch and non-tensor value. Nothing is copied then.
            ArgumentTypeError: ``state_dict`` is not a mapping.
        """
        return load_state(self, state_dict, strict, assign)
