"""CUDA kernels and the dispatch that picks them (the only place with CUDA source)."""


def cudnn_status():
    """One line saying whether convolutions can use cuDNN here, and if not, why."""
    from .. import backend
    if backend.cupy is None:
        return "not used (CPU backend)"
    from . import cudnn
    return cudnn.status_line()
