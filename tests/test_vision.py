"""tinynet.vision: torchvision's datasets, transforms and image utilities on tinynet tensors
(tests/test_compat.py runs a torchvision program against torchvision itself; these check the
pieces one by one).

The dataset tests write small files of their own in the formats torchvision reads (IDX files
under ``<root>/FashionMNIST/raw``, CIFAR-10's batches) and check tinynet against the arrays they
wrote; where the torchvision wheel can be fetched from the package registry (CI), the same
files are read by tinynet and by torchvision and compared sample by sample.
"""
import gzip
import hashlib
import json
import os
import pickle
import subprocess
import sys

import numpy
import pytest

import tinynet
from tinynet import errors
from tinynet.vision import datasets, transforms, utils

Image = pytest.importorskip("PIL.Image")


def test_to_tensor_and_normalize():
    gray = Image.fromarray(numpy.arange(12, dtype=numpy.uint8).reshape(3, 4), mode="L")
    t = transforms.ToTensor()(gray)
    assert t.shape == (1, 3, 4) and t.dtype == tinynet.float32
    assert numpy.allclose(t.numpy()[0], numpy.arange(12).reshape(3, 4) / 255)
    rgb = numpy.random.default_rng(0).integers(0, 256, (5, 6, 3), dtype=numpy.uint8)
    t = transforms.ToTensor()(rgb)
    assert t.shape == (3, 5, 6) and numpy.allclose(t.numpy(), rgb.transpose(2, 0, 1) / 255)
    floats = numpy.ones((2, 2), dtype=numpy.float64) * 3
    assert transforms.ToTensor()(floats).numpy().max() == 3  # only uint8 is scaled
    n = transforms.Normalize((0.5, 0.25, 0.0), (0.5, 0.5, 2.0))(t)
    want = (rgb.transpose(2, 0, 1) / 255 - numpy.array([0.5, 0.25, 0])[:, None, None]) / numpy.array(
        [0.5, 0.5, 2])[:, None, None]
    assert numpy.allclose(n.numpy(), want, atol=1e-6)
    with pytest.raises(errors.ArgumentTypeError, match="PIL Image or a numpy.ndarray"):
        transforms.ToTensor()([1, 2])
    with pytest.raises(errors.ArgumentError, match="std evaluated to zero"):
        transforms.Normalize((0.0,), (0.0,))
    with pytest.raises(errors.ShapeError, match=r"\(\.\.\., C, H, W\)"):
        transforms.Normalize((0.0,), (1.0,))(tinynet.ones(3, 3))


def test_batch_path_equals_one_sample_at_a_time():
    rng = numpy.random.default_rng(1)
    images = rng.integers(0, 256, (5, 7, 7), dtype=numpy.uint8)
    t = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    batch = t._batch(images)
    one = numpy.stack([t(Image.fromarray(im, mode="L")).numpy() for im in images])
    assert batch.shape == (5, 1, 7, 7) and numpy.allclose(batch, one, atol=1e-6)
    assert not transforms.Compose([transforms.Lambda(lambda x: x)])._batchable()


