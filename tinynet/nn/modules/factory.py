"""``factory_kwargs``: the device/dtype keywords a layer passes on to the tensor factories
(PyTorch's ``torch.nn.factory_kwargs``), checked and made canonical."""
from ...errors import ArgumentTypeError

_SIMPLE = ("device", "dtype", "memory_format")


def factory_kwargs(kwargs):
    """A new dict of the factory keywords in ``kwargs`` (None gives ``{}``), for code such as
    ``tinynet.empty(10, **nn.factory_kwargs(kwargs))``.

    ``kwargs`` may hold ``device``, ``dtype``, ``memory_format`` and ``factory_kwargs`` (a
    dict of those same keywords, for a signature where one of the names is taken by another
    argument); the result merges them.

    Raises:
        ArgumentTypeError: ``kwargs`` not a mapping, an unexpected key, or a keyword given
            both directly and in ``factory_kwargs`` (PyTorch's TypeErrors).
    """
    if kwargs is None:
        return {}
    if not hasattr(kwargs, "keys") or not hasattr(kwargs, "get"):
        raise ArgumentTypeError(f"factory_kwargs: expected a dict of keyword arguments, got {type(kwargs).__name__}")
    unexpected = set(kwargs.keys()) - set(_SIMPLE) - {"factory_kwargs"}
    if unexpected:
        raise ArgumentTypeError(f"factory_kwargs: unexpected kwargs {unexpected}")
    nested = kwargs.get("factory_kwargs", {})
    if not hasattr(nested, "keys"):
        raise ArgumentTypeError(f"factory_kwargs: factory_kwargs must be a dict, got {type(nested).__name__}")
    out = dict(nested)
    for key in _SIMPLE:
        if key in kwargs:
            if key in out:
                raise ArgumentTypeError(f"factory_kwargs: {key} specified twice, in **kwargs and in factory_kwargs")
            out[key] = kwargs[key]
    return out
