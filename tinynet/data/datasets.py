"""MNIST, Fashion-MNIST (IDX files) and CIFAR-10 (binary distribution).

MNIST-family files are the four IDX files (``.gz`` or uncompressed). Each file's MD5 is
checked against the published digest of the ``.gz`` (for uncompressed files, against
the MD5 of the decompressed published file). IDX layout (LeCun et al.): two zero
bytes, a type byte (0x08 = uint8), the number of dims, then each dim as a big-endian
int32, then the data in C order.

``root`` defaults to ``$TINYNET_DATA``, else ``~/.cache/tinynet``. Files are looked for in
``root`` itself, in ``root/<name>`` (``mnist``, ``fashion-mnist``) and in
``root/<Class>/raw`` (torchvision's layout); downloads go to ``root/<name>``.
"""
import gzip

import os
import tarfile

import numpy

from ..errors import ChecksumError, DatasetNotFoundError, DownloadError
from ..utils.data.dataset import Dataset
from .download import download, md5_of


def default_root():
    """``$TINYNET_DATA`` if set, else ``~/.cache/tinynet``."""
    return os.environ.get("TINYNET_DATA") or os.path.join(os.path.expanduser("~"), ".cache", "tinynet")


def read_idx(raw, what):
    """Parse IDX bytes into a uint8 array.

    Raises:
        ValueError: not an unsigned-byte IDX file, or the size disagrees with the header.
    """
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 0x08:
        raise ValueError(f"{what}: not an unsigned-byte IDX file (header {raw[:4]!r})")
    ndim = raw[3]
    dims = tuple(int(d) for d in numpy.frombuffer(raw, dtype=">i4", count=ndim, offset=4))
    offset = 4 + 4 * ndim
    if len(raw) - offset != int(numpy.prod(dims)):
        raise ValueError(f"{what}: header says shape {dims} but the file holds {len(raw) - offset} bytes")
    return numpy.frombuffer(raw, dtype=numpy.uint8, offset=offset).reshape(dims)


def transformed(dataset, img, target):
    """``(img, target)`` through ``dataset.transform`` and ``dataset.target_transform``, each
    where it is set (torchvision's ``StandardTransform``): the sample step of the datasets
    here and of :mod:`tinynet.vision.datasets`."""
    if dataset.transform is not None:
        img = dataset.transform(img)
    if dataset.target_transform is not None:
        target = dataset.target_transform(target)
    return img, target


