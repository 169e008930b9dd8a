"""The short-time Fourier transform and its inverse, PyTorch's ``stft``/``istft``, composed of
tinynet's differentiable ops (padding, ``unfold`` into frames, the window product, the FFTs of
:mod:`.fft_transforms`, and ``index_add`` for the overlap-add), so gradients come for free.

``stft``: frames of ``n_fft`` samples ``hop_length`` apart (the signal padded by ``n_fft // 2``
each side with ``pad_mode`` when ``center``), each multiplied by ``window`` (``win_length``
values, zero-padded to ``n_fft`` in the middle) and transformed: ``X[f, t] = sum_k w[k]
x[t hop + k] e^{-2 pi i f k / n_fft}`` (scaled by ``n_fft^-1/2`` with ``normalized``), the
one-sided half of the frequencies for real input. ``istft`` inverts it by the weighted
overlap-add of Griffin & Lim (1984): the inverse transforms of the frames times the window,
summed at their places and divided by the summed squared window; a real output comes from the
one-sided half of each frame's spectrum (``irfft``, as PyTorch), a complex one from all of it.
"""
import warnings

from .. import backend, dtypes
from ..errors import ArgumentError, DTypeError, ShapeError
from ..tensor import Tensor
from .arith import mul
from .complex import complex as complex_, imag, real, view_as_real
from .creation import ones, zeros
from .division import div
from .fft_transforms import fft, ifft, irfft, rfft
from .index_update import index_add
from .pad import pad
from .split import narrow, unfold
from .util import check_choice, check_flag, check_int, check_tensor


