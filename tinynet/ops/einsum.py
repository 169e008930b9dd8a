"""einsum: Einstein summation, ``torch.einsum(equation, *operands)``.

The equation names each operand's dimensions with letters (``'ij,jk->ik'``); ``'...'``
stands for the remaining dimensions, broadcast across operands; letters missing from the
output are summed; a letter repeated within one operand takes its diagonal (``'ii->i'``).
Without ``'->'`` the output is ``'...'`` followed by the letters used exactly once, in
alphabetical order (upper case first). Dimensions of size 1 broadcast against the same
letter of size ``n`` elsewhere, as in PyTorch.

The public function resolves all of that into a *canonical* equation -- one letter per
dimension, ``'...'`` spelled out with letters of its own, size-1 broadcast dimensions
squeezed away (a reshape) -- so :class:`Einsum` only ever sees dimensions that match
exactly. Forward is ``xp.einsum`` (NumPy with ``optimize=True``, CuPy's on the GPU).

Backward: the gradient of operand ``k`` is the einsum of the output gradient with the
other operands, producing ``k``'s subscripts. A letter of ``k`` that appears nowhere
else was summed, so the gradient is broadcast along it (an extra ones-vector operand); a
letter repeated in ``k`` puts the gradient on that diagonal (an extra identity-matrix
operand per repetition, ``'i,ij->ij'`` for ``'ii->i'``). The gradient is therefore one
more :class:`Einsum`, run through ``Op.call``, which makes einsum twice (and more often)
differentiable.
"""
import numbers
import string

import numpy

from .. import backend
from ..autograd import Op
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..tensor import Tensor
from .autocast import autocast_op
from . import shape
from .util import check_tensor, is_graph

LETTERS = string.ascii_letters  # NumPy's 52 subscripts
ELLIPSIS = "..."


def _contract(xp, equation, arrays):
    """``xp.einsum`` as a fresh array (NumPy's may return a view of a single operand, or a scalar)."""
    if xp is numpy:
        y = numpy.einsum(equation, *arrays, optimize=True)
    else:
        y = xp.einsum(equation, *arrays)
    y = xp.asarray(y)
    return y.copy() if len(arrays) == 1 else y


class Einsum(Op):
    """``einsum`` on a canonical equation: ``terms`` (one string of letters per operand,
    one letter per dimension) and ``out`` (distinct letters, each present in a term); the
    sizes of a letter agree everywhere (no broadcasting left)."""
    name = "einsum"
    twice_differentiable = True

    def __init__(self, terms, out):
        self.terms, self.out = tuple(terms), out

    def forward(self, xp, *arrays):
        need = self.needs_input_grad
        if True in need:  # operand j is needed for the gradient of every other operand
            self.save_for_backward(*(a if True in need[:j] + need[j + 1:] else None for j, a in enumerate(arrays)))
        self.shapes = tuple(a.shape for a in arrays)
        return _contract(xp, ",".join(self.terms) + "->" + self.out, arrays)

    def backward(self, xp, gy):
        return tuple(self._grad(xp, gy, k) if need else None for k, need in enumerate(self.needs_input_grad))

    def _grad(self, xp, gy, k):
        term = self.terms[k]
        terms = [self.out] + [t for j, t in enumerate(self.terms) if j != k]
        operands = [gy] + [s for j, s in enumerate(self.saved) if j != k]
        present = set("".join(terms))
        fresh = iter(c for c in LETTERS if c not in set("".join(self.terms) + self.out))
        size = dict(zip(term, self.shapes[k]))
        const = []  # (subscripts, ("ones" | "eye", n))
        target = ""
        for i, c in enumerate(term):
            if c in term[:i]:  # a repeated subscript: the gradient lies on the diagonal
                d = next(fresh)
                const.append((c + d, ("eye", size[c])))
                target += d
                continue
            if c not in present and term.count(c) == 1:  # summed in forward: broadcast back
                const.append((c, ("ones", size[c])))
            target += c
        for sub, (kind, n) in const:
            terms.append(sub)
            operands.append(_constant(xp, gy, kind, n))
        return Einsum(terms, target).call(xp, *operands)


def _constant(xp, like, kind, n):
    """A ones vector or an identity matrix of ``like``'s dtype and device (a constant tensor
    in a create_graph backward)."""
    if is_graph(xp):
        arr = like.array
        mod = backend.array_module(arr)
        return Tensor._wrap(mod.ones(n, dtype=arr.dtype) if kind == "ones" else mod.eye(n, dtype=arr.dtype))
    return xp.ones(n, dtype=like.dtype) if kind == "ones" else xp.eye(n, dtype=like.dtype)


# ---- parsing and checking the equation ----------------------------------------------------

