"""``tinynet.backends.mps``: Apple's Metal backend, which tinynet does not have.

Present so that the usual PyTorch device-selection code
(``"cuda" if cuda.is_available() else "mps" if backends.mps.is_available() else "cpu"``)
runs unchanged.
"""


def is_available():
    """Always False: tinynet runs on NumPy (CPU) and CuPy (NVIDIA GPUs) only."""
    return False


def is_built():
    """Always False (see :func:`is_available`)."""
    return False