def test_geometry():
    img = Image.fromarray(numpy.arange(48, dtype=numpy.uint8).reshape(6, 8), mode="L")
    assert transforms.CenterCrop(4)(img).size == (4, 4)
    assert numpy.asarray(transforms.CenterCrop((2, 4))(img)).tolist() == [[18, 19, 20, 21], [26, 27, 28, 29]]
    assert transforms.Resize(3)(img).size == (4, 3)  # the smaller edge to 3, the aspect kept
    assert transforms.Resize((5, 2))(img).size == (2, 5)
    t = transforms.ToTensor()(img)
    assert transforms.CenterCrop(4)(t).shape == (1, 4, 4)
    assert transforms.CenterCrop(10)(t).shape == (1, 10, 10)  # zeros around, as torchvision pads
    resized = transforms.Resize(3)(t)
    via_pil = transforms.ToTensor()(transforms.Resize(3)(img))
    assert resized.shape == (1, 3, 4) and numpy.allclose(resized.numpy(), via_pil.numpy(), atol=1 / 255 + 1e-6)
    assert transforms.Resize(3, antialias=False)(t).shape == (1, 3, 4)
    tinynet.manual_seed(0)
    crop = transforms.RandomCrop(4, padding=2)(t)
    assert crop.shape == (1, 4, 4)
    assert transforms.RandomCrop(12, pad_if_needed=True)(img).size == (12, 12)
    with pytest.raises(errors.ArgumentError, match="larger than the input image"):
        transforms.RandomCrop(12)(img)
    flipped = transforms.RandomHorizontalFlip(p=1.0)(t)
    assert (flipped.numpy() == t.numpy()[..., ::-1]).all()
    assert transforms.RandomHorizontalFlip(p=0.0)(img) is img
    assert numpy.asarray(transforms.RandomHorizontalFlip(p=1.0)(img)).tolist() == numpy.asarray(img)[:, ::-1].tolist()


def test_make_grid_and_save_image(tmp_path):
    batch = tinynet.rand(5, 1, 4, 6)
    grid = utils.make_grid(batch, nrow=3, padding=1)
    assert grid.shape == (3, 2 * 5 + 1, 3 * 7 + 1)  # rows, columns of (size + padding), plus the edge
    assert numpy.allclose(grid.numpy()[0, 1:5, 1:7], batch.numpy()[0, 0])
    assert utils.make_grid(batch[:1]).shape == (3, 4, 6)  # one image comes back as it is, in colour
    norm = utils.make_grid(batch * 10 - 3, normalize=True)
    assert norm.numpy().min() >= 0 and norm.numpy().max() <= 1
    utils.save_image(batch, tmp_path / "g.png", nrow=3)
    saved = utils.make_grid(batch, nrow=3)
    with Image.open(tmp_path / "g.png") as im:
        assert im.mode == "RGB" and im.size == (saved.shape[2], saved.shape[1])
        pixels = numpy.asarray(im).transpose(2, 0, 1)
    assert numpy.array_equal(pixels, numpy.clip(saved.numpy() * 255 + 0.5, 0, 255).astype(numpy.uint8))
    with pytest.raises(errors.ShapeError):
        utils.make_grid(tinynet.rand(1, 1, 1, 2, 2))


def test_fake_data_is_repeatable_and_leaves_the_global_generator_alone():
    tinynet.manual_seed(3)
    before = tinynet.rand(1).item()
    ds = datasets.FakeData(size=4, image_size=(3, 8, 6), num_classes=5, transform=transforms.ToTensor())
    tinynet.manual_seed(3)
    a, b = ds[2], ds[2]
    assert tinynet.rand(1).item() == before
    assert a[0].shape == (3, 8, 6) and (a[0].numpy() == b[0].numpy()).all() and 0 <= a[1] < 5 and a[1] == b[1]
    loader = tinynet.utils.data.DataLoader(ds, batch_size=4)
    x, y = next(iter(loader))
    assert x.shape == (4, 3, 8, 6) and (x.numpy()[2] == a[0].numpy()).all() and y.tolist()[2] == a[1]
    with pytest.raises(errors.IndexOutOfRangeError):
        ds[4]


def _write_idx(folder, split, n, mnist):
    for kind, item in (("images-idx3", 784), ("labels-idx1", 1)):
        with gzip.open(os.path.join(mnist, f"{split}-{kind}-ubyte.gz"), "rb") as f:
            raw = f.read()
        head = 16 if item > 1 else 8
        (folder / f"{split}-{kind}-ubyte").write_bytes(raw[:4] + n.to_bytes(4, "big") + raw[8:head] +
                                                       raw[head:head + n * item])


