"""Nested Python containers ("pytrees") of tensors, flattened and rebuilt.

The function transforms take and return tensors nested in tuples (named tuples too),
lists and dicts, as ``torch.func`` does. :func:`tree_flatten` lists the leaves (anything
that is not one of those containers) depth first, dict values in key order as inserted,
and returns a :class:`TreeSpec` from which :func:`tree_unflatten` builds the same
structure around new leaves.
"""


class TreeSpec:
    """The shape of a pytree: its container type, keys (dict) and children; a leaf when
    ``kind`` is None. Two specs compare equal when the structures match."""

    __slots__ = ("kind", "keys", "children", "num_leaves")

    def __init__(self, kind=None, keys=None, children=()):
        self.kind, self.keys, self.children = kind, keys, tuple(children)
        self.num_leaves = 1 if kind is None else sum(c.num_leaves for c in self.children)

    def is_leaf(self):
        return self.kind is None

    def __eq__(self, other):
        return (isinstance(other, TreeSpec) and self.kind is other.kind and self.keys == other.keys
                and self.children == other.children)

    def __hash__(self):
        return hash((self.kind, self.keys, self.children))

    def __repr__(self):
        if self.kind is None:
            return "*"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind is dict or issubclass(self.kind, dict):
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.keys, self.children))
            return "{" + inner + "}"
        if self.kind is list:
            return f"[{inner}]"
        if self.kind is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        return f"{self.kind.__name__}({inner})"


LEAF = TreeSpec()


def _children(tree):
    """(kind, keys, children) of a container, or None for a leaf."""
    if isinstance(tree, dict):
        keys = tuple(tree.keys())
        return type(tree), keys, [tree[k] for k in keys]
    if isinstance(tree, (tuple, list)):
        return type(tree), None, list(tree)
    return None


def tree_flatten(tree):
    """``(leaves, spec)``: the leaves of ``tree`` in order and its structure."""
    leaves = []

    def walk(t):
        parts = _children(t)
        if parts is None:
            leaves.append(t)
            return LEAF
        kind, keys, kids = parts
        return TreeSpec(kind, keys, [walk(c) for c in kids])

    spec = walk(tree)
    return leaves, spec


def tree_unflatten(leaves, spec):
    """The structure ``spec`` around ``leaves`` (an iterable, consumed in order)."""
    it = iter(leaves)

    def build(s):
        if s.kind is None:
            return next(it)
        kids = [build(c) for c in s.children]
        if s.keys is not None:
            return s.kind(zip(s.keys, kids))
        if s.kind is tuple or s.kind is list:
            return s.kind(kids)
        if hasattr(s.kind, "_make"):  # a named tuple
            return s.kind._make(kids)
        return s.kind(kids)

    return build(spec)


def tree_leaves(tree):
    """The leaves of ``tree`` in order."""
    return tree_flatten(tree)[0]


def tree_map(fn, tree):
    """``tree`` with ``fn`` applied to each leaf."""
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([fn(x) for x in leaves], spec)


def broadcast_prefix(prefix, tree, is_leaf_value):
    """The leaves of ``prefix`` repeated over the leaves of ``tree`` that each one covers:
    ``prefix`` is a tree whose structure is a prefix of ``tree``'s (a leaf of ``prefix``,
    recognised by ``is_leaf_value``, stands for a whole subtree). Returns None when the
    structures do not fit."""
    out = []

    def walk(p, t):
        if is_leaf_value(p):
            out.extend([p] * len(tree_leaves(t)))
            return True
        pp, tp = _children(p), _children(t)
        if pp is None or tp is None or pp[0] is not tp[0] and not (
                issubclass(pp[0], dict) and issubclass(tp[0], dict)):
            return False
        if len(pp[2]) != len(tp[2]):
            return False
        if pp[1] is not None:
            if set(pp[1]) != set(tp[1]):
                return False
            return all(walk(p[k], t[k]) for k in tp[1])
        return all(walk(a, b) for a, b in zip(pp[2], tp[2]))

    return out if walk(prefix, tree) else None
