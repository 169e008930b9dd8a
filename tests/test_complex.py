"""Complex tensors (complex64, complex128) against PyTorch: dtypes and promotion, creation,
the parts and views, the ops that take them with PyTorch's gradient convention (checked
against torch and against float64 finite differences through the real and imaginary
parts), and the refusal of every other op with a typed error (a walk of the public API)."""
import inspect
import itertools
import os
import warnings

import numpy
import pytest

import tinynet
import tinynet.nn.functional as F
from tinynet import errors
from tinynet.autograd import Op

from helpers import as_numpy, assert_close, gradcheck, rng

torch = pytest.importorskip("torch")

Z = numpy.array([[1 + 2j, -0.5 + 0.25j, 3 - 1j], [0.1 - 0.2j, 2 + 0j, -1 - 1j]])
R = numpy.array([[1.0, -0.5, 3.0], [0.1, 2.0, -1.5]])


def _dtype_name(t):
    return t.dtype.name if isinstance(t, tinynet.Tensor) else str(t.dtype).split(".")[-1]


# ---- dtypes, promotion, creation ----------------------------------------------------------------
def test_dtype_names_and_queries():
    assert tinynet.complex64 is tinynet.cfloat and tinynet.complex128 is tinynet.cdouble
    z = tinynet.zeros(2, dtype=tinynet.cfloat)
    assert z.is_complex() and tinynet.is_complex(z) and not z.is_floating_point() and z.is_signed()
    assert not tinynet.ones(2).is_complex()
    assert tinynet.finfo(tinynet.complex64).eps == tinynet.finfo(tinynet.float32).eps
    assert tinynet.promote_types(tinynet.float64, tinynet.complex64) == tinynet.complex128
    assert tinynet.promote_types(tinynet.int64, tinynet.complex64) == tinynet.complex64
    assert not tinynet.can_cast(tinynet.complex64, tinynet.float64)
    assert tinynet.can_cast(tinynet.float64, tinynet.complex64)


KINDS = {"bool": True, "int64": 3, "float32": 1.5, "float64": 2.5, "complex64": 1 - 2j, "complex128": 0.5 + 1j}


def _operand(m, kind, dt):
    if kind == "number":
        return {"bool": True, "int64": 3, "float32": 1.5, "complex64": 1 - 2j}.get(dt)
    shape = () if kind == "0-d" else (2,)
    return m.full(shape, KINDS[dt], dtype=getattr(m, dt))


@pytest.mark.parametrize("op", ["add", "mul", "div"])
def test_promotion_with_complex_matches_torch(op):
    seen = 0
    for (ka, da), (kb, db) in itertools.product(itertools.product(["tensor", "0-d"], KINDS), repeat=2):
        if "complex" not in da + db:
            continue
        a, b = _operand(tinynet, ka, da), _operand(tinynet, kb, db)
        ta, tb = _operand(torch, ka, da), _operand(torch, kb, db)
        ours, ref = getattr(tinynet, op)(a, b), getattr(torch, op)(ta, tb)
        assert _dtype_name(ours) == _dtype_name(ref), f"{op}({ka} {da}, {kb} {db})"
        assert_close(ours, ref, rtol=1e-6, atol=1e-6)
        seen += 1
    for da in KINDS:  # a Python number as the second operand
        ours, ref = getattr(tinynet, op)(_operand(tinynet, "tensor", da), 2j), getattr(torch, op)(
            _operand(torch, "tensor", da), 2j)
        assert _dtype_name(ours) == _dtype_name(ref), f"{op}({da}, 2j)"
    assert seen > 50


