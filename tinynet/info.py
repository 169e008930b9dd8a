"""``python -m tinynet.info``: print the backend in use and the library versions.

Shows the active backend (and why), NumPy/SciPy/CuPy versions, the GPU name, whether
tinynet's CUDA kernels are on, whether cuDNN (through the cuDNN Frontend) is usable, and
the host heap setting (:mod:`tinynet.backends.cpu`).
"""
import os

import numpy
import scipy
from rich.console import Console
from rich.table import Table

from . import backend


def collect():
    """A dict of ``{field: value}`` describing this installation."""
    info = {
        "tinynet backend": backend.name,
        "TINYNET_BACKEND": os.environ.get("TINYNET_BACKEND", "auto (unset)"),
        "numpy": numpy.__version__,
        "scipy": scipy.__version__,
        "cupy": backend.cupy.__version__ if backend.cupy is not None else "not in use",
        "GPU": backend.gpu_name() or "none",
        "tinynet CUDA kernels": ("on" if backend.kernels_enabled else "off (TINYNET_KERNELS=0)")
        if backend.cupy is not None else "n/a (CPU backend)",
    }
    from .backends import cudnn
    info["cuDNN"] = cudnn.status_line() if backend.cupy is not None else "not used (no GPU in use)"
    from .backends import cpu
    info["host heap (TINYNET_HEAP)"] = ("freed memory retained (glibc thresholds raised)" if cpu.heap_retained
                                        else f"malloc defaults ({cpu.heap_mode})")
    return info


def main():
    table = Table(title="tinynet", show_header=False)
    for k, v in collect().items():
        table.add_row(k, str(v))
    Console().print(table)


if __name__ == "__main__":
    main()
