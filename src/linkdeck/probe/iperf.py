"""One bidirectional iperf3 test between two hosts, over their runners.

The receiving host runs a one-shot server on a free port; the sending host runs the client
with ``--bidir`` (or forward then ``-R`` when either end predates 3.7). Both are started as
``HostProcess`` so a cancel or a timeout kills them by PID: no iperf3 is left running.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import weakref
from dataclasses import dataclass, replace
from typing import Callable, Mapping

from ..core.model import TestResult
from ..core.oses import iperf3_install
from ..parsers.iperf3 import Iperf3Interval, Iperf3Result, parse_json, parse_json_stream, parse_stream_line
from ..parsers.parse_error import ParseError
from ..platforms.adapter import Adapter
from ..settings.limits import DEFAULT_IPERF3_PORT, RANGES
from ..transport.runner import Runner, TransportError, bounded
from . import templates as cmd
from .failures import Iperf3Missing, PeerUnreachable, PortsBusy, ProbeError, TestTimeout
from .process import HostProcess

PORT_TRIES = 10
LISTEN_WAIT_S = 5.0
OLD_SERVER_GRACE_S = 0.5  # servers without --forceflush: time to bind before the client starts
TIMEOUT_MARGIN_S = 15.0
SERVER_EXIT_GRACE_S = 2.0
# A run whose end covers this much less than asked stopped early (iperf3 ends within a few
# tens of ms of the asked duration).
CUT_SHORT_S = 0.5
_STOPPED = ("interrupt", "has terminated")
_IN_USE = ("unable to start listener", "address already in use")
_UNREACHABLE = (
    "connection refused",
    "no route to host",
    "network is unreachable",
    "host is unreachable",
    "unable to connect",
    "connection timed out",
)

Phase = Callable[[str], None]  # progress: "server", "running", "reverse", "done"
# Each second as it arrives: ("interval", the second as in TestResult.intervals), or once
# ("quiet", {"host", "version"}) when the client's iperf3 predates --json-stream.
Live = Callable[[str, Mapping[str, object]], None]


@dataclass(frozen=True, slots=True)
class Iperf3Info:
    version: tuple[int, ...]
    text: str

    @property
    def bidir(self) -> bool:
        return self.version >= cmd.BIDIR_SINCE

    @property
    def forceflush(self) -> bool:
        return self.version >= cmd.FORCEFLUSH_SINCE

    @property
    def connect_timeout(self) -> bool:
        return self.version >= cmd.CONNECT_TIMEOUT_SINCE

    @property
    def json_stream(self) -> bool:
        return self.version >= cmd.JSON_STREAM_SINCE

    @property
    def single_threaded(self) -> bool:
        return self.version < cmd.MULTITHREADED_SINCE

    @property
    def bind_dev(self) -> bool:
        return self.version >= cmd.BIND_DEV_SINCE

    @property
    def label(self) -> str:
        return ".".join(map(str, self.version))


@dataclass(frozen=True, slots=True)
class End:
    """One end of a test: the name the user knows, its runner, its OS when known (for the
    install hint), and its adapter when there is one (for the counter reads around a test).
    ``runner`` is None at a host linkdeck reads without a shell of its own (a replay's, tests'
    synthetic hosts): its OS is known, nothing runs there."""

    name: str
    runner: Runner | None
    os: str | None = None
    adapter: Adapter | None = None

    def shell(self) -> Runner:
        """The runner commands run through; ProbeError at a host without one."""
        if self.runner is None:
            raise ProbeError(f"{self.name}: no shell to run commands through")
        return self.runner


# Per runner (one connection to one host): `iperf3 --version` is asked once.
_versions: "weakref.WeakKeyDictionary[object, Iperf3Info]" = weakref.WeakKeyDictionary()
# A test's cleanup goes on when the test is cancelled again while it runs (shielded): whoever
# closes the connections it kills through waits for these first (stopped).
_stopping: set[asyncio.Future] = set()


async def iperf3_info(end: End) -> Iperf3Info:
    runner = end.shell()
    try:
        cached = _versions.get(runner)
    except TypeError:  # a runner that cannot be weakly referenced: ask every time
        cached = None
    if cached is not None:
        return cached
    try:
        res = await runner.run(["iperf3", "--version"], timeout=10)
    except TransportError as exc:
        raise ProbeError(f"{end.name}: {exc}") from None
    version = cmd.parse_version(res.stdout + "\n" + res.stderr)
    if version is None:
        raise Iperf3Missing(end.name, await _hint(end))
    info = Iperf3Info(version, (res.stdout or res.stderr).strip().splitlines()[0])
    with contextlib.suppress(TypeError):
        _versions[runner] = info
    return info


async def _hint(end: End) -> str:
    return iperf3_install(end.os, await os_release(end))


async def os_release(end: End) -> str:
    """/etc/os-release of a Linux end (or of an end whose OS is unknown), which tells the
    distributions' install commands apart; "" elsewhere or when it cannot be read."""
    if end.os not in (None, "linux"):
        return ""
    with contextlib.suppress(Exception):
        return (await end.shell().run(["cat", "/etc/os-release"], timeout=5)).stdout
    return ""


