"""``tinynet.vision``: the part of torchvision that everyday training programs use, on tinynet.

* :mod:`tinynet.vision.datasets`: ``MNIST``, ``FashionMNIST``, ``CIFAR10``, ``FakeData``;
* :mod:`tinynet.vision.transforms`: ``Compose``, ``ToTensor``, ``Normalize``, ``Lambda``,
  ``Resize``, ``CenterCrop``, ``RandomCrop``, ``RandomHorizontalFlip``;
* :mod:`tinynet.vision.utils`: ``make_grid``, ``save_image``.

Under ``python -m tinynet.compat`` a program's ``import torchvision`` gets this package. PIL
images need Pillow (``pip install 'tinynet[vision]'``); without it the datasets hand out NumPy
arrays and ``save_image`` raises :class:`~tinynet.errors.MissingExtraError`.
"""
from . import datasets, transforms, utils

__version__ = "0.0+tinynet"  # programs print torchvision.__version__ now and then

__all__ = ["datasets", "transforms", "utils"]