def test_creation_of_complex_tensors_matches_torch(device):
    for data in ([1 + 2j, 3.0], [[1j], [2]], 1 - 1j, numpy.array([1j, 2], dtype=numpy.complex128),
                 numpy.array([1j], dtype=numpy.complex64)):
        ours, ref = tinynet.tensor(data, device=device), torch.tensor(data)
        assert ours.dtype.name == _dtype_name(ref)
        assert_close(ours, ref)
    for maker in ("zeros", "ones", "empty"):
        for dt in ("complex64", "complex128"):
            t = getattr(tinynet, maker)(2, 3, dtype=getattr(tinynet, dt), device=device)
            assert t.dtype.name == dt and t.shape == (2, 3)
    full = tinynet.full((2,), 1 - 2j, device=device)
    assert full.dtype == tinynet.complex64 and full.tolist() == [1 - 2j, 1 - 2j]
    assert tinynet.from_numpy(numpy.array([1j])).dtype == tinynet.complex128
    assert tinynet.tensor([2 + 1j]).item() == 2 + 1j and "complex64" in repr(tinynet.tensor([1j]))
    with pytest.raises(errors.DTypeError):
        tinynet.tensor([1 + 2j], dtype=tinynet.float32)
    with pytest.raises(errors.DTypeError):
        tinynet.full((2,), 1j, dtype=tinynet.float32)


def test_casts_between_real_and_complex(device):
    x = tinynet.tensor(R, device=device, requires_grad=True)
    z = x.to(tinynet.complex64)
    assert z.dtype == tinynet.complex64 and z.requires_grad
    (z * (1 - 1j)).imag.sum().backward()
    assert_close(x.grad, -numpy.ones_like(R))  # d Im((1 - i) x) / dx = -1
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        back = tinynet.tensor(Z, device=device).to(tinynet.float64)
    assert_close(back, Z.real)


# ---- parts, views and the ops that take complex tensors, against PyTorch ------------------------
def test_parts_and_views_share_memory(device):
    z = tinynet.tensor(Z, device=device)
    pairs = tinynet.view_as_real(z)
    assert pairs.shape == (2, 3, 2) and pairs.dtype == tinynet.float64
    pairs[0, 1, 1] = 7.0  # written through to the imaginary part
    assert z[0, 1].item() == -0.5 + 7j
    z.real[1, 0] = 5.0
    assert z[1, 0].item() == 5 - 0.2j
    back = tinynet.view_as_complex(pairs)
    back[0, 0] = 0j
    assert z[0, 0].item() == 0j
    assert tinynet.real(tinynet.ones(2)).dtype == tinynet.float32