async def start_server(
    end: End, info: Iperf3Info, port: int, idle_s: float, bind_address: str | None = None
) -> tuple[HostProcess, int]:
    """A listening one-shot server on ``port`` or the next free one (on ``bind_address``
    alone when given)."""
    tried = []
    for offset in range(PORT_TRIES):
        candidate = (port - 1 + offset) % int(RANGES["port"].hi) + 1  # past the last port, the first
        tried.append(candidate)
        proc = HostProcess(end.shell(), end.name, cmd.server_script(candidate, info.forceflush, bind_address), idle_s)
        await proc.start()
        if info.forceflush:
            line = await proc.wait_for_line(
                lambda s: "listening" in s.lower() or _has(s, _IN_USE) or "error" in s.lower(), LISTEN_WAIT_S
            )
        else:
            line = await proc.wait_for_line(lambda s: _has(s, _IN_USE) or "error" in s.lower(), OLD_SERVER_GRACE_S)
        if line is not None and _has(line, _IN_USE):
            await proc.stop()
            continue
        if line is not None and "listening" not in line.lower():
            await proc.stop()
            raise ProbeError(f"iperf3 server on {end.name}: {line.strip().removeprefix('iperf3: ')}")
        if line is None and (proc.ended.is_set() or info.forceflush):
            out = "\n".join(proc.lines).strip()
            await proc.stop()
            raise ProbeError(
                f"iperf3 server on {end.name} did not start listening" + (f": {out[-200:]}" if out else "")
            )
        return proc, candidate
    raise PortsBusy(f"ports {tried[0]}-{tried[-1]} are all in use on {end.name}: set [test] port in the config")


Interval = Mapping[str, float | int | None]


def interval_of(iv: Iperf3Interval) -> Interval:
    """One second of a --json-stream run as TestResult.intervals and test --json hold it."""
    return {
        "start_s": iv.start_s, "end_s": iv.end_s, "forward_bps": iv.forward_bps, "reverse_bps": iv.reverse_bps,
        "forward_retransmits": iv.forward_retransmits, "reverse_retransmits": iv.reverse_retransmits,
        "rtt_ms": iv.rtt_ms, "cwnd_bytes": iv.cwnd_bytes,
    }  # fmt: skip


def _is_event(line: str) -> bool:
    return line.lstrip().startswith(("{", "iperf3: "))


async def run_client(
    src: End,
    dst: End,
    info: Iperf3Info,
    address: str,
    port: int,
    seconds: int,
    mode: str,
    procs: list[HostProcess],
    idle_s: float,
    streams: int = 1,
    on_live: Live | None = None,
    bind: tuple[str | None, str | None] = (None, None),
) -> tuple[Iperf3Result, tuple[Interval, ...]]:
    """The client's result, and each second of it when its iperf3 streams them (>= 3.17):
    ``on_live`` sees each as it arrives."""
    stream = info.json_stream

    def line(text: str) -> None:
        if on_live is None or not _is_event(text):
            return
        try:
            iv = parse_stream_line(text)
        except ParseError:  # judged with the whole output at the end
            return
        if iv is not None and not iv.omitted:
            on_live("interval", interval_of(iv))

    script = cmd.client_script(
        address, port, seconds, mode, info.connect_timeout, streams, json_stream=stream, bind=bind
    )
    proc = HostProcess(src.shell(), src.name, script, idle_s, on_line=line if stream else None)
    procs.append(proc)
    await proc.start()
    text = await proc.output()
    intervals: tuple[Interval, ...] = ()
    try:
        if stream:
            progress = parse_json_stream(t for t in text.splitlines() if _is_event(t))
            if progress.result is None:
                raise ProbeError(f"iperf3 on {src.name} ended before its result: {text.strip()[-200:]!r}")
            parsed = progress.result
            intervals = tuple(interval_of(iv) for iv in progress.intervals if not iv.omitted)
        else:
            parsed = parse_json(text[text.find("{") :] if "{" in text else text)
    except ParseError as exc:
        raise ProbeError(f"iperf3 on {src.name} printed something unreadable: {exc}") from None
    short = cut_short(parsed, seconds)
    if short:
        raise ProbeError(f"the test {src.name} → {dst.name} was cut short: {short}; not a result")
    if parsed.error:
        if _has(parsed.error, _UNREACHABLE):
            raise PeerUnreachable(
                f"{dst.name} ({address}) port {port} is not reachable from {src.name}: {parsed.error}"
            )
        raise ProbeError(f"iperf3 on {src.name}: {parsed.error}")
    return parsed, intervals


