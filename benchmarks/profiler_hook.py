"""What tinynet.profiler costs an eager op when no profiler runs, and when one does.

The profiler records ops by replacing ``Op.apply`` only while a profile records; outside
one the method looked up is the original. This script times ``a + b`` on two 4-element
tensors (the smallest op: its time is all host cost) in thread CPU time per call, fastest
of several rounds, in interleaved rounds of:

- ``plain``: ``Op.apply`` as it is (no profiler: what every eager op pays);
- ``flag check``: ``Op.apply`` wrapped in a function that tests a module-level flag first
  (the other design: what a flag check in the op dispatch would add);
- ``profiling``: inside ``tinynet.profiler.profile()`` (the recording cost per op).

Run it from a checkout (``python benchmarks/profiler_hook.py``); with ``--compare DIR`` it
also times the ``plain`` row in another checkout (e.g. the main branch) in a subprocess.
"""
import argparse
import os
import subprocess
import sys

from graph_timing import best_us

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CALLS, ROUNDS = 20000, 15  # per timing of an eager a + b


def plain_only():
    import tinynet
    a, b = tinynet.ones(4), tinynet.ones(4)
    print(f"{best_us(lambda: a + b, CALLS, ROUNDS):.4f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compare", help="another checkout whose plain a + b is timed too")
    ap.add_argument("--plain-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.plain_only:
        return plain_only()
    import tinynet
    from tinynet.autograd import node
    a, b = tinynet.ones(4), tinynet.ones(4)
    original = node.Op.apply
    flag = [None]

    def flagged(self, *args):
        if flag[0] is not None:
            return None
        return original(self, *args)

    rows = {"plain": [], "flag check": [], "profiling": []}
    for _ in range(3):  # interleaved, so that the machine's load hits each alike
        rows["plain"].append(best_us(lambda: a + b, CALLS, ROUNDS))
        node.Op.apply = flagged
        try:
            rows["flag check"].append(best_us(lambda: a + b, CALLS, ROUNDS))
        finally:
            node.Op.apply = original
        with tinynet.profiler.profile():
            rows["profiling"].append(best_us(lambda: a + b, 2000, 5))
    for name, values in rows.items():
        print(f"{name:>12}: {min(values):8.3f} us per a + b (rounds: {', '.join(f'{v:.3f}' for v in values)})")
    if args.compare:
        env = dict(os.environ, PYTHONPATH=os.path.abspath(args.compare))
        other = [float(subprocess.check_output([sys.executable, os.path.abspath(__file__), "--plain-only"],
                                               cwd=args.compare, env=env, text=True)) for _ in range(3)]
        print(f"{'plain there':>12}: {min(other):8.3f} us per a + b in {args.compare} "
              f"(rounds: {', '.join(f'{v:.3f}' for v in other)})")


if __name__ == "__main__":
    main()
