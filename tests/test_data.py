"""tinynet.data: transforms, and the dataset loaders with their download path,
tested against a real HTTP server on 127.0.0.1 (good, corrupt and dropped responses)."""
import gzip
import hashlib
import http.server
import io
import os
import shutil
import tarfile
import threading

import numpy
import pytest

from tinynet.data import DataLoader, Dataset, TensorDataset, datasets, transforms
from tinynet.errors import ChecksumError, DatasetNotFoundError, DownloadError


# ---- tinynet.data re-exports tinynet.utils.data (its DataLoader tests: tests/test_utils_data.py) ----
def test_data_reexports_utils_data():
    import tinynet.utils.data as tud
    assert (DataLoader, Dataset, TensorDataset) == (tud.DataLoader, tud.Dataset, tud.TensorDataset)
    assert issubclass(datasets.MNIST, tud.Dataset)


def test_mnist_loader_batches_with_workers(mnist_dir):
    ds = datasets.MNIST(mnist_dir, train=False, transform=transforms.mnist_normalize())
    one = [(x.numpy(), y.numpy()) for x, y in DataLoader(ds, batch_size=500, device="cpu")]
    two = [(x.numpy(), y.numpy()) for x, y in DataLoader(ds, batch_size=500, num_workers=2, device="cpu")]
    assert len(one) == len(two) == 20 and one[0][0].shape == (500, 1, 28, 28) and one[0][1].tolist()[:3] == [7, 2, 1]
    assert all((a == c).all() and (b == d).all() for (a, b), (c, d) in zip(one, two))


def test_transforms_single_and_batch():
    img = numpy.full((28, 28), 255, numpy.uint8)
    t = transforms.mnist_normalize()
    one, batch = t(img), t(numpy.stack([img, img]))
    assert one.shape == (1, 28, 28) and batch.shape == (2, 1, 28, 28) and one.dtype == numpy.float32
    assert numpy.allclose(one, (1 - 0.1307) / 0.3081)
    with pytest.raises(ValueError):
        transforms.Normalize((0.5,), (0.0,))
    with pytest.raises(ValueError):
        transforms.ToTensor()(numpy.zeros(3))


# ---- the real MNIST files (fixture mnist_dir in conftest.py) -------------------------------
def test_mnist_reads_real_files(mnist_dir):
    train = datasets.MNIST(mnist_dir, train=True)
    test = datasets.MNIST(mnist_dir, train=False)
    assert train.data.shape == (60000, 28, 28) and train.data.dtype == numpy.uint8
    assert test.targets.shape == (10000,) and test.targets.dtype == numpy.int64
    assert train.targets[:8].tolist() == [5, 0, 4, 1, 9, 2, 1, 3]
    assert numpy.bincount(test.targets).tolist()[:3] == [980, 1135, 1032]
    img, label = train[0]
    assert img.shape == (28, 28) and label == 5


def test_mnist_uncompressed_and_torchvision_layout(mnist_dir, tmp_path):
    raw = tmp_path / "MNIST" / "raw"
    raw.mkdir(parents=True)
    for name in os.listdir(mnist_dir):
        if name.endswith(".gz"):
            with gzip.open(os.path.join(mnist_dir, name)) as src:
                (raw / name[:-3]).write_bytes(src.read())
    ds = datasets.MNIST(tmp_path, train=False, transform=transforms.mnist_normalize())
    x, y = ds.__getitems__(numpy.arange(3))
    assert x.shape == (3, 1, 28, 28) and y.tolist() == [7, 2, 1]


def test_corrupt_local_file_raises_checksum_error(mnist_dir, tmp_path):
    for name in os.listdir(mnist_dir):
        if name.endswith(".gz"):
            shutil.copy(os.path.join(mnist_dir, name), tmp_path / name)
    data = bytearray((tmp_path / "t10k-labels-idx1-ubyte.gz").read_bytes())
    data[-5] ^= 0xFF
    (tmp_path / "t10k-labels-idx1-ubyte.gz").write_bytes(bytes(data))
    with pytest.raises(ChecksumError, match="t10k-labels"):
        datasets.MNIST(tmp_path, train=False)


