"""Fetch a file from a list of mirrors with a rich progress bar, verified by MD5.

The bytes go to a temporary file next to the target; only when the whole body arrived
and its MD5 equals the published digest is it renamed into place (``os.replace``). A
dropped connection, a short body or a wrong digest deletes the temporary file and moves
on to the next mirror; when every mirror failed, :class:`DownloadError` names the file
and each mirror's failure. HTTP comes from :mod:`urllib.request`, hashing from
:mod:`hashlib`.
"""
import hashlib
import http.client
import os
import tempfile
import urllib.error
import urllib.request

from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                           TransferSpeedColumn)

from ..errors import ChecksumError, DownloadError

CHUNK = 1 << 16


def md5_of(path):
    """Hex MD5 digest of a file."""
    h = hashlib.md5()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _fetch_one(url, tmp, progress, timeout):
    with urllib.request.urlopen(url, timeout=timeout) as resp:
        total = resp.headers.get("Content-Length")
        total = int(total) if total is not None else None
        task = progress.add_task(os.path.basename(url), total=total)
        h = hashlib.md5()
        got = 0
        with open(tmp, "wb") as out:
            while True:
                block = resp.read(CHUNK)
                if not block:
                    break
                out.write(block)
                h.update(block)
                got += len(block)
                progress.update(task, advance=len(block))
            out.flush()
            os.fsync(out.fileno())
        if total is not None and got != total:
            raise http.client.IncompleteRead(b"", total - got)
        return h.hexdigest()


def download(filename, folder, mirrors, md5, timeout=30.0, quiet=False):
    """Download ``filename`` from the first mirror that delivers it intact.

    Args:
        filename (str): file name appended to each mirror's base URL.
        folder (str): destination folder (created if needed).
        mirrors (list[str]): base URLs ending with ``/``, tried in order.
        md5 (str): expected hex digest.
        timeout (float): seconds per connection attempt. Default 30.
        quiet (bool): no progress bar.

    Returns:
        str: path of the verified file.

    Raises:
        DownloadError: every mirror failed (the message lists why); nothing is left behind.
    """
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, filename)
    failures = []
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), DownloadColumn(),
               TransferSpeedColumn(), TimeRemainingColumn())
    with Progress(*columns, disable=quiet, transient=True) as progress:
        for base in mirrors:
            url = base + filename
            fd, tmp = tempfile.mkstemp(prefix=".part-", dir=folder)
            os.close(fd)
            try:
                digest = _fetch_one(url, tmp, progress, timeout)
                if digest != md5:
                    raise ChecksumError(f"MD5 {digest} != expected {md5}")
                os.replace(tmp, target)
                return target
            except (OSError, http.client.HTTPException, ValueError) as exc:
                failures.append(f"{url}: {type(exc).__name__}: {exc}")
            finally:
                if os.path.exists(tmp):
                    os.unlink(tmp)
    raise DownloadError(f"download of {filename} failed from every mirror:\n  " + "\n  ".join(failures))
