"""The fair mode of ``ddp_scaling.py``: each framework in its own processes.

For every framework (``--frameworks``; ``--no-torch`` drops PyTorch), three launches, one
launcher each (``torchrun --standalone`` on the GPU, ``mpiexec`` on the CPU; ``--launcher``):

* ``alone``: one process, plain model (no DDP): the single-device rate on an idle host;
* ``busy``: N processes, each training the plain model on its own device with no
  communication; rank 0's rate is the single-device rate with every device busy;
* ``ddp``: N processes, DDP in both bucket layouts (``one``, ``layers``).

The launches take turns framework by framework within each kind, so that host drift hits
both. Each writes its JSON (rank 0); this script merges them into
``benchmarks/results/ddp_scaling_fair_<device>.json`` (``--out``), adding to every DDP row
its efficiency against both baselines (N-process images/s over N times the 1-process
rate) and, for tinynet, the ratio to PyTorch's same configuration. A launch that wrote its
JSON but did not exit within ``--exit-grace`` seconds is killed and marked ``hung_at_exit``
(the shutdown problem of issue 36); one that failed or timed out is reported and skipped.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
KINDS = (("alone", False, "single"), ("busy", True, "single"), ("ddp", True, "multi"))


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _worker_args(args):
    out = ["--device", args.device, "--models", *args.models, "--steps", str(args.steps), "--reps", str(args.reps),
           "--warmup", str(args.warmup), "--overlap-bucket-mb", str(args.overlap_bucket_mb),
           "--comm-hook", args.comm_hook]
    if args.batch:
        out += ["--batch", str(args.batch)]
    return out + (["--graph"] if args.graph else []) + (["--quick"] if args.quick else [])


def _command(args, script, n, framework, phase, out):
    worker = [script, *_worker_args(args), "--frameworks", framework, "--phase", phase, "--out", out]
    env = dict(os.environ)
    if args.launcher == "torchrun":
        torchrun = os.path.join(os.path.dirname(sys.executable), "torchrun")
        return [torchrun, "--standalone", "--nproc-per-node", str(n), *worker], env
    from tinynet.distributed.run import find_mpiexec
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))
    return [*find_mpiexec(), "-n", str(n), sys.executable, *worker], env


def launch(args, script, n, framework, phase, out):
    """Run one launch; returns a note (seconds, exit status, hung_at_exit)."""
    cmd, env = _command(args, script, n, framework, phase, out)
    print(f"== {framework} {phase} on {n} process{'es' if n > 1 else ''}: {' '.join(cmd)}", flush=True)
    start = time.monotonic()
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    wrote, note = None, {"command": cmd}
    while proc.poll() is None:
        now = time.monotonic()
        if wrote is None and os.path.exists(out):
            wrote = now
        late = wrote is not None and now - wrote > args.exit_grace
        if late or now - start > args.launch_timeout:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            note["hung_at_exit" if late else "timed_out"] = True
            print(f"   killed: {'no exit ' + str(args.exit_grace) + ' s after its JSON' if late else 'timeout'}",
                  flush=True)
            break
        time.sleep(0.2)
    note.update(seconds=time.monotonic() - start, returncode=proc.returncode,
                exit_seconds=(time.monotonic() - wrote) if wrote is not None else None)
    return note


def merge(results, nproc):
    """Rows of every launch, with the fair efficiencies and tinynet/PyTorch ratios."""
    rows = []
    for (framework, kind), data in results.items():
        for r in data["rows"]:
            rows.append(dict(r, launch=kind))
    base = {(r["framework"], r["model"], r["graph"], r["launch"]): r["images_per_s"] for r in rows
            if r["launch"] in ("alone", "busy")}
    torch_rate = {(r["model"], r["graph"], r["buckets"]): r["images_per_s"] for r in rows
                  if r["launch"] == "ddp" and r["framework"] == "pytorch"}
    for r in rows:
        if r["launch"] != "ddp":
            continue
        for kind in ("alone", "busy"):
            one = base.get((r["framework"], r["model"], r["graph"], kind))
            if one:
                r[f"efficiency_vs_{kind}"] = r["images_per_s"] / (nproc * one)
                r[f"speedup_vs_{kind}"] = r["images_per_s"] / one
        theirs = torch_rate.get((r["model"], r["graph"], r["buckets"]))
        if r["framework"] == "tinynet" and theirs:
            r["vs_pytorch"] = r["images_per_s"] / theirs
    return rows


def orchestrate(args, script):
    if args.device == "cuda" and args.nproc is None:
        import tinynet
        args.nproc = tinynet.cuda.device_count()
    nproc = args.nproc or 2
    args.launcher = args.launcher or ("torchrun" if args.device == "cuda" else "mpiexec")
    frameworks = args.frameworks
    results, notes = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, many, phase in KINDS:
            for framework in frameworks:
                out = os.path.join(tmp, f"{framework}_{kind}.json")
                note = launch(args, script, nproc if many else 1, framework, phase, out)
                notes[f"{framework}/{kind}"] = note
                if os.path.exists(out):
                    with open(out) as f:
                        results[(framework, kind)] = json.load(f)
                else:
                    print(f"   no JSON from {framework} {kind} (exit status {note['returncode']})", flush=True)
    rows = merge(results, nproc)
    meta = dict(next(iter(results.values()))["meta"]) if results else {}
    meta.update(mode="fair (each framework in its own processes)", processes=nproc, launcher=args.launcher,
                frameworks=frameworks, launches=notes)
    print_table(rows)
    out = args.out or os.path.join(HERE, "results", f"ddp_scaling_fair_{args.device}.json")
    with open(out, "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    print(f"wrote {out}")
    hung = [k for k, n in notes.items() if n.get("hung_at_exit") or n.get("timed_out") or n["returncode"] != 0]
    if hung:
        print(f"launches that failed, timed out or hung at exit: {', '.join(hung)}")
    return 1 if hung else 0


def print_table(rows):
    print(f"{'model':8} {'framework':9} {'graph':>5} {'launch':>6} {'procs':>5} {'buckets':>7} {'images/s':>12} "
          f"{'eff/alone':>9} {'eff/busy':>9} {'vs torch':>8}")
    for r in rows:
        def fmt(key):
            return f"{r[key]:.2f}" if key in r else ""
        print(f"{r['model']:8} {r['framework']:9} {'yes' if r['graph'] else 'no':>5} {r['launch']:>6} "
              f"{r['processes']:>5} {r['buckets'] or '-':>7} {r['images_per_s']:>12,.0f} "
              f"{fmt('efficiency_vs_alone'):>9} {fmt('efficiency_vs_busy'):>9} {fmt('vs_pytorch'):>8}")