def test_missing_files_message_says_where(tmp_path):
    with pytest.raises(DatasetNotFoundError) as err:
        datasets.FashionMNIST(tmp_path / "nowhere", train=True)
    msg = str(err.value)
    assert "train-images-idx3-ubyte.gz" in msg and str(tmp_path / "nowhere") in msg and "download=True" in msg


def test_root_defaults_to_tinynet_data(mnist_dir, monkeypatch):
    monkeypatch.setenv("TINYNET_DATA", os.path.dirname(os.path.abspath(mnist_dir)))
    assert len(datasets.MNIST(train=False)) == 10000  # found in $TINYNET_DATA/mnist


# ---- download against a local HTTP server (its robustness: tests/test_download_robust.py) ----
@pytest.fixture(autouse=True)
def _no_backoff(monkeypatch):
    from tinynet.data import download
    monkeypatch.setattr(download, "BACKOFF", 0.0)  # retry rounds without waiting


def _files(folder):
    """The folder's files other than the download lock files (which stay, as filelock's do)."""
    return sorted(n for n in os.listdir(folder) if not n.endswith(".lock"))


class _Handler(http.server.BaseHTTPRequestHandler):
    files = {}      # path -> bytes
    behaviour = {}  # path -> "ok" | "corrupt" | "drop" | "missing"
    hits = []

    def do_GET(self):
        self.hits.append(self.path)
        mode = self.behaviour.get(self.path, "ok")
        body = self.files.get(self.path.split("/")[-1])
        if body is None or mode == "missing":
            self.send_error(404)
            return
        if mode == "corrupt":
            body = body[:-10] + b"x" * 10
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if mode == "drop":
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    _Handler.files, _Handler.behaviour, _Handler.hits = {}, {}, []
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_download_real_mnist_from_local_server(mnist_dir, server, tmp_path, monkeypatch):
    for name in os.listdir(mnist_dir):
        if name.endswith(".gz"):
            _Handler.files[name] = open(os.path.join(mnist_dir, name), "rb").read()
    _Handler.behaviour["/dead/t10k-images-idx3-ubyte.gz"] = "missing"
    monkeypatch.setattr(datasets.MNIST, "mirrors", [server + "/dead/", server + "/good/"])
    ds = datasets.MNIST(tmp_path, train=False, download=True)
    assert len(ds) == 10000
    assert _files(tmp_path / "mnist") == ["t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]
    assert "/dead/t10k-images-idx3-ubyte.gz" in _Handler.hits  # the first mirror was tried


def _fake_resources(tmp_files):
    res = []
    for name, payload in tmp_files.items():
        gz = gzip.compress(payload)
        _Handler.files[name] = gz
        res.append((name, hashlib.md5(gz).hexdigest(), hashlib.md5(payload).hexdigest()))
    return res


def _idx(dims, values):
    header = bytes([0, 0, 8, len(dims)]) + numpy.asarray(dims, ">i4").tobytes()
    return header + numpy.asarray(values, numpy.uint8).tobytes()


@pytest.fixture
def fake_mnist(server, monkeypatch):
    files = {"train-images-idx3-ubyte.gz": _idx((2, 28, 28), numpy.arange(2 * 784) % 256),
             "train-labels-idx1-ubyte.gz": _idx((2,), [3, 4]),
             "t10k-images-idx3-ubyte.gz": _idx((1, 28, 28), numpy.zeros(784)),
             "t10k-labels-idx1-ubyte.gz": _idx((1,), [7])}
    monkeypatch.setattr(datasets.MNIST, "resources", _fake_resources(files))
    monkeypatch.setattr(datasets.MNIST, "mirrors", [server + "/a/", server + "/b/"])
    return server


def test_corrupt_download_falls_back_to_next_mirror(fake_mnist, tmp_path):
    _Handler.behaviour["/a/train-images-idx3-ubyte.gz"] = "corrupt"
    ds = datasets.MNIST(tmp_path, train=True, download=True)
    assert ds.targets.tolist() == [3, 4]
    assert _files(tmp_path / "mnist") == ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"]


def test_corrupt_everywhere_leaves_nothing(fake_mnist, tmp_path):
    for m in ("a", "b"):
        _Handler.behaviour[f"/{m}/train-images-idx3-ubyte.gz"] = "corrupt"
    with pytest.raises(DownloadError, match="train-images-idx3-ubyte.gz") as err:
        datasets.MNIST(tmp_path, train=True, download=True)
    assert "ChecksumError" in str(err.value) and "Looked in" in str(err.value)
    assert _files(tmp_path / "mnist") == []  # wrong bytes are not kept, not even as a .part


def test_dropped_connection_leaves_no_target(fake_mnist, tmp_path):
    for m in ("a", "b"):
        _Handler.behaviour[f"/{m}/train-labels-idx1-ubyte.gz"] = "drop"
    with pytest.raises(DownloadError, match="train-labels-idx1-ubyte.gz") as err:
        datasets.MNIST(tmp_path, train=True, download=True)
    assert "IncompleteRead" in str(err.value)
    # only the verified file, and the partial one kept for the next call to resume
    assert _files(tmp_path / "mnist") == ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz.part"]


def test_unreachable_mirror_reports_every_failure(tmp_path, monkeypatch):
    monkeypatch.setattr(datasets.FashionMNIST, "mirrors", ["http://127.0.0.1:9/"])
    with pytest.raises(DownloadError, match="127.0.0.1:9"):
        datasets.FashionMNIST(tmp_path, train=False, download=True)


# ---- CIFAR-10 binary -------------------------------------------------------------------
def _cifar_tar(path, n_train=3, n_test=2):
    rng = numpy.random.default_rng(0)
    blobs, expect = {}, {}
    for name, n in [(f"data_batch_{i}.bin", n_train) for i in range(1, 6)] + [("test_batch.bin", n_test)]:
        labels = rng.integers(0, 10, n).astype(numpy.uint8)
        pixels = rng.integers(0, 256, (n, 3072)).astype(numpy.uint8)
        blobs[name] = numpy.concatenate([labels[:, None], pixels], 1).tobytes()
        expect[name] = (labels, pixels.reshape(n, 3, 32, 32))
    with tarfile.open(path, "w:gz") as tar:
        for name, blob in blobs.items():
            info = tarfile.TarInfo(f"cifar-10-batches-bin/{name}")
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    return expect


def test_cifar10_binary_archive(tmp_path, monkeypatch):
    expect = _cifar_tar(tmp_path / "cifar-10-binary.tar.gz")
    digest = hashlib.md5((tmp_path / "cifar-10-binary.tar.gz").read_bytes()).hexdigest()
    monkeypatch.setattr(datasets.CIFAR10, "md5", digest)
    train = datasets.CIFAR10(tmp_path, train=True)
    test = datasets.CIFAR10(tmp_path, train=False)
    assert train.data.shape == (15, 3, 32, 32) and len(test) == 2
    assert (test.data == expect["test_batch.bin"][1]).all()
    assert test.targets.tolist() == expect["test_batch.bin"][0].tolist()
    assert (train.data[3:6] == expect["data_batch_2.bin"][1]).all()
    x, y = next(iter(DataLoader(test, batch_size=2)))
    assert x.shape == (2, 3, 32, 32) and y.dtype == numpy.int64


def test_cifar10_checksum_and_missing(tmp_path):
    _cifar_tar(tmp_path / "cifar-10-binary.tar.gz")
    with pytest.raises(ChecksumError):
        datasets.CIFAR10(tmp_path)  # a home-made archive is not the published one
    with pytest.raises(DatasetNotFoundError, match="cifar-10-binary.tar.gz"):
        datasets.CIFAR10(tmp_path / "empty")


def test_cifar10_extracted_folder_and_bad_size(tmp_path):
    folder = tmp_path / "cifar-10-batches-bin"
    folder.mkdir()
    (folder / "test_batch.bin").write_bytes(bytes(3073 * 2))
    assert len(datasets.CIFAR10(tmp_path, train=False)) == 2
    (folder / "test_batch.bin").write_bytes(bytes(3000))
    with pytest.raises(ValueError, match="whole number"):
        datasets.CIFAR10(tmp_path, train=False)
