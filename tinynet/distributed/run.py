"""``python -m tinynet.distributed.run``: start an MPI job and restart it when a rank fails
(torchrun's ``--max-restarts`` for the ``mpi`` backend, which torchrun cannot start).

    python -m tinynet.distributed.run --nproc-per-node 2 --max-restarts 3 train.py --checkpoint ck --resume ck

runs ``mpiexec -n 2 python train.py ...``. When the job fails -- a rank exits with an error
or is killed, and mpiexec ends the others -- the whole group is started again, up to
``--max-restarts`` times, as torchrun's elastic agent does: the script resumes from its last
checkpoint (the examples' ``--checkpoint PATH --resume PATH`` with one path do that).
Each attempt sees torchrun's variables ``TORCHELASTIC_RESTART_COUNT`` (0 on the first) and
``TORCHELASTIC_MAX_RESTARTS`` (not ``TORCHELASTIC_RUN_ID``: the ranks come from MPI, not from
an elastic agent). The exit status is the last attempt's. For NCCL on GPUs, torchrun's own
``--max-restarts`` does the same.

mpiexec is the one beside the Python executable (the ``distributed`` extra's mpich wheel),
else the one on ``PATH``; ``--mpiexec`` names another. MPICH's hydra gets ``-launcher fork``
(local processes, no ssh).
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import time

from ..errors import ArgumentError, MissingExtraError


def find_mpiexec(given=None):
    """The mpiexec command line (a list) to start local MPI jobs with.

    Raises:
        MissingExtraError: no mpiexec beside Python nor on PATH.
    """
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    exe = given or (here if os.access(here, os.X_OK) else shutil.which("mpiexec"))
    if exe is None:
        raise MissingExtraError("tinynet.distributed.run: mpiexec not found; pip install 'tinynet[distributed]' "
                                "(the mpich wheel brings it) or pass --mpiexec PATH")
    try:
        version = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    except OSError as exc:
        raise MissingExtraError(f"tinynet.distributed.run: cannot run mpiexec {exe!r}: {exc}") from exc
    return [exe, "-launcher", "fork"] if "HYDRA" in version else [exe]


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m tinynet.distributed.run",
                                description="Start an MPI job of N processes; restart it from scratch when a rank "
                                            "fails (torchrun's --max-restarts for the mpi backend).")
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc", type=int, default=1,
                   help="processes to start (default 1)")
    p.add_argument("--max-restarts", "--max_restarts", dest="max_restarts", type=int, default=0,
                   help="restarts of the whole group after a failure (default 0)")
    p.add_argument("--mpiexec", default=None, help="the mpiexec to use (default: beside python, else on PATH)")
    p.add_argument("-m", "--module", action="store_true", help="run the script argument as a module (python -m)")
    p.add_argument("--no-python", "--no_python", dest="no_python", action="store_true",
                   help="run the script argument as a program, not through python")
    p.add_argument("script", help="the training script (or module / program)")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="its arguments")
    args = p.parse_args(argv)
    if args.nproc < 1:
        raise ArgumentError(f"tinynet.distributed.run: --nproc-per-node must be at least 1, got {args.nproc}")
    if args.max_restarts < 0:
        raise ArgumentError(f"tinynet.distributed.run: --max-restarts must be >= 0, got {args.max_restarts}")
    return args


def command(args):
    """The mpiexec command line of one attempt."""
    if args.no_python:
        program = [args.script]
    else:
        program = [sys.executable, "-m", args.script] if args.module else [sys.executable, args.script]
    return [*find_mpiexec(args.mpiexec), "-n", str(args.nproc), *program, *args.script_args]


def run(args, say=print):
    """Run the job, restarting it up to ``args.max_restarts`` times; returns the exit status."""
    cmd = command(args)
    code = 1
    for attempt in range(args.max_restarts + 1):
        env = dict(os.environ, TORCHELASTIC_RESTART_COUNT=str(attempt),
                   TORCHELASTIC_MAX_RESTARTS=str(args.max_restarts))
        start = time.monotonic()
        proc = subprocess.Popen(cmd, env=env)
        try:
            code = proc.wait()
        except KeyboardInterrupt:  # stop the job, do not restart it
            proc.send_signal(signal.SIGINT)
            try:
                return proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                return 130
        if code == 0:
            return 0
        left = args.max_restarts - attempt
        say(f"tinynet.distributed.run: attempt {attempt} of the {args.nproc}-process job failed with exit status "
            f"{code} after {time.monotonic() - start:.1f} s; "
            + (f"restarting the group ({left} restart{'s' if left != 1 else ''} left)" if left else
               "no restarts left"), file=sys.stderr, flush=True)
    return code


def main(argv=None):
    return run(parse(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
