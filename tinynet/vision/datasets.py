"""torchvision's ``datasets.MNIST``, ``FashionMNIST``, ``CIFAR10`` and ``FakeData`` on tinynet's
loaders (:mod:`tinynet.data.datasets`).

As torchvision's, a sample is ``(image, target)``: a PIL image (mode ``L`` for the MNIST
family, ``RGB`` for CIFAR-10 and FakeData; a NumPy uint8 array ``(H, W)`` / ``(H, W, 3)``
where Pillow is not installed) and an int, each passed through ``transform`` /
``target_transform``; ``data`` and ``targets`` are tinynet tensors (uint8 images, int64
labels; CIFAR-10's ``data`` is a NumPy ``(N, 32, 32, 3)`` array and ``targets`` a list, as in
torchvision).

The files are found where torchvision keeps them, ``<root>/MNIST/raw/`` (``FashionMNIST``,
...), and in tinynet's own places, ``<root>`` and ``<root>/mnist``, gzipped or not. As in
torchvision, an uncompressed IDX file is read without a checksum (its header must still match
its size); ``.gz`` files are MD5-checked against the published digests. CIFAR-10 comes from the
*binary* distribution (``cifar-10-binary.tar.gz`` or its ``cifar-10-batches-bin/`` folder);
torchvision's pickled ``cifar-10-batches-py`` is never unpickled. ``download=True`` fetches
missing files from the mirrors (:mod:`tinynet.data.download`).

Speed: when ``transform`` is made only of :class:`~tinynet.vision.transforms.ToTensor` and
:class:`~tinynet.vision.transforms.Normalize` and there is no ``target_transform``, the
DataLoader gets a whole batch per call (``__getitems__``), transformed as one array: the same
numbers as one sample at a time.
"""
import operator
import os

import numpy

from ..data import datasets as _files
from ..errors import ArgumentError, ArgumentTypeError, DatasetNotFoundError, IndexOutOfRangeError
from ..ops.creation import from_numpy
from ..random import Generator
from ..ops.sampling import rand, randint
from ..utils.data.dataset import Dataset
from ._images import HAVE_PIL, pil_image

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "FakeData"]


def _image(arr, mode):
    """A PIL image of the uint8 array (the array itself without Pillow)."""
    if not HAVE_PIL:
        return arr
    return pil_image("datasets").fromarray(numpy.ascontiguousarray(arr), mode=mode)


def _check(cls, root, transform, target_transform):
    """ArgumentTypeError naming ``cls`` for a ``root`` that is not a path (None: the default
    root) or a transform that is neither callable nor None."""
    if root is not None and not isinstance(root, (str, os.PathLike)):
        raise ArgumentTypeError(f"{cls}: root must be a str or os.PathLike, got {type(root).__name__}")
    for name, fn in (("transform", transform), ("target_transform", target_transform)):
        if fn is not None and not callable(fn):
            raise ArgumentTypeError(f"{cls}: {name} must be callable or None, got {type(fn).__name__}")


def _indices(cls, indices, low, n):
    """``indices`` (one int, or a sequence of them) as ints in ``[low, n)``: ArgumentTypeError /
    IndexOutOfRangeError naming ``cls`` otherwise."""
    try:
        out = [operator.index(i) for i in (indices if hasattr(indices, "__iter__") else [indices])]
    except TypeError:
        raise ArgumentTypeError(f"{cls}: indices must be ints, got {indices!r:.60}") from None
    for i in out:
        if not low <= i < n:
            raise IndexOutOfRangeError(f"{cls}: index {i} is out of range for {n} samples")
    return out


def _batchable(transform, target_transform):
    return target_transform is None and transform is not None and \
        getattr(transform, "_batchable", lambda: False)()


