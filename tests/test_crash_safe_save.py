"""tinynet.save is crash-safe: a process SIGKILLed at random moments while saving large
checkpoints, a full disk (an injected ENOSPC, and a real EFBIG from RLIMIT_FSIZE), an
interrupt and an unsavable object all leave the previous file complete and loadable, and
the next successful save leaves no temporary file behind (docs/reliability.md)."""
import errno
import os
import random
import signal
import sys
import threading
import time

import numpy
import pytest

import tinynet
from tinynet import atomic
from tinynet.errors import ArgumentTypeError, SerializationError

needs_fork = pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "win32", reason="needs os.fork")

N_ARRAYS, SHAPE = 6, (1024, 1024)  # 6 x 4 MiB float32: a 25 MB checkpoint
KILL_TRIALS = 60


def _checkpoint(version, arrays):
    """A nested checkpoint whose every array is filled with ``version``."""
    for a in arrays:
        a.fill(version)
    return {"step": version,
            "model": {f"layer{i}.weight": arrays[i] for i in range(4)},
            "optimizer": {"state": {i: {"exp_avg": arrays[4 + i], "step": version} for i in range(2)},
                          "param_groups": [{"lr": 0.1, "betas": (0.9, 0.999)}]}}


def _check_complete(loaded):
    """The loaded checkpoint is one whole version: returns that version."""
    v = loaded["step"]
    arrays = [loaded["model"][f"layer{i}.weight"] for i in range(4)]
    arrays += [loaded["optimizer"]["state"][i]["exp_avg"] for i in range(2)]
    assert [loaded["optimizer"]["state"][i]["step"] for i in range(2)] == [v, v]
    assert loaded["optimizer"]["param_groups"] == [{"lr": 0.1, "betas": (0.9, 0.999)}]
    for a in arrays:
        assert a.shape == SHAPE and a.dtype == numpy.float32 and (a == v).all(), f"version {v} is torn"
    return v


def _temps(path):
    return set(atomic.stray_temp_files(path))


def _saver(path, first_version, arrays):
    """Child process: save versions first_version, first_version + 1, ... until killed."""
    try:
        v = first_version
        while True:
            tinynet.save(_checkpoint(v, arrays), path)
            v += 1
    finally:
        os._exit(1)


@needs_fork
def test_sigkill_at_random_moments_never_loses_the_checkpoint(tmp_path, capsys):
    path = str(tmp_path / "ckpt.npz")
    arrays = [numpy.zeros(SHAPE, numpy.float32) for _ in range(N_ARRAYS)]
    save_time = float("inf")
    for _ in range(2):  # the second one is warm
        t0 = time.perf_counter()
        tinynet.save(_checkpoint(0, arrays), path)
        save_time = min(save_time, time.perf_counter() - t0)
    rng = random.Random(1234)
    last, mid_write, advanced = 0, 0, 0
    seen_temps = set()
    for trial in range(1, KILL_TRIALS + 1):
        first = trial * 10_000  # versions of this trial: first, first + 1, ... (exact in float32)
        pid = os.fork()
        if pid == 0:
            _saver(path, first, arrays)
        time.sleep(rng.uniform(0.0, 4 * save_time))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        new_temps = _temps(path) - seen_temps
        mid_write += bool(new_temps)
        seen_temps |= new_temps
        v = _check_complete(tinynet.load(path, map_location="cpu"))
        assert v == last or first <= v < first + 10_000, (trial, v, last)
        advanced += v != last
        last = v
    stale_before = len(_temps(path))
    tinynet.save(_checkpoint(7, arrays), path)  # a further successful save cleans up
    assert os.listdir(tmp_path) == ["ckpt.npz"]
    assert _check_complete(tinynet.load(path, map_location="cpu")) == 7
    with capsys.disabled():
        print(f"\n[kill trials] {KILL_TRIALS} SIGKILLs, {KILL_TRIALS} loadable and whole; {mid_write} landed "
              f"mid-write (temp file left), {advanced} after a newer version was in place; "
              f"{stale_before} stray temp files before the last save, 0 after; save {save_time * 1e3:.0f} ms")
    assert mid_write >= KILL_TRIALS // 10, "the kills hardly ever hit a save in progress: the test lost its point"


