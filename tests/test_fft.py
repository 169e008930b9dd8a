"""tinynet.fft against torch.fft: values, dtypes and gradients (real and complex inputs, in
PyTorch's convention for complex gradients), finite differences in float64, second
derivatives, and the typed errors of bad arguments. One body per case for every device."""
import numpy
import pytest

import tinynet
from tinynet import errors

from helpers import as_numpy, assert_close, gradcheck, rng

torch = pytest.importorskip("torch")

TOL = {"float32": (2e-5, 2e-5), "float64": (1e-10, 1e-11)}
COMPLEX = {"float32": numpy.complex64, "float64": numpy.complex128}


def as_real(m, y):
    """A real tensor of either library: complex outputs as (..., 2) real pairs."""
    return m.view_as_real(y.resolve_conj()) if y.is_complex() else y


def _input(shape, dt, complex_input, seed=0):
    g = rng(seed)
    a = g.standard_normal(shape)
    if complex_input:
        a = (a + 1j * g.standard_normal(shape)).astype(COMPLEX[dt])
    return a.astype(COMPLEX[dt] if complex_input else dt)


# name -> (call(lib, x), input shape, complex input?)
CASES = {
    "fft": (lambda m, x: m.fft.fft(x), (3, 8), False),
    "fft complex": (lambda m, x: m.fft.fft(x), (3, 8), True),
    "fft n=5 dim=0 ortho": (lambda m, x: m.fft.fft(x, n=5, dim=0, norm="ortho"), (3, 8), False),
    "fft n=6 truncates, forward": (lambda m, x: m.fft.fft(x, n=6, norm="forward"), (2, 8), True),
    "ifft": (lambda m, x: m.fft.ifft(x), (4, 6), True),
    "ifft n=9 of a real input": (lambda m, x: m.fft.ifft(x, n=9, norm="ortho"), (4, 6), False),
    "rfft": (lambda m, x: m.fft.rfft(x), (3, 8), False),
    "rfft odd n=7 forward": (lambda m, x: m.fft.rfft(x, n=7, norm="forward"), (3, 8), False),
    "rfft dim=0 ortho": (lambda m, x: m.fft.rfft(x, dim=0, norm="ortho"), (5, 2), False),
    "irfft": (lambda m, x: m.fft.irfft(x), (3, 5), True),
    "irfft n=7": (lambda m, x: m.fft.irfft(x, n=7), (3, 5), True),
    "irfft n=12 pads, ortho": (lambda m, x: m.fft.irfft(x, n=12, norm="ortho"), (2, 5), True),
    "irfft n=4 truncates, forward, dim 0": (lambda m, x: m.fft.irfft(x, n=4, dim=0, norm="forward"), (5, 3), True),
    "irfft of a real input": (lambda m, x: m.fft.irfft(x), (2, 5), False),
    "hfft": (lambda m, x: m.fft.hfft(x), (3, 5), True),
    "hfft n=9 ortho": (lambda m, x: m.fft.hfft(x, n=9, norm="ortho"), (3, 5), True),
    "ihfft": (lambda m, x: m.fft.ihfft(x), (3, 8), False),
    "ihfft n=5 forward": (lambda m, x: m.fft.ihfft(x, n=5, norm="forward"), (3, 8), False),
    "fft2": (lambda m, x: m.fft.fft2(x), (2, 4, 6), True),
    "ifft2 s=(3, 8)": (lambda m, x: m.fft.ifft2(x, s=(3, 8)), (2, 4, 6), True),
    "rfft2": (lambda m, x: m.fft.rfft2(x), (2, 4, 6), False),
    "irfft2 s=(4, 7)": (lambda m, x: m.fft.irfft2(x, s=(4, 7)), (2, 4, 4), True),
    "hfft2": (lambda m, x: m.fft.hfft2(x, norm="ortho"), (3, 4), True),
    "ihfft2": (lambda m, x: m.fft.ihfft2(x), (3, 6), False),
    "fftn": (lambda m, x: m.fft.fftn(x), (2, 3, 4), False),
    "fftn s with -1": (lambda m, x: m.fft.fftn(x, s=(-1, 6)), (2, 3, 4), True),
    "fftn dim=()": (lambda m, x: m.fft.fftn(x, dim=()), (2, 3), False),
    "ifftn dim=(0, 2) forward": (lambda m, x: m.fft.ifftn(x, dim=(0, 2), norm="forward"), (2, 3, 4), True),
    "rfftn dim=(2, 0)": (lambda m, x: m.fft.rfftn(x, dim=(2, 0)), (4, 3, 5), False),
    "rfftn s=(4, 5)": (lambda m, x: m.fft.rfftn(x, s=(4, 5), norm="ortho"), (2, 3, 6), False),
    "irfftn": (lambda m, x: m.fft.irfftn(x), (3, 4, 5), True),
    "irfftn s=(5, 6) dim=(0, 1)": (lambda m, x: m.fft.irfftn(x, s=(5, 6), dim=(0, 1)), (3, 4, 2), True),
    "hfftn": (lambda m, x: m.fft.hfftn(x, dim=(0, 1)), (3, 4), True),
    "ihfftn": (lambda m, x: m.fft.ihfftn(x, norm="forward"), (3, 4), False),
    "fftshift": (lambda m, x: m.fft.fftshift(x), (3, 4), True),
    "fftshift dim": (lambda m, x: m.fft.fftshift(x, dim=1), (3, 5), False),
    "ifftshift": (lambda m, x: m.fft.ifftshift(x, dim=(0, -1)), (5, 4), True),
    "filter chain irfft(rfft(x) * w)": (lambda m, x: m.fft.irfft(
        m.fft.rfft(x) * m.linspace(1.0, 0.0, 5, device=x.device).to(x.dtype), n=8), (3, 8), False),
    "fft(x).abs()": (lambda m, x: m.fft.fft(x).abs(), (3, 6), False),
    "fft2(x).angle() of a complex input": (lambda m, x: m.fft.fft2(x).angle(), (3, 4), True),
    "spectrum power ifft(fft(x) * conj(fft(x))).real":
        (lambda m, x: m.fft.ifft(m.fft.fft(x) * m.fft.fft(x).conj()).real, (2, 6), False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_fft_matches_torch(name, device):
    call, shape, complex_input = CASES[name]
    for dt in ("float32", "float64"):
        rtol, atol = TOL[dt]
        a = _input(shape, dt, complex_input)
        x = tinynet.tensor(a, device=device, requires_grad=True)
        t = torch.tensor(a, requires_grad=True)
        out, ref = as_real(tinynet, call(tinynet, x)), as_real(torch, call(torch, t))
        assert out.device == device
        assert out.dtype.name == str(ref.dtype).split(".")[-1], f"{name}: dtype {out.dtype} vs {ref.dtype}"
        assert_close(out, ref, rtol=rtol, atol=atol, what=f"{name} forward ({dt})")
        r = rng(5).standard_normal(tuple(ref.shape)).astype(dt)
        (out * tinynet.tensor(r, device=device)).sum().backward()
        (ref * torch.tensor(r)).sum().backward()
        assert x.grad is not None and x.grad.dtype == x.dtype
        assert_close(x.grad, t.grad, rtol=rtol, atol=atol, what=f"{name} gradient ({dt})")


@pytest.mark.parametrize("name", sorted(CASES))
def test_fft_gradients_match_finite_differences(name, device):
    """The gradient against central differences in float64: a complex input is built from
    its real and imaginary parts, so this checks PyTorch's convention end to end."""
    call, shape, complex_input = CASES[name]
    a = _input(shape, "float64", complex_input, seed=3)
    if complex_input:
        gradcheck(lambda re, im: as_real(tinynet, call(tinynet, tinynet.complex(re, im))), [a.real, a.imag],
                  device=device)
    else:
        gradcheck(lambda x: as_real(tinynet, call(tinynet, x)), [a], device=device)


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft n=7", "hfft", "ihfft", "rfftn dim=(2, 0)", "irfftn",
                                  "ifft2 s=(3, 8)", "fftshift"])
