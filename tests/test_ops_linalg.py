"""Matrix products (mm, bmm, mv, dot, outer/ger, addmm, addmv, baddbmm, addbmm) and einsum:
forward, dtype and gradients against PyTorch in float32/float64, gradcheck and gradgradcheck,
on every backend; then the bad inputs, each a typed error naming the op."""
import numpy
import pytest
from helpers import assert_close, check_op, rng, torch

import tinynet
from tinynet import errors
from tinynet.errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError

R = rng(3)


def n(*shape):
    return R.standard_normal(shape)


NAN = numpy.full((3, 2), numpy.nan)

# name: (tinynet fn, torch fn, inputs); transposed operands (.T / .mT inside the lambdas) are
# non-contiguous views
MATRIX = {
    "mm": (tinynet.mm, torch.mm, [n(3, 4), n(4, 2)]),
    "mm_transposed": (lambda a, b: tinynet.mm(a.T, b.T), lambda a, b: torch.mm(a.T, b.T), [n(4, 3), n(2, 4)]),
    "mm_method": (lambda a, b: a.mm(b), lambda a, b: a.mm(b), [n(2, 3), n(3, 2)]),
    "mm_empty_inner": (tinynet.mm, torch.mm, [n(2, 0), n(0, 3)]),
    "mm_empty_rows": (tinynet.mm, torch.mm, [n(0, 3), n(3, 2)]),
    "bmm": (tinynet.bmm, torch.bmm, [n(2, 3, 4), n(2, 4, 2)]),
    "bmm_transposed": (lambda a, b: a.bmm(b.mT), lambda a, b: a.bmm(b.mT), [n(2, 3, 4), n(2, 2, 4)]),
    "bmm_empty_batch": (tinynet.bmm, torch.bmm, [n(0, 2, 3), n(0, 3, 2)]),
    "mv": (tinynet.mv, torch.mv, [n(3, 4), n(4)]),
    "mv_transposed": (lambda a, v: a.T.mv(v), lambda a, v: a.T.mv(v), [n(4, 3), n(4)]),
    "mv_empty": (tinynet.mv, torch.mv, [n(2, 0), n(0)]),
    "dot": (tinynet.dot, torch.dot, [n(5), n(5)]),
    "dot_strided": (lambda a, b: a[::2].dot(b), lambda a, b: a[::2].dot(b), [n(6), n(3)]),
    "dot_empty": (tinynet.dot, torch.dot, [n(0), n(0)]),
    "outer": (tinynet.outer, torch.outer, [n(3), n(4)]),
    "ger": (lambda a, b: a.ger(b), lambda a, b: a.ger(b), [n(3), n(2)]),
    "outer_empty": (tinynet.outer, torch.outer, [n(0), n(2)]),
    "addmm": (tinynet.addmm, torch.addmm, [n(3, 2), n(3, 4), n(4, 2)]),
    "addmm_scaled": (lambda c, a, b: tinynet.addmm(c, a, b, beta=0.5, alpha=-2),
                     lambda c, a, b: torch.addmm(c, a, b, beta=0.5, alpha=-2), [n(3, 2), n(3, 4), n(4, 2)]),
    "addmm_row": (lambda c, a, b: c.addmm(a.T, b, alpha=3), lambda c, a, b: c.addmm(a.T, b, alpha=3),
                  [n(2), n(4, 3), n(4, 2)]),
    "addmm_column": (tinynet.addmm, torch.addmm, [n(3, 1), n(3, 4), n(4, 2)]),
    "addmm_scalar_input": (lambda c, a, b: tinynet.addmm(c, a, b, beta=2),
                           lambda c, a, b: torch.addmm(c, a, b, beta=2), [n(), n(3, 4), n(4, 2)]),
    "addmm_beta0_nan": (lambda c, a, b: tinynet.addmm(c, a, b, beta=0),
                        lambda c, a, b: torch.addmm(c, a, b, beta=0), [NAN, n(3, 4), n(4, 2)]),
    "addmm_alpha0": (lambda c, a, b: tinynet.addmm(c, a, b, alpha=0.0, beta=1.5),
                     lambda c, a, b: torch.addmm(c, a, b, alpha=0.0, beta=1.5), [n(3, 2), n(3, 4), n(4, 2)]),
    "addmm_empty_inner": (tinynet.addmm, torch.addmm, [n(3, 2), n(3, 0), n(0, 2)]),
    "addmv": (lambda c, a, v: tinynet.addmv(c, a, v, beta=2, alpha=0.5),
              lambda c, a, v: torch.addmv(c, a, v, beta=2, alpha=0.5), [n(3), n(3, 4), n(4)]),
    "addmv_broadcast_T": (lambda c, a, v: c.addmv(a.T, v), lambda c, a, v: c.addmv(a.T, v), [n(1), n(4, 3), n(4)]),
    "addmv_beta0_nan": (lambda c, a, v: tinynet.addmv(c, a, v, beta=0),
                        lambda c, a, v: torch.addmv(c, a, v, beta=0), [NAN[:, 0], n(3, 4), n(4)]),
    "baddbmm": (tinynet.baddbmm, torch.baddbmm, [n(2, 3, 2), n(2, 3, 4), n(2, 4, 2)]),
    "baddbmm_broadcast": (lambda c, a, b: c.baddbmm(a, b.mT, beta=-1, alpha=2),
                          lambda c, a, b: c.baddbmm(a, b.mT, beta=-1, alpha=2), [n(3, 1), n(2, 3, 4), n(2, 2, 4)]),
    "baddbmm_beta0_nan": (lambda c, a, b: tinynet.baddbmm(c, a, b, beta=0),
                          lambda c, a, b: torch.baddbmm(c, a, b, beta=0), [NAN, n(2, 3, 4), n(2, 4, 2)]),
    "baddbmm_batch_input": (tinynet.baddbmm, torch.baddbmm, [n(1, 3, 2), n(2, 3, 4), n(2, 4, 2)]),
    "addbmm": (lambda c, a, b: tinynet.addbmm(c, a, b, beta=0.5, alpha=2),
               lambda c, a, b: torch.addbmm(c, a, b, beta=0.5, alpha=2), [n(3, 2), n(2, 3, 4), n(2, 4, 2)]),
    "addbmm_broadcast": (lambda c, a, b: c.addbmm(a, b), lambda c, a, b: c.addbmm(a, b),
                         [n(2), n(3, 3, 2), n(3, 2, 2)]),
}


