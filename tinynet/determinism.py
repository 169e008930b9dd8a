"""Deterministic algorithms: ``tinynet.use_deterministic_algorithms``, as PyTorch's.

On the CPU every tinynet op is deterministic: NumPy sums in a fixed order, tinynet's thread
pool splits work into items whose results do not depend on which thread ran them, and the
BLAS libraries are held to one thread (``tinynet.parallel``). On the GPU a few paths are
not, because they let threads accumulate with ``atomicAdd`` in whatever order they arrive
(floating-point addition is not associative), or because cuDNN may pick such an engine:

=====================================  ===========================================================
path                                   with ``use_deterministic_algorithms(True)``
=====================================  ===========================================================
cuDNN convolution (fprop/dgrad/wgrad)  only engines without cuDNN's NONDETERMINISTIC note (as
                                       ``backends.cudnn.deterministic = True``); some shapes get a
                                       slower engine
``add.at`` on CuPy: backward of        a stable sort of the target positions, then one thread per
indexing with repeated indices,        target adds its values in their original order (the order
``scatter_add``, ``Embedding``         NumPy's ``add.at`` uses, so the GPU result equals the CPU
backward                               one); costs a sort and an int64 array of the target's size
``avg_pool2d`` backward with           the generic code (column sums without atomics); windows that
overlapping windows                    do not overlap keep the kernel (one writer per element)
=====================================  ===========================================================

Everything else on the GPU path is deterministic already: max pooling gathers its
gradient per input element, the bias, batch-norm, layer-norm and attention reductions run
in fixed orders, dropout draws from a counter-based generator (Philox), and cuBLAS gives
the same bits for the same call on one GPU model. With deterministic algorithms and a
fixed seed, two runs of the main job on one GPU gave bit-identical losses and parameters
on an H100 (``tests/test_determinism.py``; docs/reliability.md has the figures).

Unlike PyTorch, tinynet has no op that must raise under this mode: each nondeterministic
path above has a deterministic replacement, so ``warn_only`` changes nothing yet; it is
accepted and reported for PyTorch's sake.
"""
_state = {"enabled": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Make the GPU paths listed in :mod:`tinynet.determinism` deterministic (``mode=True``)
    or let them take their faster, run-to-run varying forms (``False``, the default).

    Args:
        mode (bool): the setting.
        warn_only (bool, keyword): PyTorch's switch from errors to warnings for ops without
            a deterministic form; tinynet has none such, so it is only stored. Default False.

    Raises:
        ArgumentTypeError: ``mode`` or ``warn_only`` is not a bool (PyTorch raises
            RuntimeError; tinynet's error is also a TypeError).
    """
    from .errors import check_type
    check_type("use_deterministic_algorithms", "mode", mode, bool, "a bool")
    check_type("use_deterministic_algorithms", "warn_only", warn_only, bool, "a bool")
    _state.update(enabled=mode, warn_only=warn_only)


def are_deterministic_algorithms_enabled():
    """True after ``use_deterministic_algorithms(True)``."""
    return _state["enabled"]


def is_deterministic_algorithms_warn_only_enabled():
    """The ``warn_only`` given with the last ``use_deterministic_algorithms`` call."""
    return _state["warn_only"]