# name -> call(lib, z, x): z a complex leaf, x a real leaf; the result is made real for the loss
GRAD_CASES = {
    "abs": lambda m, z, x: z.abs(),
    "angle": lambda m, z, x: m.angle(z),
    "angle of a real tensor": lambda m, z, x: m.angle(x),
    "real and imag": lambda m, z, x: z.real * 2 + z.imag * x,
    "view_as_real": lambda m, z, x: m.view_as_real(z * x),
    "view_as_complex": lambda m, z, x: m.view_as_complex(m.stack([x, x * x], -1)).abs(),
    "complex": lambda m, z, x: m.complex(x, x * 3 - 1).angle(),
    "polar": lambda m, z, x: m.view_as_real(m.polar(x.abs() + 0.5, x * 2)),
    "conj": lambda m, z, x: m.view_as_real(m.conj(z) * z * z),
    "mul and div": lambda m, z, x: (z * x / (z + 3)).abs(),
    "real divided by complex": lambda m, z, x: (x / z).imag,
    "add, sub, neg with numbers": lambda m, z, x: (-(z + 1j) - x * 2j + 0.5).abs(),
    "sub with a complex alpha": lambda m, z, x: m.sub(z, z * z, alpha=1 - 2j).real,
    "exp": lambda m, z, x: m.view_as_real(m.exp(z * 0.5j)),
    "sum and mean": lambda m, z, x: m.cat([z.sum(0), z.mean(1), z.mean()[None]]).abs(),
    "reshape, permute, expand, index": lambda m, z, x: z.reshape(3, 2).t().expand(2, 2, 3)[:, 1, ::2].abs(),
    "cat, flip, roll, split": lambda m, z, x: m.cat([z.flip(0), m.roll(z, 1, 1), *z.split(1, 1)], 1).real,
    "casts and clone": lambda m, z, x: (z.to(m.complex128).clone() * x.to(m.complex128)).imag,
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_complex_ops_match_torch_and_finite_differences(name, device):
    call = GRAD_CASES[name]
    for cdt, rdt in ((numpy.complex64, numpy.float32), (numpy.complex128, numpy.float64)):
        rtol, atol = (2e-5, 2e-5) if rdt == numpy.float32 else (1e-10, 1e-11)
        z = tinynet.tensor(Z.astype(cdt), device=device, requires_grad=True)
        x = tinynet.tensor(R.astype(rdt), device=device, requires_grad=True)
        tz, tx = torch.tensor(Z.astype(cdt), requires_grad=True), torch.tensor(R.astype(rdt), requires_grad=True)
        out, ref = call(tinynet, z, x), call(torch, tz, tx)
        assert out.dtype.name == _dtype_name(ref) and not out.is_complex()
        assert_close(out, ref, rtol=rtol, atol=atol, what=f"{name} forward")
        r = rng(2).standard_normal(tuple(ref.shape)).astype(rdt)
        (out * tinynet.tensor(r, device=device)).sum().backward()
        (ref * torch.tensor(r)).sum().backward()
        for ours, theirs, what in ((z, tz, "complex input"), (x, tx, "real input")):
            if theirs.grad is None:
                assert ours.grad is None or not as_numpy(ours.grad).any(), f"{name}: {what} got a gradient"
                continue
            assert ours.grad is not None and ours.grad.dtype == ours.dtype, f"{name}: {what}"
            assert_close(ours.grad, theirs.grad, rtol=rtol, atol=atol, what=f"{name} gradient of the {what}")
    # the convention end to end: z built from float64 parts, central differences on them
    used = ([0, 1] if tz.grad is not None else []) + ([2] if tx.grad is not None else [])
    gradcheck(lambda re, im, x: call(tinynet, tinynet.complex(re, im), x), [Z.real, Z.imag, R], device=device,
              which=used)


def test_autograd_rules_for_complex_outputs(device):
    z = tinynet.tensor(Z, device=device, requires_grad=True)
    with pytest.raises(errors.AutogradError, match="real scalar outputs"):
        z.sum().backward()
    z.sum().backward(tinynet.tensor(1 - 1j, device=device))  # an explicit gradient works, as in PyTorch
    assert_close(z.grad, numpy.full(Z.shape, 1 - 1j))
    with pytest.raises(errors.DTypeError):
        tinynet.ones(2, dtype=tinynet.int64).requires_grad_()


# ---- every other op refuses complex inputs with a typed error ----------------------------------
REFUSED = {  # name -> call: PyTorch computes these (or some); tinynet refuses with a DTypeError naming the op
    "sin": lambda m, z: m.sin(z), "matmul": lambda m, z: m.matmul(z, z.t()), "relu": lambda m, z: m.relu(z),
    "sigmoid": lambda m, z: m.sigmoid(z), "softmax": lambda m, z: m.softmax(z, 0), "pow": lambda m, z: z ** 2,
    "cumsum": lambda m, z: m.cumsum(m.ones(3), 0, dtype=m.complex64), "lt": lambda m, z: z < z,
    "argmax": lambda m, z: z.argmax(), "log": lambda m, z: m.log(z), "prod": lambda m, z: z.prod(),
    "nansum": lambda m, z: m.nansum(z), "unique": lambda m, z: m.unique(z),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_ops_without_complex_support_refuse_it(name, device):
    with pytest.raises(errors.DTypeError, match=name.rstrip("_")):
        REFUSED[name](tinynet, tinynet.tensor(Z, device=device))


NOT_COMPARED = {"data_ptr", "type", "result_type", "new_empty", "new_ones", "new_zeros", "new_full", "new_tensor",
                "empty_like", "save", "load", "manual_seed", "seed", "set_rng_state", "set_default_dtype",
                "set_default_device", "set_num_threads", "set_printoptions", "compile", "set_grad_enabled",
                "bernoulli", "multinomial", "normal", "poisson", "rand_like", "randn_like", "randint_like",
                "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "rrelu",
                "gumbel_softmax"}


def _public(module, torch_module):
    for name in sorted(dir(module)):
        f = getattr(module, name)
        if (name.startswith("_") or name.endswith("_") or name in NOT_COMPARED or inspect.isclass(f)
                or inspect.ismodule(f) or not callable(f) or getattr(torch_module, name, None) is None):
            continue
        try:
            params = inspect.signature(f).parameters.values()
        except (TypeError, ValueError):
            continue
        required = [p for p in params if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY,
                                                                               p.POSITIONAL_OR_KEYWORD)]
        if 1 <= len(required) <= 3:
            yield name, f, getattr(torch_module, name), len(required)


def _make(m, v):
    if v == "z":
        return m.tensor(Z.astype(numpy.complex64))
    return m.tensor(R.astype(numpy.float32)) if v == "r" else v


def test_public_functions_take_complex_tensors_as_torch_or_refuse_them():
    """Each public function (tinynet.*, F.*, Tensor methods) of one to three required
    arguments, with a complex tensor first and the others from (a real tensor, the complex
    tensor, 0, 1): where PyTorch accepts some such call, tinynet gives the same values or
    a typed error; where PyTorch refuses them all, tinynet raises a typed error."""
    problems, checked = [], 0
    for module, torch_module, label in ((tinynet, torch, "tinynet"), (F, torch.nn.functional, "F"),
                                        (tinynet.Tensor, torch.Tensor, "Tensor")):
        for name, fn, tfn, n in _public(module, torch_module):
            combos = list(itertools.product(["z"], *[["r", "z", 0, 1]] * (n - 1)))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                chosen = None
                for combo in combos:
                    try:
                        chosen = combo, tfn(*[_make(torch, v) for v in combo])
                        break
                    except Exception:  # PyTorch refuses this call: try the next
                        continue
                combo = chosen[0] if chosen else combos[0]
                try:
                    out = fn(*[_make(tinynet, v) for v in combo])
                except errors.TinynetError:
                    checked += 1
                    continue
                except Exception as e:  # an untyped error escaped
                    problems.append(f"{label}.{name}{combo}: {type(e).__name__}: {e}")
                    continue
            checked += 1
            if chosen is None:
                problems.append(f"{label}.{name}{combo}: returns a result where PyTorch refuses")
                continue
            outs = out if isinstance(out, tuple) else (out,)
            refs = chosen[1] if isinstance(chosen[1], tuple) else (chosen[1],)
            for a, b in zip(outs, refs):
                if isinstance(a, tinynet.Tensor) and isinstance(b, torch.Tensor):
                    if b.dtype == torch.bfloat16:  # (x.bfloat16() of a complex tensor)
                        continue
                    an, bn = as_numpy(a), as_numpy(b.resolve_conj())
                    if an.shape != bn.shape or not numpy.allclose(an, bn, equal_nan=True, atol=1e-5):
                        problems.append(f"{label}.{name}{combo}: values differ from PyTorch's")
    assert not problems, "\n".join(problems)
    assert checked > 300


def test_the_ops_that_take_complex_inputs_are_the_documented_ones():
    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    ok = {cls.name for cls in subclasses(Op) if cls.complex_ok}
    internal = {"getitem", "index_add_into", "to_dtype", "to_device", "fft_resize", "fft", "rfft", "irfft",
                "op"}  # indexing, casts and moves, the transforms of tinynet.fft, user Functions
    documented = {"add", "sub", "mul", "div", "neg", "exp", "sum", "mean", "reshape", "permute", "expand", "narrow",
                  "repeat_interleave", "cat", "stack", "flip", "roll", "split", "clone", "real", "imag",
                  "view_as_real", "view_as_complex", "complex", "polar", "conj", "abs", "angle"}
    assert ok == documented | internal, "the ops taking complex inputs changed: update docs/complex.md and this list"
    doc = open(os.path.join(os.path.dirname(__file__), "..", "docs", "complex.md")).read()
    for name in sorted(documented):
        assert f"`{name}`" in doc, f"docs/complex.md does not list {name}"
