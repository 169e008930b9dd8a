"""Vectorised transforms for image arrays; each works on one image or a batch.

``ToTensor`` maps uint8 pixels to float32 in [0, 1] and adds the channel dim of a
grayscale image: (H, W) -> (1, H, W) and (N, H, W) -> (N, 1, H, W). ``Normalize``
computes ``(x - mean) / std`` per channel.
"""
import numpy

from .. import backend


class Compose:
    """Apply transforms in order."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


class ToTensor:
    """uint8 (H, W) or (N, H, W) grayscale -> float32 in [0, 1] with a channel dim.

    Raises:
        ValueError: input that is not 2-D or 3-D.
    """

    def __call__(self, x):
        if x.ndim not in (2, 3):
            raise ValueError(f"ToTensor: expected (H, W) or (N, H, W) images, got shape {x.shape}")
        x = x.astype(numpy.float32) * numpy.float32(1 / 255)
        return x[None] if x.ndim == 2 else x[:, None]


class Normalize:
    """``(x - mean) / std`` with per-channel ``mean``/``std`` (sequences or floats).

    For MNIST the usual values are ``mean=(0.1307,)``, ``std=(0.3081,)``.

    Raises:
        ValueError: a zero std.
    """

    def __init__(self, mean, std):
        self.mean = numpy.asarray(mean, dtype=numpy.float32).reshape(-1)
        self.std = numpy.asarray(std, dtype=numpy.float32).reshape(-1)
        if (self.std == 0).any():
            raise ValueError(f"Normalize: std must be non-zero, got {std}")
        self._constants = {}  # (array module, dtype) -> (mean, 1/std), made once per device

    def __call__(self, x):
        xp = backend.array_module(x)  # works on host and on device arrays
        key = (xp.__name__, x.dtype)
        if key not in self._constants:  # a host->device copy would sync every batch
            self._constants[key] = (xp.asarray(self.mean.reshape(-1, 1, 1), dtype=x.dtype),
                                    xp.asarray((1 / self.std).reshape(-1, 1, 1), dtype=x.dtype))
        mean, inv = self._constants[key]
        return (x - mean) * inv


def mnist_normalize():
    """``Compose([ToTensor(), Normalize((0.1307,), (0.3081,))])``: float32 (N, 1, 28, 28)."""
    return Compose([ToTensor(), Normalize((0.1307,), (0.3081,))])
