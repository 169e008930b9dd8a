"""``tinynet.nn.utils.prune``: PyTorch's ``torch.nn.utils.prune``, pruning by masks.

Pruning ``module.<name>`` moves the parameter to ``<name>_orig``, adds a buffer
``<name>_mask`` (1 keeps an entry, 0 prunes it) and a forward pre-hook (the pruning method
itself) that sets ``module.<name> = <name>_orig * <name>_mask`` before each forward, so the
gradient reaches only the kept entries. Pruning the same tensor again combines the masks:
the methods gather in a :class:`PruningContainer`, and each new method sees only the
entries (unstructured) or channels (structured) still kept. :func:`remove` makes the
pruning permanent (``<name>`` a plain parameter holding the pruned values).

Which entries go: ``l1_unstructured`` the ``amount`` smallest by absolute value (of
``importance_scores`` when given), ``ln_structured`` the channels along ``dim`` with the
smallest ``n``-norm, the ``random_*`` methods draws from tinynet's generator; ``amount`` is a
count (int) or a fraction (float in [0, 1], rounded with Python's ``round``), as PyTorch.
"""
from .base import BasePruningMethod, Identity, PruningContainer, is_pruned, remove
from .methods import (CustomFromMask, L1Unstructured, LnStructured, RandomStructured, RandomUnstructured,
                      custom_from_mask, global_unstructured, identity, l1_unstructured, ln_structured,
                      random_structured, random_unstructured)

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured", "L1Unstructured",
           "RandomStructured", "LnStructured", "CustomFromMask", "identity", "random_unstructured",
           "l1_unstructured", "random_structured", "ln_structured", "global_unstructured", "custom_from_mask",
           "remove", "is_pruned"]

