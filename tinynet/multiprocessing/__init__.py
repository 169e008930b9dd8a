"""``tinynet.multiprocessing``: PyTorch's ``torch.multiprocessing``: the standard library's
:mod:`multiprocessing` with tensors that can live in shared memory.

Every name of :mod:`multiprocessing` is here (``Process``, ``Pool``, ``Queue``,
``get_context``, ``set_start_method``, ...), the same objects. What tinynet adds, as PyTorch
does: ``tensor.share_memory_()`` and ``module.share_memory()`` move CPU values into shared
memory, and such a tensor passed to another process (a ``Process`` argument under the
``spawn`` or ``forkserver`` method, a queue, a pool task) arrives as a view of the *same*
memory (:mod:`tinynet.multiprocessing.reductions`), so workers that update a shared model in
place (hogwild training) change the parent's copy. With ``fork`` the children inherit the
mapping. CUDA tensors need no ``share_memory_`` (a no-op for them, as in PyTorch): passed to
another process they arrive as views of the same GPU memory through CUDA IPC
(:mod:`tinynet.multiprocessing.cuda_ipc`; the sender keeps them alive meanwhile).

The one sharing strategy is ``"file_descriptor"`` (the segment's descriptor is passed;
nothing is created in the filesystem). ``spawn(fn, args, nprocs)`` starts ``nprocs`` processes
running ``fn(i, *args)`` and waits for them, as ``torch.multiprocessing.spawn``.
"""
import multiprocessing as _mp
from multiprocessing import (Array, Barrier, BoundedSemaphore, Condition, Event, JoinableQueue, Lock, Manager,
                             Pipe, Pool, Process, Queue, RLock, Semaphore, SimpleQueue, Value, active_children,
                             cpu_count, current_process, get_all_start_methods, get_context, get_start_method,
                             parent_process, set_executable, set_forkserver_preload, set_start_method)

from ..errors import ArgumentError, ArgumentTypeError
from .reductions import init_reductions
from .spawn import ProcessContext, ProcessExitedException, ProcessRaisedException, spawn, start_processes

init_reductions()

__all__ = ["Array", "Barrier", "BoundedSemaphore", "Condition", "Event", "JoinableQueue", "Lock", "Manager", "Pipe",
           "Pool", "Process", "Queue", "RLock", "Semaphore", "SimpleQueue", "Value", "active_children", "cpu_count",
           "current_process", "get_all_start_methods", "get_context", "get_start_method", "parent_process",
           "set_executable", "set_forkserver_preload", "set_start_method", "get_sharing_strategy",
           "set_sharing_strategy", "get_all_sharing_strategies", "spawn", "start_processes", "ProcessContext",
           "ProcessRaisedException", "ProcessExitedException", "TimeoutError", "ProcessError",
           "AuthenticationError", "BufferTooShort"]

ProcessError, TimeoutError, AuthenticationError, BufferTooShort = (_mp.ProcessError, _mp.TimeoutError,
                                                                   _mp.AuthenticationError, _mp.BufferTooShort)


def get_all_sharing_strategies():
    """``{"file_descriptor"}``: the one way tinynet shares tensors."""
    return {"file_descriptor"}


def get_sharing_strategy():
    """``"file_descriptor"``."""
    return "file_descriptor"


def set_sharing_strategy(new_strategy):
    """Accepts ``"file_descriptor"`` (the only strategy).

    Raises:
        ArgumentError: any other strategy (PyTorch's ``"file_system"`` is not implemented).
        ArgumentTypeError: not a str.
    """
    if not isinstance(new_strategy, str):
        raise ArgumentTypeError(f"set_sharing_strategy: new_strategy must be a str, got {type(new_strategy).__name__}")
    if new_strategy not in get_all_sharing_strategies():
        raise ArgumentError(f"set_sharing_strategy: the strategies are {sorted(get_all_sharing_strategies())}, "
                            f"got {new_strategy!r}")
