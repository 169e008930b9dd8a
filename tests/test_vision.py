"""tinynet.vision: torchvision's datasets, transforms and image utilities on tinynet tensors
(tests/test_compat.py runs a torchvision program against torchvision itself; these check the
pieces one by one)."""
import gzip
import os

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