def test_mnist_reads_torchvisions_layout_and_tinynets(tmp_path, mnist_dir):
    raw = tmp_path / "tv" / "MNIST" / "raw"
    raw.mkdir(parents=True)
    _write_idx(raw, "train", 40, mnist_dir)  # a subset: uncompressed files are not checksummed
    _write_idx(raw, "t10k", 10, mnist_dir)
    t = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.1307,), (0.3081,))])
    ds = datasets.MNIST(tmp_path / "tv", train=True, transform=t)
    assert len(ds) == 40 and ds.data.shape == (40, 28, 28) and ds.data.dtype == tinynet.uint8
    img, label = ds[0]
    assert img.shape == (1, 28, 28) and label == 5 and isinstance(label, int)
    assert isinstance(datasets.MNIST(tmp_path / "tv", train=False)[0][0], Image.Image)
    x, y = next(iter(tinynet.utils.data.DataLoader(ds, batch_size=8)))  # the stacked-batch path
    assert x.shape == (8, 1, 28, 28) and numpy.allclose(x.numpy()[0], img.numpy()) and y.tolist()[0] == 5
    full = datasets.MNIST(os.path.dirname(mnist_dir), train=False)  # tinynet's layout: <root>/mnist/*.gz
    assert len(full) == 10000
    with pytest.raises(errors.DatasetNotFoundError, match="MNIST/raw"):
        datasets.MNIST(tmp_path / "empty")


# ---- datasets on files the tests write --------------------------------------------------------
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FASHION = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
CIFAR = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]
CIFAR_BATCHES = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
normalize = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.25,), (0.5,))])


def _idx(array):
    """IDX bytes of a uint8 array: two zero bytes, 0x08, the number of dims, the dims big-endian."""
    head = bytes([0, 0, 8, array.ndim]) + b"".join(int(d).to_bytes(4, "big") for d in array.shape)
    return head + numpy.ascontiguousarray(array, dtype=numpy.uint8).tobytes()


def _mnist_files(folder, rng, n_train=12, n_test=7, gz=False):
    """The four IDX files (gzipped or not) of random images and labels in ``folder``; returns
    ``{"train": (images, labels), "t10k": ...}``."""
    folder.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for split, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, (n, 28, 28), dtype=numpy.uint8)
        labels = rng.integers(0, 10, n).astype(numpy.uint8)
        for kind, arr in (("images-idx3", images), ("labels-idx1", labels)):
            name = f"{split}-{kind}-ubyte"
            if gz:
                (folder / (name + ".gz")).write_bytes(gzip.compress(_idx(arr)))
            else:
                (folder / name).write_bytes(_idx(arr))
        arrays[split] = (images, labels.astype(numpy.int64))
    return arrays


def _cifar_files(root, rng, per_batch=3, n_test=4, binary=True, pickled=True):
    """CIFAR-10 batches of random images and labels, written from the same arrays in the binary
    layout tinynet reads (``cifar-10-batches-bin/*.bin``: a label byte, then 3072 pixel bytes
    R, G, B planes) and the pickled one torchvision reads (``cifar-10-batches-py``). Returns
    ``(train, test, md5)``, images ``(N, 32, 32, 3)``, labels int64, MD5s of the pickled files."""
    batches = [(rng.integers(0, 256, (n, 3, 32, 32), dtype=numpy.uint8), rng.integers(0, 10, n))
               for n in [per_batch] * 5 + [n_test]]
    md5 = {}
    for folder, on in (("cifar-10-batches-bin", binary), ("cifar-10-batches-py", pickled)):
        if on:
            (root / folder).mkdir(parents=True, exist_ok=True)
    for name, (images, labels) in zip(CIFAR_BATCHES, batches):
        flat = images.reshape(len(images), -1)
        if binary:
            records = numpy.concatenate([labels.astype(numpy.uint8)[:, None], flat], axis=1)
            (root / "cifar-10-batches-bin" / f"{name}.bin").write_bytes(records.tobytes())
        if pickled:
            path = root / "cifar-10-batches-py" / name
            path.write_bytes(pickle.dumps({"batch_label": name, "labels": labels.tolist(), "data": flat,
                                           "filenames": [f"{name}_{i}.png" for i in range(len(labels))]}))
            md5[name] = hashlib.md5(path.read_bytes()).hexdigest()
    if binary:
        (root / "cifar-10-batches-bin" / "batches.meta.txt").write_text("\n".join(CIFAR) + "\n")
    if pickled:
        meta = root / "cifar-10-batches-py" / "batches.meta"
        meta.write_bytes(pickle.dumps({"label_names": CIFAR, "num_cases_per_batch": per_batch, "num_vis": 3072}))
        md5["batches.meta"] = hashlib.md5(meta.read_bytes()).hexdigest()

    def hwc(parts):
        return (numpy.concatenate([p[0] for p in parts]).transpose(0, 2, 3, 1),
                numpy.concatenate([p[1] for p in parts]).astype(numpy.int64))
    return hwc(batches[:5]), hwc(batches[5:]), md5


