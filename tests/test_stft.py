"""stft and istft against PyTorch on every backend: spectra for the window, hop, centring,
padding, normalisation and one-sidedness options, the round trip, gradients (through the real
and imaginary parts), and the refusals."""
import warnings

import numpy
import pytest

import tinynet
from helpers import assert_close, check_op, rng, torch
from tinynet import errors

R = rng(12)
CASES = [{"hop_length": 4, "window": "hann"}, {}, {"win_length": 10, "center": False, "window": "hann"},
         {"normalized": True, "pad_mode": "constant"}, {"onesided": False, "window": "hamming"},
         {"pad_mode": "replicate", "hop_length": 3, "window": "hann"}]


def _kwargs(case, lib, dtype):
    kw = dict(case)
    w = kw.pop("window", None)
    if w is not None:
        kw["window"] = getattr(lib, f"{w}_window")(kw.get("win_length", 16), dtype=getattr(lib, dtype))
    return kw


@pytest.mark.parametrize("case", CASES, ids=[str(c) for c in CASES])
def test_stft_matches_torch(case, device):
    x = R.standard_normal((2, 60))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for dt, tol in (("float64", (1e-10, 1e-12)), ("float32", (1e-4, 1e-5))):
            kw, tkw = _kwargs(case, tinynet, dt), _kwargs(case, torch, dt)
            kw = {k: v.to(device) if isinstance(v, tinynet.Tensor) else v for k, v in kw.items()}
            s = tinynet.stft(tinynet.tensor(x.astype(dt), device=device), 16, return_complex=True, **kw)
            r = torch.stft(torch.tensor(x.astype(dt)), 16, return_complex=True, **tkw)
            assert s.dtype == (tinynet.complex128 if dt == "float64" else tinynet.complex64)
            assert_close(s, r, *tol, what=f"stft {case}")
            one = tinynet.stft(tinynet.tensor(x[0], device=device), 16, return_complex=False, **kw)
            assert_close(one, torch.stft(torch.tensor(x[0]), 16, return_complex=False, **{
                k: v.double() if isinstance(v, torch.Tensor) else v for k, v in tkw.items()}), 1e-4, 1e-5)
        # gradients through the real and imaginary parts, against PyTorch's and finite differences
        check_op(device, lambda t: tinynet.view_as_real(tinynet.stft(t, 16, return_complex=True, **{
            k: v.to(t.device) if isinstance(v, tinynet.Tensor) else v for k, v in _kwargs(
                case, tinynet, "float64").items()})),
            lambda t: torch.view_as_real(torch.stft(t, 16, return_complex=True, **_kwargs(case, torch, "float64"))),
            [x[:, :40]], dtypes=("float64",))


@pytest.mark.parametrize("case", [c for c in CASES if c.get("center", True)], ids=str)
def test_istft_round_trip_and_gradient(case, device):
    x = R.standard_normal((2, 60))
    kw = {k: v for k, v in case.items() if k != "pad_mode"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours_kw = {k: v.to(device) if isinstance(v, tinynet.Tensor) else v for k, v in _kwargs(
            kw, tinynet, "float64").items()}
        spec = tinynet.stft(tinynet.tensor(x, device=device), 16, return_complex=True, **ours_kw)
        tspec = torch.stft(torch.tensor(x), 16, return_complex=True, **_kwargs(kw, torch, "float64"))
        y = tinynet.istft(spec, 16, length=60, **ours_kw)
        ry = torch.istft(tspec, 16, length=60, **_kwargs(kw, torch, "float64"))
        assert_close(y, ry, 1e-10, 1e-12) or assert_close(y, x, 1e-10, 1e-10)
        check_op(device, lambda re, im: tinynet.istft(tinynet.complex(re, im), 16, length=60, **ours_kw),
                 lambda re, im: torch.istft(torch.complex(re, im), 16, length=60, **_kwargs(kw, torch, "float64")),
                 [tspec.real.numpy(), tspec.imag.numpy()], dtypes=("float64",))


def test_stft_refusals(device):
    x = tinynet.ones(40, device=device)
    with pytest.raises(errors.ArgumentError, match="return_complex"):
        tinynet.stft(x, 16)
    with pytest.raises(RuntimeError):
        torch.stft(torch.ones(40), 16)
    with pytest.raises(errors.ShapeError, match="window"):
        tinynet.stft(x, 16, window=tinynet.ones(5, device=device), return_complex=True)
    with pytest.raises(errors.ArgumentError, match="n_fft"):
        tinynet.stft(tinynet.ones(10, device=device), 64, center=False, return_complex=True)
    with pytest.raises(errors.DTypeError, match="istft"):
        tinynet.istft(tinynet.ones(9, 5, device=device), 16)
    with pytest.raises(errors.ShapeError, match="frequency"):
        tinynet.istft(tinynet.ones(7, 5, dtype=tinynet.complex64, device=device), 16)
    with pytest.raises(errors.ArgumentError, match="overlap"):
        tinynet.istft(tinynet.ones(9, 5, dtype=tinynet.complex64, device=device), 16, hop_length=16,
                      window=tinynet.hann_window(16, periodic=False, device=device), center=False)
    with pytest.raises(RuntimeError):
        torch.istft(torch.ones(9, 5, dtype=torch.complex64), 16, hop_length=16,
                    window=torch.hann_window(16, periodic=False), center=False)
    assert tinynet.ones(40, device=device).stft(8, return_complex=True, window=tinynet.ones(
        8, device=device)).shape == (5, 21)
    assert numpy.isfinite(tinynet.ones(40, device=device).stft(8, return_complex=True).abs().numpy(force=True)).all()