class _IDXDataset(Dataset):
    """Shared code of MNIST-style datasets; subclasses set the class attributes."""

    name = ""
    mirrors: list[str] = []
    # (file, md5 of the .gz, md5 of the decompressed file)
    resources: list[tuple[str, str, str]] = []
    classes: list[str] = []

    def __init__(self, root=None, train=True, download=False, transform=None, target_transform=None):
        self.root = os.fspath(root) if root is not None else default_root()
        self.train, self.transform, self.target_transform = train, transform, target_transform
        wanted = self.resources[:2] if train else self.resources[2:]
        paths = [self._locate(res, download) for res in wanted]
        self.data = read_idx(self._read(paths[0]), paths[0])
        self.targets = read_idx(self._read(paths[1]), paths[1]).astype(numpy.int64)
        if len(self.data) != len(self.targets):
            raise ValueError(f"{type(self).__name__}: {len(self.data)} images but {len(self.targets)} labels")

    def _folders(self):
        cls = type(self).__name__
        return [self.root, os.path.join(self.root, self.name), os.path.join(self.root, cls, "raw")]

    def _locate(self, res, allow_download):
        fname, md5_gz, md5_raw = res
        for folder in self._folders():
            gz, raw = os.path.join(folder, fname), os.path.join(folder, fname[:-3])
            if os.path.isfile(gz):
                self._verify(gz, md5_gz)
                return gz
            if os.path.isfile(raw):
                self._verify(raw, md5_raw)
                return raw
        where = (f"{type(self).__name__}: {fname} not found. Looked in: {', '.join(self._folders())}. "
                 f"Put the four {self.name} files ({', '.join(r[0] for r in self.resources)}) in one "
                 f"of those folders (or point root/--data-dir/TINYNET_DATA at them)")
        if not allow_download:
            raise DatasetNotFoundError(where + ", or pass download=True on a machine with internet access.")
        try:
            return download(fname, os.path.join(self.root, self.name), self.mirrors, md5_gz)
        except DownloadError as exc:
            raise DownloadError(f"{where}. Downloading it failed as well: {exc}") from None

    @staticmethod
    def _verify(path, expected):
        got = md5_of(path)
        if got != expected:
            raise ChecksumError(f"{path}: MD5 {got} does not match the published {expected}; "
                                "the file is corrupt or not the original. Delete it and download again.")

    @staticmethod
    def _read(path):
        with open(path, "rb") as f:
            raw = f.read()
        return gzip.decompress(raw) if path.endswith(".gz") else raw

    def __len__(self):
        return len(self.data)

    def to(self, device):
        """A copy whose ``data`` and ``targets`` live on ``device`` (transforms run there)."""
        import copy
        from .. import backend, devices
        out = copy.copy(self)
        dev = devices.resolve(device, "to")
        out.data, out.targets = backend.to_device(self.data, dev), backend.to_device(self.targets, dev)
        return out

    def nbytes(self):
        return int(self.data.nbytes + self.targets.nbytes)

    def __getitem__(self, index):
        """``(image, label)``: uint8 (28, 28) and int64, or transformed."""
        return transformed(self, self.data[index], self.targets[index])

    def __getitems__(self, indices):
        """A whole batch at once: uint8 (N, 28, 28) and int64 (N,), or transformed."""
        return transformed(self, self.data[indices], self.targets[indices])

    def __repr__(self):
        return (f"{type(self).__name__}(split={'train' if self.train else 'test'}, "
                f"n={len(self)}, root={self.root!r})")


class MNIST(_IDXDataset):
    """The MNIST handwritten digits: 60,000 training and 10,000 test images, 28x28 uint8.

    Args:
        root (str, optional): data folder (see module doc); default ``$TINYNET_DATA`` or
            ``~/.cache/tinynet``.
        train (bool): training split (default) or test split.
        download (bool): fetch missing files from the mirrors. Default False.
        transform: callable on images (uint8 (28, 28) or a batch (N, 28, 28)), e.g.
            :func:`tinynet.data.transforms.mnist_normalize` -> float32 (N, 1, 28, 28).
        target_transform: callable on labels.

    Attributes:
        data: uint8 array (N, 28, 28). targets: int64 array (N,).

    Raises:
        DatasetNotFoundError: files missing and ``download`` is False (says where it looked).
        ChecksumError: a file's MD5 differs from the published one.
        DownloadError: every mirror failed.
    """

    name = "mnist"
    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/",
               "https://storage.googleapis.com/cvdf-datasets/mnist/",
               "http://yann.lecun.com/exdb/mnist/"]
    resources = [("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873", "6bbc9ace898e44ae57da46a324031adb"),
                 ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432", "a25bea736e30d166cdddb491f175f624"),
                 ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3", "2646ac647ad5339dbf082846283269ea"),
                 ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c", "27ae3e4e09519cfbb04c329615203637")]
    classes = [str(i) for i in range(10)]


class FashionMNIST(_IDXDataset):
    """Fashion-MNIST (Xiao et al. 2017): Zalando article images in MNIST's format.

    Same arguments, attributes and errors as :class:`MNIST`.
    """

    name = "fashion-mnist"
    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d", "f4a8712d7a061bf5bd6d2ca38dc4d50a"),
                 ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe", "9018921c3c673c538a1fc5bad174d6f9"),
                 ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79", "8181f5470baa50b63fa0f6fddb340f0a"),
                 ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310", "15d484375f8d13e6eb1aabb0c3f46965")]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
               "Bag", "Ankle boot"]


