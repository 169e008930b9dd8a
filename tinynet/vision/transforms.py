"""torchvision's ``transforms`` that everyday training programs use, on tinynet tensors.

Images come in as PIL images (what :mod:`tinynet.vision.datasets` returns when Pillow is
installed), as NumPy arrays ``(H, W)`` / ``(H, W, C)``, or as tinynet tensors ``(..., C, H,
W)``, as torchvision's v1 transforms accept them:

* :class:`ToTensor`: PIL image or array -> float32 ``(C, H, W)``, uint8 values scaled to [0, 1];
* :class:`Normalize`: ``(x - mean[c]) / std[c]`` per channel of a tensor image;
* :class:`Resize`, :class:`CenterCrop`, :class:`RandomCrop`, :class:`RandomHorizontalFlip`:
  geometry; the random ones draw from tinynet's global generator (as torchvision draws from
  PyTorch's), so ``torch.manual_seed`` makes them repeatable;
* :class:`Compose`, :class:`Lambda`.

Geometry follows torchvision's conventions: a crop's top-left corner is
``round((H - h) / 2)``; ``Resize(int)`` matches the smaller edge and keeps the aspect ratio
(the longer edge ``int(size * long / short)``); PIL images are resized by Pillow, tensors with
``antialias=True`` (the default) through Pillow's float images, channel by channel (torchvision's
antialiased tensor resize was made to match Pillow's), with ``antialias=False`` by
:func:`tinynet.nn.functional.interpolate`. Padding, crops and flips of tensors are array
copies, not recorded by autograd (data transforms need no gradient).

:class:`ToTensor` and :class:`Normalize` (and a :class:`Compose` of only them) also transform a
whole batch of dataset arrays at once (``_batch``): the datasets use that to hand the
DataLoader stacked batches instead of one sample at a time.
"""
import enum
import numbers

import numpy

from .. import backend
from ..errors import ArgumentError, ArgumentTypeError, DTypeError, ShapeError
from ..ops.creation import from_numpy, tensor as _tensor
from ..ops.interpolate import interpolate
from ..ops.sampling import rand, randint
from ..tensor import Tensor
from ._images import is_pil, pil_image

__all__ = ["Compose", "ToTensor", "Normalize", "Lambda", "Resize", "CenterCrop", "RandomCrop",
           "RandomHorizontalFlip", "InterpolationMode"]


class InterpolationMode(enum.Enum):
    """Resampling filters (torchvision's names); the values are Pillow's filter names."""
    NEAREST = "nearest"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"


class Compose:
    """Apply ``transforms`` in order."""

    def __init__(self, transforms):
        if not isinstance(transforms, (list, tuple)) or not all(callable(t) for t in transforms):
            raise ArgumentTypeError(f"Compose: transforms must be a list of callables, got {transforms!r:.80}")
        self.transforms = list(transforms)

    def __call__(self, img):
        for t in self.transforms:
            img = t(img)
        return img

    def _batchable(self):
        return all(getattr(t, "_batchable", lambda: False)() for t in self.transforms)

    def _batch(self, arrays):
        for t in self.transforms:
            arrays = t._batch(arrays)
        return arrays

    def __repr__(self):
        inner = "".join(f"\n    {t!r}" for t in self.transforms)
        return f"{type(self).__name__}({inner}\n)"


def _as_array(pic, where):
    if is_pil(pic):
        return numpy.asarray(pic)
    if isinstance(pic, numpy.ndarray):
        return pic
    raise ArgumentTypeError(f"{where}: pic should be a PIL Image or a numpy.ndarray, got {type(pic).__name__}")


class ToTensor:
    """A PIL image or a NumPy array ``(H, W)`` / ``(H, W, C)`` -> a float32 tensor ``(C, H, W)``;
    uint8 (and bool) values are divided by 255, other dtypes are kept as they are.

    Raises:
        ArgumentTypeError: ``pic`` is neither a PIL image nor an array.
        ShapeError: an array that is not 2-D or 3-D.
    """

    def __call__(self, pic):
        arr = _as_array(pic, "ToTensor")
        if arr.ndim not in (2, 3):
            raise ShapeError(f"ToTensor: pic should be 2 or 3 dimensional, got {arr.ndim} dimensions")
        arr = arr[:, :, None] if arr.ndim == 2 else arr
        return from_numpy(self._scale(numpy.ascontiguousarray(arr.transpose(2, 0, 1))))

    @staticmethod
    def _scale(arr):
        if arr.dtype == numpy.uint8 or arr.dtype == numpy.bool_:
            return arr.astype(numpy.float32) * numpy.float32(1 / 255)
        return arr

    def _batchable(self):
        return True

    def _batch(self, arr):
        """uint8 ``(N, H, W)`` or ``(N, H, W, C)`` -> float32 ``(N, C, H, W)``."""
        arr = arr[..., None] if arr.ndim == 3 else arr
        return self._scale(numpy.ascontiguousarray(arr.transpose(0, 3, 1, 2)))

    def __repr__(self):
        return "ToTensor()"


