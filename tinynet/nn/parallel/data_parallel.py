"""``tinynet.nn.DataParallel`` and ``nn.parallel.data_parallel``: PyTorch's single-process wrapper,
without the replicas.

PyTorch's ``DataParallel`` copies the module to every listed GPU on each call, splits the batch
along ``dim``, runs the copies in threads and gathers the outputs on ``output_device``. tinynet runs
the module once, on the whole batch, on ``device_ids[0]``: the outputs and gradients are the same
(up to the order of floating-point sums) except where a layer computes statistics over the batch
(BatchNorm in training mode sees the whole batch instead of each GPU's part), and it uses one GPU.
With more than one listed GPU it says so once (a ``UserWarning``): for several GPUs use
:class:`~tinynet.nn.parallel.DistributedDataParallel`, as PyTorch also recommends. Without a GPU,
as in PyTorch, ``device_ids`` is empty and the wrapper calls the module as it is.

What stays as in PyTorch: the wrapped module is ``.module`` (its state dict's keys start with
``module.``), the module's parameters must already be on ``device_ids[0]``, tensor inputs (also
inside lists, tuples and dicts) are moved there, and the output goes to ``output_device``
(default ``device_ids[0]``).
"""
import inspect
import warnings

from ... import cuda, devices
from ...errors import ArgumentTypeError, DeviceError, DeviceMismatchError
from ...tensor import Tensor
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


def _gpu(op, d):
    if isinstance(d, bool) or not isinstance(d, (int, str, devices.device)):
        raise ArgumentTypeError(f"{op}: device ids must be ints or cuda devices, got {type(d).__name__}")
    dev = devices.resolve(d if not isinstance(d, int) else f"cuda:{d}", op)
    if dev.type != "cuda":
        raise ArgumentTypeError(f"{op}: device ids must name GPUs, got {dev}")
    return dev


def _to(value, dev):
    if isinstance(value, Tensor):
        return value.to(dev)
    if isinstance(value, (list, tuple)):
        moved = [_to(v, dev) for v in value]
        return type(value)(*moved) if hasattr(value, "_fields") else type(value)(moved)
    if isinstance(value, dict):
        return type(value)((k, _to(v, dev)) for k, v in value.items())
    return value


class DataParallel(Module):
    """Run ``module`` on ``device_ids[0]`` (module docstring: no replicas).

    Args:
        module (Module): the module to wrap; its parameters and buffers on ``device_ids[0]``.
        device_ids (list of int or device, optional): the GPUs; default every GPU (none without one).
        output_device (int or device, optional): where the output goes; default ``device_ids[0]``.
        dim (int): the batch dimension PyTorch splits along (here only recorded). Default 0.

    Raises:
        ArgumentTypeError: ``module`` not a Module, device ids that are not GPUs.
        DeviceMismatchError: at ``forward``, a parameter or buffer not on ``device_ids[0]``.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise ArgumentTypeError(f"DataParallel: module must be a tinynet.nn.Module, got {type(module).__name__}")
        self.module, self.dim = module, dim
        if not cuda.is_available():
            self.device_ids = []
            return
        ids = list(range(cuda.device_count())) if device_ids is None else list(device_ids)
        self.device_ids = [_gpu("DataParallel", d).index or 0 for d in ids]
        self.output_device = _gpu("DataParallel", self.device_ids[0] if output_device is None else output_device)
        self.src_device_obj = devices.device(f"cuda:{self.device_ids[0]}")
        self._warned = False

    def _run(self, inputs, kwargs):
        try:
            return self.module(*inputs, **kwargs)
        except TypeError as exc:
            try:  # the wrapped forward's own signature refused the arguments: say so, typed
                inspect.signature(self.module.forward).bind(*inputs, **kwargs)
            except TypeError:
                raise ArgumentTypeError(f"DataParallel: the wrapped {type(self.module).__name__}'s forward does not "
                                        f"take these arguments ({exc})") from None
            raise

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self._run(inputs, kwargs)
        src = self.src_device_obj
        for name, t in (*self.module.named_parameters(), *self.module.named_buffers()):
            if t.device != src:
                raise DeviceMismatchError(f"DataParallel: module must have its parameters and buffers on device "
                                          f"{src} (device_ids[0]) but found {name} on device {t.device}")
        if len(self.device_ids) > 1 and not self._warned:
            self._warned = True
            warnings.warn(f"tinynet's DataParallel runs the module on {src} alone (no replicas on "
                          f"{len(self.device_ids) - 1} more GPUs); use DistributedDataParallel for several GPUs",
                          UserWarning, stacklevel=2)
        out = self._run(_to(inputs, src), _to(kwargs, src))
        return _to(out, self.output_device) if self.output_device != src else out


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """``DataParallel(module, device_ids, output_device, dim)(*inputs, **module_kwargs)`` as a function
    (``inputs``: a tensor or a tuple of them).

    Raises:
        DeviceError: no GPU (PyTorch's function form needs an accelerator too). Others as :class:`DataParallel`.
    """
    if not cuda.is_available():
        raise DeviceError("data_parallel: device type could not be determined (no GPU; call the module itself)")
    inputs = inputs if isinstance(inputs, tuple) else (inputs,)
    return DataParallel(module, device_ids, output_device, dim)(*inputs, **(module_kwargs or {}))