def _parse(equation):
    """``equation`` as (list of operand terms, output term or None); a term is a list of
    letters and at most one ELLIPSIS. Spaces are ignored."""
    terms, cur, arrow = [], [], False
    i, n = 0, len(equation)
    while i < n:
        c = equation[i]
        where = "the output" if arrow else f"operand {len(terms)}"
        if c == " ":
            pass
        elif c in LETTERS:
            cur.append(c)
        elif c == ".":
            if equation[i:i + 3] != ELLIPSIS:
                raise ArgumentError(f"einsum: found '.' for {where} that is not part of an ellipsis '...' "
                                    f"(index {i} of the equation {equation!r})")
            if ELLIPSIS in cur:
                raise ArgumentError(f"einsum: {where} has more than one ellipsis '...' (equation {equation!r})")
            cur.append(ELLIPSIS)
            i += 3
            continue
        elif c == "," and not arrow:
            terms.append(cur)
            cur = []
        elif c == "-" and not arrow and equation[i + 1:i + 2] == ">":
            terms.append(cur)
            cur, arrow = [], True
            i += 2
            continue
        else:
            raise ArgumentError(f"einsum: invalid subscript {c!r} at index {i} of the equation {equation!r}: "
                                "subscripts must be letters in [a-zA-Z]" + (", ',' and '->' separate operands"
                                                                             " and the output" if c in ",->" else ""))
        i += 1
    if arrow:
        return terms, cur
    terms.append(cur)
    return terms, None


def _spell(term):
    return "".join(term)


def _sublists(args):
    """einsum(op0, sublist0, op1, sublist1, ..., [out_sublist]) as (equation, operands)."""
    def letters(sub, what):
        if not isinstance(sub, (list, tuple)):
            raise ArgumentTypeError(f"einsum: {what} must be a list of ints in [0, 52) or Ellipsis, "
                                    f"got {type(sub).__name__}")
        out = ""
        for s in sub:
            if s is Ellipsis:
                out += ELLIPSIS
            elif isinstance(s, (numbers.Integral, numpy.integer)) and not isinstance(s, bool):
                if not 0 <= s < 52:
                    raise ArgumentError(f"einsum: subscript {s} in the subscript list of {what} is not within "
                                        "the valid range [0, 52)")
                out += chr(ord("A") + s) if s < 26 else chr(ord("a") + s - 26)
            else:
                raise ArgumentTypeError(f"einsum: subscripts in the list of {what} must be ints or Ellipsis, "
                                        f"got {type(s).__name__}")
        return out
    ops, subs = args[0::2], args[1::2]
    if len(args) % 2:  # the last entry is the output's sublist
        ops, out = ops[:-1], "->" + letters(args[-1], "the output")
    else:
        out = ""
    equation = ",".join(letters(s, f"operand {k}") for k, s in enumerate(subs[:len(ops)])) + out
    return equation, tuple(ops)