class Normalize:
    """``(x - mean[c]) / std[c]`` for each channel ``c`` of a float tensor image ``(..., C, H, W)``.

    Args:
        mean, std (sequence of floats): one per channel (or one for all).
        inplace (bool): write into ``tensor``. Default False.

    Raises:
        ArgumentTypeError: the input is not a Tensor.
        DTypeError: an integer tensor.
        ShapeError: fewer than 3 dimensions.
        ArgumentError: a ``std`` of zero.
    """

    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace
        try:
            self._mean = numpy.asarray(mean, dtype=numpy.float64).reshape(-1, 1, 1)
            self._std = numpy.asarray(std, dtype=numpy.float64).reshape(-1, 1, 1)
        except (TypeError, ValueError):
            raise ArgumentTypeError(f"Normalize: mean and std must be sequences of numbers, got {mean!r:.40} and "
                                    f"{std!r:.40}") from None
        if (self._std == 0).any():
            raise ArgumentError(f"Normalize: std evaluated to zero, leading to division by zero (std={std})")

    def __call__(self, tensor):
        if not isinstance(tensor, Tensor):
            raise ArgumentTypeError(f"Normalize: the input should be a Tensor, got {type(tensor).__name__}")
        if not tensor.is_floating_point():
            raise DTypeError(f"Normalize: the input should be a float tensor, got {tensor.dtype}")
        if tensor.ndim < 3:
            raise ShapeError(f"Normalize: expected a tensor image of shape (..., C, H, W), got {tuple(tensor.shape)}")
        mean = _tensor(self._mean, dtype=tensor.dtype, device=tensor.device)
        std = _tensor(self._std, dtype=tensor.dtype, device=tensor.device)
        if self.inplace:
            return tensor.sub_(mean).div_(std)
        return (tensor - mean) / std

    def _batchable(self):
        return True

    def _batch(self, arr):
        dt = arr.dtype
        return ((arr - self._mean.astype(dt)) / self._std.astype(dt)).astype(dt, copy=False)

    def __repr__(self):
        return f"Normalize(mean={self.mean}, std={self.std})"


class Lambda:
    """Apply the user's function ``lambd``.

    Raises:
        ArgumentTypeError: ``lambd`` is not callable.
    """

    def __init__(self, lambd):
        if not callable(lambd):
            raise ArgumentTypeError(f"Lambda: the argument should be callable, got {type(lambd).__name__}")
        self.lambd = lambd

    def __call__(self, img):
        return self.lambd(img)

    def __repr__(self):
        return "Lambda()"


def _size_pair(size, where, least=0):
    seq = size if isinstance(size, (tuple, list)) and len(size) in (1, 2) else [size]
    if all(isinstance(s, numbers.Integral) and not isinstance(s, bool) and s >= least for s in seq):
        return int(seq[0]), int(seq[-1])
    raise ArgumentError(f"{where}: size should be an int or a sequence of one or two ints >= {least}, got {size!r}")


def _hw(img, where):
    """(H, W) of a PIL image, an array ``(H, W[, C])`` or a tensor ``(..., H, W)``."""
    if is_pil(img):
        return img.size[1], img.size[0]
    if not isinstance(img, (Tensor, numpy.ndarray)):
        raise ArgumentTypeError(f"{where}: img should be a PIL Image, a numpy.ndarray or a Tensor, got "
                                f"{type(img).__name__}")
    if img.ndim < 2 or (isinstance(img, numpy.ndarray) and img.ndim > 3):
        shape = "(..., H, W)" if isinstance(img, Tensor) else "(H, W[, C])"
        raise ShapeError(f"{where}: expected an image of shape {shape}, got {tuple(img.shape)}")
    return (img.shape[-2], img.shape[-1]) if isinstance(img, Tensor) else (img.shape[0], img.shape[1])