def _window(op, window, n_fft, win_length, like):
    """The window padded to ``n_fft`` (centred), in ``like``'s real dtype."""
    win_length = n_fft if win_length is None else check_int(op, "win_length", win_length, 1)
    if win_length > n_fft:
        raise ArgumentError(f"{op}: expected 0 < win_length <= n_fft, got win_length={win_length}, n_fft={n_fft}")
    real = like.dtype if like.dtype.kind != "c" else dtypes.float32 if like.dtype == dtypes.complex64 else \
        dtypes.float64
    if window is None:
        window = ones(win_length, dtype=real, device=like.device)
    else:
        check_tensor(op, "window", window)
        if window.ndim != 1 or window.shape[0] != win_length:
            raise ShapeError(f"{op}: expected a 1-D window of win_length={win_length} values, got shape "
                             f"{tuple(window.shape)}")
    left = (n_fft - win_length) // 2
    return pad(window, (left, n_fft - win_length - left)) if left or win_length < n_fft else window


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None):
    """The short-time Fourier transform of ``input`` (L,) or (B, L) (module doc): a complex tensor
    (``n_freq``, ``n_frames``) or (B, ``n_freq``, ``n_frames``), ``n_freq = n_fft // 2 + 1`` when
    ``onesided`` (the default for real input and window), else ``n_fft``; with
    ``return_complex=False`` the real and imaginary parts in a last dim of 2 (deprecated in PyTorch).
    ``hop_length`` defaults to ``n_fft // 4``, the window to ones (PyTorch warns about that).

    Raises:
        ArgumentError: ``return_complex`` not given for real input (as PyTorch), ``n_fft`` or the
            hop out of range, ``onesided`` with complex input. ShapeError: input not 1-D or 2-D, a
            window of the wrong length. DTypeError: an integer input.
    """
    op = "stft"
    check_tensor(op, "input", input)
    if input.ndim not in (1, 2):
        raise ShapeError(f"{op}: expected a 1D or 2D tensor, got shape {tuple(input.shape)}")
    if not (dtypes.is_floating(input.dtype) or input.dtype.kind == "c"):
        raise DTypeError(f"{op}: expected a floating-point or complex input, got {input.dtype}")
    is_complex = input.dtype.kind == "c" or (window is not None and getattr(window, "dtype", None) is not None and
                                             window.dtype.kind == "c")
    if return_complex is None:
        if not is_complex:
            raise ArgumentError(f"{op}: requires the return_complex parameter be given for real inputs")
        return_complex = True
    return_complex = check_flag(op, "return_complex", return_complex)
    n_fft = check_int(op, "n_fft", n_fft, 1)
    hop = n_fft // 4 if hop_length is None else check_int(op, "hop_length", hop_length, 1)
    hop = max(hop, 1)
    if window is None:
        warnings.warn("stft: a window was not provided; a rectangular window is applied, which is known to cause "
                      "spectral leakage (pass window=tinynet.hann_window(n_fft) or window=tinynet.ones(n_fft))",
                      UserWarning, stacklevel=2)
    w = _window(op, window, n_fft, win_length, input)
    x = input if input.ndim == 2 else input.reshape(1, -1)
    if check_flag(op, "center", center):
        mode = check_choice(op, "pad_mode", pad_mode, ("reflect", "constant", "replicate", "circular"))
        x = pad(x, (n_fft // 2, n_fft // 2), mode)
    if not 0 < n_fft <= x.shape[-1]:
        raise ArgumentError(f"{op}: expected 0 < n_fft <= {x.shape[-1]} (the padded length), got n_fft={n_fft}")
    frames = mul(unfold(x, 1, n_fft, hop), w)  # (B, n_frames, n_fft)
    onesided = (not is_complex) if onesided is None else check_flag(op, "onesided", onesided)
    if onesided and is_complex:
        raise ArgumentError(f"{op}: cannot have onesided output if window or input is complex")
    norm = "ortho" if check_flag(op, "normalized", normalized) else "backward"
    spec = (rfft if onesided else fft)(frames, dim=-1, norm=norm).transpose(1, 2)
    spec = spec if input.ndim == 2 else spec[0]
    if return_complex:
        return spec
    warnings.warn("stft with return_complex=False is deprecated; use view_as_real on the complex output",
                  UserWarning, stacklevel=2)
    return view_as_real(spec)


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False,
          onesided=None, length=None, return_complex=False):
    """The inverse of :func:`stft` (module doc) from a complex (``n_freq``, ``n_frames``) or
    (B, ``n_freq``, ``n_frames``) input: a real signal (complex with ``return_complex``) of
    ``length`` samples (default: all the frames cover, less the ``center`` padding).

    Raises:
        DTypeError: a real input. ShapeError: a frequency count that does not fit ``n_fft``.
        ArgumentError: a window whose overlap-add vanishes somewhere (not invertible, as PyTorch
            refuses), a bad ``n_fft``/hop, or ``return_complex`` with a one-sided input.
    """
    op = "istft"
    check_tensor(op, "input", input)
    if input.dtype.kind != "c":
        raise DTypeError(f"{op}: requires a complex-valued input tensor, got {input.dtype}")
    if input.ndim not in (2, 3):
        raise ShapeError(f"{op}: expected a tensor of 2 or 3 dimensions, got shape {tuple(input.shape)}")
    n_fft = check_int(op, "n_fft", n_fft, 1)
    hop = n_fft // 4 if hop_length is None else check_int(op, "hop_length", hop_length, 1)
    hop = max(hop, 1)
    return_complex = check_flag(op, "return_complex", return_complex)
    onesided = (not return_complex) if onesided is None else check_flag(op, "onesided", onesided)
    if onesided and return_complex:
        raise ArgumentError(f"{op}: cannot have onesided output if return_complex is True")
    spec = input if input.ndim == 3 else input.reshape(1, *input.shape)
    n_freq, n_frames = spec.shape[1], spec.shape[2]
    if n_freq != (n_fft // 2 + 1 if onesided else n_fft):
        raise ShapeError(f"{op}: expected the frequency dimension of size {n_fft // 2 + 1 if onesided else n_fft} for "
                         f"n_fft={n_fft} (onesided={onesided}), got {n_freq}")
    w = _window(op, window, n_fft, win_length, input)
    norm = "ortho" if check_flag(op, "normalized", normalized) else "backward"
    cols = spec.transpose(1, 2)
    if not return_complex:  # a real signal: the inverse of the one-sided half, as PyTorch (the rest is its mirror)
        frames = irfft(narrow(cols, 2, 0, n_fft // 2 + 1), n=n_fft, dim=-1, norm=norm)
    else:
        frames = ifft(cols, dim=-1, norm=norm)
    frames = mul(frames, w if w.dtype.kind == "c" or frames.dtype.kind != "c" else w.to(frames.dtype))
    total = n_fft + hop * (n_frames - 1)
    xp = backend.array_module(spec.array)
    index = Tensor._wrap((xp.arange(n_frames).reshape(-1, 1) * hop + xp.arange(n_fft)).reshape(-1))

    def overlap_add(parts):
        return index_add(zeros(spec.shape[0], total, dtype=parts.dtype, device=spec.device), 1, index,
                         parts.reshape(spec.shape[0], -1))
    if frames.dtype.kind != "c":
        y = overlap_add(frames)
    else:  # the real and imaginary parts overlap-added apart
        y = complex_(overlap_add(real(frames)), overlap_add(imag(frames)))
    wsq = (w * w).real if w.dtype.kind == "c" else w * w
    env = index_add(zeros(total, dtype=wsq.dtype, device=spec.device), 0, index,
                    wsq.reshape(1, -1).expand(n_frames, n_fft).reshape(-1))
    start = n_fft // 2 if check_flag(op, "center", center) else 0
    end = total - (n_fft // 2 if center else 0) if length is None else start + check_int(op, "length", length, 0)
    end = min(end, total)
    if bool((env.array[start:end].__abs__() < 1e-11).any()):
        raise ArgumentError(f"{op}: window overlap add min: the window's overlap-add is 0 somewhere, so the signal "
                            "cannot be recovered (choose a window and hop whose overlaps cover every sample)")
    y = div(narrow(y, 1, start, end - start), narrow(env, 0, start, end - start))
    if length is not None and y.shape[1] < length:
        y = pad(y, (0, length - y.shape[1]))
    return y if input.ndim == 3 else y[0]