@pytest.fixture
def no_network(monkeypatch):
    """Any download attempt fails the test (the files are there: nothing may be fetched)."""
    from tinynet.data import datasets as files

    def refuse(*args, **kwargs):
        raise AssertionError(f"download attempted: {args}")
    monkeypatch.setattr(files, "download", refuse)


def _check_samples(ds, images, labels, mode):
    """``ds`` holds exactly ``images`` (uint8, HW or HWC) and ``labels``: every sample as a PIL
    image and an int; the same through ToTensor+Normalize and a target_transform."""
    assert len(ds) == len(labels)
    for i in range(len(ds)):
        img, label = ds[i]
        assert isinstance(img, Image.Image) and img.mode == mode and img.size == (images.shape[2], images.shape[1])
        assert numpy.array_equal(numpy.asarray(img), images[i])
        assert type(label) is int and label == labels[i]
    img, label = ds[-1]
    assert numpy.array_equal(numpy.asarray(img), images[-1]) and label == labels[-1]
    with pytest.raises(errors.IndexOutOfRangeError, match="out of range"):
        ds[len(ds)]
    c = 1 if images.ndim == 3 else 3
    ds.transform = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.25,) * c, (0.5,) * c)])
    ds.target_transform = lambda t: 10 * t + 1
    chw = images[:, None] if c == 1 else images.transpose(0, 3, 1, 2)
    want = (chw.astype(numpy.float32) / 255 - 0.25) / 0.5
    for i in range(len(ds)):
        x, y = ds[i]
        assert isinstance(x, tinynet.Tensor) and x.shape == (c, *images.shape[1:3]) and x.dtype == tinynet.float32
        assert numpy.allclose(x.numpy(), want[i], atol=1e-6) and y == 10 * labels[i] + 1
    ds.target_transform = None
    x, y = next(iter(tinynet.utils.data.DataLoader(ds, batch_size=len(ds))))  # the stacked-batch path
    assert x.shape == (len(ds), c, *images.shape[1:3]) and x.dtype == tinynet.float32 and y.dtype == tinynet.int64
    assert numpy.allclose(x.numpy(), want, atol=1e-6) and y.tolist() == labels.tolist()
    ds.transform = None


@pytest.mark.parametrize("train", [True, False])
def test_fashion_mnist_on_generated_idx_files(tmp_path, train, no_network):
    arrays = _mnist_files(tmp_path / "FashionMNIST" / "raw", numpy.random.default_rng(5))
    images, labels = arrays["train" if train else "t10k"]
    ds = datasets.FashionMNIST(tmp_path, train=train, download=True)  # present: nothing fetched
    assert ds.train is train and ds.classes == FASHION and ds.class_to_idx == {c: i for i, c in enumerate(FASHION)}
    assert ds.data.shape == images.shape and ds.data.dtype == tinynet.uint8
    assert numpy.array_equal(ds.data.numpy(), images)
    assert ds.targets.dtype == tinynet.int64 and ds.targets.tolist() == labels.tolist()
    _check_samples(ds, images, labels, "L")
    assert repr(ds).splitlines()[:2] == ["Dataset FashionMNIST", f"    Number of datapoints: {len(labels)}"]
    assert repr(ds).splitlines()[-1] == f"    Split: {'Train' if train else 'Test'}"