class _VisionDataset(Dataset):
    """The sample protocol shared by the datasets: ``_images`` (uint8, one image per row, HW or
    HWC) and ``_labels`` (int64) arrays, a PIL ``_mode``."""

    _mode = "L"

    def __len__(self):
        return len(self._labels)

    def __getitem__(self, index):
        """``(image, target)`` of sample ``index``, transformed."""
        index, = _indices(type(self).__name__, [index], -len(self), len(self))
        return self._item(index)

    def _item(self, index):  # a checked index
        return _files.transformed(self, _image(self._images[index], self._mode), int(self._labels[index]))

    def __getitems__(self, indices):
        """A batch: stacked arrays when the transform allows it (module doc), else a list of samples."""
        indices = _indices(type(self).__name__, indices, -len(self), len(self))
        if _batchable(self.transform, self.target_transform):
            idx = numpy.asarray(indices, dtype=numpy.int64)
            return self.transform._batch(self._images[idx]), self._labels[idx]
        return [self._item(i) for i in indices]  # checked once above

    @property
    def class_to_idx(self):
        """``{class name: label}``."""
        return {c: i for i, c in enumerate(self.classes)}

    def __repr__(self):
        """torchvision's layout: name, size, root and split, then the transforms, one per block."""
        body = [f"Number of datapoints: {len(self)}"]
        if getattr(self, "root", None) is not None:
            body.append(f"Root location: {self.root}")
        if hasattr(self, "train"):
            body.append(f"Split: {'Train' if self.train else 'Test'}")
        if self.transform is not None or self.target_transform is not None:
            block = ["StandardTransform"]  # one entry: only its first line is indented, as torchvision prints it
            for head, t in (("Transform: ", self.transform), ("Target transform: ", self.target_transform)):
                if t is not None:
                    first, *rest = repr(t).splitlines()
                    block += [head + first] + [" " * len(head) + line for line in rest]
            body.append("\n".join(block))
        return "\n".join([f"Dataset {type(self).__name__}"] + ["    " + line for line in body])


def _files_class(base, torchvision_name):
    """tinynet's IDX loader, told to look in ``<root>/<torchvision_name>/raw`` and to take an
    uncompressed file there without a checksum (torchvision's behaviour)."""

    class Files(base):
        def _folders(self):
            return [self.root, os.path.join(self.root, self.name), os.path.join(self.root, torchvision_name, "raw")]

        def _verify(self, path, expected):
            if path.endswith(".gz"):
                base._verify(path, expected)

    Files.__name__ = Files.__qualname__ = torchvision_name
    return Files


