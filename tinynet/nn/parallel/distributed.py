"""``DistributedDataParallel`` (``torch.nn.parallel.DistributedDataParallel``)."""
import contextlib
import numbers

from ... import backend, devices
from ...autograd import is_grad_enabled, no_grad
from ...autograd.order import search_order
from ...distributed import api as _api
from ...errors import ArgumentError, ArgumentTypeError, DistributedError
from ...tensor import Tensor
from ..modules.module import Module
from ._comm_hook import check_hook
from ._reducer import Reducer

_MiB = 1024 * 1024
_DEFAULT_BUCKET_CAP_MB = 25
_DEFAULT_FIRST_BUCKET_BYTES = _MiB  # PyTorch's dist._DEFAULT_FIRST_BUCKET_BYTES


def _tensors_in(obj, out):
    """The tensors in a forward's output (nested tuples, lists and dicts)."""
    if isinstance(obj, Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for o in obj:
            _tensors_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _tensors_in(o, out)
    return out


def _moved(obj, device):
    if isinstance(obj, Tensor):
        return obj.to(device)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_moved(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: _moved(v, device) for k, v in obj.items()}
    return obj


class DistributedDataParallel(Module):
    """Data-parallel training: one replica of ``module`` per process, gradients averaged.

    At construction the parameters (and buffers) of rank 0 are broadcast to every rank, so
    all replicas start equal. In each backward the gradients are all-reduced in buckets and
    divided by the world size (PyTorch's DDP: each rank's gradient times ``1/world_size``,
    summed), so after ``loss.backward()`` every rank holds the same averaged ``.grad`` and
    the same optimizer step keeps the replicas equal. A bucket's all-reduce starts as soon
    as its last gradient is final during backward (a post-accumulate-grad hook per
    parameter), so communication overlaps the rest of backward; on GPUs it runs on NCCL's
    communication stream, and the optimizer's kernels wait for it on the GPU, not the host.

    Buckets: parameters in reverse registration order, cut when a bucket reaches its cap.
    With ``bucket_cap_mb=None`` (default) the cap is 25 MiB and the first bucket's 1 MiB
    (PyTorch's defaults, so the last layers' small gradients go out early); an explicit
    ``bucket_cap_mb`` caps every bucket. (PyTorch starts from one bucket and rebuilds them
    in the order gradients arrived after the first iteration; tinynet buckets in reverse
    registration order from the start.)

    Buffers (BatchNorm's running statistics): with ``broadcast_buffers=True`` rank 0's are
    broadcast to every rank before each forward that follows a synced one (PyTorch's
    default), so the replicas' buffers stay rank 0's. Evaluate on one rank through
    ``ddp.module`` (calling the wrapper broadcasts, which needs every rank).

    Args:
        module (Module): the model; all its parameters on one device.
        device_ids (list of one int, optional): the GPU of a CUDA module (its inputs are
            moved there); None for CPU modules. Default None.
        output_device (int, optional): must be None or ``device_ids[0]``.
        dim (int): the batch dimension; must be 0.
        broadcast_buffers (bool): broadcast rank 0's buffers before forward. Default True.
        init_sync (bool): broadcast rank 0's parameters and buffers at construction. Default True.
        process_group: None (the default group).
        bucket_cap_mb (float, optional): bucket size in MiB; default None (25 MiB, first 1 MiB).
        find_unused_parameters (bool): allow parameters without a gradient: those the
            outputs do not depend on count as ready when backward starts, the rest at its
            end; a parameter no rank used keeps its ``.grad``. Without it such parameters
            raise DistributedError at the end of backward. Default False.
        check_reduction: deprecated in PyTorch; ignored.
        gradient_as_bucket_view (bool): must be False (not supported).
        static_graph (bool): must be False (not supported).

    Attributes:
        module (Module): the wrapped model (``state_dict`` keys get the prefix ``module.``,
            as PyTorch's).

    Raises:
        ProcessGroupError: no process group (call ``init_process_group`` first).
        ArgumentTypeError: ``module`` is not a Module.
        ArgumentError: bad ``device_ids``/``output_device``/``dim``/``bucket_cap_mb``,
            parameters on several devices, an unsupported option.
        DistributedError: no parameter requires grad, or the ranks' models differ in their
            parameters' number, shapes or dtypes.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        op = "DistributedDataParallel"
        if not isinstance(module, Module):
            raise ArgumentTypeError(f"{op}: module must be a tinynet.nn.Module, got {type(module).__name__}")
        group = _api.group_or_raise(op, process_group)
        if dim != 0:
            raise ArgumentError(f"{op}: dim must be 0 (the batch dimension), got {dim}")
        if gradient_as_bucket_view or static_graph:
            raise ArgumentError(f"{op}: gradient_as_bucket_view and static_graph are not supported by tinynet")
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise DistributedError(f"{op}: DistributedDataParallel is not needed when a module doesn't have any "
                                   "parameter that requires a gradient.")
        self.device = self._check_devices(op, module, device_ids, output_device)
        self.module = module
        self.device_ids = [self.device.index] if device_ids is not None else None
        self.broadcast_buffers = bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.process_group = group
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        if bucket_cap_mb is None:
            limits = [_DEFAULT_FIRST_BUCKET_BYTES, _DEFAULT_BUCKET_CAP_MB * _MiB]
        elif isinstance(bucket_cap_mb, bool) or not isinstance(bucket_cap_mb, numbers.Real) or bucket_cap_mb <= 0:
            raise ArgumentError(f"{op}: bucket_cap_mb must be a positive number of MiB or None, got {bucket_cap_mb!r}")
        else:
            limits = [int(bucket_cap_mb * _MiB)]
        self.bucket_bytes_cap = limits[-1]
        self._verify_same_model(op, [p for _, p in named])
        if init_sync:
            self._broadcast_coalesced([p for p in module.parameters()] +
                                      (list(module.buffers()) if self.broadcast_buffers else []))
        self.reducer = Reducer([p for _, p in named], [n for n, _ in named], group, limits,
                               self.find_unused_parameters)

    @staticmethod
    def _check_devices(op, module, device_ids, output_device):
        found = {str(p.device) for p in module.parameters()}
        if len(found) != 1:
            raise ArgumentError(f"{op}: all the module's parameters must be on one device, found {sorted(found)}")
        device = devices.resolve(found.pop(), op)
        if device_ids is not None:
            if not isinstance(device_ids, (list, tuple)) or len(device_ids) != 1:
                raise ArgumentError(f"{op}: device_ids can only be None or contain a single element, got "
                                    f"{device_ids!r}")
            wanted = device_ids[0]
            if device.type == "cuda":
                wanted = devices.resolve(devices.device("cuda", wanted) if isinstance(wanted, int) else wanted, op)
            if wanted != device:
                raise ArgumentError(f"{op}: device_ids {list(device_ids)} must name the GPU the module is on; the "
                                    f"module is on {device} (use device_ids=None for CPU modules)")
        if output_device is not None and (device_ids is None or output_device not in (device_ids[0], device)):
            raise ArgumentError(f"{op}: output_device must be None or device_ids[0], got {output_device!r}")
        return device

    # ---- synchronisation -----------------------------------------------------------------
    def _verify_same_model(self, op, params):
        """All ranks must hold the same parameter shapes and dtypes (PyTorch's
        ``_verify_param_shape_across_processes``): compare a fingerprint of them."""
        import zlib
        import numpy
        text = ";".join(f"{tuple(p.shape)}{p.dtype}" for p in params)
        mine = numpy.array([len(params), sum(p.numel() for p in params), zlib.crc32(text.encode())], dtype=numpy.int64)
        every = numpy.empty(mine.size * self.process_group.size, dtype=numpy.int64)
        self.process_group.all_gather(every, mine, what=f"{op} model check").wait()
        every = every.reshape(-1, mine.size)
        if not (every == mine).all():
            rows = "; ".join(f"rank {r}: {int(c)} parameters, {int(n)} elements" for r, (c, n, _) in enumerate(every))
            raise DistributedError(f"{op}: DDP expects the same model on every rank, but the parameters differ in "
                                   f"number, shape or dtype ({rows})")

    @no_grad()
    def _broadcast_coalesced(self, tensors):
        """Broadcast rank 0's values of ``tensors`` in place, one flat buffer per dtype."""
        by_dtype = {}
        for t in tensors:
            if t is not None and t.numel():
                by_dtype.setdefault(str(t.dtype), []).append(t)
        for group in by_dtype.values():
            xp = backend.array_module(group[0].array)
            flat = xp.concatenate([t.array.reshape(-1) for t in group])
            self.process_group.broadcast(flat, 0, what="DistributedDataParallel broadcast").wait()
            off = 0
            for t in group:
                n = t.numel()
                t.array[...] = flat[off:off + n].reshape(t.shape)
                off += n

    def _sync_buffers(self):
        self._broadcast_coalesced(list(self.module.buffers()))

    # ---- forward and gradient accumulation -------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        """Run ``module`` (after broadcasting rank 0's buffers, see the class) and arm the
        gradient reduction of the next backward when gradients are on and sync is on.

        Returns:
            what ``module`` returns.

        Raises:
            DistributedError: the previous backward started a reduction that never finished
                (it raised midway), or a collective failed.
        """
        grad = is_grad_enabled()
        if self.require_forward_param_sync and self.broadcast_buffers and any(True for _ in self.module.buffers()):
            self._sync_buffers()
        if self.device_ids is not None:
            inputs, kwargs = _moved(inputs, self.device), _moved(kwargs, self.device)
        output = self.module(*inputs, **kwargs)
        if grad and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            used = None
            if self.find_unused_parameters:
                starts = [t._grad_fn or t for t in _tensors_in(output, []) if t.requires_grad]
                used = {id(v) for v in search_order(starts) if isinstance(v, Tensor)}
            self.reducer.prepare_for_backward(used)
        else:
            self.require_forward_param_sync = False
        return output

    def register_comm_hook(self, state, hook):
        """Replace the gradient all-reduce with ``hook(state, bucket)``
        (``torch.nn.parallel.DistributedDataParallel.register_comm_hook``).

        During each synced backward, once a bucket's gradients are final, DDP copies them --
        this rank's own, not yet averaged -- into the bucket's flat buffer and calls
        ``hook(state, bucket)`` with a :class:`tinynet.distributed.GradBucket`; the hook
        starts the communication and returns a :class:`tinynet.futures.Future` whose value
        is a tensor of the buffer's shape (the averaged gradients). At the end of backward
        DDP waits for the Futures, in bucket order, and copies their values into ``.grad``.
        The hooks of :mod:`tinynet.distributed.algorithms.ddp_comm_hooks.default_hooks`
        (``allreduce_hook``, ``fp16_compress_hook``, ``bf16_compress_hook``) are PyTorch's.
        Gradient accumulation under :meth:`no_sync` is unchanged: the first synced backward
        hands the accumulated sums to the hook.

        Args:
            state: anything; passed to every call of the hook (the default hooks take the
                process group, or None for the default group).
            hook (callable): ``hook(state, bucket) -> Future``.

        Raises:
            ArgumentTypeError: ``hook`` is not callable.
            DistributedError: a hook is registered already (once per DDP, as PyTorch). At the
                end of backward: the hook returned something other than a Future, or its
                value is not a tensor of the buffer's shape (the message names the rank, the
                bucket and the shapes).
        """
        check_hook("DistributedDataParallel.register_comm_hook", hook, self.reducer.hook)
        self.reducer.hook, self.reducer.hook_state = hook, state

    @contextlib.contextmanager
    def no_sync(self):
        """Inside the block, forward passes leave their backward unreduced: gradients
        accumulate locally in ``.grad``; the first backward after a forward outside the block
        all-reduces the accumulated sums (gradient accumulation)."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old