def cut_short(parsed: Iperf3Result, seconds: int) -> str | None:
    """Why a run is not a completed test although its JSON has an end (None when it is):
    iperf3 3.19 and later exit 0 when a signal stops them, so the exit status cannot tell;
    the error iperf3 wrote and the seconds its end covers can."""
    covered = parsed.duration_s
    ran = f"after {covered:.1f} of {seconds} s" if covered is not None else f"before its {seconds} s"
    if parsed.error and _has(parsed.error, _STOPPED):
        return f"{ran} ({parsed.error})"
    if not parsed.error and covered is not None and covered < seconds - CUT_SHORT_S:
        return f"its result covers {covered:.1f} of {seconds} s"
    return None


async def run_test(
    src: End,
    dst: End,
    address: str,
    duration: float,
    port: int = DEFAULT_IPERF3_PORT,
    *,
    timeout: float | None = None,
    on_phase: Phase | None = None,
    both_ways: bool = True,
    streams: int = 1,
    on_live: Live | None = None,
    only: str | None = None,
    bind: tuple[str | None, str | None] = (None, None),
    server_bind: str | None = None,
    on_port: Callable[[int], None] | None = None,
) -> TestResult:
    """Run one bidirectional test, ``src`` the client and ``dst`` the server at ``address``
    (``both_ways=False``: src → dst only, as for a host's loopback ceiling, where one
    single-threaded iperf3 serving both directions would halve what it shows); ``streams``
    parallel streams each way (iperf3 -P); ``bind``: the client's (address, interface) to
    send from, ``server_bind``: the one address the server listens on. ``on_live`` sees each second as it arrives, or
    once why there will be none (see Live). ``only``: "forward" or "reverse", that direction alone. ``on_port`` is told
    the port each server listens on, before its client starts.

    Raises ProbeError (Iperf3Missing, PeerUnreachable, PortsBusy, TestTimeout) with a message
    for the user; on cancellation both iperf3 processes are killed before CancelledError
    goes on.
    """
    address = cmd.check_address(address)
    seconds = cmd.check_duration(duration)
    port = cmd.check_port(port)
    streams = cmd.check_streams(streams)
    phase = on_phase or (lambda _p: None)
    # Both answers before either's error goes up: a test must not end while the other end's
    # `iperf3 --version` still runs there.
    src_info, dst_info = await asyncio.gather(iperf3_info(src), iperf3_info(dst), return_exceptions=True)
    if isinstance(src_info, BaseException):
        raise src_info
    if isinstance(dst_info, BaseException):
        raise dst_info
    bidir = src_info.bidir and dst_info.bidir
    if only not in (None, "forward", "reverse"):
        raise ProbeError(f"not a direction: {only!r}")
    limit = (
        timeout if timeout is not None else seconds * (1 if bidir or only or not both_ways else 2) + TIMEOUT_MARGIN_S
    )
    idle_s = seconds + TIMEOUT_MARGIN_S
    procs: list[HostProcess] = []

    async def one(mode: str) -> tuple[Iperf3Result, tuple[Interval, ...]]:
        phase("server")
        server, used = await start_server(dst, dst_info, port, idle_s, server_bind)
        procs.append(server)
        if on_port is not None:
            on_port(used)
        phase("running" if mode != "reverse" else "reverse")
        try:
            return await run_client(
                src, dst, src_info, address, used, seconds, mode, procs, idle_s, streams, on_live, bind
            )
        except PeerUnreachable:
            raise
        except ProbeError as exc:
            server_said = " ".join(server.lines[-3:]).strip()
            raise ProbeError(
                f"{exc}"
                + (
                    f" (server on {dst.name}: {server_said[-200:]})"
                    if server_said and "error" in server_said.lower()
                    else ""
                )
            ) from None

    async def body() -> TestResult:
        if on_live is not None and not src_info.json_stream:
            on_live("quiet", {"host": src.name, "version": src_info.label})
        if only or not both_ways or bidir:
            parsed, intervals = await one(only or ("forward" if not both_ways else "bidir"))
            return replace(
                to_result(src, dst, address, seconds, streams, parsed, None, src_info, dst_info), intervals=intervals
            )
        (fwd, _), (rev, _) = await one("forward"), await one("reverse")
        return to_result(src, dst, address, seconds, streams, fwd, rev, src_info, dst_info)

    started = time.monotonic()
    finished = False
    try:
        result = await bounded(body(), limit)
        finished = True
        phase("done")
        return result
    except asyncio.TimeoutError:
        raise TestTimeout(
            f"the test {src.name} → {dst.name} did not finish within {limit:.0f} s "
            f"(ran {time.monotonic() - started:.1f} s); both iperf3 processes were stopped"
        ) from None
    finally:
        # Shielded: a second cancel while cleaning up must not leave a process behind.
        stopping = asyncio.ensure_future(_stop_all(procs, SERVER_EXIT_GRACE_S if finished else 0.0))
        _stopping.add(stopping)
        stopping.add_done_callback(_stopping.discard)
        await asyncio.shield(stopping)