def check(device, ours, theirs, inputs):
    """check_op with second derivatives; for zero-size inputs only the comparison with
    PyTorch (forward, dtype, gradients): tinynet's gradcheck cannot build the Jacobian of a
    zero-size input yet."""
    if all(numpy.size(a) for a in inputs):
        return check_op(device, ours, theirs, inputs, second_order=True)
    for dt in ("float32", "float64"):
        ts = [tinynet.tensor(numpy.asarray(a, dtype=dt), device=device, requires_grad=True) for a in inputs]
        tt = [torch.tensor(numpy.asarray(a, dtype=dt), requires_grad=True) for a in inputs]
        out, ref = ours(*ts), theirs(*tt)
        assert str(out.dtype) == str(ref.dtype).replace("torch.", "")
        assert_close(out, ref)
        r = rng(7).standard_normal(out.shape).astype(dt)
        (out * tinynet.tensor(r, device=device)).sum().backward()
        (ref * torch.tensor(r)).sum().backward()
        for t, u in zip(ts, tt):
            assert_close(t.grad, u.grad)


@pytest.mark.parametrize("name", sorted(MATRIX))
def test_matrix_op_matches_torch(name, device):
    ours, theirs, inputs = MATRIX[name]
    check(device, ours, theirs, inputs)


def E(eq):
    return (lambda *xs: tinynet.einsum(eq, *xs)), (lambda *xs: torch.einsum(eq, *xs))


