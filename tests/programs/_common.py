"""Shared by the PyTorch-style programs in this folder (written for tinynet's tests, run both by
``python -m tinynet.compat`` and by PyTorch): weights and data from NumPy, so both libraries
start from the same numbers, and the losses written as JSON for the test to compare."""
import argparse
import json

import numpy
import torch


def arguments(description, **extra):
    """``--out`` (the JSON file of losses) and ``--seed``, plus ``extra`` (name -> default)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    for name, default in extra.items():
        p.add_argument("--" + name.replace("_", "-"), type=type(default), default=default)
    return p.parse_args()


def init_from_numpy(model, seed):
    """Every parameter drawn from NumPy (uniform in +-1/sqrt(fan_in)), by sorted name."""
    rng = numpy.random.default_rng(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters(), key=lambda item: item[0]):
            fan_in = p.shape[1] if p.dim() > 1 else p.shape[0]
            for s in p.shape[2:]:
                fan_in *= s
            bound = 1.0 / max(fan_in, 1) ** 0.5
            values = rng.uniform(-bound, bound, size=tuple(p.shape)).astype(numpy.float64)
            p.copy_(torch.from_numpy(values).to(p.dtype))


def dump(path, **results):
    """Write ``results`` (losses as lists of floats) to ``path``."""
    with open(path, "w") as f:
        json.dump({k: [float(x) for x in v] if isinstance(v, (list, tuple)) else v for k, v in results.items()}, f)
