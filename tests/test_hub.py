"""tinynet.hub against a local HTTP server on 127.0.0.1, side by side with torch.hub on the same
files: load_state_dict_from_url of a state dict PyTorch saved (values equal to PyTorch's load, one
download then the cache), check_hash with the right and a wrong SHA-256 prefix in the file name,
download_url_to_file, a missing file, get_dir/set_dir and TORCH_HOME, and bad arguments."""
import hashlib
import http.server
import os
import threading

import numpy
import pytest

import tinynet
import tinynet.hub as hub
from tinynet.data import download as dl
from helpers import as_numpy
from tinynet import errors

torch = pytest.importorskip("torch")


@pytest.fixture
def served(tmp_path):
    """(base URL, folder it serves, the paths asked for)."""
    root, asked = tmp_path / "www", []
    root.mkdir()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=str(root), **k)

        def do_GET(self):
            asked.append(self.path)
            super().do_GET()

        def log_message(self, *args):
            pass
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/", root, asked
    httpd.shutdown()
    httpd.server_close()


def _publish(root, state, stem="weights"):
    """``state`` saved by PyTorch under ``<stem>-<sha256 prefix>.pth`` (the published naming)."""
    tmp = root / "tmp.pth"
    torch.save(state, tmp)
    digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
    name = f"{stem}-{digest[:8]}.pth"
    os.replace(tmp, root / name)
    return name, digest


def test_load_state_dict_from_url_as_torch_hub(served, tmp_path, device):
    base, root, asked = served
    torch.manual_seed(0)
    state = torch.nn.Linear(4, 3).state_dict()
    name, _ = _publish(root, state)
    ours = hub.load_state_dict_from_url(base + name, model_dir=tmp_path / "ours", map_location=device,
                                        progress=False, check_hash=True)
    theirs = torch.hub.load_state_dict_from_url(base + name, model_dir=str(tmp_path / "theirs"), progress=False,
                                                check_hash=True)
    assert list(ours) == list(theirs)
    for k in theirs:
        numpy.testing.assert_array_equal(as_numpy(ours[k]), theirs[k].numpy())
        assert ours[k].device.type == tinynet.device(device).type
    assert asked.count("/" + name) == 2  # once each
    again = hub.load_state_dict_from_url(base + name, model_dir=tmp_path / "ours", progress=False)
    assert asked.count("/" + name) == 2 and list(again) == list(theirs)  # from the cache
    model = tinynet.nn.Linear(4, 3)
    model.load_state_dict(ours)


def test_check_hash_refuses_other_bytes_and_keeps_nothing(served, tmp_path, monkeypatch):
    base, root, asked = served
    monkeypatch.setattr(dl, "BACKOFF", 0.01)  # wrong bytes are asked for again (they may be a bad mirror's), quickly
    name, digest = _publish(root, {"x": torch.ones(2)})
    wrong = name.replace(digest[:8], "0" * 8)
    os.replace(root / name, root / wrong)
    with pytest.raises(errors.DownloadError, match="SHA-256"):
        hub.load_state_dict_from_url(base + wrong, model_dir=tmp_path / "c", progress=False, check_hash=True)
    assert not (tmp_path / "c" / wrong).exists() and not (tmp_path / "c" / (wrong + ".part")).exists()
    assert asked.count("/" + wrong) == 1 + dl.RETRIES
    with pytest.raises(RuntimeError, match="invalid hash"):  # PyTorch refuses it too
        torch.hub.load_state_dict_from_url(base + wrong, model_dir=str(tmp_path / "t"), progress=False,
                                           check_hash=True)
    # without check_hash the same file loads
    out = hub.load_state_dict_from_url(base + wrong, model_dir=tmp_path / "c", progress=False)
    assert as_numpy(out["x"]).tolist() == [1.0, 1.0]


def test_download_url_to_file_and_a_missing_file(served, tmp_path):
    base, root, _ = served
    (root / "blob.bin").write_bytes(b"tinynet" * 1000)
    digest = hashlib.sha256(b"tinynet" * 1000).hexdigest()
    hub.download_url_to_file(base + "blob.bin", str(tmp_path / "d" / "blob.bin"), hash_prefix=digest[:10],
                             progress=False)
    assert (tmp_path / "d" / "blob.bin").read_bytes() == b"tinynet" * 1000
    with pytest.raises(errors.DownloadError, match="404"):
        hub.download_url_to_file(base + "nothing.bin", str(tmp_path / "d" / "nothing.bin"), progress=False)
    assert not (tmp_path / "d" / "nothing.bin").exists()


def test_get_dir_set_dir_and_torch_home(tmp_path, monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", [None])
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "th"))
    assert hub.get_dir() == str(tmp_path / "th" / "hub") == torch.hub.get_dir()
    monkeypatch.delenv("TORCH_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == str(tmp_path / "xdg" / "torch" / "hub") == torch.hub.get_dir()
    hub.set_dir(tmp_path / "mine")
    assert hub.get_dir() == str(tmp_path / "mine")
    assert hub.HASH_REGEX.pattern == torch.hub.HASH_REGEX.pattern


def test_bad_arguments(tmp_path):
    with pytest.raises(errors.ArgumentTypeError, match="hub.set_dir"):
        hub.set_dir(3)
    with pytest.raises(errors.ArgumentTypeError, match="url must be a str"):
        hub.load_state_dict_from_url(3, model_dir=tmp_path)
    with pytest.raises(errors.ArgumentError, match="check_hash needs a file name"):
        hub.load_state_dict_from_url("http://127.0.0.1:9/plain.pth", model_dir=tmp_path, check_hash=True)
    with pytest.raises(errors.ArgumentError, match="download_url: timeout must be a positive"):
        dl.download_url("http://127.0.0.1:9/x", str(tmp_path / "x"), timeout=0)
    with pytest.raises(errors.ArgumentError, match="hash_prefix must be lowercase hex"):
        hub.download_url_to_file("http://127.0.0.1:9/x", str(tmp_path / "x"), hash_prefix="XYZ")
