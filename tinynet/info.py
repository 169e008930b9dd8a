"""``python -m tinynet.info``: print the backend in use and the library versions.

Shows the active backend (and why), NumPy/SciPy/CuPy versions, the GPU name, whether
tinynet's CUDA kernels are on, whether cuDNN (through the cuDNN Frontend) is usable, and
the host heap setting (:mod:`tinynet.backends.cpu`), then which of the optional extras
(``pip install "tinynet[EXTRA]"``) have their packages installed.
"""
import importlib.util
import os
from importlib import metadata

import numpy
import scipy
from rich.console import Console
from rich.markup import escape
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


# extra -> the distributions it installs, each with the module that imports it (None: check the distribution only)
EXTRAS = {
    "test": [("pytest", "pytest"), ("hypothesis", "hypothesis"), ("mypy", "mypy")],
    "plot": [("matplotlib", "matplotlib")],
    "tensorboard": [("tensorboard", "tensorboard")],
    "safetensors": [("safetensors", "safetensors")],
    "keras": [("h5py", "h5py")],
    "docs": [("mkdocs-material", "material"), ("mkdocstrings", "mkdocstrings")],
    "distributed": [("mpi4py", "mpi4py"), ("mpich", None)],
    "nvrtc": [("nvidia-cuda-nvrtc-cu12", None)],
    "cuda12": [("cupy-cuda12x", "cupy")],
    "cuda13": [("cupy-cuda13x", "cupy")],
}


def _present(dist, module):
    """``"<dist> <version>"`` when the distribution is installed and its module can be found, else None."""
    try:
        version = metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
    if module is not None and importlib.util.find_spec(module) is None:
        return None
    return f"{dist} {version}"


def extras():
    """A dict ``{"extra [name]": status}``: the installed packages of each extra, or what is missing.

    Found without importing the packages (:func:`importlib.util.find_spec` and the distributions' metadata),
    so that the check stays fast and has no side effects such as initialising CUDA.
    """
    out = {}
    for name, packages in EXTRAS.items():
        found = [_present(dist, module) for dist, module in packages]
        missing = [dist for (dist, _), f in zip(packages, found) if f is None]
        if not missing:
            out[f"extra [{name}]"] = "yes (" + ", ".join(f for f in found if f) + ")"
        else:
            out[f"extra [{name}]"] = f"no (missing {', '.join(missing)}: pip install \"tinynet[{name}]\")"
    return out


def main():
    table = Table(title="tinynet", show_header=False)
    from . import __version__
    table.add_row("tinynet", __version__)
    for k, v in collect().items():
        table.add_row(k, str(v))
    table.add_section()
    for k, v in extras().items():
        table.add_row(escape(k), escape(v))  # [name] is not rich markup
    Console().print(table)


if __name__ == "__main__":
    main()