@autocast_op
def einsum(equation, *operands):
    """Einstein summation over ``operands`` as described by ``equation`` (see the module
    docstring): ``einsum('ij,jk->ik', a, b)`` is ``a @ b``, ``einsum('ii', a)`` the trace,
    ``einsum('bn,anm,bm->ba', x, w, y)`` a bilinear map. The operands may also be given as
    one list (``einsum(eq, [a, b])``), or in PyTorch's sublist form
    (``einsum(a, [0, 1], b, [1, 2], [0, 2])``). All operands must share one dtype, which is
    the result's.

    Raises:
        ArgumentTypeError: ``equation`` is not a str, an operand is not a Tensor.
        ArgumentError: no operands; a bad character, a stray '.', two ellipses in one term;
            the number of operands differs from the equation's; an output letter repeats or
            appears in no operand.
        ShapeError: an operand's number of dimensions differs from its subscripts'; one
            letter (or an ellipsis dimension) has sizes that do not broadcast.
        DTypeError: the operands' dtypes differ.
    """
    if isinstance(equation, Tensor):
        equation, operands = _sublists((equation,) + operands)
    if not isinstance(equation, str):
        raise ArgumentTypeError(f"einsum: equation must be a str, got {type(equation).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ArgumentError("einsum: expected at least one operand after the equation, got none")
    for k, t in enumerate(operands):
        check_tensor("einsum", f"operand {k}", t)
    for k, t in enumerate(operands[1:], 1):
        if t.dtype != operands[0].dtype:
            raise DTypeError(f"einsum: expected all operands to have the same dtype, got {operands[0].dtype} for "
                             f"operand 0 and {t.dtype} for operand {k}")
    terms, out = _parse(equation)
    if len(terms) != len(operands):
        raise ArgumentError(f"einsum: the equation {equation!r} has subscripts for {len(terms)} operand(s), "
                            f"got {len(operands)} operand(s)")
    sizes, ell = _sizes(terms, operands)
    if out is None:  # implicit output: '...' then the letters used exactly once, sorted
        counts = [c for term in terms for c in term if c != ELLIPSIS]
        out = ([ELLIPSIS] if ell is not None else []) + sorted(c for c in set(counts) if counts.count(c) == 1)
    _check_output(out, sizes)
    return _run(terms, out, operands, sizes, ell or {})


def _sizes(terms, operands):
    """The size of every letter, and of the broadcast ellipsis dimensions (None without '...')."""
    sizes, ell = {}, None
    for k, (term, t) in enumerate(zip(terms, operands)):
        named = [c for c in term if c != ELLIPSIS]
        if (len(named) > t.ndim) if ELLIPSIS in term else (len(named) != t.ndim):
            raise ShapeError(f"einsum: the subscripts {_spell(term)!r} of operand {k} name {len(named)} "
                             f"dimension(s), but operand {k} has {t.ndim} (shape {tuple(t.shape)})"
                             + ("" if ELLIPSIS in term else " and no ellipsis '...' was given"))
        dims = _dims(term, t.ndim)
        own = {}
        for c, n in zip(dims, t.shape):
            if isinstance(c, int):  # an ellipsis dimension, counted from the right
                ell = ell if ell is not None else {}
                prev, ell[c] = ell.get(c), _broadcast(ell.get(c), n, k)
                if ell[c] is None:
                    raise ShapeError(f"einsum: dimension {c} from the right covered by '...' has size {n} in operand "
                                     f"{k}, which does not broadcast with size {prev[0]} in operand {prev[1]}")
                continue
            if c in own and own[c] != n:
                raise ShapeError(f"einsum: subscript {c!r} is repeated in operand {k} but its sizes differ "
                                 f"({own[c]} != {n}, shape {tuple(t.shape)})")
            own[c] = n
            prev, sizes[c] = sizes.get(c), _broadcast(sizes.get(c), n, k)
            if sizes[c] is None:
                raise ShapeError(f"einsum: subscript {c!r} has size {n} in operand {k}, which does not broadcast "
                                 f"with size {prev[0]} in operand {prev[1]}")
        if ELLIPSIS in term and ell is None:
            ell = {}
    return sizes, ell


def _broadcast(prev, n, k):
    """(size, operand that set it) of one letter after meeting size ``n`` in operand ``k``;
    None when the sizes do not broadcast."""
    if prev is None or prev[0] == 1:
        return (n, k) if prev is None or n != 1 else prev
    return prev if n in (1, prev[0]) else None


def _dims(term, ndim):
    """One entry per dimension: its letter, or for '...' its position from the right (1, 2, ...)."""
    if ELLIPSIS not in term:
        return list(term)
    i = term.index(ELLIPSIS)
    n_ell = ndim - (len(term) - 1)
    return term[:i] + list(range(n_ell, 0, -1)) + term[i + 1:]


def _check_output(out, sizes):
    seen = set()
    for c in out:
        if c == ELLIPSIS:
            continue
        if c not in sizes:
            raise ArgumentError(f"einsum: output subscript {c!r} does not appear in the equation for any operand")
        if c in seen:
            raise ArgumentError(f"einsum: output subscript {c!r} appears more than once in the output")
        seen.add(c)


def _run(terms, out, operands, sizes, ell):
    """Spell '...' with letters of its own, squeeze broadcast size-1 dimensions, apply Einsum."""
    used = set(sizes)
    n_ell = max(ell, default=0)
    free = [c for c in LETTERS if c not in used]
    # the backward needs one more letter per repeated subscript of an operand
    repeats = max((len(t) - len(set(t)) for t in terms), default=0)
    if len(used) + n_ell + repeats > len(LETTERS):
        raise ArgumentError(f"einsum: the equation needs {len(used) + n_ell + repeats} distinct subscripts "
                            f"(with '...' and the backward's diagonals); at most {len(LETTERS)} are supported")
    ell_letters = {d: free[n_ell - d] for d in range(1, n_ell + 1)}  # position from the right -> letter
    full = {**{c: s[0] for c, s in sizes.items()}, **{ell_letters[d]: s[0] for d, s in ell.items()}}
    canon_terms, tensors = [], []
    for term, t in zip(terms, operands):
        letters = [ell_letters[c] if isinstance(c, int) else c for c in _dims(term, t.ndim)]
        keep = [i for i, (c, n) in enumerate(zip(letters, t.shape)) if not (n == 1 and full[c] != 1)]
        if len(keep) < t.ndim:  # size-1 dimensions broadcast against a larger size: squeeze them
            t = shape.reshape(t, tuple(t.shape[i] for i in keep))
            letters = [letters[i] for i in keep]
        canon_terms.append("".join(letters))
        tensors.append(t)
    canon_out = "".join(c for o in out for c in ([ell_letters[d] for d in range(n_ell, 0, -1)]
                                                  if o == ELLIPSIS else [o]))
    return Einsum(canon_terms, canon_out).apply(*tensors)