@pytest.mark.parametrize("where", ["write", "fsync", "interrupt"])
def test_full_disk_or_interrupt_keeps_the_old_file(tmp_path, monkeypatch, where):
    path = tmp_path / "ckpt.npz"
    tinynet.save({"w": tinynet.ones(1000)}, path)
    before = path.read_bytes()
    real_fdopen, real_fsync = os.fdopen, os.fsync

    class Full:  # writes a few bytes, then the disk is full
        def __init__(self, f):
            self.f, self.written = f, 0

        def write(self, b):
            if self.written > 100:
                raise KeyboardInterrupt if where == "interrupt" else OSError(errno.ENOSPC, "No space left on device")
            self.written += len(b)
            return self.f.write(b)

        def __getattr__(self, name):
            return getattr(self.f, name)

    def no_space_fsync(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    if where == "fsync":
        monkeypatch.setattr(os, "fsync", no_space_fsync)
    else:
        monkeypatch.setattr(os, "fdopen", lambda *a, **k: Full(real_fdopen(*a, **k)))
    expected = KeyboardInterrupt if where == "interrupt" else OSError
    with pytest.raises(expected) as err:
        tinynet.save({"w": tinynet.zeros(100_000)}, path)
    if expected is OSError:
        assert err.value.errno == errno.ENOSPC and not isinstance(err.value, tinynet.errors.TinynetError)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["ckpt.npz"]
    assert tinynet.load(path, map_location="cpu")["w"].tolist() == [1.0] * 1000


@needs_fork
def test_real_file_size_limit_keeps_the_old_file(tmp_path):
    """A kernel-enforced limit (RLIMIT_FSIZE, no root needed) makes the write fail for real
    with EFBIG half-way through, as a full disk would with ENOSPC."""
    resource = pytest.importorskip("resource")
    path = tmp_path / "ckpt.npz"
    tinynet.save({"w": tinynet.ones(1000)}, path)
    before = path.read_bytes()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
            try:
                tinynet.save({"w": numpy.zeros(1 << 20, numpy.float32)}, path)  # 4 MiB > 1 MiB
                os.write(w, b"saved")
            except OSError as exc:
                os.write(w, f"OSError {exc.errno}".encode())
            except BaseException as exc:
                os.write(w, type(exc).__name__.encode())
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    with os.fdopen(r, "rb") as f:
        outcome = f.read().decode()
    assert outcome == f"OSError {errno.EFBIG}"
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.npz"]


def test_unsavable_object_is_a_typed_error_and_keeps_the_old_file(tmp_path):
    path = tmp_path / "ckpt.npz"
    tinynet.save({"w": tinynet.ones(3)}, path)
    before = path.read_bytes()
    with pytest.raises(SerializationError, match=r"save: cannot store dict: it is not a nest of tensors") as err:
        tinynet.save({"w": tinynet.zeros(3), "opt": {"state": [threading.Lock()]}}, path)  # nor picklable
    assert isinstance(err.value, ValueError)
    assert "cannot pickle '_thread.lock'" in str(err.value)  # what failed
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.npz"]


def test_archive_writer_failure_is_a_serialization_error(tmp_path, monkeypatch):
    path = tmp_path / "ckpt.npz"
    tinynet.save({"w": tinynet.ones(3)}, path)
    before = path.read_bytes()

    def broken(*a, **k):
        raise RuntimeError("zip writer bug")
    monkeypatch.setattr(numpy, "savez", broken)
    with pytest.raises(SerializationError, match="save: writing .*ckpt.npz.* failed .*zip writer bug") as err:
        tinynet.save({"w": tinynet.zeros(3)}, path)
    assert isinstance(err.value.__cause__, RuntimeError)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.npz"]


def test_bad_targets(tmp_path):
    with pytest.raises(ArgumentTypeError, match="save: f must be a path .* got int"):
        tinynet.save({}, 3)
    with pytest.raises(ArgumentTypeError, match="load: f must be a path .* got float"):
        tinynet.load(2.5)
    with pytest.raises(FileNotFoundError, match="save: folder .*missing.* does not exist"):
        tinynet.save({}, tmp_path / "missing" / "x.npz")
    numpy.save(tmp_path / "one.npy", numpy.ones(2))
    with pytest.raises(SerializationError, match="single .npy array"):
        tinynet.load(tmp_path / "one.npy")


def test_file_objects_and_permissions(tmp_path):
    import io
    buf = io.BytesIO()
    tinynet.save({"w": tinynet.ones(2)}, buf)
    buf.seek(0)
    assert tinynet.load(buf)["w"].tolist() == [1.0, 1.0]
    path = tmp_path / "ckpt.npz"
    tinynet.save({"w": tinynet.ones(2)}, path)
    os.chmod(path, 0o640)
    tinynet.save({"w": tinynet.zeros(2)}, path)  # a replaced file keeps its permissions
    assert os.stat(path).st_mode & 0o777 == 0o640


def test_stale_temps_of_live_writers_and_other_targets_are_kept(tmp_path):
    path = str(tmp_path / "a.npz")
    dead = tmp_path / ".a.npz.deadbeef.tmp"         # left by a killed writer: removed
    other = tmp_path / ".b.npz.deadbeef.tmp"        # another target's: kept
    foreign = tmp_path / ".a.npz.notours.tmp.bak"   # not our pattern: kept
    live = tmp_path / ".a.npz.livelive.tmp"         # a writer holding its lock: kept
    for p in (dead, other, foreign, live):
        p.write_bytes(b"partial")
    old = time.time() - 5
    for p in (dead, other, foreign, live):
        os.utime(p, (old, old))
    fcntl = pytest.importorskip("fcntl")
    fd = os.open(live, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        tinynet.save({"w": tinynet.ones(2)}, path)
    finally:
        os.close(fd)
    assert sorted(os.listdir(tmp_path)) == sorted(["a.npz", other.name, foreign.name, live.name])
