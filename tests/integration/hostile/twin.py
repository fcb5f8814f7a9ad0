"""The "live twin": the server a hostile archived page would reach if replay leaked.

It listens with raw sockets on 127.0.0.1 and 127.0.0.2 (same port, TCP and UDP) and
counts every ``accept()`` and every datagram (STUN, QUIC), so a preconnect or a
speculative socket that never sends a byte is counted as well as a full request. What
each connection sent first (the request line and headers) is kept, so a test can look
for the token in anything the twin could see.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from dataclasses import dataclass

ADDRESSES = ("127.0.0.1", "127.0.0.2")


@dataclass(frozen=True)
class Contact:
    address: str
    peer: tuple[str, int]
    head: bytes  # what arrived before the first blank line (b"" for a bare connection)
    at: float


class Twin:
    """Raw listening sockets counting connections; answers any request with ``LIVE``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._contacts: list[Contact] = []
        self._accepted: list[tuple[str, tuple[str, int]]] = []
        self._sockets: list[socket.socket] = []
        for _ in range(50):  # one port free on both addresses, for TCP and UDP
            first = self._listen(ADDRESSES[0], 0)
            port = first.getsockname()[1]
            try:
                others = [self._listen(ADDRESSES[1], port)]
                others += [self._datagrams(address, port) for address in ADDRESSES]
            except OSError:
                first.close()
                for sock in locals().get("others", []):
                    sock.close()
                continue
            self._sockets = [first, *others]
            self.port = int(port)
            break
        else:
            raise RuntimeError("no port free on both loopback addresses")
        self._closed = False
        for sock in self._sockets:
            loop = self._accept_loop if sock.type == socket.SOCK_STREAM else self._receive_loop
            threading.Thread(target=loop, args=(sock,), daemon=True).start()

    @staticmethod
    def _listen(address: str, port: int) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((address, port))
        sock.listen(128)
        return sock

    @staticmethod
    def _datagrams(address: str, port: int) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind((address, port))
        return sock

    def _receive_loop(self, sock: socket.socket) -> None:
        address = sock.getsockname()[0]
        while not self._closed:
            try:
                data, peer = sock.recvfrom(65536)
            except OSError:
                return
            with self._lock:  # a datagram counts as a connection and as what it sent
                self._accepted.append((address, peer))
                self._contacts.append(Contact(address, peer, data[:512], time.monotonic()))

    def _accept_loop(self, sock: socket.socket) -> None:
        address = sock.getsockname()[0]
        while not self._closed:
            try:
                conn, peer = sock.accept()
            except OSError:
                return
            with self._lock:
                self._accepted.append((address, peer))
            threading.Thread(
                target=self._talk, args=(conn, address, peer, time.monotonic()), daemon=True
            ).start()

    def _talk(self, conn: socket.socket, address: str, peer: tuple[str, int], at: float) -> None:
        head = b""
        with conn:
            conn.settimeout(5.0)
            try:
                while b"\r\n\r\n" not in head and len(head) < 65536:
                    chunk = conn.recv(4096)
                    if not chunk:
                        break
                    head += chunk
            except OSError:
                pass
            with self._lock:  # recorded before answering, so a test sees it at once
                self._contacts.append(Contact(address, peer, head.split(b"\r\n\r\n")[0], at))
            if head:
                with contextlib.suppress(OSError):
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                        b"Content-Length: 4\r\nConnection: close\r\n\r\nLIVE"
                    )

    def accepted(self) -> int:
        """Connections accepted so far, counted at ``accept()`` (before any byte), and
        datagrams received."""
        with self._lock:
            return len(self._accepted)

    def contacts(self) -> list[Contact]:
        """What each connection sent before its first blank line, once it did (or closed)."""
        with self._lock:
            return list(self._contacts)

    def seen(self) -> int:
        """Connections accepted plus requests received: grows with every contact, even a
        request on a connection the browser kept open from before."""
        with self._lock:
            return len(self._accepted) + sum(1 for c in self._contacts if c.head)

    def clear(self) -> None:
        with self._lock:
            self._contacts.clear()
            self._accepted.clear()

    def close(self) -> None:
        self._closed = True
        for sock in self._sockets:
            sock.close()