class MNIST(_VisionDataset):
    """The MNIST digits (torchvision's ``datasets.MNIST``): 60,000 training and 10,000 test
    images, 28x28.

    Args:
        root (str or os.PathLike): the folder holding ``MNIST/raw/`` (or the IDX files).
        train (bool): the training split (default) or the test split.
        transform, target_transform (callable, optional): applied to the image / the label.
        download (bool): fetch missing files. Default False.

    Attributes:
        classes (list of str): torchvision's class names (``"0 - zero"``, ... for MNIST);
            ``class_to_idx`` maps them to labels.

    Raises:
        DatasetNotFoundError: files missing and ``download`` False (the message says where it looked).
        ChecksumError: a ``.gz`` file's MD5 differs from the published one.
        ValueError: an IDX file whose header disagrees with its size, or images and labels of different counts.
    """

    _loader = _files_class(_files.MNIST, "MNIST")
    classes = [f"{i} - {word}" for i, word in enumerate(
        ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"])]  # torchvision's names

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        _check(type(self).__name__, root, transform, target_transform)
        files = self._loader(root=root, train=train, download=download)
        self.root, self.train = files.root, train
        self.transform, self.target_transform = transform, target_transform
        self._images, self._labels = files.data, files.targets

    @property
    def data(self):
        """uint8 tensor ``(N, 28, 28)``."""
        return from_numpy(self._images)

    @property
    def targets(self):
        """int64 tensor ``(N,)``."""
        return from_numpy(self._labels)


class FashionMNIST(MNIST):
    """Fashion-MNIST in MNIST's format (torchvision's ``datasets.FashionMNIST``), from
    ``<root>/FashionMNIST/raw/``, ``<root>/fashion-mnist`` or ``<root>``. Arguments and errors
    as :class:`MNIST`."""

    _loader = _files_class(_files.FashionMNIST, "FashionMNIST")
    classes = list(_files.FashionMNIST.classes)


class CIFAR10(_VisionDataset):
    """CIFAR-10 (torchvision's ``datasets.CIFAR10``) from the binary distribution: 50,000
    training and 10,000 test RGB images, 32x32.

    Args:
        root (str or os.PathLike): the folder holding ``cifar-10-binary.tar.gz`` or
            ``cifar-10-batches-bin/`` (or ``cifar10/`` with either).
        train, transform, target_transform, download: as :class:`MNIST`.

    Attributes:
        classes (list of str): the ten class names; ``class_to_idx`` maps them to labels.

    Raises:
        DatasetNotFoundError, ChecksumError: as :class:`MNIST`; where only torchvision's pickled
            ``cifar-10-batches-py/`` is there, the message says it is not read.
        ValueError: a batch file whose size is not a whole number of 3073-byte records.
    """

    _mode = "RGB"

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        _check("CIFAR10", root, transform, target_transform)
        try:
            files = _files.CIFAR10(root=root, train=train, download=download)
        except DatasetNotFoundError as exc:
            base = _files.default_root() if root is None else os.fspath(root)
            pickled = [os.path.join(f, "cifar-10-batches-py") for f in (base, os.path.join(base, "cifar10"))]
            found = [p for p in pickled if os.path.isdir(p)]
            if not found:
                raise
            raise DatasetNotFoundError(
                f"{exc} {found[0]} (torchvision's pickled distribution) is there but is not read: unpickling "
                "can run code. Get the binary distribution (download=True fetches it).") from None
        self.root, self.train = files.root, train
        self.transform, self.target_transform = transform, target_transform
        self._images = numpy.ascontiguousarray(files.data.transpose(0, 2, 3, 1))
        self._labels = files.targets
        self.classes = list(files.classes)

    @property
    def data(self):
        """uint8 NumPy array ``(N, 32, 32, 3)``."""
        return self._images

    @property
    def targets(self):
        """The labels, a list of ints."""
        return self._labels.tolist()


class FakeData(_VisionDataset):
    """Random images and labels (torchvision's ``datasets.FakeData``), the same for the same
    index on every call: sample ``i`` is drawn by a :class:`tinynet.Generator` seeded with
    ``i + random_offset`` (uniform uint8 pixels, a uniform label), so it does not move the
    global random state. The values differ from torchvision's (another generator).

    Args:
        size (int): number of samples. Default 1000.
        image_size (tuple): ``(C, H, W)`` with C of 1 or 3. Default ``(3, 224, 224)``.
        num_classes (int): labels are drawn from ``[0, num_classes)``. Default 10.
        transform, target_transform: as :class:`MNIST`.
        random_offset (int): added to the index to seed each sample. Default 0.

    Raises:
        ArgumentError: a negative ``size``, ``num_classes`` below 1, or an ``image_size`` that
            is not ``(1 or 3, H, W)`` (H and W at least 1). ArgumentTypeError: a count that is
            not an int, a transform that is not callable.
    """

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None, target_transform=None,
                 random_offset=0):
        _check("FakeData", None, transform, target_transform)
        for name, v in (("size", size), ("num_classes", num_classes), ("random_offset", random_offset)):
            if isinstance(v, bool) or not isinstance(v, (int, numpy.integer)):
                raise ArgumentTypeError(f"FakeData: {name} must be an int, got {type(v).__name__}")
        if int(size) < 0 or int(num_classes) < 1:
            raise ArgumentError(f"FakeData: size must be >= 0 and num_classes >= 1, got {size} and {num_classes}")
        if not (isinstance(image_size, (tuple, list)) and len(image_size) == 3 and image_size[0] in (1, 3)
                and all(isinstance(v, (int, numpy.integer)) and not isinstance(v, bool) and v >= 1
                        for v in image_size)):
            raise ArgumentError(f"FakeData: image_size must be (C, H, W) with C 1 or 3, got {image_size!r}")
        self.size, self.image_size, self.num_classes = int(size), tuple(int(s) for s in image_size), int(num_classes)
        self.transform, self.target_transform, self.random_offset = transform, target_transform, int(random_offset)
        self._mode = "L" if self.image_size[0] == 1 else "RGB"

    def __len__(self):
        return self.size

    def _sample(self, index):
        g = Generator().manual_seed(index + self.random_offset)
        c, h, w = self.image_size
        pixels = (rand(h, w, c, generator=g) * 256).floor().numpy().astype(numpy.uint8)
        label = int(randint(0, self.num_classes, size=(1,), generator=g).item())
        return (pixels[:, :, 0] if c == 1 else pixels), label

    def __getitem__(self, index):
        index, = _indices("FakeData", [index], 0, self.size)
        return self._item(index)

    def _item(self, index):  # a checked index
        img, label = self._sample(index)
        return _files.transformed(self, _image(img, self._mode), label)

    def __getitems__(self, indices):
        indices = _indices("FakeData", indices, 0, self.size)
        if _batchable(self.transform, self.target_transform):
            pairs = [self._sample(i) for i in indices]
            imgs = numpy.stack([p[0] for p in pairs])
            return self.transform._batch(imgs), numpy.array([p[1] for p in pairs], dtype=numpy.int64)
        return [self._item(i) for i in indices]  # checked once above
