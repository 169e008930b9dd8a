"""A small key-value store over TCP for ``init_method="env://"`` (torchrun) with NCCL.

Rank 0 serves it on ``MASTER_ADDR:MASTER_PORT`` (a thread; all interfaces, as PyTorch's
TCPStore) -- on ``MASTER_PORT + 1`` under torchrun, whose agent serves PyTorch's own store on
``MASTER_PORT``, or on ``TINYNET_STORE_PORT`` when set; every rank, rank 0 included, is a
client. It carries the NCCL unique id from rank 0 to the others, counts the ranks in at
start-up (so a rank that never starts gives a clear timeout instead of a hang inside NCCL),
and holds the note of a rank that failed, which the other ranks' watchdogs read. One
request or answer is one line of JSON.

Under torchrun the port next to ``MASTER_PORT`` can be taken: the agent picks a free
``MASTER_PORT``, and the ports after it are the ones the kernel hands out next to outgoing
connections (seen on two H200s: a restarted group's rank 0 could not bind it for 5 s). So the
server takes the first free port of a short range (``tries``), and a client walks the same
range, greeting each listener and keeping the one that answers with this job's ``token``
(torchrun's run id, restart count and ``MASTER_PORT``), never another job's or attempt's store.
"""
import json
import socket
import threading
import time

from ..errors import DistributedError, ProcessGroupError
from ._launch import store_range



def _retry(attempt, timeout, message):
    """``attempt()``'s result, retried every 50 ms while it raises OSError; after ``timeout``
    seconds a ProcessGroupError with ``message(the last OSError)``."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return attempt()
        except OSError as exc:
            if time.monotonic() > deadline:
                raise ProcessGroupError(message(exc)) from None
            time.sleep(0.05)

def _ports(port, tries):
    return f"port {port}" if tries == 1 else f"ports {port}-{port + tries - 1}"


class _Server:
    def __init__(self, port, tries=1, token=""):
        def bind():  # the first free port of the range
            last = OSError("empty range")
            for p in range(port, port + tries):
                try:
                    return socket.create_server(("", p), reuse_port=False)
                except OSError as exc:
                    last = exc
            raise last
        # a store closed a moment ago may still hold the port for a few milliseconds
        self.sock = _retry(bind, 5.0, lambda exc: (
            f"init_process_group: rank 0 cannot serve the store on {_ports(port, tries)} ({exc}); set MASTER_PORT "
            "(or TINYNET_STORE_PORT) to a free port"))
        self.port, self.token = self.sock.getsockname()[1], token
        self.sock.settimeout(0.2)
        self.data, self.lock, self.closed, self.conns, self.threads = {}, threading.Lock(), False, [], []
        self.acceptor = threading.Thread(target=self._accept, name="tinynet-store", daemon=True)
        self.acceptor.start()

    def _accept(self):
        while not self.closed:
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.conns.append(conn)
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self.threads.append(thread)
            thread.start()

    def _serve(self, conn):
        try:
            self._answer(conn)
        except (OSError, ValueError):  # the store closed, or the client went away
            pass

    def _answer(self, conn):
        with conn, conn.makefile("rwb") as f:
            for line in f:
                req = json.loads(line)
                with self.lock:
                    key = req["key"]
                    if req["op"] == "hello":  # which job's store is this?
                        answer = self.token
                    elif req["op"] == "set":
                        self.data[key] = req["value"]
                        answer = None
                    elif req["op"] == "add":
                        self.data[key] = answer = int(self.data.get(key, 0)) + req["value"]
                    else:  # get: None while unset
                        answer = self.data.get(key)
                f.write(json.dumps({"value": answer}).encode() + b"\n")
                f.flush()

    def close(self):
        """Stop serving: the clients' next requests fail, as when rank 0 exits."""
        self.closed = True
        self.sock.close()
        self.acceptor.join(timeout=1.0)
        for conn in self.conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in self.threads:  # each closes its connection as it ends
            thread.join(timeout=1.0)


def _gone(message):
    """Rank 0's store is gone: a failure of another rank (``_group.group_error``'s mark)."""
    exc = DistributedError(message)
    exc._from_group = True
    return exc


