"""The multi-node path on one host, and a lost rank (issue 36, items 5 and 6).

Runs the main job (``examples/mnist_convnet.py --distributed --deterministic``) on two GPUs of
one machine in several ways and checks that each ends with the same per-epoch losses and the
same trained weights, bit for bit, as the plain single-node launch:

* ``single``: ``torchrun --standalone --nproc-per-node 2`` (NVLink / shared memory);
* ``nodes-c10d``: two ``torchrun`` agents, one GPU each (``CUDA_VISIBLE_DEVICES``), meeting
  through ``--nnodes 2 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:PORT``, with NCCL held to
  its socket transport (``NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1`` over the
  loopback interface), the transport between machines;
* ``nodes-static``: the same two agents with torchrun's static rendezvous (``--node-rank``,
  ``--master-addr``), the other way multi-node jobs are started;
* ``mpi-hostfile``: ``mpiexec`` with a hostfile (Open MPI ``--hostfile``, MPICH ``-f``) listing
  this host, NCCL on sockets as above.

Two ranks add each gradient pair once, ``a + b``, in every NCCL algorithm, so the transports
must agree to the last bit. Then the faults (item 6): ``torchrun --max-restarts 1`` runs
``tests/fault_worker.py`` (the MLP example; rank 1 kills itself with SIGKILL at optimizer
step ``--fault-step`` of the first attempt), the group restarts from the example's
``--checkpoint``, and its final weights are compared with an uninterrupted run's.

On the GPU machine (PyTorch's ``torchrun`` installed)::

    TINYNET_BACKEND=cupy NCCL_NVLS_ENABLE=0 python3 benchmarks/multinode.py \\
        --data-dir ../shared/datasets/mnist --out benchmarks/results/multinode_h200x2.json

``--runs`` picks a subset (on the CPU only ``mpi-hostfile`` and ``single-mpi`` apply: the MPI
backend, MPICH's hydra). The JSON has every run's command, seconds, epoch lines and the
comparisons.
"""
import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import numpy

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
EXAMPLE = os.path.join(ROOT, "examples", "mnist_convnet.py")
FAULT_WORKER = os.path.join(ROOT, "tests", "fault_worker.py")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
LINE = re.compile(r"epoch\s+\d+: train loss [\d.]+, test loss [\d.]+, accuracy [\d.]+%")
SOCKETS = {"NCCL_P2P_DISABLE": "1", "NCCL_SHM_DISABLE": "1", "NCCL_IB_DISABLE": "1", "NCCL_SOCKET_IFNAME": "lo"}
RUNS = ("single", "nodes-c10d", "nodes-static", "mpi-hostfile", "single-mpi", "fault")


def parse(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", required=True)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--train-subset", type=int, default=12000, help="images of the main-job runs (default 12000)")
    p.add_argument("--batch-size", type=int, default=32, help="batch per process (default 32: global 64)")
    p.add_argument("--runs", nargs="+", choices=RUNS, default=["single", "nodes-c10d", "nodes-static",
                                                                 "mpi-hostfile", "fault"])
    p.add_argument("--fault-step", type=int, default=9, help="optimizer step at which rank 1 dies (default 9)")
    p.add_argument("--timeout", type=float, default=300, help="seconds per launch (default 300)")
    p.add_argument("--out", default=None)
    return p.parse_args(argv)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(cmds, envs, timeout):
    """Start every command at once (the agents of one job), wait for all; (rc list, texts, s)."""
    start = time.monotonic()
    procs = [subprocess.Popen(c, env=e, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for c, e in zip(cmds, envs)]
    texts, rcs = [], []
    for p in procs:
        try:
            out, _ = p.communicate(timeout=max(1.0, timeout - (time.monotonic() - start)))
        except subprocess.TimeoutExpired:
            p.kill()
            out, _ = p.communicate()
            out += "\n[multinode.py: killed at the time limit]"
        texts.append(ANSI.sub("", out))
        rcs.append(p.returncode)
    return rcs, texts, time.monotonic() - start


def job_args(args, save, script=EXAMPLE, subset=None):
    return [script, "--distributed", "--deterministic", "--data-dir", args.data_dir, "--no-download",
            "--epochs", str(args.epochs), "--batch-size", str(args.batch_size), "--log-interval", "0",
            "--train-subset", str(subset or args.train_subset), "--save-model", save]


def torchrun():
    exe = shutil.which("torchrun")
    return [exe] if exe else [sys.executable, "-m", "torch.distributed.run"]


def mpiexec_hostfile(tmp, n, env):
    """mpiexec with a hostfile naming this host, in the installed MPI's syntax."""
    exe = shutil.which("mpiexec") or os.path.join(os.path.dirname(sys.executable), "mpiexec")
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout
    hosts = os.path.join(tmp, "hosts")
    with open(hosts, "w") as f:
        if "Open MPI" in version or "OpenRTE" in version:
            f.write(f"localhost slots={n}\n")
            cmd = [exe, "--hostfile", hosts, "-n", str(n)]
            for k in env:
                cmd += ["-x", k]
        else:  # MPICH's hydra
            f.write(f"localhost:{n}\n")
            cmd = [exe, "-f", hosts, "-launcher", "fork", "-n", str(n)]
    return cmd + [sys.executable]


def base_env(**extra):
    """This process's environment with the checkout first on PYTHONPATH, plus ``extra``."""
    return dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), COLUMNS="200", **extra)


