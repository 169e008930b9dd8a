"""Builds a CUDA source for the CPU (tests/cuda_emulation: prelude.h before it, runner.h after),
the helper of the emulated-kernel tests (test_attention_kernels_emulated.py,
test_softmax_kernels_emulated.py)."""
import ctypes
import os
import shutil
import subprocess
import sys

import pytest

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda_emulation")


def build(tmp_path_factory, name, source, after):
    """``source`` (the CUDA text) between the prelude and the runner, with ``after`` (wrappers and
    the ``#define EMU_ARG`` of the kernels' one argument) before the runner, compiled by g++ into
    a shared library, loaded. Skips where there is no g++ or no ``ucontext`` (not Linux)."""
    if shutil.which("g++") is None or not sys.platform.startswith("linux"):
        pytest.skip("needs g++ and ucontext (Linux)")
    parts = [open(os.path.join(HERE, "prelude.h")).read(), source, after, open(os.path.join(HERE, "runner.h")).read()]
    folder = tmp_path_factory.mktemp(f"{name}_emulated")
    cpp, lib = folder / f"{name}.cpp", folder / f"{name}.so"
    cpp.write_text("".join(parts))
    subprocess.run(["g++", "-O1", "-std=c++17", "-shared", "-fPIC", "-w", str(cpp), "-o", str(lib)], check=True)
    return ctypes.CDLL(str(lib))