class TCPStore:
    """Client (and, on rank 0, server) of the store at ``host:port``.

    Raises:
        ProcessGroupError: rank 0 cannot listen, or the store cannot be reached within ``timeout``.
    """

    def __init__(self, host, port, is_master, timeout, tries=1, token=""):
        self.host, self.port, self.timeout, self.token = host, port, timeout, token
        self.server = _Server(port, tries, token) if is_master else None
        first = self.server.port if self.server is not None else port  # rank 0 knows where it serves
        self.sock, self.file, self.port = _retry(
            lambda: self._connect(first, port + tries - first), timeout,
            lambda exc: (f"init_process_group: no store at MASTER_ADDR:MASTER_PORT = {host}:{_ports(port, tries)} "
                         f"within {timeout:g} s ({exc}); is rank 0 running, and are MASTER_ADDR and MASTER_PORT the "
                         "same on every rank?"))
        self.lock = threading.Lock()

    def _connect(self, port, tries):
        """(socket, file, port) of the first listener in the range that answers with our token."""
        last = OSError("nothing listens")
        for p in range(port, port + tries):
            try:
                sock = socket.create_connection((self.host, p), timeout=min(self.timeout, 60.0))
            except OSError as exc:
                last = exc
                continue
            file = sock.makefile("rwb")
            try:
                sock.settimeout(min(self.timeout, 2.0))  # a foreign listener may never answer
                file.write(json.dumps({"op": "hello", "key": ""}).encode() + b"\n")
                file.flush()
                if json.loads(file.readline())["value"] == self.token:
                    sock.settimeout(min(self.timeout, 60.0))
                    return sock, file, p
                last = OSError(f"port {p} serves another job's store")
            except (OSError, ValueError, KeyError, TypeError) as exc:
                last = OSError(f"port {p} is not a tinynet store ({exc})")
            file.close()
            sock.close()
        raise last

    def _request(self, op, key, value=None):
        with self.lock:
            try:
                self.file.write(json.dumps({"op": op, "key": key, "value": value}).encode() + b"\n")
                self.file.flush()
                line = self.file.readline()
            except OSError as exc:
                raise _gone(f"the store at {self.host}:{self.port} (rank 0) is gone ({exc}): rank 0 has exited or "
                            "failed") from None
        if not line:
            raise _gone(f"the store at {self.host}:{self.port} (rank 0) closed the connection: rank 0 has exited or "
                        "failed")
        return json.loads(line)["value"]

    def set(self, key, value):
        """Store the string ``value`` under ``key``."""
        self._request("set", key, value)

    def add(self, key, amount):
        """Add ``amount`` to the integer under ``key`` (0 when unset); returns the new value."""
        return self._request("add", key, amount)

    def get_nowait(self, key):
        """The value under ``key``, or None."""
        return self._request("get", key)

    def wait_for(self, key, what, done=None):
        """The value under ``key`` once set (and ``done(value)`` holds).

        Raises:
            ProcessGroupError: not there within the timeout, naming ``what`` waited for.
        """
        deadline = time.monotonic() + self.timeout
        pause = 1e-3
        while True:
            value = self.get_nowait(key)
            if value is not None and (done is None or done(value)):
                return value
            if time.monotonic() > deadline:
                raise ProcessGroupError(f"init_process_group: timed out after {self.timeout:g} s waiting for {what} "
                                        f"(store {self.host}:{self.port}); did every rank start, with the same "
                                        "WORLD_SIZE?")
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def leave(self, size, bound):
        """``destroy_process_group``'s handshake: every rank checks out; rank 0 closes the server
        once all have (or after ``bound`` seconds), and the others return only once it is
        closed, so that a new process group cannot meet at this one's store. Then closes."""
        deadline = time.monotonic() + bound
        try:
            self.add("left", 1)
            while time.monotonic() < deadline:
                left = int(self.get_nowait("left"))  # raises once rank 0 has closed the server
                if self.server is not None and left >= size:
                    break
                time.sleep(0.01)
        except DistributedError:
            pass
        finally:
            self.close()

    def close(self):
        try:
            self.file.close()
            self.sock.close()
        finally:
            if self.server is not None:
                self.server.close()


class StoreNotes:
    """Failure notes through the store (the ``env://`` counterpart of the MPI backend's)."""

    def __init__(self, store, rank):
        self.store, self.rank = store, rank

    def post(self, kind, text):
        try:
            self.store.set(f"note/{kind}", f"rank {self.rank}: {text}")
        except DistributedError:
            pass  # rank 0 (the store) is gone already

    def poll(self):
        """The note of a failed rank, or None; raises DistributedError when the store is gone."""
        return self.store.get_nowait("note/failed")


def rendezvous(host, port, size, rank, timeout, make_id):
    """Meet at the TCP store on ``host:port`` (rank 0 serves it): every rank checks in, then
    rank 0's ``make_id()`` (the NCCL unique id: 128 bytes, which CuPy 14 returns as ``bytes``
    and older CuPy as a tuple of ints) reaches all, in the type ``make_id`` returned. Returns
    ``(unique_id, store)``.

    Raises:
        ProcessGroupError: the store cannot be served or reached, or not every rank checked
            in within ``timeout`` seconds.
    """
    tries, token = store_range()
    store = TCPStore(host, port, rank == 0, timeout, tries, token)
    store.add("joined", 1)
    store.wait_for("joined", f"all {size} ranks to join", done=lambda v: int(v) >= size)
    if rank == 0:
        uid = make_id()
        store.set("nccl_unique_id", json.dumps({"bytes": isinstance(uid, (bytes, bytearray)), "id": list(uid)}))
    else:
        sent = json.loads(store.wait_for("nccl_unique_id", "rank 0's NCCL unique id"))
        uid = bytes(sent["id"]) if sent["bytes"] else tuple(sent["id"])
    return uid, store