def test_fft_second_derivatives(name, device):
    call, shape, complex_input = CASES[name]
    a = _input(shape, "float64", complex_input, seed=4)
    if complex_input:
        parts = [tinynet.tensor(v, device=device, requires_grad=True) for v in (a.real, a.imag)]
        fn = lambda re, im: as_real(tinynet, call(tinynet, tinynet.complex(re, im))) ** 2  # noqa: E731
    else:
        parts = [tinynet.tensor(a, device=device, requires_grad=True)]
        fn = lambda x: as_real(tinynet, call(tinynet, x)) ** 2  # noqa: E731
    assert tinynet.autograd.gradgradcheck(fn, tuple(parts))


def test_integer_input_is_transformed_in_the_default_float(device):
    for fn in ("fft", "rfft", "ifft", "hfft", "irfft"):
        ours = getattr(tinynet.fft, fn)(tinynet.arange(6, device=device))
        ref = getattr(torch.fft, fn)(torch.arange(6))
        assert ours.dtype.name == str(ref.dtype).split(".")[-1]
        assert_close(as_real(tinynet, ours), as_real(torch, ref), rtol=1e-5, atol=1e-5, what=fn)


@pytest.mark.parametrize("n,d,dtype", [(8, 1.0, None), (7, 0.5, "float64"), (1, 2, None), (0, 1.0, None),
                                       (5, 0.0, "float64")])
def test_fftfreq_rfftfreq_match_torch(device, n, d, dtype):
    for fn in ("fftfreq", "rfftfreq"):
        kw = {} if dtype is None else {"dtype": getattr(tinynet, dtype)}
        tkw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
        ours = getattr(tinynet.fft, fn)(n, d, device=device, **kw)
        ref = getattr(torch.fft, fn)(n, d, **tkw)
        assert ours.device == device and ours.dtype.name == str(ref.dtype).split(".")[-1]
        numpy.testing.assert_allclose(as_numpy(ours), ref.numpy(), rtol=1e-6)
    assert tinynet.fft.fftfreq(4, requires_grad=True, device=device).requires_grad