def test_fashion_mnist_gzipped_files_and_tinynets_own_folder(tmp_path, monkeypatch, no_network):
    raw = tmp_path / "tv" / "FashionMNIST" / "raw"
    arrays = _mnist_files(raw, numpy.random.default_rng(6), gz=True)
    # a .gz is checked against the published MD5 (as torchvision checks what it downloads): these are not those files
    with pytest.raises(errors.ChecksumError, match="train-images-idx3-ubyte.gz: MD5"):
        datasets.FashionMNIST(tmp_path / "tv")
    loader = datasets.FashionMNIST._loader
    digests = [(name, hashlib.md5((raw / name).read_bytes()).hexdigest(), md5_raw)
               for name, _, md5_raw in loader.resources]
    monkeypatch.setattr(loader, "resources", digests)  # these files' own digests: the gzip path reads them
    for train, split in ((True, "train"), (False, "t10k")):
        ds = datasets.FashionMNIST(tmp_path / "tv", train=train)
        assert numpy.array_equal(ds.data.numpy(), arrays[split][0]) and ds.targets.tolist() == arrays[split][1].tolist()
    own = _mnist_files(tmp_path / "own" / "fashion-mnist", numpy.random.default_rng(7))  # tinynet's layout
    assert datasets.FashionMNIST(tmp_path / "own", train=False).targets.tolist() == own["t10k"][1].tolist()


def test_fashion_mnist_missing_or_broken_files_are_typed_errors(tmp_path, monkeypatch):
    with pytest.raises(errors.DatasetNotFoundError, match="FashionMNIST/raw") as info:
        datasets.FashionMNIST(tmp_path / "empty")
    assert isinstance(info.value, FileNotFoundError) and "download=True" in str(info.value)
    assert info.value.__cause__ is None and info.value.__context__ is None
    from tinynet.data import datasets as files

    def offline(name, *args):
        raise errors.DownloadError(f"{name}: no network")
    monkeypatch.setattr(files, "download", offline)
    with pytest.raises(errors.DownloadError, match="Looked in.*no network") as info:
        datasets.FashionMNIST(tmp_path / "empty", download=True)
    assert info.value.__suppress_context__
    raw = tmp_path / "short" / "FashionMNIST" / "raw"
    _mnist_files(raw, numpy.random.default_rng(8))
    blob = (raw / "train-images-idx3-ubyte").read_bytes()
    (raw / "train-images-idx3-ubyte").write_bytes(blob[:-5])  # a truncated file
    with pytest.raises(ValueError, match="train-images-idx3-ubyte: header says shape"):
        datasets.FashionMNIST(tmp_path / "short")


@pytest.mark.parametrize("train", [True, False])
def test_cifar10_on_generated_batches(tmp_path, train, no_network):
    tr, te, _ = _cifar_files(tmp_path, numpy.random.default_rng(9))
    images, labels = tr if train else te
    ds = datasets.CIFAR10(tmp_path, train=train, download=True)  # present: nothing fetched
    assert ds.train is train and ds.classes == CIFAR and ds.class_to_idx == {c: i for i, c in enumerate(CIFAR)}
    assert isinstance(ds.data, numpy.ndarray) and ds.data.dtype == numpy.uint8 and ds.data.shape == images.shape
    assert numpy.array_equal(ds.data, images) and ds.targets == labels.tolist()
    assert isinstance(ds.targets, list) and all(type(t) is int for t in ds.targets)
    _check_samples(ds, images, labels, "RGB")
    assert len(ds) == (15 if train else 4)


