"""``Parameter``: a tensor that a Module registers as learnable (PyTorch's ``torch.nn.Parameter``)."""
from ... import backend, dtypes
from ...tensor import Tensor


class Parameter(Tensor):
    """A tensor that is a learnable parameter of a Module (``requires_grad=True``).

    Assigning one as a Module attribute registers it, so ``parameters()`` and
    ``state_dict()`` find it. ``Parameter(t)`` shares ``t``'s array.

    Args:
        data (Tensor or array): initial values (empty float tensor when None).
        requires_grad (bool): default True.

    Raises:
        DTypeError: ``requires_grad`` on a non-float tensor.
    """

    __slots__ = ()

    def __init__(self, data=None, requires_grad=True):
        if data is None:
            data = Tensor._wrap(backend.xp.empty(0, dtype=dtypes.get_default_dtype()))
        if not isinstance(data, Tensor):
            from ...ops.creation import tensor
            data = tensor(data)
        self._init(data.array)
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()
