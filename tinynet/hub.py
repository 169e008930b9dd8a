"""``tinynet.hub``: ``torch.hub``'s functions for weights published at a URL.

:func:`load_state_dict_from_url` downloads a checkpoint once into the hub's cache folder and loads
it with :func:`tinynet.load`, which reads PyTorch's own ``torch.save`` files as well as tinynet's
(docs/compat.md), so the weights PyTorch projects publish load into tinynet models. The cache is
PyTorch's own (``$TORCH_HOME/hub``, by default ``~/.cache/torch/hub``): a file PyTorch downloaded
is not fetched again. Downloads go through :mod:`tinynet.data.download` (locked against other
processes, resumed after a dropped connection, retried, written atomically).

Not here: ``torch.hub.load``/``list``/``help`` (running a repository's ``hubconf.py`` fetched from
GitHub), and the legacy zip checkpoints holding one file, from before PyTorch 1.6.
"""
import os
import re
import urllib.parse
from urllib.parse import urlparse  # noqa: F401  (torch.hub's namespace has it; model zoos import it from there)

from .data.download import download_url as _download_url
from .errors import ArgumentError, ArgumentTypeError
from .serialization import load as _load

__all__ = ["HASH_REGEX", "download_url_to_file", "get_dir", "load_state_dict_from_url", "set_dir"]

# the SHA-256 prefix in a published file name: "resnet18-f37072fd.pth" -> "f37072fd"
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_hub_dir = [None]


def get_dir():
    """The hub's cache folder: the one :func:`set_dir` chose, else ``$TORCH_HOME/hub``
    (``TORCH_HOME`` defaults to ``$XDG_CACHE_HOME/torch``, that to ``~/.cache/torch``), as
    PyTorch's."""
    if _hub_dir[0] is not None:
        return _hub_dir[0]
    home = os.getenv("TORCH_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch"))
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d):
    """Use the folder ``d`` (a path; ``~`` is expanded) as the hub's cache from now on.

    Raises:
        ArgumentTypeError: ``d`` is not a str or path.
    """
    if not isinstance(d, (str, os.PathLike)):
        raise ArgumentTypeError(f"hub.set_dir: d must be a str or os.PathLike, got {type(d).__name__}")
    _hub_dir[0] = os.path.expanduser(os.fspath(d))


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download ``url`` to the file ``dst``; with ``hash_prefix``, the file's SHA-256 hex digest
    must start with it.

    Args:
        url (str): the address. dst (str or path): the file to write (its folder is made).
        hash_prefix (str, optional): lowercase hex digits. progress (bool): a progress bar.
            Default True.

    Raises:
        DownloadError: the download failed, or (``ChecksumError`` in its message) the digest did
            not match: then no file is written (PyTorch raises RuntimeError for the digest).
        ArgumentTypeError, ArgumentError: malformed arguments.
    """
    _download_url(url, dst, sha256_prefix=hash_prefix, quiet=not progress)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """The object saved at ``url`` (a model's state dict, usually), downloaded once into
    ``model_dir`` and loaded by :func:`tinynet.load`.

    Args:
        url (str): where the file is. model_dir (str, optional): the cache folder; default
            ``get_dir()/checkpoints``. map_location: as :func:`tinynet.load`. progress (bool):
            a progress bar while downloading. Default True.
        check_hash (bool): the file name's ``-<hex>.`` part (:data:`HASH_REGEX`) must prefix the
            file's SHA-256 digest. Default False.
        file_name (str, optional): the cached file's name; default the URL's last path part.
        weights_only (bool): as :func:`tinynet.load`; default False, as PyTorch's here.

    Returns:
        What :func:`tinynet.load` returns for the file.

    Raises:
        DownloadError: the download failed or its digest did not match.
        ArgumentError: ``check_hash`` with a file name without a ``-<hex>.`` part.
        ArgumentTypeError: ``url`` not a str. Others: as :func:`tinynet.load`.
    """
    if not isinstance(url, str):
        raise ArgumentTypeError(f"hub.load_state_dict_from_url: url must be a str, got {type(url).__name__}")
    model_dir = os.path.join(get_dir(), "checkpoints") if model_dir is None else os.fspath(model_dir)
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urllib.parse.urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        prefix = None
        if check_hash:
            found = HASH_REGEX.search(filename)
            if found is None:
                raise ArgumentError(f"hub.load_state_dict_from_url: check_hash needs a file name with a '-<hex>.' "
                                    f"part, got {filename!r}")
            prefix = found.group(1)
        download_url_to_file(url, cached, prefix, progress=progress)
    return _load(cached, map_location=map_location, weights_only=weights_only)
