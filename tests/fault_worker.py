"""examples/mnist_mlp.py with a fault: under ``python -m tinynet.distributed.run``, rank
``FAULT_RANK`` kills itself (SIGKILL, no cleanup) as training step ``FAULT_STEP`` of the
first attempt begins (``TORCHELASTIC_RESTART_COUNT=0``); later attempts run undisturbed. Without
``FAULT_STEP`` it is the example as it is. Used by tests/test_ddp_restart.py.

    python -m tinynet.distributed.run --nproc-per-node 2 --max-restarts 1 tests/fault_worker.py ARGS...
    torchrun --nproc-per-node 2 --max-restarts 1 tests/fault_worker.py ARGS...   # GPU (NCCL)
"""
import os
import signal
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

import tinynet.distributed as dist  # noqa: E402


def arm(step_at, rank_at):
    """Wrap the examples' training step so that the chosen rank dies as its ``step_at``-th
    step begins (before its gradients reach the others). The wrapper sits around the step
    function, not the optimizer, so it fires in a step replayed from a CUDA graph too."""
    import common
    make = common.make_train_step
    count = [0]

    def make_train_step(*args, **kwargs):
        step = make(*args, **kwargs)

        def counted(*xs):
            count[0] += 1
            if count[0] == step_at and dist.get_rank() == rank_at:
                os.kill(os.getpid(), signal.SIGKILL)
            return step(*xs)
        return counted
    common.make_train_step = make_train_step


if __name__ == "__main__":
    if "FAULT_STEP" in os.environ and os.environ.get("TORCHELASTIC_RESTART_COUNT") == "0":
        arm(int(os.environ["FAULT_STEP"]), int(os.environ.get("FAULT_RANK", "1")))
    import mnist_mlp
    sys.exit(mnist_mlp.main())
