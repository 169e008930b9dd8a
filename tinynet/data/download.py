"""Fetch a file from a list of mirrors with a rich progress bar: resumable, retried,
verified by MD5, safe with several processes sharing one cache.

* **One downloader at a time**: a :class:`filelock.FileLock` on ``<target>.lock``
  serialises processes fetching the same file; whoever gets the lock second finds the
  finished file (its MD5 checked) and downloads nothing. The empty ``.lock`` file stays
  (removing it would break the lock for processes already waiting on it).
* **Resumable**: the bytes go to ``<target>.part``. After a dropped connection or a
  timeout the next try asks for the rest with ``Range: bytes=<have>-``; a ``206`` answer
  is appended, a ``200`` (the server ignored the range) starts the file over, a ``416``
  means the part is already whole (or too long: it is checked and started over). The
  part survives a failed or interrupted call, so the next call resumes it too.
* **Bounded retries**: rounds over the mirrors, at most ``1 + retries`` of them, with an
  exponential backoff (``backoff``, ``2 * backoff``, ...) between rounds; a mirror that
  answers 404 (or another client error) is not asked again. Every connection has a
  ``timeout`` for connecting and for each read, so a stalled server cannot hang a run.
* **Verified, then atomic**: the whole part's MD5 must equal the published digest; a
  wrong digest discards the part (its bytes cannot be trusted for a resume). Only then is
  the part fsynced and renamed onto the target (``os.replace``) and the folder fsynced.

HTTP comes from :mod:`urllib.request`, hashing from :mod:`hashlib`; docs/reliability.md
says how all of this is tested.
"""
import hashlib
import http.client
import os
import re
import time
import urllib.error
import urllib.request

from filelock import FileLock
from rich.progress import (BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn,
                           TransferSpeedColumn)

from ..atomic import fsync_dir
from ..errors import ArgumentError, ArgumentTypeError, ChecksumError, DownloadError

CHUNK = 1 << 16
TIMEOUT = 30.0   # seconds to connect, and for each read
RETRIES = 3      # extra rounds over the mirrors after the first
BACKOFF = 1.0    # seconds before the first extra round; doubled for each further one

_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")
_RETRYABLE_HTTP = {408, 425, 429}  # client errors worth asking again


def md5_of(path):
    """Hex MD5 digest of a file."""
    return digest_of(path, "md5")


