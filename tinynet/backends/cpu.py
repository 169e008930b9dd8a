"""Host memory setting for the NumPy backend: keep freed heap memory for reuse.

A training step allocates and frees the same large temporaries every step (im2col
columns, pooling and convolution gradients: megabytes each). With glibc's default
malloc, blocks above a moving threshold are served by ``mmap`` and heap space above
another is handed back to the kernel on ``free``; the next step then takes a fresh page
fault on every 4 KiB page it touches again. On the 2-core CPU this cost the reference
convnet about 1,300 page faults and 3 ms of system time per step at batch 64
(``benchmarks/NOTES.md``). PyTorch avoids it with its own allocator; NumPy has none.

So, at import, on Linux with glibc, tinynet raises glibc's two thresholds through
``mallopt`` (the documented ``M_MMAP_THRESHOLD`` and ``M_TRIM_THRESHOLD`` knobs, the
same as the ``MALLOC_MMAP_THRESHOLD_`` / ``MALLOC_TRIM_THRESHOLD_`` environment
variables): allocations below ``MMAP_THRESHOLD`` bytes come from the heap and up to
``TRIM_THRESHOLD`` bytes of free heap stay mapped. Peak resident memory is unchanged
(the memory kept is memory the process already used); the process just does not shrink
between steps.

``TINYNET_HEAP`` (read once at import) chooses: ``retain`` (default) or ``default``
(leave malloc alone). Elsewhere (macOS, musl, Windows) nothing is changed.

Attributes:
    heap_retained (bool): True when the thresholds were set in this process.
"""
import ctypes
import ctypes.util
import os
import platform

from ..errors import BackendError

MMAP_THRESHOLD = 256 * 2**20   # bytes; blocks at least this large still come from mmap
TRIM_THRESHOLD = 512 * 2**20   # bytes of free heap kept before glibc returns memory
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h> parameter numbers

heap_retained = False

_raw = os.environ.get("TINYNET_HEAP", "retain")
heap_mode = _raw.strip().lower()
if heap_mode not in ("retain", "default"):
    raise BackendError(f"TINYNET_HEAP: expected one of retain, default, got {_raw!r}")


def _retain_heap():
    """Set glibc's mmap and trim thresholds; return True when both calls succeeded."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


if heap_mode == "retain":
    heap_retained = _retain_heap()