async def stopped(timeout: float) -> None:
    """Wait (at most ``timeout`` s) for the cleanups of cancelled tests still killing their
    iperf3 processes: their connections must stay open until they are done."""
    if _stopping:
        await asyncio.wait(set(_stopping), timeout=timeout)


async def _stop_all(procs: list[HostProcess], grace_s: float) -> None:
    # The client first (it would otherwise reconnect to nothing and complain), then servers.
    # After a completed test a one-shot server exits by itself: give it ``grace_s`` first.
    for proc in reversed(procs):
        await proc.stop(grace_s)


def to_result(
    src: End,
    dst: End,
    address: str,
    seconds: int,
    streams: int,
    main: Iperf3Result,
    reverse: Iperf3Result | None,
    src_info: Iperf3Info,
    dst_info: Iperf3Info,
) -> TestResult:
    """A TestResult from one --bidir run, or from a forward run plus a -R run."""
    rev = reverse or main
    cpu_src = [r.cpu_local_pct for r in (main, reverse) if r is not None and r.cpu_local_pct is not None]
    cpu_dst = [r.cpu_remote_pct for r in (main, reverse) if r is not None and r.cpu_remote_pct is not None]
    rtts = [r.rtt_ms for r in (main, reverse) if r is not None and r.rtt_ms is not None]
    version = main.version or src_info.label
    if dst_info.label != src_info.label:
        version = f"{src_info.label} / {dst_info.label}"
    return TestResult(
        src=src.name,
        dst=dst.name,
        address=address,
        duration_s=main.duration_s or float(seconds),
        forward_bps=_first(main.forward_received_bps, main.forward_sent_bps),
        reverse_bps=_first(rev.reverse_received_bps, rev.reverse_sent_bps),
        forward_retransmits=main.forward_retransmits,
        reverse_retransmits=rev.reverse_retransmits,
        rtt_ms=sum(rtts) / len(rtts) if rtts else None,
        cpu_src_pct=max(cpu_src) if cpu_src else None,
        cpu_dst_pct=max(cpu_dst) if cpu_dst else None,
        iperf3_version=version,
        single_threaded=src_info.single_threaded or dst_info.single_threaded,
        src_iperf3=src_info.label,
        dst_iperf3=dst_info.label,
        streams=streams,
        raw_end=dict(main.end) if reverse is None else {"forward": dict(main.end), "reverse": dict(reverse.end)},
    )


def _first(*values: float | None) -> float | None:
    return next((v for v in values if v is not None), None)


def _has(text: str, needles: tuple[str, ...]) -> bool:
    low = text.lower()
    return any(n in low for n in needles)
