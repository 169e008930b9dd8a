"""DDP's bucket all-reduces inside a captured CUDA graph, on a communication stream forked
from the capturing stream and joined back (opt-in: ``TINYNET_NCCL_GRAPH_OVERLAP=1``).

By default (``_nccl.NCCLGroup._launch_captured``) a collective captured in a graph is
recorded on the capturing stream itself: the graph's nodes then run one after the other,
so a bucket's all-reduce waits for the backward kernels recorded before it and delays the
ones after it. With the variable set, each of DistributedDataParallel's bucket all-reduces
is recorded on a side stream instead: an event recorded on the capturing stream, waited for
by the side stream, forks the capture (the side stream joins it: CUDA's cross-stream
capture); the all-reduce goes on the side stream; an event recorded after it is waited for
by the capturing stream when DDP waits for the bucket (at the end of backward), joining the
side stream back. The graph then holds the all-reduces as a branch parallel to the rest of
backward, ordered among themselves (one side stream: every rank runs them in one order).

Only the DDP reducer's all-reduces fork: every one of them is waited for before the step
ends, so the capture always ends joined (a forked branch left unjoined fails the capture
with cudaErrorStreamCaptureUnjoined). Other collectives keep the capturing stream.
Untested on GPUs as of this writing: tests/test_ddp_gpu.py's
``test_graphed_ddp_overlap_stream_equals_eager`` is the check to run.
"""
import os

from . import _group

ENV = "TINYNET_NCCL_GRAPH_OVERLAP"
_FORKED = ("DistributedDataParallel gradient all-reduce",)


def wanted(what):
    """True when the collective ``what`` is to be forked onto the side stream."""
    return os.environ.get(ENV, "0") == "1" and what in _FORKED


class ForkedCapturedWork(_group.Work):
    """A captured collective on the side stream; ``wait()`` joins it to the current
    (capturing) stream. Its completion cannot be asked during the capture (an event query
    there would invalidate it): ``is_completed()`` says False until waited for."""

    def __init__(self, group, what, finish, fork, done):
        super().__init__(group, what, finish)
        self.fork, self.done_event = fork, done  # kept alive until the capture has used them

    def _test(self):
        return False

    def _wait(self):
        self._group.cp.cuda.get_current_stream().wait_event(self.done_event)


def side_stream(group):
    """The group's capture-time communication stream (made on first use, on its device)."""
    stream = getattr(group, "_capture_side_stream", None)
    if stream is None:
        with group.cp.cuda.Device(group.device):
            stream = group.cp.cuda.Stream(non_blocking=True)
        group._capture_side_stream = stream
    return stream


def launch_forked(group, what, arrays, call, finish):
    """Record ``call(*arrays, side_stream_ptr)`` on the side stream, forked from the current
    (capturing) stream; returns the work whose ``wait()`` joins it back.

    Raises:
        NcclError: as ``call`` (the caller turns it into DistributedError).
    """
    cp = group.cp
    origin = cp.cuda.get_current_stream()
    side = side_stream(group)
    fork = cp.cuda.Event(disable_timing=True)
    fork.record(origin)
    side.wait_event(fork)
    call(*arrays, side.ptr)
    done = cp.cuda.Event(disable_timing=True)
    done.record(side)
    return ForkedCapturedWork(group, what, finish, fork, done)
