"""The OpenSSH runner: the user's own ``ssh`` client, one master connection per host, every
command a session on that master.

The master is the user's when their config shares connections (ControlMaster on and a
ControlPath, as ``ssh -G`` says) and one already answers there: linkdeck opens no connection
and never ends it. Otherwise linkdeck starts one (``ssh -fN`` with ControlMaster=yes and a
ControlPersist, at the config's ControlPath or one of its own, openssh_master.py) and ends it
on close and at exit. Whatever ssh does (host certificates, agents, sk and PKCS#11 keys,
GSSAPI, Match exec, ProxyJump, ProxyCommand) counts because it is ssh.

Never a prompt: BatchMode=yes, no askpass, each ssh in a session of its own (no controlling
terminal). A session reads no config (``-F none``) and cannot connect by itself
(ProxyCommand=false): with the master gone it fails instead of logging in a second time.
Its stdin is a pipe: the sampler's ticks go there (the master passes it to the host).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import subprocess
import tempfile
import time
from pathlib import Path
from typing import AsyncGenerator, Sequence

from ..settings.config import HostSpec, Settings
from . import openssh_master as master, openssh_mux as mux, openssh_words as words
from .known_hosts import effective_policy, fingerprint, lookup, read_known_hosts
from .local_runner import Child, Started, StreamEnd, collect, exit_status, run_process, spawn, stream_lines
from .runner import (
    BIG_REQUEST_BYTES,
    CommandResult,
    CommandTimeout,
    ConnectionLost,
    HostKeyUnknown,
    RequestUnanswered,
    StreamInput,
    TransportError,
    Unreachable,
    bounded,
    unanswered_bytes,
)
from .ssh_config import SshTarget, hops, split_destination

KEEPALIVE_S = 5
MAX_LINE_BYTES = 1 << 20  # no line our samplers print is near this (as over paramiko)
NAME = "openssh"


class OpensshRunner:
    """Runs argv vectors on one host as sessions of one ssh master (Runner protocol)."""

    transport_name = NAME

    def __init__(
        self,
        client: str,
        spec: HostSpec,
        target: SshTarget,
        settings: Settings,
        name: str | None = None,
        stream_idle_timeout: float = 15.0,
    ) -> None:
        self.client = client
        self.spec = spec
        self.target = target
        self.settings = settings
        self.name = name or spec.name
        self.stream_idle_timeout = stream_idle_timeout
        self.control_path = target.control_path or master.socket_path()
        self.found_open = False  # the user's master, already running: used, never ended
        self.master_pid: int | None = None
        self._active = False
        # Sessions are opened over the control socket in this process until it answers as
        # no version 4 master; then by ``ssh -S``, which knows whatever else it speaks.
        self._in_process = True

    # ---- connecting -------------------------------------------------------------------

    def destination(self, hop: SshTarget | None = None) -> list[str]:
        """The ssh arguments that name the host as the user wrote it, so ssh resolves it as
        ``ssh HOST`` does; the HostSpec's own user, port, key and jump on top. With ``hop``
        (a jump host of the chain), that hop reached through the ones before it."""
        args = ["-F", str(Path(self.settings.ssh_config).expanduser())] if self.settings.ssh_config else []
        if hop is not None and hop is not self.target:
            chain = hops(self.target)
            before = chain[: chain.index(hop)]
            user, host, port = split_destination(hop.alias.removeprefix("ssh://"))
            if before:
                args += ["-J", ",".join(h.alias for h in before)]
        else:
            assert self.spec.address is not None
            user, host, port = split_destination(self.spec.address)
            user, port = self.spec.user or user, self.spec.port or port
            if self.spec.identity_file:
                args += ["-i", str(Path(self.spec.identity_file).expanduser())]
            if self.spec.jump:
                args += ["-J", self.spec.jump]
        if user:
            args += ["-l", user]
        if port:
            args += ["-p", str(port)]
        return [*args, "-o", "BatchMode=yes", "-o", f"ConnectTimeout={max(1, round(self.target.connect_timeout))}"]

    def master_argv(self) -> list[str]:
        policy = effective_policy(self.settings.host_key_policy, self.target.strict_host_key_checking)
        known = []
        if self.settings.known_hosts:  # linkdeck's file first: ssh reads it and writes to it
            files = " ".join(shlex.quote(f) for f in self.target.known_hosts_files)
            known = ["-o", f"UserKnownHostsFile={files}"]
        persist = (
            self.target.control_persist
            if self.target.control_path and self.target.control_persist not in (None, "no")
            else str(master.PERSIST_S)
        )
        return [
            self.client,
            *self.destination(),
            *known,
            "-o", f"StrictHostKeyChecking={'yes' if policy == 'strict' else 'accept-new'}",
            "-o", "ControlMaster=yes",
            "-o", f"ControlPath={self.control_path}",
            "-o", f"ControlPersist={persist}",
            "-o", f"ServerAliveInterval={KEEPALIVE_S}",
            "-o", "ServerAliveCountMax=3",
            "-N", "-f", "--", self._host(),
        ]  # fmt: skip

    def _host(self) -> str:
        assert self.spec.address is not None
        return split_destination(self.spec.address)[1]

    async def connect(self) -> None:
        """Use the user's running master, or start one. Raises Unreachable,
        HostKeyUnknown/Changed, AuthFailed with ssh's words."""
        if self.target.control_path:
            pid = await master.running(self.client, self.control_path)
            if pid is not None:
                self.found_open, self.master_pid, self._active = True, pid, True
                return
            # none answers: ssh -fN over a file there would run with no control socket, out of reach
            in_the_way = await asyncio.to_thread(master.make_way, self.control_path)
            if in_the_way is not None:
                raise Unreachable(
                    f"{self.target.display}: a file at ControlPath {self.control_path} answers as no ssh master "
                    f"({in_the_way}): remove it or change ControlPath"
                )
        budget = sum(3 * t.connect_timeout + 5 for t in hops(self.target))
        argv = self.master_argv()
        since = time.time()
        with tempfile.TemporaryFile() as errors:
            # stderr to a file: the master ssh forks away holding what it was given
            try:
                status = await exit_status(
                    argv,
                    budget,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=errors,
                    env=master.env(),
                    start_new_session=True,
                )
            except asyncio.TimeoutError:
                raise Unreachable(f"{self.target.display}: no SSH session within {budget:.0f} s") from None
            errors.seek(0)
            said = errors.read(64 << 10).decode(errors="replace")
        if status != 0:
            raise await self._failure(said)
        master.started(self.client, self.control_path)
        # ssh made the socket before it forked the master away, so it is there; the master
        # answers from its own loop, which a box busy logging in a whole fleet may reach
        # seconds late: it gets what is left of the login's budget, not the usual check's.
        left = max(master.MUX_TIMEOUT_S, budget - (time.time() - since))
        self.master_pid = await master.running(self.client, self.control_path, timeout=left)
        if self.master_pid is None:
            await master.end(self.control_path)
            await asyncio.to_thread(master.end_detached, argv, since)
            raise Unreachable(
                f"{self.target.display}: ssh logged in but its master does not answer at {self.control_path}: "
                f"“{words.last_words(said)}”"
            )
        self._active = True

    async def _failure(self, said: str) -> TransportError:
        unknown = words.unknown_key(said)
        if unknown is not None:
            hop = next((h for h in hops(self.target) if h.known_hosts_name == unknown.name), self.target)
            return self._unknown(hop, unknown.said, await self._offered_key(hop))
        chain = hops(self.target)
        if words.unverified(said) or (len(chain) > 1 and words.unexplained(said)):
            # ssh checked a key it could not ask about, or a jump host's ssh failed: it was
            # told to keep quiet (a master's ProxyJump/ProxyCommand child has stderr on
            # /dev/null under ControlPersist). The first hop whose offered key is not known
            # is the one; with every key known, the failure is what ssh said.
            for hop in chain:
                offered = await self._offered_key(hop)
                if offered is not None and not known_key(hop, *offered):
                    return self._unknown(
                        hop, words.last_words(said) if words.VERIFY not in said else words.VERIFY, offered
                    )
        return words.failure(said, self.target.display, self.target.identity_files)

    @staticmethod
    def _unknown(hop: SshTarget, said: str, offered: tuple[str, str] | None) -> HostKeyUnknown:
        if offered is None:
            return HostKeyUnknown(
                f"{hop.display}: ssh says “{said}”, and linkdeck could not fetch the key to show it: "
                f"run `ssh {hop.alias}` once to review it",
                "",
                hop=hop.known_hosts_name,
            )
        key_type, key_b64 = offered
        short = key_type.removeprefix("ssh-").split("-")[0]
        return HostKeyUnknown(
            f"{hop.display}: ssh says “{said}”: it offers {key_type} {fingerprint(key_b64)}. Check the "
            f"fingerprint on the host (`ssh-keygen -lf /etc/ssh/ssh_host_{short}_key.pub`) before trusting it",
            fingerprint(key_b64),
            key_type,
            key_b64,
            hop.known_hosts_name,
        )

    async def _offered_key(self, hop: SshTarget) -> tuple[str, str] | None:
        """The key ``hop`` offers, as ssh negotiates it: ssh itself connects the same way with
        a scratch known_hosts that takes any new key, and offers no credential (only the
        "none" method), so it stops before logging in."""
        with tempfile.TemporaryDirectory() as scratch:
            known = os.path.join(scratch, "known_hosts")
            argv = [
                self.client,
                *self.destination(hop),
                "-o", f"UserKnownHostsFile={known}",
                "-o", "GlobalKnownHostsFile=/dev/null",
                "-o", "StrictHostKeyChecking=accept-new",
                "-o", "HashKnownHosts=no",
                "-o", "UpdateHostKeys=no",
                "-o", "CheckHostIP=no",
                "-o", "PreferredAuthentications=none",
                "-o", "ControlMaster=no",
                "-o", "ControlPath=none",
                "-T", "--",
                self._host() if hop is self.target else split_destination(hop.alias.removeprefix("ssh://"))[1],
                "true",
            ]  # fmt: skip
            budget = sum(3 * t.connect_timeout + 5 for t in hops(self.target))
            with contextlib.suppress(TransportError, OSError):
                await run_process(argv, budget, env=master.env(), new_session=True)
            lines = await asyncio.to_thread(_read_lines, known)
            if lines is None:
                return None
        for line in lines:
            parts = line.split()
            if len(parts) >= 3 and not parts[0].startswith("@"):
                return parts[1], parts[2]
        return None

    # ---- running commands -------------------------------------------------------------

    def session_argv(self, argv: Sequence[str]) -> list[str]:
        if not argv:
            raise ValueError("empty command")
        return [
            self.client, "-F", "none", "-S", self.control_path,
            "-o", "ControlMaster=no", "-o", "BatchMode=yes", "-o", "ProxyCommand=false", "-o", "LogLevel=ERROR",
            "-T", "--", self.target.hostname, shlex.join(argv),
        ]  # fmt: skip

    async def _start(self, argv: Sequence[str], *, stdin: bool, within: float) -> Started:
        """``argv`` started as a session of the master: over its socket in this process, or by
        ``ssh -S`` once the socket has answered as no version 4 master. asyncio.TimeoutError
        when no session opens within ``within`` s; SessionRefused when the master says no;
        ConnectionLost when nothing answers at the socket any more."""
        if self._in_process:
            try:
                return await bounded(mux.Session.open(self.control_path, shlex.join(argv), stdin=stdin), within)
            except mux.MuxUnexpected:
                self._in_process = False
            except OSError as exc:
                if await self._master_alive():  # ours to blame (out of file descriptors): try again later
                    raise TransportError(f"{self.name}: cannot open a session on its ssh master: {exc}") from None
                raise ConnectionLost(
                    f"{self.name}: the SSH connection dropped: its master no longer answers at {self.control_path} "
                    f"({exc.strerror or exc})"
                ) from None
        proc = await spawn(
            self.session_argv(argv),
            stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=master.env(),
            start_new_session=True,
        )
        return Child(proc, group=stdin)

    async def run(self, argv: Sequence[str], timeout: float = 10.0) -> CommandResult:
        self._check_alive()
        if not argv:
            raise ValueError("empty command")
        command = shlex.join(argv)
        label = f"{self.name}: {argv[0]}"
        try:
            try:
                started = await self._start(argv, stdin=False, within=timeout)
            except asyncio.TimeoutError:
                raise CommandTimeout(f"{label} did not start within {timeout:g} s") from None
            except mux.SessionRefused as exc:
                return CommandResult("", f"the ssh master refused a session: {exc}", mux.NO_EXIT_STATUS)
            result = await collect(started, timeout, label)
        except CommandTimeout:
            if len(command) >= BIG_REQUEST_BYTES and not await self._master_alive():
                raise RequestUnanswered(self.name, len(command)) from None
            raise
        if result.status == 255 and not await self._master_alive():
            raise ConnectionLost(
                f"{self.name}: the SSH connection dropped: ssh says “{words.last_words(result.stderr)}”"
            )
        return result

    async def stream(
        self,
        argv: Sequence[str],
        tick: float | None = None,
        feed: StreamInput | None = None,
        idle_timeout: float | None = None,
    ) -> AsyncGenerator[str, None]:
        """Yield stdout lines as they arrive (Runner.stream). Nothing for ``idle_timeout`` s
        (default ``stream_idle_timeout``) means the host or the path is gone: ConnectionLost,
        and the master is ended."""
        self._check_alive()
        if not argv:
            raise ValueError("empty command")
        idle = idle_timeout or self.stream_idle_timeout
        end = StreamEnd()
        answered = False
        try:
            try:
                started = await self._start(argv, stdin=True, within=idle)
            except mux.SessionRefused as exc:
                raise TransportError(f"{self.name}: the ssh master refused a session for {argv[0]}: {exc}") from None
            lines = stream_lines(started, tick, idle=idle, line_limit=MAX_LINE_BYTES, end=end, feed=feed)
            async with contextlib.aclosing(lines):
                async for line in lines:
                    answered = True
                    yield line.rstrip("\r")
        except asyncio.TimeoutError:
            await self.close()
            size = unanswered_bytes(answered, shlex.join(argv), feed)
            if size >= BIG_REQUEST_BYTES:
                # logged in over small packets, then not a word for a request this big: the
                # path, as paramiko says when such an exec does not start
                raise RequestUnanswered(self.name, size) from None
            raise ConnectionLost(f"{self.name}: no data for {idle:.0f} s, the connection is considered dead") from None
        except ValueError:
            await self.close()
            raise ConnectionLost(f"{self.name}: a line of output ran past {MAX_LINE_BYTES} bytes") from None
        said = end.stderr.decode(errors="replace")
        if end.status == 255 and not await self._master_alive():
            size = unanswered_bytes(answered, shlex.join(argv), feed)
            if size >= BIG_REQUEST_BYTES:  # the master gave up (its keepalives stuck behind the request): the path
                raise RequestUnanswered(self.name, size)
            raise ConnectionLost(f"{self.name}: the SSH connection dropped: ssh says “{words.last_words(said)}”")
        if said.strip():
            # The stream's program ended with a complaint: say what it was.
            raise TransportError(f"{self.name}: {argv[0]} ended: {said.strip()[-300:]}")

    async def _master_alive(self) -> bool:
        alive = self._active and await master.running(self.client, self.control_path) is not None
        if not alive:
            self._active = False
        return alive

    def _check_alive(self) -> None:
        if not self._active:
            raise ConnectionLost(f"{self.name}: not connected")

    @property
    def is_active(self) -> bool:
        return self._active

    async def close(self) -> None:
        self._active = False
        if not self.found_open:
            await master.end(self.control_path)


def _read_lines(path: str) -> list[str] | None:
    text = read_known_hosts(path)
    return None if text is None else text.split("\n")


def known_key(hop: SshTarget, key_type: str, key_b64: str) -> bool:
    """Whether ``hop``'s known_hosts files hold this very key (a plain entry, not revoked)."""
    entries = lookup(hop.known_hosts_files, hop.known_hosts_name)
    revoked = any(k.marker == "@revoked" and k.key_b64 == key_b64 for k in entries)
    return not revoked and any(k.marker is None and (k.key_type, k.key_b64) == (key_type, key_b64) for k in entries)


async def open_runner(client: str, spec: HostSpec, target: SshTarget, settings: Settings) -> OpensshRunner:
    """A connected runner whose stream read timeout allows a few missed frames."""
    runner = OpensshRunner(
        client, spec, target, settings, stream_idle_timeout=max(3 * KEEPALIVE_S, 4 * settings.interval)
    )
    await runner.connect()
    return runner


__all__ = ["NAME", "OpensshRunner", "open_runner"]