# name: (equation or (ours, theirs), inputs)
EINSUM = {
    "matmul": ("ij,jk->ik", [n(3, 4), n(4, 2)]),
    "matmul_transposed": ((lambda a, b: tinynet.einsum("ij,jk->ik", a.T, b),
                           lambda a, b: torch.einsum("ij,jk->ik", a.T, b)), [n(4, 3), n(4, 2)]),
    "batched": ("bij,bjk->bik", [n(2, 3, 4), n(2, 4, 2)]),
    "outer": ("i,j->ij", [n(3), n(4)]),
    "dot": ("i,i->", [n(4), n(4)]),
    "hadamard": ("ij,ij->ij", [n(2, 3), n(2, 3)]),
    "trace": ("ii->", [n(3, 3)]),
    "trace_implicit": ("ii", [n(3, 3)]),
    "diagonal": ("ii->i", [n(3, 3)]),
    "diagonal_3": ("iii->i", [n(2, 2, 2)]),
    "diagonal_with_other": ("iij,j->ji", [n(3, 3, 2), n(2)]),
    "diagonal_times_vector": ("ii,i->i", [n(3, 3), n(3)]),
    "transpose": ("ij->ji", [n(2, 3)]),
    "identity": ("ij->ij", [n(2, 3)]),
    "sum_all": ("ij->", [n(2, 3)]),
    "sum_rows": ("ij->j", [n(2, 3)]),
    "sum_in_product": ("ijk,jl->il", [n(2, 3, 2), n(3, 4)]),
    "ellipsis_broadcast": ("...ij,...jk->...ik", [n(2, 1, 2, 3), n(3, 3, 2)]),
    "ellipsis_middle": ("i...j,j->...i", [n(2, 3, 4), n(4)]),
    "ellipsis_summed": ("...ij->ij", [n(2, 2, 3)]),
    "ellipsis_empty": ("...ij,jk->...ik", [n(2, 3), n(3, 2)]),
    "ellipsis_implicit": ("...ij,...jk", [n(2, 2, 3), n(2, 3, 2)]),
    "ellipsis_sum": ("...i->...", [n(2, 3, 4)]),
    "bilinear": ("bn,anm,bm->ba", [n(2, 3), n(4, 3, 2), n(2, 2)]),
    "implicit": ("ij,kj", [n(2, 3), n(4, 3)]),
    "implicit_upper_first": ("aB", [n(2, 3)]),
    "upper_case": ("Ab,bC->AC", [n(2, 3), n(3, 2)]),
    "spaces": (" i j , j k -> i k ", [n(2, 3), n(3, 2)]),
    "scalar_operand": ("i,->i", [n(3), n()]),
    "broadcast_label": ("ij,jk->ik", [n(2, 1), n(3, 2)]),
    "broadcast_label_out": ("ij,kj->ikj", [n(2, 1), n(3, 2)]),
    "empty_inner": ("ij,jk->ik", [n(2, 0), n(0, 3)]),
    "empty_diagonal": ("ii->i", [n(0, 0)]),
    "three_operands": ("ij,jk,kl->il", [n(2, 3), n(3, 2), n(2, 2)]),
    "list_form": ((lambda a, b: tinynet.einsum("ij,jk", [a, b]), lambda a, b: torch.einsum("ij,jk", [a, b])),
                  [n(2, 3), n(3, 2)]),
    "sublist_form": ((lambda a, b: tinynet.einsum(a, [Ellipsis, 0, 1], b, [1, 27], [Ellipsis, 27, 0]),
                      lambda a, b: torch.einsum(a, [Ellipsis, 0, 1], b, [1, 27], [Ellipsis, 27, 0])),
                     [n(2, 2, 3), n(3, 2)]),
    "sublist_implicit": ((lambda a: tinynet.einsum(a, [26, 25]), lambda a: torch.einsum(a, [26, 25])), [n(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(EINSUM))
def test_einsum_matches_torch(name, device):
    spec, inputs = EINSUM[name]
    ours, theirs = E(spec) if isinstance(spec, str) else spec
    check(device, ours, theirs, inputs)


def test_integer_products_match_torch(device):
    a, b = numpy.arange(6).reshape(2, 3), numpy.arange(12).reshape(3, 4) - 5
    ta, tb = tinynet.tensor(a, device=device), tinynet.tensor(b, device=device)
    for ours, theirs in [(tinynet.mm(ta, tb), torch.mm(torch.tensor(a), torch.tensor(b))),
                         (tinynet.einsum("ij,jk->ik", ta, tb),
                          torch.einsum("ij,jk->ik", torch.tensor(a), torch.tensor(b))),
                         # PyTorch truncates a float beta/alpha for integer tensors
                         (tinynet.addmm(tb[0], ta, tb, beta=2.7, alpha=1.5),
                          torch.addmm(torch.tensor(b)[0], torch.tensor(a), torch.tensor(b), beta=2.7, alpha=1.5))]:
        assert ours.dtype == numpy.int64 and not ours.requires_grad
        assert_close(ours, theirs, rtol=0, atol=0)


def test_outer_promotes_like_mul(device):
    a = tinynet.tensor([1, 2, 3], device=device)
    b = tinynet.tensor([0.5, -1.0], dtype=tinynet.float32, device=device)
    out = tinynet.outer(a, b)
    ref = torch.outer(torch.tensor([1, 2, 3]), torch.tensor([0.5, -1.0]))
    assert out.dtype == tinynet.float32 and ref.dtype == torch.float32
    assert_close(out, ref)


def test_beta_zero_ignores_nan_and_input_gets_zero_gradient(device):
    c = tinynet.full((2, 3), float("nan"), device=device, requires_grad=True)
    a = tinynet.randn(2, 4, device=device, requires_grad=True)
    b = tinynet.randn(4, 3, device=device, requires_grad=True)
    out = tinynet.addmm(c, a, b, beta=0)
    assert bool(tinynet.isfinite(out).all())
    out.sum().backward()
    assert_close(c.grad, numpy.zeros((2, 3)))
    assert bool(tinynet.isfinite(a.grad).all())


def test_einsum_output_is_a_new_tensor(device):
    x = tinynet.randn(2, 3, device=device)
    for eq in ("ij->ij", "ij->ji", "ii->i"):
        y = tinynet.einsum(eq, x if eq != "ii->i" else x[:, :2])
        y.mul_(0)
        assert bool((x != 0).all())


def test_einsum_second_derivative_through_create_graph(device):
    x = tinynet.tensor(n(3, 3), device=device, requires_grad=True)
    y = tinynet.einsum("ij,jk,ki->", x, x, x)  # trace(x^3): d/dx = 3 (x^2)^T
    (g,) = tinynet.autograd.grad(y, [x], create_graph=True)
    xt = torch.tensor(x.detach().numpy(force=True), requires_grad=True)
    (gt,) = torch.autograd.grad(torch.einsum("ij,jk,ki->", xt, xt, xt), [xt], create_graph=True)
    assert_close(g, gt, rtol=1e-10, atol=1e-12)
    (gg,) = tinynet.autograd.grad(g.sum(), [x])
    (ggt,) = torch.autograd.grad(gt.sum(), [xt])
    assert_close(gg, ggt, rtol=1e-10, atol=1e-12)


def test_methods_are_attached():
    for name in ("mm", "bmm", "mv", "dot", "outer", "ger", "addmm", "addmv", "baddbmm", "addbmm"):
        assert getattr(tinynet.Tensor, name) is getattr(tinynet, name)
    assert tinynet.einsum is tinynet.ops.einsum.einsum


Z = tinynet.zeros
F64 = tinynet.float64
BAD = [
    ("mm 1-D", lambda: tinynet.mm(Z(3), Z(3, 4)), ShapeError, r"mm: expected input to be 2-D, got 1-D of shape \(3,\)"),
    ("mm 3-D mat2", lambda: tinynet.mm(Z(2, 3), Z(2, 3, 4)), ShapeError, r"mm: expected mat2 to be 2-D"),
    ("mm inner", lambda: tinynet.mm(Z(2, 3), Z(4, 4)), ShapeError,
     r"mm: input and mat2 shapes cannot be multiplied \(\(2, 3\) and \(4, 4\): 3 != 4\)"),
    ("mm dtype", lambda: tinynet.mm(Z(2, 3), Z(3, 4, dtype=F64)), DTypeError, "mm: .*float32 and float64"),
    ("mm list", lambda: tinynet.mm([[1.0]], Z(1, 1)), ArgumentTypeError, "mm: input must be a Tensor, got list"),
    ("bmm 2-D", lambda: tinynet.bmm(Z(2, 3), Z(3, 4)), ShapeError, r"bmm: expected input to be 3-D, got 2-D"),
    ("bmm batch", lambda: tinynet.bmm(Z(2, 2, 3), Z(3, 3, 4)), ShapeError, r"bmm: .*same batch size.*\(2 != 3\)"),
    ("bmm inner", lambda: tinynet.bmm(Z(2, 2, 3), Z(2, 4, 4)), ShapeError, r"bmm: .*cannot be multiplied.*3 != 4"),
    ("bmm dtype", lambda: tinynet.bmm(Z(2, 2, 3), Z(2, 3, 4, dtype=F64)), DTypeError, "bmm"),
    ("mv 1-D", lambda: tinynet.mv(Z(3), Z(3)), ShapeError, "mv: expected input to be 2-D"),
    ("mv 2-D vec", lambda: tinynet.mv(Z(2, 3), Z(3, 1)), ShapeError, "mv: expected vec to be 1-D"),
    ("mv size", lambda: tinynet.mv(Z(2, 3), Z(4)), ShapeError, r"mv: .*\(2, 3\) and \(4,\): 3 != 4"),
    ("mv dtype", lambda: tinynet.mv(Z(2, 3), Z(3, dtype=F64)), DTypeError, "mv: expected input and vec"),
    ("dot 2-D", lambda: tinynet.dot(Z(3, 1), Z(3)), ShapeError, "dot: expected input to be 1-D"),
    ("dot length", lambda: tinynet.dot(Z(3), Z(4)), ShapeError, r"dot: .*same length.*\(3,\) and \(4,\)"),
    ("dot dtype", lambda: tinynet.dot(Z(3), Z(3, dtype=F64)), DTypeError, "dot"),
    ("outer 2-D", lambda: tinynet.outer(Z(3, 1), Z(2)), ShapeError, "outer: expected input to be 1-D"),
    ("outer 0-D", lambda: tinynet.ger(Z(3), Z(())), ShapeError, "outer: expected vec2 to be 1-D"),
    ("addmm input shape", lambda: tinynet.addmm(Z(3, 4), Z(2, 3), Z(3, 4)), ShapeError,
     r"addmm: input of shape \(3, 4\) does not broadcast to .*\(2, 4\)"),
    ("addmm input ndim", lambda: tinynet.addmm(Z(5, 2, 4), Z(2, 3), Z(3, 4)), ShapeError, "addmm: input of shape"),
    ("addmm mat1 1-D", lambda: tinynet.addmm(Z(2, 4), Z(3), Z(3, 4)), ShapeError, "addmm: expected mat1 to be 2-D"),
    ("addmm inner", lambda: tinynet.addmm(Z(2, 4), Z(2, 3), Z(2, 4)), ShapeError,
     r"addmm: mat1 and mat2 shapes cannot be multiplied \(\(2, 3\) and \(2, 4\)"),
    ("addmm input dtype", lambda: tinynet.addmm(Z(2, 4, dtype=F64), Z(2, 3), Z(3, 4)), DTypeError,
     "addmm: expected input and mat1 to have the same dtype"),
    ("addmm mats dtype", lambda: tinynet.addmm(Z(2, 4), Z(2, 3), Z(3, 4, dtype=F64)), DTypeError,
     "addmm: expected input and mat2"),
    ("addmm beta str", lambda: tinynet.addmm(Z(2, 4), Z(2, 3), Z(3, 4), beta="a"), ArgumentTypeError,
     "addmm: beta must be a real number, got str"),
    ("addmm alpha complex", lambda: tinynet.addmm(Z(2, 4), Z(2, 3), Z(3, 4), alpha=1j), ArgumentTypeError,
     "addmm: alpha"),
    ("addmv input", lambda: tinynet.addmv(Z(2), Z(3, 5), Z(5)), ShapeError, r"addmv: input of shape \(2,\)"),
    ("addmv vec", lambda: tinynet.addmv(Z(3), Z(3, 5), Z(5, 1)), ShapeError, "addmv: expected vec to be 1-D"),
    ("baddbmm 2-D", lambda: tinynet.baddbmm(Z(3, 4), Z(3, 5), Z(5, 4)), ShapeError,
     "baddbmm: expected batch1 to be 3-D"),
    ("baddbmm batch", lambda: tinynet.baddbmm(Z(3, 4), Z(2, 3, 5), Z(1, 5, 4)), ShapeError,
     r"baddbmm: batch1 and batch2 must have the same number of batches.*\(2 != 1\)"),
    ("baddbmm input", lambda: tinynet.baddbmm(Z(3, 3, 4), Z(2, 3, 5), Z(2, 5, 4)), ShapeError,
     r"baddbmm: input of shape \(3, 3, 4\) does not broadcast to .*\(2, 3, 4\)"),
    ("baddbmm dtype", lambda: tinynet.baddbmm(Z(3, 4, dtype=F64), Z(2, 3, 5), Z(2, 5, 4)), DTypeError, "baddbmm"),
    ("addbmm 3-D input", lambda: tinynet.addbmm(Z(1, 3, 4), Z(2, 3, 5), Z(2, 5, 4)), ShapeError, "addbmm: input"),
    ("addbmm batch", lambda: tinynet.addbmm(Z(3, 4), Z(2, 3, 5), Z(3, 5, 4)), ShapeError, "addbmm: .*batches"),
    ("einsum few operands", lambda: tinynet.einsum("ij,jk", Z(2, 3)), ArgumentError,
     "einsum: .*subscripts for 2 operand.*got 1"),
    ("einsum many operands", lambda: tinynet.einsum("ij", Z(2, 3), Z(3, 4)), ArgumentError,
     "einsum: .*subscripts for 1 operand.*got 2"),
    ("einsum no operands", lambda: tinynet.einsum("ij"), ArgumentError, "einsum: expected at least one operand"),
    ("einsum ndim", lambda: tinynet.einsum("ijk,jk", Z(2, 3), Z(3, 4)), ShapeError,
     r"einsum: the subscripts 'ijk' of operand 0 name 3 dimension\(s\), but operand 0 has 2 \(shape \(2, 3\)\)"),
    ("einsum ndim ellipsis", lambda: tinynet.einsum("...ijk", Z(2, 3)), ShapeError, "einsum: .*operand 0"),
    ("einsum ndim 0", lambda: tinynet.einsum("", Z(3)), ShapeError, "einsum: .*name 0 dimension"),
    ("einsum size", lambda: tinynet.einsum("ij,jk", Z(2, 3), Z(4, 4)), ShapeError,
     "einsum: subscript 'j' has size 4 in operand 1, which does not broadcast with size 3 in operand 0"),
    ("einsum diagonal size", lambda: tinynet.einsum("ii", Z(2, 3)), ShapeError,
     r"einsum: subscript 'i' is repeated in operand 0 but its sizes differ \(2 != 3"),
    ("einsum ellipsis size", lambda: tinynet.einsum("...ij,...jk", Z(2, 2, 3), Z(5, 3, 4)), ShapeError,
     r"einsum: dimension 1 from the right covered by '\.\.\.' has size 5 in operand 1.*size 2 in operand 0"),
    ("einsum output letter", lambda: tinynet.einsum("ij,jk->il", Z(2, 3), Z(3, 4)), ArgumentError,
     "einsum: output subscript 'l' does not appear"),
    ("einsum output repeat", lambda: tinynet.einsum("ij,jk->ii", Z(2, 3), Z(3, 4)), ArgumentError,
     "einsum: output subscript 'i' appears more than once"),
    ("einsum digit", lambda: tinynet.einsum("i1,jk", Z(2, 3), Z(3, 4)), ArgumentError,
     "einsum: invalid subscript '1' at index 1 of the equation 'i1,jk'"),
    ("einsum two arrows", lambda: tinynet.einsum("ij->i->j", Z(2, 3)), ArgumentError,
     "einsum: invalid subscript '-' at index 5"),
    ("einsum comma in output", lambda: tinynet.einsum("ij->i,j", Z(2, 3)), ArgumentError,
     "einsum: invalid subscript ','"),
    ("einsum stray dot", lambda: tinynet.einsum("..ij", Z(2, 3)), ArgumentError,
     r"einsum: found '\.' for operand 0 that is not part of an ellipsis"),
    ("einsum two ellipses", lambda: tinynet.einsum("...i...", Z(2, 3)), ArgumentError,
     "einsum: operand 0 has more than one ellipsis"),
    ("einsum two ellipses out", lambda: tinynet.einsum("...ij->......", Z(2, 3)), ArgumentError,
     "einsum: the output has more than one ellipsis"),
    ("einsum dtype", lambda: tinynet.einsum("ij,jk", Z(2, 3), Z(3, 4, dtype=F64)), DTypeError,
     "einsum: .*float32 for operand 0 and float64 for operand 1"),
    ("einsum equation type", lambda: tinynet.einsum(1, Z(2, 3)), ArgumentTypeError,
     "einsum: equation must be a str, got int"),
    ("einsum operand type", lambda: tinynet.einsum("ij", numpy.ones((2, 3))), ArgumentTypeError,
     "einsum: operand 0 must be a Tensor, got ndarray"),
    ("einsum sublist range", lambda: tinynet.einsum(Z(2, 3), [0, 52]), ArgumentError,
     r"einsum: subscript 52 .*operand 0 .*\[0, 52\)"),
    ("einsum sublist type", lambda: tinynet.einsum(Z(2, 3), [0, "a"]), ArgumentTypeError,
     "einsum: subscripts in the list of operand 0 must be ints"),
]


@pytest.mark.parametrize("name,call,exc,pattern", BAD, ids=[b[0] for b in BAD])
def test_bad_input_raises_typed_error(name, call, exc, pattern):
    with pytest.raises(exc, match=pattern) as info:
        call()
    assert isinstance(info.value, errors.TinynetError)
