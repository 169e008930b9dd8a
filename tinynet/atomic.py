"""Crash-safe file writes, shared by :func:`tinynet.save` and the dataset downloads.

:func:`atomic_write` writes to a temporary file in the target's own folder
(``.<name>.<random>.tmp``), flushes and ``fsync``\\ s it, renames it over the target with
``os.replace`` (atomic on POSIX and Windows when both live on one filesystem) and then
``fsync``\\ s the folder so the rename itself survives a power cut. A reader therefore sees
either the old file or the complete new one, never a mix; a process killed at any moment
(SIGKILL included) leaves the old file untouched and at worst one stray temporary file.

Stray temporary files of a target are removed by its next successful write: on POSIX each
writer holds an ``fcntl.flock`` on its temporary file while it works, so a file that can
be locked (and is older than the current write) belongs to a dead process. Where
``fcntl`` is missing (Windows) only temporary files older than :data:`STALE_AGE` seconds
are removed.
"""
import errno
import os
import re
import tempfile
import time

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]  # (Windows has no fcntl; callers check for None)

STALE_AGE = 600.0  # seconds; the stray-file age limit where fcntl is missing

_FSYNC_DIR_UNSUPPORTED = {errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EBADF, errno.EACCES, errno.EPERM}


def fsync_dir(folder):
    """``fsync`` a folder so a rename inside it is durable; a no-op where the platform has no
    ``os.O_DIRECTORY`` (Windows) or the filesystem refuses to sync folders."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in _FSYNC_DIR_UNSUPPORTED:
            raise
    finally:
        os.close(fd)


def temp_pattern(path):
    """The regular expression matching :func:`atomic_write`'s temporary files for ``path``
    (basenames only)."""
    return re.compile(r"\." + re.escape(os.path.basename(path)) + r"\.[a-z0-9_]{8}\.tmp\Z")


def stray_temp_files(path):
    """Full paths of the temporary files of ``path`` that are lying in its folder now."""
    folder = os.path.dirname(os.path.abspath(path))
    pattern = temp_pattern(path)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return [os.path.join(folder, n) for n in sorted(names) if pattern.match(n)]


def _umask():
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)  # no way to read it without setting it elsewhere
    os.umask(mask)
    return mask


def _new_file_mode(path):
    """The old file's permissions, or what ``open(path, "w")`` would give (``mkstemp``
    makes 0600 files, which would hide a checkpoint from the user's group)."""
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return 0o666 & ~_umask()


def remove_stale_temps(path, before):
    """Delete temporary files of ``path`` left by dead writers (see the module docstring);
    only files last modified before the time ``before``. Best effort: errors are ignored."""
    for tmp in stray_temp_files(path):
        try:
            st = os.stat(tmp)
            if st.st_mtime >= before:
                continue  # maybe a writer that started after us
            if fcntl is None:
                if st.st_mtime < before - STALE_AGE:
                    os.unlink(tmp)
                continue
            fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # fails while a live writer holds it
                os.unlink(tmp)
            finally:
                os.close(fd)
        except OSError:
            continue


def atomic_write(path, write):
    """Write a file crash-safely: ``write(fileobj)`` fills a temporary file next to ``path``,
    which then replaces ``path`` atomically.

    Args:
        path (str): the target file; its folder must exist.
        write (callable): called once with a binary file object open for writing.

    Raises:
        Whatever ``write`` raises, and ``OSError`` from the filesystem (disk full, no
        permission, ...). In every such case -- ``KeyboardInterrupt`` included -- the
        temporary file is removed and a previous file at ``path`` is left as it was.
    """
    path = os.path.abspath(path)
    folder, name = os.path.split(path)
    started = time.time()
    mode = _new_file_mode(path)
    fd, tmp = tempfile.mkstemp(prefix="." + name + ".", suffix=".tmp", dir=folder)
    out = None
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # "alive": see remove_stale_temps
        if hasattr(os, "fchmod"):
            os.fchmod(fd, mode)
        out = os.fdopen(fd, "wb")
        write(out)
        out.flush()
        os.fsync(out.fileno())
        if fcntl is not None:
            os.replace(tmp, path)  # while the lock still marks the file as alive
            out.close()
        else:
            out.close()  # Windows cannot rename an open file
            os.replace(tmp, path)
    except BaseException:
        try:
            if out is not None:
                out.close()
            else:
                os.close(fd)
        except OSError:
            pass
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    fsync_dir(folder)
    remove_stale_temps(path, started)