def commands(kind, args, tmp, save):
    """(commands, environments) of one run kind."""
    base = base_env(NCCL_DEBUG="INFO", NCCL_DEBUG_SUBSYS="INIT")  # INIT: the lines naming each channel's transport
    job = job_args(args, save)
    if kind == "single":
        return [torchrun() + ["--standalone", "--nproc-per-node", "2"] + job], [base]
    if kind == "single-mpi":
        return [mpiexec_hostfile(tmp, 2, {}) + job], [base]
    if kind == "mpi-hostfile":
        env = dict(base, **SOCKETS)
        return [mpiexec_hostfile(tmp, 2, SOCKETS) + job], [env]
    port = free_port()
    cmds, envs = [], []
    for node in range(2):
        env = dict(base, CUDA_VISIBLE_DEVICES=str(node), **SOCKETS)
        if kind == "nodes-c10d":
            how = ["--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "multinode"]
        else:
            how = ["--node-rank", str(node), "--master-addr", "127.0.0.1", "--master-port", str(port)]
        cmds.append(torchrun() + ["--nnodes", "2", "--nproc-per-node", "1"] + how + job)
        envs.append(env)
    return cmds, envs


def weights(path):
    if not os.path.exists(path):
        return None
    with numpy.load(path) as z:
        return {k: z[k].copy() for k in z.files}


def same_weights(a, b):
    if a is None or b is None:
        return None
    return a.keys() == b.keys() and all(a[k].dtype == b[k].dtype and a[k].tobytes() == b[k].tobytes() for k in a)


def fault(args, tmp):
    """The clean and the faulty restartable runs; their final weights compared."""
    out = {}
    for name, step in (("clean", None), ("faulty", args.fault_step)):
        ck, save = os.path.join(tmp, f"{name}.ck"), os.path.join(tmp, f"{name}.npz")
        env = base_env()
        env.pop("FAULT_STEP", None)
        if step is not None:
            env["FAULT_STEP"] = str(step)
        job = job_args(args, save, FAULT_WORKER, subset=768)
        job[job.index("--batch-size") + 1] = "64"
        cmd = torchrun() + ["--standalone", "--nproc-per-node", "2", "--max-restarts", "1"] + job + [
            "--checkpoint", ck, "--checkpoint-every", "2", "--resume", ck]
        rcs, texts, seconds = launch([cmd], [env], args.timeout)
        out[name] = dict(command=" ".join(cmd), rc=rcs[0], seconds=round(seconds, 1), epochs=LINE.findall(texts[0]),
                         resumed=re.findall(r"resumed from \S+ at epoch \d+", texts[0]), tail=texts[0][-2500:],
                         weights=save)
        out[name]["restarted"] = bool(out[name]["resumed"])  # the second attempt resumed from the checkpoint
        print(f"fault/{name}: rc {rcs[0]}, {seconds:.1f} s, restarted {out[name]['restarted']}, "
              f"{out[name]['resumed']}", flush=True)
    out["bit_identical"] = same_weights(weights(out["clean"]["weights"]), weights(out["faulty"]["weights"]))
    print(f"fault: final weights bit-identical to the uninterrupted run: {out['bit_identical']}", flush=True)
    # a fault step past the run's last step never fires: then nothing was tested, and the run says so
    out["fault_fired"] = out["faulty"]["restarted"] and not out["clean"]["restarted"]
    if not out["fault_fired"]:
        print(f"fault: the faulty run did not restart (is --fault-step {args.fault_step} within the run's "
              f"{args.epochs} epoch(s) of 6 steps?): FAILED", flush=True)
    return out


def main(argv=None):
    args = parse(argv)
    tmp = tempfile.mkdtemp(prefix="multinode-")
    results = dict(epochs=args.epochs, train_subset=args.train_subset, batch_per_process=args.batch_size, runs={})
    reference = None
    for kind in args.runs:
        if kind == "fault":
            results["fault"] = fault(args, tmp)
            continue
        save = os.path.join(tmp, f"{kind}.npz")
        cmds, envs = commands(kind, args, tmp, save)
        rcs, texts, seconds = launch(cmds, envs, args.timeout)
        lines = next((LINE.findall(t) for t in texts if LINE.findall(t)), [])
        row = dict(commands=[" ".join(c) for c in cmds], rc=rcs, seconds=round(seconds, 1), epochs=lines,
                   transport=next((m for t in texts for m in re.findall(r"NCCL INFO .*via (\S+)", t)), None))
        if any(rcs):
            row["tail"] = [t[-2500:] for t in texts]
        w = weights(save)
        if reference is None and not any(rcs):
            reference = (kind, lines, w)
        elif reference is not None:
            row["same_epoch_lines_as"] = reference[0]
            row["same_epoch_lines"] = lines == reference[1] and bool(lines)
            row["bit_identical_weights"] = same_weights(w, reference[2])
        results["runs"][kind] = row
        print(f"{kind}: rc {rcs}, {seconds:.1f} s, epochs {lines}, "
              f"same lines {row.get('same_epoch_lines')}, same weights {row.get('bit_identical_weights')}", flush=True)
        if any(rcs):
            print("\n".join(t[-1500:] for t in texts), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    shutil.rmtree(tmp, ignore_errors=True)
    ok = all(not any(r["rc"]) and r.get("bit_identical_weights", True) is not False
             for r in results["runs"].values())
    ok = ok and results.get("fault", {}).get("bit_identical", True) is not False
    ok = ok and results.get("fault", {}).get("fault_fired", True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