def digest_of(path, algorithm):
    """Hex digest of a file by the :mod:`hashlib` ``algorithm`` (``"md5"``, ``"sha256"``)."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _open(url, start, timeout):
    headers = {"User-Agent": "tinynet", "Accept-Encoding": "identity"}
    if start:
        headers["Range"] = f"bytes={start}-"
    return urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=timeout)


def _fetch_one(url, part, whole, progress, timeout):
    """Bring ``part`` to the whole body of ``url``, resuming what it holds (``whole(part)``:
    whether a part the server says is complete, a 416 answer, holds the right bytes)."""
    have = os.path.getsize(part) if os.path.exists(part) else 0
    try:
        resp = _open(url, have, timeout)
    except urllib.error.HTTPError as exc:
        if exc.code != 416 or not have:
            raise
        exc.close()
        if whole(part):
            return  # the part was already whole (killed after its last byte)
        os.unlink(part)  # longer than the file, or other bytes: start over
        have, resp = 0, _open(url, 0, timeout)
    with resp:
        length = resp.headers.get("Content-Length")
        length = int(length) if length is not None else None
        if resp.status == 206:
            crange = resp.headers.get("Content-Range", "")
            m = _CONTENT_RANGE.fullmatch(crange.strip())
            if m is None or int(m.group(1)) != have:
                os.unlink(part)
                raise DownloadError(f"download: {url} answered 'Range: bytes={have}-' with Content-Range "
                                    f"{crange!r}; the partial file is discarded")
            mode = "ab"
        else:  # 200: the whole body (the server ignored the Range header, or none was sent)
            have, mode = 0, "wb"
        end = have + length if length is not None else None
        task = progress.add_task(os.path.basename(url), total=end, completed=have)
        got = have
        try:
            with open(part, mode) as out:
                try:
                    while True:
                        block = resp.read1(CHUNK)  # what has arrived: kept if the next read stalls
                        if not block:
                            break
                        out.write(block)
                        got += len(block)
                        progress.update(task, advance=len(block))
                finally:  # keep what arrived, durably, for the next try
                    out.flush()
                    os.fsync(out.fileno())
        finally:
            progress.remove_task(task)
        if end is not None and got != end:
            raise http.client.IncompleteRead(b"", end - got)


def _check_args(filename, mirrors, md5, timeout, retries, backoff):
    if not isinstance(filename, str) or not filename or "/" in filename or filename in (".", ".."):
        raise ArgumentError(f"download: filename must be a plain file name, got {filename!r}")
    if not isinstance(mirrors, (list, tuple)) or not mirrors or not all(isinstance(m, str) for m in mirrors):
        raise ArgumentTypeError(f"download: mirrors must be a non-empty list of base URL strings, got {mirrors!r}")
    if not isinstance(md5, str) or not re.fullmatch(r"[0-9a-fA-F]{32}", md5):
        raise ArgumentError(f"download: md5 must be 32 hex digits, got {md5!r}")
    _check_patience("download", timeout, retries, backoff)


def _check_patience(op, timeout, retries, backoff):
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not timeout > 0:
        raise ArgumentError(f"{op}: timeout must be a positive number of seconds, got {timeout!r}")
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise ArgumentError(f"{op}: retries must be an int >= 0, got {retries!r}")
    if not isinstance(backoff, (int, float)) or isinstance(backoff, bool) or backoff < 0:
        raise ArgumentError(f"{op}: backoff must be a number of seconds >= 0, got {backoff!r}")


def download(filename, folder, mirrors, md5, timeout=None, quiet=False, retries=None, backoff=None):
    """Download ``filename`` from the first mirror that delivers it intact (module
    docstring: locking, resuming, retries, verification).

    Args:
        filename (str): file name appended to each mirror's base URL.
        folder (str): destination folder (created if needed).
        mirrors (list[str]): base URLs ending with ``/``, tried in order in every round.
        md5 (str): expected hex digest.
        timeout (float): seconds to connect and for each read. Default :data:`TIMEOUT` (30).
        quiet (bool): no progress bar.
        retries (int): extra rounds over the mirrors. Default :data:`RETRIES` (3).
        backoff (float): seconds before the first extra round, doubled for each further
            one. Default :data:`BACKOFF` (1.0).

    Returns:
        str: path of the verified file. If it is already there (another process has just
        fetched it) nothing is downloaded.

    Raises:
        DownloadError: every try failed; the message lists each URL and why (for a wrong
            digest: ``ChecksumError`` with the URL, the expected and the actual MD5). The
            target is not created; a ``.part`` left by a dropped connection is kept for
            the next call to resume, one with wrong bytes is deleted.
        ArgumentError, ArgumentTypeError: a malformed argument.
        OSError: the destination folder cannot be created or the lock file opened.
    """
    timeout = TIMEOUT if timeout is None else timeout
    retries = RETRIES if retries is None else retries
    backoff = BACKOFF if backoff is None else backoff
    _check_args(filename, mirrors, md5, timeout, retries, backoff)
    md5 = md5.lower()
    os.makedirs(folder, exist_ok=True)
    target = os.path.join(folder, filename)
    with FileLock(target + ".lock"):
        if os.path.isfile(target) and md5_of(target) == md5:
            return target

        def verify(part, url):
            digest = md5_of(part)
            if digest != md5:
                raise ChecksumError(f"download: {url} delivered bytes with MD5 {digest}, expected {md5}")
        return _download_locked(target, [base + filename for base in mirrors], lambda p: md5_of(p) == md5, verify,
                                timeout, quiet, retries, backoff)


def download_url(url, dst, sha256_prefix=None, timeout=None, quiet=False, retries=None, backoff=None):
    """Download ``url`` to the file ``dst`` as :func:`download` does (locked, resumable,
    retried, atomic), checking that the file's SHA-256 hex digest starts with
    ``sha256_prefix`` when one is given (``torch.hub``'s check).

    Returns:
        str: ``dst``.

    Raises:
        DownloadError: every try failed (a wrong digest: ``ChecksumError`` in the list; the part is deleted).
        ArgumentError, ArgumentTypeError: a malformed argument.
    """
    timeout = TIMEOUT if timeout is None else timeout
    retries = RETRIES if retries is None else retries
    backoff = BACKOFF if backoff is None else backoff
    if not isinstance(url, str) or not isinstance(dst, (str, os.PathLike)):
        raise ArgumentTypeError(f"download_url: url and dst must be strings, got {type(url).__name__} and "
                                f"{type(dst).__name__}")
    if sha256_prefix is not None and (not isinstance(sha256_prefix, str)
                                      or not re.fullmatch(r"[0-9a-f]*", sha256_prefix)):
        raise ArgumentError(f"download_url: hash_prefix must be lowercase hex digits, got {sha256_prefix!r}")
    _check_patience("download_url", timeout, retries, backoff)
    dst = os.path.abspath(os.fspath(dst))
    os.makedirs(os.path.dirname(dst), exist_ok=True)

    def matches(path):
        return sha256_prefix is None or digest_of(path, "sha256").startswith(sha256_prefix)

    def verify(part, where):
        if not matches(part):
            raise ChecksumError(f"download_url: {where} delivered bytes with SHA-256 {digest_of(part, 'sha256')}, "
                                f"expected one starting with {sha256_prefix}")
    with FileLock(dst + ".lock"):
        # without a hash a part the server calls complete cannot be checked: it is fetched again
        return _download_locked(dst, [url], matches if sha256_prefix else (lambda p: False), verify, timeout, quiet,
                                retries, backoff)


def _download_locked(target, urls, whole, verify, timeout, quiet, retries, backoff):
    folder, filename = os.path.split(target)
    part = target + ".part"
    failures, dead = [], set()
    columns = (TextColumn("[bold]{task.description}"), BarColumn(), DownloadColumn(),
               TransferSpeedColumn(), TimeRemainingColumn())
    with Progress(*columns, disable=quiet, transient=True) as progress:
        for round_ in range(retries + 1):
            if round_:
                time.sleep(backoff * 2 ** (round_ - 1))
            for url in urls:
                if url in dead:
                    continue
                try:
                    _fetch_one(url, part, whole, progress, timeout)
                    try:
                        verify(part, url)
                    except ChecksumError:
                        os.unlink(part)
                        raise
                    os.replace(part, target)
                    fsync_dir(folder)
                    return target
                except urllib.error.HTTPError as exc:
                    exc.close()
                    failures.append(f"{url} (round {round_ + 1}): HTTPError: {exc.code} {exc.reason}")
                    if 400 <= exc.code < 500 and exc.code not in _RETRYABLE_HTTP:
                        dead.add(url)
                except (OSError, http.client.HTTPException, ValueError) as exc:
                    failures.append(f"{url} (round {round_ + 1}): {type(exc).__name__}: {exc}")
                    if isinstance(exc, ValueError):  # a malformed URL: asking again won't help
                        dead.add(url)
            if len(dead) == len(urls):
                break
    raise DownloadError(f"download of {filename} failed ({len(failures)} tries over {len(urls)} "
                        f"mirror(s), timeout {timeout} s):\n  " + "\n  ".join(failures))
