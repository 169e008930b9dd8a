"""``functional_call``: run a module with other tensors in place of its parameters and
buffers (``torch.func.functional_call``), the bridge between ``nn.Module`` and the
function transforms (``grad(lambda p, x: functional_call(model, p, (x,)))``).

The given tensors are put into the modules' ``_parameters``/``_buffers`` entries for the
call and the originals put back afterwards, also when the call raises. This module sits
above :mod:`tinynet.nn` (it imports ``Module``); nothing in ``nn`` imports it.
"""
from ..errors import ArgumentError, ArgumentTypeError, StateDictError
from ..nn.modules.module import Module

_MISSING = object()


def _owner(module, name):
    """(the sub-module holding dotted ``name``, the last part of the name).

    Raises:
        AttributeError: a part of the prefix is not a sub-module (PyTorch's error).
    """
    *path, last = name.split(".")
    m = module
    for i, part in enumerate(path):
        sub = m._modules.get(part) if isinstance(m, Module) else None
        if sub is None:
            raise AttributeError(f"{type(m).__name__} has no attribute `{part}` (functional_call: key {name!r})")
        m = sub
    return m, last


def _swap(module, name, value):
    """Put ``value`` under ``name``; returns ``(store, previous)`` for :func:`_restore`
    (store None: a name that is neither a parameter nor a buffer, set as a plain attribute;
    previous ``_MISSING``: there was no such attribute)."""
    m, last = _owner(module, name)
    for store in (m._parameters, m._buffers):
        if last in store:
            old = store[last]
            store[last] = value
            return store, old
    old = m.__dict__.get(last, _MISSING)
    object.__setattr__(m, last, value)
    return None, old


def _restore(module, name, store, old):
    m, last = _owner(module, name)
    if store is not None:
        store[last] = old
    elif old is _MISSING:
        m.__dict__.pop(last, None)
    else:
        object.__setattr__(m, last, old)


def _merge(dicts):
    if isinstance(dicts, dict):
        return dict(dicts)
    if not isinstance(dicts, (list, tuple)) or not all(isinstance(d, dict) for d in dicts):
        raise ArgumentTypeError("functional_call: parameter_and_buffer_dicts must be a dict or a list/tuple of dicts, "
                                f"got {type(dicts).__name__}")
    merged, seen = {}, {}
    for d in dicts:
        for k, v in d.items():
            seen[k] = seen.get(k, 0) + 1
            merged[k] = v
    repeated = sorted(k for k, n in seen.items() if n > 1)
    if repeated:
        raise ArgumentError(f"functional_call: the keys {repeated} are in multiple dictionaries (which one to use "
                            "is ambiguous)")
    return merged


def _untie(module, given):
    """Extend ``given`` to every name of a tensor shared (tied) with a given name."""
    names = {}
    for n, t in list(module.named_parameters(remove_duplicate=False)) + list(module.named_buffers(
            remove_duplicate=False)):
        names.setdefault(id(t), set()).add(n)
    out = dict(given)
    for group in names.values():
        if len(group) < 2:
            continue
        present = [n for n in group if n in given]
        if len({id(given[n]) for n in present}) > 1:
            raise ArgumentError(f"functional_call: different values for the tied keys {sorted(group)} (one tensor "
                                "under several names); pass one, or tie_weights=False")
        if present:
            for n in group:
                out[n] = given[present[0]]
    return out


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True, strict=False):
    """Call ``module(*args, **kwargs)`` with the given tensors in place of its parameters
    and buffers (``torch.func.functional_call``); the module is unchanged afterwards.

    Args:
        module (nn.Module): the module to call.
        parameter_and_buffer_dicts (dict or sequence of dicts): ``{dotted name: tensor}``
            (``"0.weight"``, ``"bn.running_mean"``); names missing from it keep the module's
            own tensors. Several dicts must not share a key.
        args (Any or tuple): the positional arguments; a non-tuple is one argument.
        kwargs (dict, optional): the keyword arguments.
        tie_weights (bool): a tensor the module uses under several names (tied weights)
            is replaced under all of them when one name is given. Default True.
        strict (bool): the names given must be exactly the module's parameters and
            buffers. Default False.

    Returns:
        What ``module`` returns.

    Raises:
        ArgumentTypeError: ``module`` is not an nn.Module, or the dicts are not dicts.
        ArgumentError: a key in two dicts; different tensors for tied names.
        StateDictError: ``strict`` and missing or unexpected keys.
        AttributeError: a dotted name runs through something that is not a sub-module.
    """
    if not isinstance(module, Module):
        raise ArgumentTypeError(f"functional_call: module must be a tinynet.nn.Module, got {type(module).__name__}")
    given = _merge(parameter_and_buffer_dicts)
    if kwargs is not None and not isinstance(kwargs, dict):
        raise ArgumentTypeError(f"functional_call: kwargs must be a dict, got {type(kwargs).__name__}")
    if tie_weights:
        given = _untie(module, given)
    if strict:
        known = [n for n, _ in module.named_parameters(remove_duplicate=False)] + \
            [n for n, _ in module.named_buffers(remove_duplicate=False)]
        unexpected = [k for k in given if k not in known]
        missing = [k for k in known if k not in given]
        msgs = []
        if unexpected:
            msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
        if missing:
            msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
        if msgs:
            raise StateDictError(f"functional_call: strict=True and the keys do not match {type(module).__name__}:"
                                 "\n\t" + "\n\t".join(msgs))
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    swapped = []
    try:
        for name, value in given.items():
            swapped.append((name,) + _swap(module, name, value))
        return module(*args, **(kwargs or {}))
    finally:
        for name, store, old in reversed(swapped):
            _restore(module, name, store, old)
