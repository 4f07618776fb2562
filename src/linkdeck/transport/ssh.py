"""The SSH runner: one persistent paramiko Transport per host, commands and streams over it.

paramiko is blocking, so every call that waits on the network runs in a thread pool of its
own (a hung host ties up a thread, never the event loop, never another host's connect);
channel output is picked up on the event loop through the channel's pollable fd
(``add_reader``), so a streaming host costs no thread of ours between frames.

Sockets get TCP_NODELAY: without it every small request (a command, a step of the login)
waits for the peer's delayed ACK.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import shlex
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import AsyncGenerator, Callable, Sequence

import paramiko

from . import known_hosts
from .runner import (
    BIG_REQUEST_BYTES,
    MAX_OUTPUT_BYTES,
    CommandResult,
    CommandTimeout,
    ConnectionLost,
    Lines,
    OutputTooLarge,
    RequestUnanswered,
    StreamInput,
    Ticker,
    TransportError,
    Unreachable,
    bounded,
)
from .ssh_auth import authenticate
from .ssh_channel import FdWatch, TickSender, close_channel, window_adjust_due
from .ssh_config import SshTarget, hops

# Threads only wait (connect, key exchange, auth, channel open): plenty of them is cheap and
# keeps twenty unreachable hosts from queueing behind each other.
_EXECUTOR = ThreadPoolExecutor(max_workers=128, thread_name_prefix="linkdeck-ssh")

KEEPALIVE_S = 5.0
# paramiko's transport thread wakes every _active_check_timeout (0.1 s) to look for close and
# keepalive work: measured here, 12 idle connections cost 0.4 % of a core at 0.5 s. Once
# connected, waking at the keepalive interval is enough; close() shuts the socket down first,
# so it does not wait for that wake-up.
IDLE_POLL_S = KEEPALIVE_S
READ_CHUNK = 65536
AEAD_CIPHERS = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com")


async def _blocking(fn: Callable, *args):
    return await asyncio.get_running_loop().run_in_executor(_EXECUTOR, functools.partial(fn, *args))


# No line our samplers print is near this; a host streaming bytes without newlines is not
# running them.
MAX_LINE_BYTES = 1 << 20


class SshRunner:
    """Runs argv vectors on one host over one SSH connection (Runner protocol)."""

    def __init__(
        self,
        target: SshTarget,
        name: str | None = None,
        policy: str = "strict",
        stream_idle_timeout: float = 15.0,
        keepalive: float = KEEPALIVE_S,
    ) -> None:
        self.target = target
        self.name = name or target.alias
        self.policy = policy
        self.stream_idle_timeout = stream_idle_timeout
        self.keepalive = keepalive
        self._chain: list[paramiko.Transport] = []  # jump hosts first, this host last
        self._socks: list[object] = []
        self._lock = threading.Lock()
        self._closed = False

    # ---- connecting -------------------------------------------------------------------

    async def connect(self) -> None:
        """Open (through jump hosts / a proxy command if configured), check the host key,
        authenticate. Raises Unreachable, HostKeyUnknown/Changed, AuthFailed."""
        # Each hop may spend its connect timeout on TCP, then the key exchange and auth.
        budget = sum(3 * t.connect_timeout + 5 for t in hops(self.target))
        try:
            await bounded(_blocking(self._connect_sync), budget)
        except asyncio.TimeoutError:
            await self.close()
            raise Unreachable(f"{self.target.display}: no SSH session within {budget:.0f} s") from None
        except BaseException:
            await self.close()
            raise

    def _connect_sync(self) -> None:
        for hop in hops(self.target):
            transport = self._open_hop(hop, self._chain[-1] if self._chain else None)
            with self._lock:
                if self._closed:
                    transport.close()
                    raise ConnectionLost(f"{self.name}: closed while connecting")
                self._chain.append(transport)

    def _open_hop(self, hop: SshTarget, via: paramiko.Transport | None) -> paramiko.Transport:
        sock = self._socket(hop, via)
        with self._lock:
            self._socks.append(sock)
        transport = paramiko.Transport(sock)
        transport.banner_timeout = hop.connect_timeout
        transport.handshake_timeout = hop.connect_timeout + 5
        transport.auth_timeout = hop.connect_timeout + 5
        name = hop.known_hosts_name
        preferred = known_hosts.preferred_key_types(hop.known_hosts_files, name)
        options = transport.get_security_options()
        # AEAD first: paramiko checks an HMAC byte by byte in Python for the -ctr ciphers,
        # the largest single cost of reading a frame; AES-GCM is one call into OpenSSL.
        options.ciphers = [c for c in AEAD_CIPHERS if c in options.ciphers] + [
            c for c in options.ciphers if c not in AEAD_CIPHERS
        ]
        offered = [t for t in preferred if t in options.key_types]
        if offered:
            options.key_types = offered + [t for t in options.key_types if t not in offered]
        try:
            transport.start_client(timeout=hop.connect_timeout + 5)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            transport.close()
            raise Unreachable(f"{hop.display}: SSH handshake failed: {exc or type(exc).__name__}") from None
        key = transport.get_remote_server_key()
        policy = known_hosts.effective_policy(self.policy, hop.strict_host_key_checking)
        try:
            known_hosts.check_host_key(
                hop.known_hosts_files,
                name,
                key.get_name(),
                key.get_base64(),
                policy,
                hop.display,
                hop.hash_known_hosts,
                write=hop.known_hosts_write,
            )
            authenticate(transport, hop)
        except BaseException:
            transport.close()
            raise
        transport.set_keepalive(int(max(1, self.keepalive)))
        if isinstance(sock, socket.socket):
            transport.sock.settimeout(IDLE_POLL_S)
        return transport

    @staticmethod
    def _socket(hop: SshTarget, via: paramiko.Transport | None):
        if via is not None:
            try:
                return via.open_channel(
                    "direct-tcpip", (hop.hostname, hop.port), ("127.0.0.1", 0), timeout=hop.connect_timeout
                )
            except (paramiko.ChannelException, paramiko.SSHException, EOFError) as exc:
                raise Unreachable(
                    f"the jump host could not open a connection to {hop.hostname}:{hop.port}: {exc}"
                ) from None
        if hop.proxy_command:
            try:
                return paramiko.ProxyCommand(hop.proxy_command)
            except (paramiko.ProxyCommandFailure, OSError) as exc:
                raise Unreachable(f"{hop.display}: ProxyCommand failed: {exc}") from None
        return tcp_connect(hop.hostname, hop.port, hop.connect_timeout)

    # ---- running commands -------------------------------------------------------------

    @property
    def transport(self) -> paramiko.Transport:
        if not self._chain or len(self._chain) != len(hops(self.target)):
            raise ConnectionLost(f"{self.name}: not connected")
        return self._chain[-1]

    def _open_exec(self, command: str, timeout: float) -> paramiko.Channel:
        transport = self.transport
        if not transport.is_active():
            raise ConnectionLost(f"{self.name}: the SSH connection is closed")
        try:
            chan = transport.open_session(timeout=timeout)
            chan.exec_command(command)
        except (paramiko.SSHException, EOFError, OSError) as exc:
            if not transport.is_active():
                raise ConnectionLost(f"{self.name}: the SSH connection dropped: {exc}") from None
            raise TransportError(f"{self.name}: cannot start a command: {exc}") from None
        return chan

    async def _start(self, argv: Sequence[str], timeout: float) -> paramiko.Channel:
        if not argv:
            raise ValueError("empty command")
        command = shlex.join(argv)
        try:
            return await bounded(_blocking(self._open_exec, command, timeout), timeout)
        except asyncio.TimeoutError:
            if len(command) >= BIG_REQUEST_BYTES:  # logged in (small packets), then this one vanished
                raise RequestUnanswered(self.name, len(command)) from None
            raise CommandTimeout(f"{self.name}: the server did not start {argv[0]} within {timeout:g} s") from None

    async def run(self, argv: Sequence[str], timeout: float = 10.0) -> CommandResult:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        chan = await self._start(argv, timeout)
        out, err = bytearray(), bytearray()
        try:
            # aclosing: the channel's fd leaves the loop before close_channel closes it
            async with contextlib.aclosing(self._read(chan, lambda: deadline - loop.time())) as chunks:
                async for kind, data in chunks:
                    (out if kind == 1 else err).extend(data)
                    if len(out) + len(err) > MAX_OUTPUT_BYTES:
                        raise OutputTooLarge(
                            f"{self.name}: {argv[0]} printed more than {MAX_OUTPUT_BYTES >> 20} MiB: stopped"
                        )
            if not chan.exit_status_ready():
                remaining = max(0.1, deadline - loop.time())
                await _blocking(chan.status_event.wait, min(remaining, 5.0))
            if not chan.exit_status_ready():
                self._check_alive()
                raise CommandTimeout(f"{self.name}: {argv[0]} closed its output but did not exit")
            status = chan.recv_exit_status()
        except asyncio.TimeoutError:
            raise CommandTimeout(f"{self.name}: {argv[0]} did not finish within {timeout:g} s") from None
        finally:
            close_channel(chan)
        return CommandResult(out.decode(errors="replace"), err.decode(errors="replace"), status)

    async def stream(
        self,
        argv: Sequence[str],
        tick: float | None = None,
        feed: StreamInput | None = None,
        idle_timeout: float | None = None,
    ) -> AsyncGenerator[str, None]:
        """Yield stdout lines as they arrive; with ``tick``, a newline goes to the command's
        stdin every ``tick`` seconds (Ticker); with ``feed``, what is sent through it. No data
        for ``idle_timeout`` seconds (default ``stream_idle_timeout``) means the host or the
        path is gone: ConnectionLost, or RequestUnanswered after a large send."""
        idle = idle_timeout or self.stream_idle_timeout
        chan = await self._start(argv, self.target.connect_timeout + 5)
        ticker = None if tick is None else Ticker(tick, TickSender(chan, _EXECUTOR))
        if feed is not None:
            feed.bind(functools.partial(_blocking, chan.sendall))
        split = Lines(MAX_LINE_BYTES)
        stderr_tail = bytearray()
        try:
            try:
                async with contextlib.aclosing(self._read(chan, lambda: idle)) as chunks:
                    async for kind, data in chunks:
                        if kind == 2:
                            stderr_tail = (stderr_tail + data)[-2000:]
                            continue
                        if ticker is not None:
                            ticker.heard = True
                        if feed is not None:
                            feed.heard()
                        for line in await self._cut(split, data):
                            yield line.decode(errors="replace").rstrip("\r")
            except asyncio.TimeoutError:
                await self.close()
                raise self._lost(feed, f"no data for {idle:.0f} s, the connection is considered dead") from None
            if not self.is_active:
                raise self._lost(feed, "the SSH connection dropped")
            if split.rest():
                yield split.rest().decode(errors="replace")
            if stderr_tail:
                # The stream's program ended with a complaint: say what it was.
                raise TransportError(
                    f"{self.name}: {argv[0]} ended: {stderr_tail.decode(errors='replace').strip()[-300:]}"
                )
        finally:
            if ticker is not None:
                ticker.stop()
            close_channel(chan)

    async def _cut(self, split: Lines, data: bytes) -> list[bytes]:
        """The lines ``data`` ends; a line past MAX_LINE_BYTES is not our sampler talking (it
        must not grow forever): ConnectionLost."""
        try:
            return split.feed(data)
        except ValueError:
            await self.close()
            raise ConnectionLost(f"{self.name}: a line of output ran past {MAX_LINE_BYTES} bytes") from None

    def _lost(self, feed: StreamInput | None, why: str) -> TransportError:
        """A stream that started and then stopped answering (``why``): after a send this large
        the path is the likeliest cause (the connection's keepalives wait behind it), else the
        connection is lost."""
        sent = feed.unanswered if feed is not None else 0
        return (
            RequestUnanswered(self.name, sent) if sent >= BIG_REQUEST_BYTES else ConnectionLost(f"{self.name}: {why}")
        )

    async def _read(self, chan: paramiko.Channel, wait_s: Callable[[], float]):
        """Yield (1, stdout bytes) / (2, stderr bytes) until EOF; asyncio.TimeoutError when
        nothing arrives within wait_s()."""
        loop = asyncio.get_running_loop()
        watch = FdWatch(
            loop,
            chan.fileno(),
            lambda: chan.recv_ready() or chan.recv_stderr_ready() or chan.closed or chan.eof_received,
        )
        try:
            while True:
                got = False
                while chan.recv_ready():
                    got = True
                    yield 1, await _take(chan, chan.in_buffer, chan.recv)
                while chan.recv_stderr_ready():
                    got = True
                    yield 2, await _take(chan, chan.in_stderr_buffer, chan.recv_stderr)
                if chan.closed or chan.eof_received:
                    if not chan.recv_ready() and not chan.recv_stderr_ready():
                        return
                    continue
                if not got and not await watch.wait(max(0.0, wait_s())):
                    raise asyncio.TimeoutError
        finally:
            watch.stop()

    def _check_alive(self) -> None:
        if not self._chain or not self._chain[-1].is_active():
            raise ConnectionLost(f"{self.name}: the SSH connection dropped")

    @property
    def is_active(self) -> bool:
        return bool(self._chain) and self._chain[-1].is_active()

    async def close(self) -> None:
        with self._lock:
            self._closed = True
            chain, self._chain = self._chain, []
            socks, self._socks = self._socks, []
        if chain or socks:
            await _blocking(_close_all, chain, socks)


async def _take(chan: paramiko.Channel, buffer, recv: Callable[[int], bytes]) -> bytes:
    """What the channel has buffered (up to READ_CHUNK), read on the event loop unless that
    read sends a window adjust: paramiko's recv sends one itself, and a send waits, up to 30 s
    while a key exchange runs (clear_to_send), for as long as the socket is full. Reading
    exactly what is buffered (only this task reads it: it can only grow) makes the adjust
    predictable, once per in_window_threshold bytes (a tenth of the window, ~200 KB)."""
    n = min(len(buffer), READ_CHUNK)
    if window_adjust_due(chan, n):
        return await _blocking(recv, n)
    return recv(n)


def _close_all(chain: list[paramiko.Transport], socks: list[object]) -> None:
    for sock in socks:
        if isinstance(sock, socket.socket):
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes the transport thread's recv now
            except OSError:
                pass  # already disconnected
    for transport in reversed(chain):
        try:
            transport.close()
        except Exception:
            pass  # closing a dead transport can raise anything paramiko's packetizer raises
    for sock in socks:
        try:
            sock.close()  # type: ignore[attr-defined]
        except Exception:
            pass


def tcp_connect(host: str, port: int, timeout: float) -> socket.socket:
    """A connected TCP socket with TCP_NODELAY, trying every address of ``host``."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise Unreachable(f"cannot resolve {host}: {exc.strerror}") from None
    last: Exception | None = None
    for family, kind, proto, _, addr in infos:
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            sock.connect(addr)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    if isinstance(last, ConnectionRefusedError):
        raise Unreachable(f"{host}:{port} refused the connection: is sshd running there, on that port?")
    if isinstance(last, socket.timeout):
        raise Unreachable(f"{host}:{port} did not answer within {timeout:g} s (host down or filtered?)")
    raise Unreachable(f"cannot connect to {host}:{port}: {getattr(last, 'strerror', None) or last}")


async def open_runner(target: SshTarget, name: str, policy: str, interval: float) -> SshRunner:
    """A connected runner whose stream read timeout allows a few missed frames."""
    runner = SshRunner(target, name=name, policy=policy, stream_idle_timeout=max(3 * KEEPALIVE_S, 4 * interval))
    await runner.connect()
    return runner


__all__ = ["SshRunner", "open_runner", "tcp_connect"]
