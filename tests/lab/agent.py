"""A small SSH agent speaking the agent protocol (draft-miller-ssh-agent) on a Unix socket: it
lists a FIDO key (``sk-ssh-ed25519@openssh.com``, public part only, as an agent forwarding a
hardware token's key lists it) before an ordinary ed25519 key, and signs with the ordinary
one. It records what it was asked, so a test sees which key signed.

Constructed for the lab: no FIDO token exists here; the sk key's blob has the real wire
format, and no server accepts it, as none of the lab's has it in authorized_keys."""

from __future__ import annotations

import os
import socket
import struct
import threading
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

REQUEST_IDENTITIES, IDENTITIES_ANSWER = 11, 12
SIGN_REQUEST, SIGN_RESPONSE = 13, 14
FAILURE = 5


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _take(buf: bytes) -> tuple[bytes, bytes]:
    (n,) = struct.unpack(">I", buf[:4])
    return buf[4 : 4 + n], buf[4 + n :]


def sk_ed25519_blob(public: bytes, application: bytes = b"ssh:") -> bytes:
    """A FIDO ed25519 public key as the agent protocol carries it."""
    return _string(b"sk-ssh-ed25519@openssh.com") + _string(public) + _string(application)


class Agent:
    """``with Agent(socket_path, key_file) as agent``: serving until the block ends."""

    def __init__(self, path: Path, key_file: Path, ordinary: bool = True) -> None:
        self.path, self.lists_ordinary = path, ordinary
        key = serialization.load_ssh_private_key(key_file.read_bytes(), password=None)
        assert isinstance(key, Ed25519PrivateKey)
        self.key = key
        raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        self.ordinary = _string(b"ssh-ed25519") + _string(raw)
        self.sk = sk_ed25519_blob(os.urandom(32))
        self.listed = 0  # identity requests answered
        self.signed: list[bytes] = []  # key blobs signed with
        self.refused: list[bytes] = []  # key blobs it could not sign with
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> "Agent":
        self._server.bind(str(self.path))
        self._server.listen(8)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.close()
        self.path.unlink(missing_ok=True)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return  # closed
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    def _client(self, conn: socket.socket) -> None:
        with conn:
            while True:
                head = _recv(conn, 4)
                if head is None:
                    return
                body = _recv(conn, struct.unpack(">I", head)[0])
                if body is None:
                    return
                reply = self._answer(body[0], body[1:])
                conn.sendall(_string(reply))

    def _answer(self, kind: int, payload: bytes) -> bytes:
        if kind == REQUEST_IDENTITIES:
            self.listed += 1
            keys = ((self.sk, b"a FIDO key"), (self.ordinary, b"an ordinary key"))[: 2 if self.lists_ordinary else 1]
            return (
                bytes([IDENTITIES_ANSWER])
                + struct.pack(">I", len(keys))
                + b"".join(_string(b) + _string(c) for b, c in keys)
            )
        if kind == SIGN_REQUEST:
            blob, rest = _take(payload)
            data, _ = _take(rest)
            if blob != self.ordinary:
                self.refused.append(blob)
                return bytes([FAILURE])
            self.signed.append(blob)
            return bytes([SIGN_RESPONSE]) + _string(_string(b"ssh-ed25519") + _string(self.key.sign(data)))
        return bytes([FAILURE])  # extensions (session-bind …), locking, adding keys


def _recv(conn: socket.socket, n: int) -> bytes | None:
    out = b""
    while len(out) < n:
        chunk = conn.recv(n - len(out))
        if not chunk:
            return None
        out += chunk
    return out