class Resize:
    """Resize to ``size``: an int matches the smaller edge (aspect ratio kept), ``(h, w)`` is
    exact. ``max_size`` caps the longer edge of an int resize.

    Raises:
        ArgumentError: a bad ``size``, or ``max_size`` with a sequence size or not above ``size``.
    """

    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
        self.size, self.max_size, self.antialias = size, max_size, antialias
        if not isinstance(interpolation, InterpolationMode) and not (
                isinstance(interpolation, str) and interpolation in [m.value for m in InterpolationMode]):
            raise ArgumentError(f"Resize: interpolation must be one of {[m.value for m in InterpolationMode]}, got "
                                f"{interpolation!r}")
        self.interpolation = InterpolationMode(interpolation)
        _size_pair(size, "Resize", 1)
        if max_size is not None and (isinstance(max_size, bool) or not isinstance(max_size, numbers.Integral)):
            raise ArgumentTypeError(f"Resize: max_size must be an int or None, got {type(max_size).__name__}")
        if max_size is not None and (not isinstance(size, numbers.Integral) and len(size) != 1):
            raise ArgumentError("Resize: max_size is only allowed with an int size (or a sequence of one)")

    def _target(self, h, w):
        if isinstance(self.size, (tuple, list)) and len(self.size) == 2:
            return int(self.size[0]), int(self.size[1])
        requested = int(self.size if isinstance(self.size, numbers.Integral) else self.size[0])
        short, long = (w, h) if w <= h else (h, w)
        if short == 0:
            raise ShapeError(f"Resize: cannot keep the aspect ratio of an empty image of size {(h, w)}")
        new_short, new_long = requested, int(requested * long / short)
        if self.max_size is not None:
            if self.max_size <= requested:
                raise ArgumentError(f"Resize: max_size ({self.max_size}) must be larger than size ({requested})")
            if new_long > self.max_size:
                new_short, new_long = int(self.max_size * new_short / new_long), self.max_size
        return (new_long, new_short) if w <= h else (new_short, new_long)

    def __call__(self, img):
        h, w = _hw(img, "Resize")
        th, tw = self._target(h, w)
        if (th, tw) == (h, w):
            return img
        if isinstance(img, Tensor) and img.dtype == "bool":
            raise DTypeError("Resize: cannot resize a bool tensor image")
        Image = pil_image("Resize")
        filt = {InterpolationMode.NEAREST: Image.NEAREST, InterpolationMode.BILINEAR: Image.BILINEAR,
                InterpolationMode.BICUBIC: Image.BICUBIC}[self.interpolation]
        if is_pil(img):
            return img.resize((tw, th), filt)
        if isinstance(img, numpy.ndarray):
            try:
                pic = Image.fromarray(img)
            except (TypeError, ValueError) as exc:
                raise DTypeError(f"Resize: Pillow takes no image of a {img.dtype} array of shape {img.shape} "
                                 f"({exc})") from None
            return numpy.asarray(pic.resize((tw, th), filt))
        if not self.antialias or self.interpolation is InterpolationMode.NEAREST:
            batch = img.reshape(-1, *img.shape[-3:]) if img.ndim >= 3 else img[None, None]
            mode = "nearest" if self.interpolation is InterpolationMode.NEAREST else "bilinear"
            out = interpolate(batch.float() if not img.is_floating_point() else batch, size=(th, tw), mode=mode,
                              align_corners=None if mode == "nearest" else False)
            return out.reshape(*img.shape[:-2], th, tw).to(img.dtype)
        host = img.detach().numpy(force=True).astype(numpy.float32)
        planes = host.reshape(-1, h, w)
        out = numpy.stack([numpy.asarray(Image.fromarray(p, mode="F").resize((tw, th), filt)) for p in planes]) \
            if len(planes) else numpy.zeros((0, th, tw), numpy.float32)
        out = out.reshape(*host.shape[:-2], th, tw)
        if not img.is_floating_point():
            out = numpy.clip(numpy.round(out), numpy.iinfo(img.dtype).min, numpy.iinfo(img.dtype).max)
        return Tensor._wrap(backend.to_device(out.astype(img.dtype), img.device))

    def __repr__(self):
        return f"Resize(size={self.size}, interpolation={self.interpolation.value}, max_size={self.max_size})"


def _crop(img, top, left, h, w):
    """The ``h x w`` window at ``(top, left)``; parts outside the image are zeros."""
    if is_pil(img):
        return img.crop((left, top, left + w, top + h))
    ih, iw = _hw(img, "crop")
    if top < 0 or left < 0 or top + h > ih or left + w > iw:
        img = _pad(img, (max(0, -left), max(0, -top), max(0, left + w - iw), max(0, top + h - ih)), 0, "constant")
        top, left = max(top, 0), max(left, 0)
    if isinstance(img, numpy.ndarray):
        return img[top:top + h, left:left + w]
    return img[..., top:top + h, left:left + w]


