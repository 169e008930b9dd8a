"""``tinynet.func``: composable function transforms (PyTorch's ``torch.func``).

* :func:`vmap` (:mod:`.vmap`): map a function over a batch dimension, by a loop over it.
* :func:`grad`, :func:`grad_and_value`, :func:`vjp`, :func:`jvp` (:mod:`.eager_transforms`):
  gradients and vector products on tinynet's tape; ``jvp`` by the double-vjp trick.
* :func:`jacrev`, :func:`jacfwd`, :func:`hessian` (:mod:`.jacobians`).
* :func:`functional_call` (:mod:`.functional_call`): a module run with given parameters.

The transforms nest and compose (``vmap(grad(f))``, ``jacrev(jacrev(f))``) and work on
pytrees (tuples, lists, dicts) of tensors; docs/func.md says how each is computed and where
tinynet differs from PyTorch. This package sits above :mod:`tinynet.nn`.
"""
from .eager_transforms import grad, grad_and_value, jvp, vjp
from .functional_call import functional_call
from .jacobians import hessian, jacfwd, jacrev
from .vmap import vmap


__all__ = ["vmap", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "functional_call"]
