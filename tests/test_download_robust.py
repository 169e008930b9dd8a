"""tinynet.data.download against a local HTTP server on 127.0.0.1 that drops the
connection mid-file, serves wrong bytes, stalls, ignores Range, answers 416 or 404, and two
processes downloading into one cache at once (docs/reliability.md)."""
import hashlib
import http.server
import multiprocessing
import os
import random
import re
import threading
import time

import pytest

from tinynet.data import download as dl
from tinynet.errors import ArgumentError, ArgumentTypeError, DownloadError

NAME = "blob.bin"
BODY = random.Random(0).randbytes(200_000)
MD5 = hashlib.md5(BODY).hexdigest()
WRONG = BODY[:-10] + bytes(10)


class Server:
    """State of one test's server: what it serves, how it misbehaves, what it saw."""

    def __init__(self):
        self.flags = {}        # mirror name ("a", "b") -> set of behaviours
        self.requests = []     # (mirror, Range header or None)
        self.served = 0        # body bytes written in total
        self.release = threading.Event()  # ends stalls at teardown
        self.lock = threading.Lock()

    def hits(self, mirror):
        return [r for m, r in self.requests if m == mirror]


def _handler(state):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            mirror, name = self.path.strip("/").split("/")
            rng = self.headers.get("Range")
            with state.lock:
                state.requests.append((mirror, rng))
                nth = len(state.hits(mirror))
            flags = state.flags.get(mirror, set())
            if name != NAME or "missing" in flags:
                self.send_error(404)
                return
            if "stall_headers" in flags:
                state.release.wait(20)
                return
            body = WRONG if "wrong" in flags or ("wrong_first" in flags and nth == 1) else BODY
            start = 0
            if rng and "ignore_range" not in flags:
                start = int(re.fullmatch(r"bytes=(\d+)-", rng).group(1))
                if start >= len(body):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(body)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
            else:
                self.send_response(200)
            chunk = body[start:]
            self.send_header("Content-Length", str(len(chunk)))
            self.end_headers()
            if ("drop_first" in flags and nth == 1) or "stall" in flags:
                part = chunk[: len(chunk) // 2] if "drop_first" in flags else chunk[: len(chunk) // 4]
                self._send(part)
                if "stall" in flags:
                    state.release.wait(20)
                self.close_connection = True
                return
            if "slow" in flags:
                for i in range(0, len(chunk), len(chunk) // 10 + 1):
                    self._send(chunk[i:i + len(chunk) // 10 + 1])
                    time.sleep(0.05)
                return
            self._send(chunk)

        def _send(self, data):
            with state.lock:  # counted before the write: the client can finish before this thread runs on
                state.served += len(data)
            self.wfile.write(data)
            self.wfile.flush()

        def log_message(self, *args):
            pass

    return Handler


@pytest.fixture
def server():
    state = Server()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    yield state
    state.release.set()
    httpd.shutdown()
    httpd.server_close()


def _get(state, folder, mirrors=("a",), **kw):
    kw = {"quiet": True, "timeout": 5.0, "retries": 2, "backoff": 0.0, **kw}
    return dl.download(NAME, str(folder), [f"{state.url}/{m}/" for m in mirrors], MD5, **kw)


def _files(folder):
    return sorted(os.listdir(folder))


def test_dropped_connection_resumes_with_range(server, tmp_path):
    server.flags["a"] = {"drop_first"}
    path = _get(server, tmp_path)
    assert open(path, "rb").read() == BODY
    assert server.hits("a") == [None, f"bytes={len(BODY) // 2}-"]
    assert server.served == len(BODY)  # the second request sent only the rest
    assert _files(tmp_path) == [NAME, NAME + ".lock"]


def test_part_left_by_an_earlier_call_is_resumed(server, tmp_path):
    (tmp_path / (NAME + ".part")).write_bytes(BODY[:1234])
    _get(server, tmp_path)
    assert server.hits("a") == ["bytes=1234-"] and server.served == len(BODY) - 1234
    assert (tmp_path / NAME).read_bytes() == BODY and not (tmp_path / (NAME + ".part")).exists()


def test_server_ignoring_range_restarts_the_file(server, tmp_path):
    server.flags["a"] = {"drop_first", "ignore_range"}
    _get(server, tmp_path)
    assert server.hits("a") == [None, f"bytes={len(BODY) // 2}-"]  # asked for the rest, got a 200
    assert (tmp_path / NAME).read_bytes() == BODY


@pytest.mark.parametrize("part", ["whole", "too_long"])
def test_416_whole_part_is_kept_and_too_long_part_restarts(server, tmp_path, part):
    (tmp_path / (NAME + ".part")).write_bytes(BODY if part == "whole" else BODY + b"junk")
    _get(server, tmp_path)
    assert (tmp_path / NAME).read_bytes() == BODY
    if part == "whole":
        assert server.hits("a") == [f"bytes={len(BODY)}-"] and server.served == 0
    else:
        assert server.hits("a") == [f"bytes={len(BODY) + 4}-", None] and server.served == len(BODY)


def test_wrong_bytes_are_discarded_and_refetched(server, tmp_path):
    server.flags["a"] = {"wrong_first"}
    _get(server, tmp_path)
    assert server.hits("a") == [None, None]  # the bad part was not resumed
    assert (tmp_path / NAME).read_bytes() == BODY


def test_wrong_bytes_everywhere_is_a_typed_error(server, tmp_path):
    server.flags["a"] = {"wrong"}
    with pytest.raises(DownloadError) as err:
        _get(server, tmp_path, retries=2)
    msg = str(err.value)
    assert isinstance(err.value, OSError)
    assert f"{server.url}/a/{NAME}" in msg and "ChecksumError" in msg
    assert f"MD5 {hashlib.md5(WRONG).hexdigest()}, expected {MD5}" in msg
    assert server.hits("a") == [None] * 3  # 1 + retries tries, each from byte 0
    assert _files(tmp_path) == [NAME + ".lock"]  # no target, no part


def test_backoff_doubles_between_rounds(server, tmp_path, monkeypatch):
    sleeps = []
    monkeypatch.setattr(dl.time, "sleep", sleeps.append)
    server.flags["a"] = {"wrong"}
    with pytest.raises(DownloadError, match=r"4 tries over 1 mirror"):
        _get(server, tmp_path, retries=3, backoff=0.5)
    assert sleeps == [0.5, 1.0, 2.0]


@pytest.mark.parametrize("where", ["stall", "stall_headers"])
def test_stalled_server_times_out_in_bounded_time(server, tmp_path, where):
    server.flags["a"] = {where}
    t0 = time.monotonic()
    with pytest.raises(DownloadError, match="timed out") as err:
        _get(server, tmp_path, timeout=0.3, retries=1)
    elapsed = time.monotonic() - t0
    assert elapsed < 5, elapsed
    assert f"{server.url}/a/{NAME}" in str(err.value) and len(server.hits("a")) == 2
    assert not (tmp_path / NAME).exists()
    if where == "stall":  # what arrived is kept and was resumed on the retry
        assert server.hits("a")[1] == f"bytes={len(BODY) // 4}-"
        assert (tmp_path / (NAME + ".part")).read_bytes() == BODY[:os.path.getsize(tmp_path / (NAME + ".part"))]


def test_missing_mirror_is_not_asked_again(server, tmp_path):
    server.flags["a"] = {"missing"}
    server.flags["b"] = {"drop_first"}
    _get(server, tmp_path, mirrors=("a", "b"))
    assert server.hits("a") == [None] and len(server.hits("b")) == 2
    with pytest.raises(DownloadError, match="HTTPError: 404"):
        _get(server, tmp_path / "other", mirrors=("a",))
    assert server.hits("a") == [None, None]  # retries=2, but a 404 is final


def test_existing_verified_file_is_not_downloaded_again(server, tmp_path):
    _get(server, tmp_path)
    _get(server, tmp_path)
    assert len(server.requests) == 1


def test_bad_arguments(tmp_path):
    with pytest.raises(ArgumentError, match="download: md5 must be 32 hex digits, got 'abc'"):
        dl.download(NAME, str(tmp_path), ["http://127.0.0.1:9/"], "abc")
    with pytest.raises(ArgumentTypeError, match="download: mirrors must be a non-empty list"):
        dl.download(NAME, str(tmp_path), "http://127.0.0.1:9/", MD5)
    with pytest.raises(ArgumentError, match="download: timeout must be a positive number .* got 0"):
        dl.download(NAME, str(tmp_path), ["http://127.0.0.1:9/"], MD5, timeout=0)
    with pytest.raises(ArgumentError, match="download: retries must be an int >= 0, got -1"):
        dl.download(NAME, str(tmp_path), ["http://127.0.0.1:9/"], MD5, retries=-1)
    with pytest.raises(ArgumentError, match="download: filename must be a plain file name"):
        dl.download("../x", str(tmp_path), ["http://127.0.0.1:9/"], MD5)


def _download_in_child(base, folder, barrier, results):
    barrier.wait()
    t0 = time.monotonic()
    path = dl.download(NAME, folder, [base], MD5, quiet=True, timeout=10.0, retries=0)
    results.put((t0, time.monotonic(), path))


def test_two_processes_share_one_download(server, tmp_path):
    server.flags["a"] = {"slow"}  # ~0.5 s of body: the second process arrives while it flows
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(2), ctx.Queue()
    procs = [ctx.Process(target=_download_in_child, args=(f"{server.url}/a/", str(tmp_path), barrier, results))
             for _ in range(2)]
    for p in procs:
        p.start()
    got = [results.get(timeout=60) for _ in procs]
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    (s1, e1, p1), (s2, e2, p2) = sorted(got)
    assert p1 == p2 == str(tmp_path / NAME) and (tmp_path / NAME).read_bytes() == BODY
    assert s2 < e1  # they did run at the same time
    assert server.hits("a") == [None] and server.served == len(BODY)  # the body went out once
    assert _files(tmp_path) == [NAME, NAME + ".lock"]