def test_real_and_complex_tensors_round_trip(device):
    x = tinynet.tensor(rng(1).standard_normal((4, 10)), device=device)
    assert_close(tinynet.fft.irfft(tinynet.fft.rfft(x), n=10), x, rtol=1e-10, atol=1e-12)
    assert_close(tinynet.fft.ifftn(tinynet.fft.fftn(x)).real, x, rtol=1e-10, atol=1e-12)
    spec = tinynet.fft.fftshift(tinynet.fft.fftfreq(6, device=device))
    assert spec.tolist() == sorted(spec.tolist())
    assert_close(tinynet.fft.ifftshift(tinynet.fft.fftshift(x)), x)


BAD = [
    ("fft of a list", lambda m, d: m.fft.fft([1.0, 2.0]), errors.ArgumentTypeError, "fft.fft: input"),
    ("fft n=0", lambda m, d: m.fft.fft(m.ones(4, device=d), n=0), errors.ArgumentError, "fft.fft: n"),
    ("fft n=-3", lambda m, d: m.fft.fft(m.ones(4, device=d), n=-3), errors.ArgumentError, "fft.fft: n"),
    ("fft n float", lambda m, d: m.fft.fft(m.ones(4, device=d), n=2.5), errors.ArgumentTypeError, "fft.fft: n"),
    ("fft bad norm", lambda m, d: m.fft.fft(m.ones(4, device=d), norm="bad"), errors.ArgumentError,
     "fft.fft: norm"),
    ("fft dim out of range", lambda m, d: m.fft.fft(m.ones(2, 3, device=d), dim=2), errors.IndexOutOfRangeError,
     "fft.fft"),
    ("fft of a 0-d tensor", lambda m, d: m.fft.fft(m.tensor(1.0, device=d)), errors.IndexOutOfRangeError,
     "fft.fft"),
    ("fft of an empty dim", lambda m, d: m.fft.fft(m.zeros(0, device=d)), errors.ArgumentError, "fft.fft"),
    ("fft of float16", lambda m, d: m.fft.fft(m.ones(4, dtype=m.float16, device=d)), errors.DTypeError,
     "fft.fft"),
    ("rfft of complex", lambda m, d: m.fft.rfft(m.ones(4, device=d) * 1j), errors.DTypeError, "fft.rfft"),
    ("ihfft of complex", lambda m, d: m.fft.ihfft(m.ones(4, device=d) * 1j), errors.DTypeError, "fft.ihfft"),
    ("irfft of one bin", lambda m, d: m.fft.irfft(m.ones(1, device=d) * 1j), errors.ArgumentError, "fft.irfft"),
    ("fft2 of a 1-d tensor", lambda m, d: m.fft.fft2(m.ones(3, device=d)), errors.IndexOutOfRangeError,
     "fft.fft2"),
    ("fftn repeated dims", lambda m, d: m.fft.fftn(m.ones(3, 4, device=d), dim=(0, 0)), errors.ArgumentError,
     "fft.fftn"),
    ("fftn s and dim lengths", lambda m, d: m.fft.fftn(m.ones(3, 4, device=d), s=(2,), dim=(0, 1)),
     errors.ArgumentError, "fft.fftn"),
    ("fftn s zero", lambda m, d: m.fft.fftn(m.ones(3, 4, device=d), s=(0, 4)), errors.ArgumentError, "fft.fftn"),
    ("rfftn no dims", lambda m, d: m.fft.rfftn(m.ones(3, device=d), dim=()), errors.ArgumentError, "fft.rfftn"),
    ("fftfreq int dtype", lambda m, d: m.fft.fftfreq(4, dtype=m.int64, device=d), errors.DTypeError,
     "fft.fftfreq"),
    ("fftfreq negative n", lambda m, d: m.fft.fftfreq(-1, device=d), errors.ArgumentError, "fft.fftfreq"),
    ("fftshift of a 0-d tensor", lambda m, d: m.fft.fftshift(m.tensor(1.0, device=d)), errors.ArgumentError,
     "fft.fftshift"),
    ("fftshift dim out of range", lambda m, d: m.fft.fftshift(m.ones(2, 3, device=d), dim=5),
     errors.IndexOutOfRangeError, "fft.fftshift"),
]


@pytest.mark.parametrize("name", [b[0] for b in BAD])
def test_bad_arguments_raise_typed_errors_like_torch(name, device):
    _, call, exc, text = next(b for b in BAD if b[0] == name)
    with pytest.raises(Exception):  # PyTorch refuses it too
        call(torch, "cpu")
    with pytest.raises(exc) as info:
        call(tinynet, device)
    assert text in str(info.value)