def _pad(img, ltrb, fill, mode):
    """Pad by (left, top, right, bottom) pixels; NumPy's modes ('constant', 'edge', 'reflect',
    'symmetric'), as torchvision's padding_mode."""
    left, top, right, bottom = ltrb
    if not isinstance(mode, str) or mode not in ("constant", "edge", "reflect", "symmetric"):
        raise ArgumentError(f"RandomCrop: padding_mode should be constant, edge, reflect or symmetric, got {mode!r}")
    if img is None:
        return None
    kw = {"constant_values": fill} if mode == "constant" else {}
    if is_pil(img):
        arr = numpy.asarray(img)
        widths = [(top, bottom), (left, right)] + ([(0, 0)] if arr.ndim == 3 else [])
        return pil_image("RandomCrop").fromarray(numpy.pad(arr, widths, mode=mode, **kw))
    if isinstance(img, numpy.ndarray):
        widths = [(top, bottom), (left, right)] + [(0, 0)] * (img.ndim - 2)
        return numpy.pad(img, widths, mode=mode, **kw)
    xp = backend.array_module(img.array)
    widths = [(0, 0)] * (img.ndim - 2) + [(top, bottom), (left, right)]
    return Tensor._wrap(xp.pad(img.detach().array, widths, mode=mode, **kw))


class CenterCrop:
    """The central ``size`` window (zeros where it reaches past the image).

    Raises:
        ArgumentError: a bad ``size``.
    """

    def __init__(self, size):
        self.size = _size_pair(size, "CenterCrop")

    def __call__(self, img):
        h, w = _hw(img, "CenterCrop")
        th, tw = self.size
        return _crop(img, int(round((h - th) / 2.0)), int(round((w - tw) / 2.0)), th, tw)

    def __repr__(self):
        return f"CenterCrop(size={self.size})"


class RandomCrop:
    """A ``size`` window at a random place, after optional ``padding`` (an int, ``(lr, tb)`` or
    ``(l, t, r, b)``); ``pad_if_needed`` pads an image smaller than ``size``.

    Raises:
        ArgumentError: a bad ``size`` or ``padding``, or an image smaller than ``size`` without
            ``pad_if_needed``.
    """

    def __init__(self, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant"):
        self.size = _size_pair(size, "RandomCrop")
        self.padding, self.pad_if_needed, self.fill, self.padding_mode = padding, pad_if_needed, fill, padding_mode
        seq = padding if isinstance(padding, (tuple, list)) and len(padding) in (1, 2, 4) else [padding]
        if padding is not None and not all(isinstance(p, numbers.Integral) and not isinstance(p, bool) and p >= 0
                                           for p in seq):
            raise ArgumentError(f"RandomCrop: padding should be an int or a sequence of 1, 2 or 4 ints >= 0, "
                                f"got {padding!r}")
        if isinstance(fill, bool) or not isinstance(fill, numbers.Real):
            raise ArgumentTypeError(f"RandomCrop: fill must be a number, got {type(fill).__name__}")
        _pad(None, (0, 0, 0, 0), fill, padding_mode)  # checks padding_mode

    def _ltrb(self):
        p = self.padding
        if isinstance(p, numbers.Integral):
            return (p, p, p, p)
        p = list(p)
        return tuple(p * 4) if len(p) == 1 else (p[0], p[1], p[0], p[1]) if len(p) == 2 else tuple(p)

    def __call__(self, img):
        if self.padding is not None:
            img = _pad(img, self._ltrb(), self.fill, self.padding_mode)
        th, tw = self.size
        h, w = _hw(img, "RandomCrop")
        if self.pad_if_needed and (h < th or w < tw):
            dw, dh = max(tw - w, 0), max(th - h, 0)
            img = _pad(img, (dw, dh, dw, dh), self.fill, self.padding_mode)
            h, w = _hw(img, "RandomCrop")
        if h < th or w < tw:
            raise ArgumentError(f"RandomCrop: required crop size {(th, tw)} is larger than the input image "
                                f"size {(h, w)}")
        top = int(randint(0, h - th + 1, size=(1,)).item())
        left = int(randint(0, w - tw + 1, size=(1,)).item())
        return _crop(img, top, left, th, tw)

    def __repr__(self):
        return f"RandomCrop(size={self.size}, padding={self.padding})"


class RandomHorizontalFlip:
    """Mirror left-right with probability ``p`` (default 0.5)."""

    def __init__(self, p=0.5):
        if isinstance(p, bool) or not isinstance(p, numbers.Real):
            raise ArgumentTypeError(f"RandomHorizontalFlip: p must be a number, got {type(p).__name__}")
        self.p = p

    def __call__(self, img):
        _hw(img, "RandomHorizontalFlip")
        if rand(1).item() >= self.p:
            return img
        if is_pil(img):
            return img.transpose(pil_image("RandomHorizontalFlip").FLIP_LEFT_RIGHT)
        if isinstance(img, numpy.ndarray):
            return img[:, ::-1].copy()
        return img.flip(-1)

    def __repr__(self):
        return f"RandomHorizontalFlip(p={self.p})"