class CIFAR10(Dataset):
    """CIFAR-10 (Krizhevsky 2009) from the *binary* distribution ``cifar-10-binary.tar.gz``.

    Each record is 1 label byte followed by 3072 pixel bytes (3x32x32, channel-major);
    ``data_batch_1..5.bin`` form the training split, ``test_batch.bin`` the test split. The
    archive (MD5-checked) is read in place with :mod:`tarfile`; an already extracted
    ``cifar-10-batches-bin`` folder works too. The pickled distribution is never read.

    Args:
        root, train, download, transform, target_transform: as for :class:`MNIST`.

    Attributes:
        data: uint8 (N, 3, 32, 32). targets: int64 (N,).

    Raises:
        DatasetNotFoundError, ChecksumError, DownloadError: as for :class:`MNIST`.
        ValueError: a batch file whose size is not a whole number of records.
    """

    name = "cifar10"
    archive = "cifar-10-binary.tar.gz"
    md5 = "c32a1d4ab5d03f1284b67883e8d87530"
    mirrors = ["https://www.cs.toronto.edu/~kriz/"]
    folder = "cifar-10-batches-bin"
    record = 1 + 3 * 32 * 32
    classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]

    def __init__(self, root=None, train=True, download=False, transform=None, target_transform=None):
        self.root = os.fspath(root) if root is not None else default_root()
        self.train, self.transform, self.target_transform = train, transform, target_transform
        names = [f"data_batch_{i}.bin" for i in range(1, 6)] if train else ["test_batch.bin"]
        blobs = self._load(names, download)
        raw = numpy.frombuffer(b"".join(blobs), dtype=numpy.uint8).reshape(-1, self.record)
        self.targets = raw[:, 0].astype(numpy.int64)
        self.data = raw[:, 1:].reshape(-1, 3, 32, 32)

    def _load(self, names, allow_download):
        folders = [self.root, os.path.join(self.root, self.name)]
        for f in folders:
            extracted = os.path.join(f, self.folder)
            if all(os.path.isfile(os.path.join(extracted, n)) for n in names):
                return [self._check(self._read_file(os.path.join(extracted, n)), n) for n in names]
        for f in folders:
            path = os.path.join(f, self.archive)
            if os.path.isfile(path):
                return self._from_archive(path, names)
        if allow_download:
            path = download(self.archive, os.path.join(self.root, self.name), self.mirrors, self.md5)
            return self._from_archive(path, names)
        raise DatasetNotFoundError(
            f"CIFAR10: neither {self.archive} nor an extracted {self.folder}/ folder found in "
            f"{', '.join(folders)}. Put the binary distribution there, or pass download=True.")

    @staticmethod
    def _read_file(path):
        with open(path, "rb") as f:
            return f.read()

    def _from_archive(self, path, names):
        got = md5_of(path)
        if got != self.md5:
            raise ChecksumError(f"{path}: MD5 {got} does not match the published {self.md5}")
        with tarfile.open(path, "r:gz") as tar:
            out = []
            for n in names:
                member = tar.extractfile(f"{self.folder}/{n}")
                if member is None:
                    raise DatasetNotFoundError(f"CIFAR10: {path} has no {self.folder}/{n}")
                out.append(self._check(member.read(), n))
            return out

    def _check(self, blob, name):
        if len(blob) % self.record:
            raise ValueError(f"CIFAR10: {name} holds {len(blob)} bytes, not a whole number of "
                             f"{self.record}-byte records")
        return blob

    def __len__(self):
        return len(self.data)

    def __getitem__(self, index):
        img, t = self.data[index], self.targets[index]
        return (self.transform(img) if self.transform else img,
                self.target_transform(t) if self.target_transform else t)

    def __getitems__(self, indices):
        return self.__getitem__(indices)



