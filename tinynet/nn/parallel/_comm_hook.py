"""DistributedDataParallel's communication hooks: calling the hook on a bucket and checking
what its Future gives back (PyTorch's ``register_comm_hook`` semantics)."""
from ... import backend
from ...distributed import GradBucket
from ...errors import ArgumentTypeError, DistributedError
from ...futures import Future
from ...tensor import Tensor

_OP = "DistributedDataParallel communication hook"


def check_hook(op, hook, registered):
    """``register_comm_hook``'s checks.

    Raises:
        ArgumentTypeError: ``hook`` is not callable.
        DistributedError: a hook is registered already (PyTorch allows one).
    """
    if not callable(hook):
        raise ArgumentTypeError(f"{op}: hook must be a callable hook(state, bucket) -> Future, got "
                                f"{type(hook).__name__}")
    if registered is not None:
        raise DistributedError(f"{op}: register_comm_hook or register_builtin_comm_hook can only be called once "
                               f"(a hook, {_name(registered)}, is registered already)")


def _name(hook):
    return getattr(hook, "__qualname__", None) or type(hook).__name__


def call_hook(reducer, bucket):
    """Run the hook on ``bucket`` (its flat buffer holds this rank's gradients); returns the
    hook's Future.

    Raises:
        DistributedError: the hook did not return a tinynet.futures.Future.
    """
    last = bucket.position == len(reducer.buckets) - 1
    params = [reducer.params[i] for i in bucket.indices]
    grad_bucket = GradBucket(bucket.position, Tensor._wrap(bucket.flat), params, last)
    future = reducer.hook(reducer.hook_state, grad_bucket)
    if not isinstance(future, Future):
        raise DistributedError(f"{_OP} {_name(reducer.hook)}: on rank {reducer.group.rank}, bucket "
                               f"{bucket.position}: the hook must return a tinynet.futures.Future of the bucket's "
                               f"reduced tensor, got {type(future).__name__}")
    return future


def hook_result(reducer, bucket):
    """The flat array of averaged gradients the hook's Future holds, in the bucket's dtype.

    Raises:
        DistributedError: the value is not a tensor of the bucket buffer's shape, or the
            hook's work failed (another rank's failure, the timeout).
    """
    value = bucket.future.wait()
    where = f"{_OP} {_name(reducer.hook)}: on rank {reducer.group.rank}, bucket {bucket.position}"
    if isinstance(value, (list, tuple)) and len(value) == 1:  # PyTorch accepts a one-tensor list too
        value = value[0]
    if not isinstance(value, Tensor):
        raise DistributedError(f"{where}: the hook's Future must hold a tensor of the bucket's shape "
                               f"{tuple(bucket.flat.shape)}, got {type(value).__name__}")
    if tuple(value.shape) != tuple(bucket.flat.shape):
        raise DistributedError(f"{where}: the hook's Future holds a tensor of shape {tuple(value.shape)}, but the "
                               f"bucket's buffer has shape {tuple(bucket.flat.shape)} ({len(bucket.indices)} "
                               "gradients, flattened); return a tensor of the buffer's shape")
    array = value.array
    if array is bucket.flat:
        return array
    if backend.is_gpu_array(array) != backend.is_gpu_array(bucket.flat):
        raise DistributedError(f"{where}: the hook's Future holds a tensor on {value.device}, but the bucket's "
                               f"gradients are on {'cuda' if backend.is_gpu_array(bucket.flat) else 'cpu'}")
    bucket.flat[...] = array.astype(bucket.flat.dtype, copy=False)
    return bucket.flat