def test_cifar10_archive_missing_and_pickled_only(tmp_path, monkeypatch):
    with pytest.raises(errors.DatasetNotFoundError, match="cifar-10-batches-bin") as info:
        datasets.CIFAR10(tmp_path / "empty")
    assert isinstance(info.value, FileNotFoundError) and info.value.__context__ is None
    _cifar_files(tmp_path / "py", numpy.random.default_rng(10), binary=False)  # what torchvision downloads
    with pytest.raises(errors.DatasetNotFoundError, match="cifar-10-batches-py.*not read"):
        datasets.CIFAR10(tmp_path / "py")
    # the archive: checked against the published MD5, then read in place
    tr, _, _ = _cifar_files(tmp_path / "tar", numpy.random.default_rng(11), pickled=False)
    import tarfile
    archive = tmp_path / "tar" / "cifar-10-binary.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(tmp_path / "tar" / "cifar-10-batches-bin", arcname="cifar-10-batches-bin")
    os.rename(tmp_path / "tar" / "cifar-10-batches-bin", tmp_path / "tar" / "elsewhere")
    with pytest.raises(errors.ChecksumError, match="cifar-10-binary.tar.gz: MD5"):
        datasets.CIFAR10(tmp_path / "tar")
    from tinynet.data import datasets as files
    monkeypatch.setattr(files.CIFAR10, "md5", hashlib.md5(archive.read_bytes()).hexdigest())
    ds = datasets.CIFAR10(tmp_path / "tar")
    assert numpy.array_equal(ds.data, tr[0]) and ds.targets == tr[1].tolist()
    short = tmp_path / "short"
    _cifar_files(short, numpy.random.default_rng(12), pickled=False)
    (short / "cifar-10-batches-bin" / "test_batch.bin").write_bytes(b"\0" * 3000)
    with pytest.raises(ValueError, match="test_batch.bin holds 3000 bytes"):
        datasets.CIFAR10(short, train=False)


# ---- the same files through torchvision -------------------------------------------------------
def _same(a, b, where=""):
    """``a`` equals ``b``, floats to float32 rounding; the assertion names the first place they differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), where
        for k in a:
            _same(a[k], b[k], f"{where}/{k}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), f"{where}: {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{where}[{i}]")
    elif isinstance(a, float) or isinstance(b, float):
        assert a == pytest.approx(b, rel=1e-6, abs=1e-6), f"{where}: {a} != {b}"
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def test_datasets_match_torchvision_sample_by_sample(tmp_path, reference_torchvision):
    root = tmp_path / "data"
    rng = numpy.random.default_rng(13)
    _mnist_files(root / "MNIST" / "raw", rng)
    _mnist_files(root / "FashionMNIST" / "raw", rng, n_train=9, n_test=6)
    *_, md5 = _cifar_files(root, rng)
    (tmp_path / "md5.json").write_text(json.dumps(md5))
    program = os.path.join(HERE, "programs", "vision_datasets.py")
    args = ["--root", str(root), "--cifar-md5", str(tmp_path / "md5.json")]
    results = {}
    for side, cmd, path in (("tinynet", [sys.executable, "-m", "tinynet.compat"], ROOT),
                            ("torchvision", [sys.executable], reference_torchvision)):
        env = dict(os.environ, PYTHONPATH=path)
        env.pop("TINYNET_COMPAT_TRACEBACK", None)
        out = subprocess.run(cmd + [program, "--out", str(tmp_path / f"{side}.json"), *args], cwd=tmp_path,
                             env=env, capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr[-3000:]
        results[side] = json.loads((tmp_path / f"{side}.json").read_text())
    ours, theirs = results["tinynet"], results["torchvision"]
    assert ours.keys() == theirs.keys() and len(ours) == 9
    for name in ("MNIST", "FashionMNIST", "CIFAR10"):
        # a missing dataset: torchvision raises RuntimeError; tinynet's DatasetNotFoundError is a
        # RuntimeError too (and a FileNotFoundError), so the same except clause catches both
        missing = ours.pop(f"{name}/missing"), theirs.pop(f"{name}/missing")
        assert missing[0] != "no error" and missing[0]["FileNotFoundError"]
        assert missing[0]["RuntimeError"] and missing[1]["RuntimeError"]
    _same(ours, theirs)
    assert len(ours["CIFAR10/train"]["items"]) == 15 and ours["MNIST/test"]["len"] == 7
