"""The fixed command templates of a test and the checks on every value put into them.

Every value that reaches a remote shell is validated here first (address, port, duration)
and shell-quoted on top; the templates themselves are constant text.
"""

from __future__ import annotations

import ipaddress
import math
import re
import shlex

from ..core.oses import PINGS
from ..settings.limits import RANGES, out_of_range
from ..verdict.goodput import MULTITHREADED_SINCE as MULTITHREADED_SINCE  # the version table, with the others
from .failures import ProbeError

MIN_DURATION_S, MAX_DURATION_S = int(RANGES["test_duration"].lo), int(RANGES["test_duration"].hi)
# iperf3 3.7 added --bidir, 3.2 --connect-timeout; --forceflush is known from 3.6 on (older
# servers buffer the "listening" banner, so we give them a moment instead). 3.16 runs each
# stream in its own thread; 3.17 prints each second as it ends with --json-stream.
BIDIR_SINCE = (3, 7)
JSON_STREAM_SINCE = (3, 17)
CONNECT_TIMEOUT_SINCE = (3, 2)
FORCEFLUSH_SINCE = (3, 6)
# --bind-dev (SO_BINDTODEVICE, Linux): the only way to choose the egress interface when two
# share a subnet; -B ADDR alone picks the source address, the route still picks the interface.
BIND_DEV_SINCE = (3, 10)
_IFNAME = re.compile(r"^[A-Za-z0-9_.:@-]{1,64}$")
CONNECT_TIMEOUT_MS = 3000

_HOSTNAME = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$"
)
_VERSION = re.compile(r"\biperf (\d+)\.(\d+)(?:\.(\d+))?")


def check_address(address: str) -> str:
    """An IP address (v4/v6, scope allowed) or a DNS name; anything else is refused."""
    text = (address or "").strip()
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        pass
    if _HOSTNAME.match(text):
        return text
    raise ProbeError(f"not an address or host name: {address!r}")


def check_port(port: object) -> int:
    why = out_of_range("port", port)
    if why:
        raise ProbeError(f"the iperf3 port {why}")
    return port  # type: ignore[return-value]  # out_of_range let only an int through


def check_duration(seconds: object) -> int:
    """Whole seconds for iperf3 -t (older versions read it as an integer)."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
        raise ProbeError(f"not a duration: {seconds!r}")
    whole = max(MIN_DURATION_S, int(round(seconds)))
    if whole > MAX_DURATION_S:
        raise ProbeError(f"a test lasts at most {MAX_DURATION_S} s, not {seconds:g}")
    return whole


def parse_version(text: str) -> tuple[int, ...] | None:
    """(3, 12) from "iperf 3.12 (cJSON 1.7.15)"; None when it is not iperf3's banner."""
    m = _VERSION.search(text or "")
    if not m:
        return None
    return tuple(int(g) for g in m.groups() if g is not None)


def check_ifname(name: str) -> str:
    """An interface name as the OSes spell them; anything else is refused."""
    if not isinstance(name, str) or not _IFNAME.match(name):
        raise ProbeError(f"not an interface name: {name!r}")
    return name


def bind_options(address: str | None, dev: str | None) -> str:
    """`` -B ADDR`` and `` --bind-dev IF`` for whichever is given, values checked and quoted."""
    text = f" -B {shlex.quote(check_address(address))}" if address else ""
    return text + (f" --bind-dev {shlex.quote(check_ifname(dev))}" if dev else "")


def server_script(port: int, forceflush: bool, bind_address: str | None = None) -> str:
    """sh program: print our PID, then become a one-shot iperf3 server (stderr folded in so
    "Address already in use" reaches us), listening on ``bind_address`` alone when given."""
    flush = " --forceflush" if forceflush else ""
    return f"echo $$; exec iperf3 -s -1 -p {check_port(port)}{bind_options(bind_address, None)}{flush} 2>&1"


def check_streams(streams: object) -> int:
    why = out_of_range("test_streams", streams)
    if why:
        raise ProbeError(f"parallel streams {why}")
    return streams  # type: ignore[return-value]  # out_of_range let only an int through


def client_script(
    address: str, port: int, seconds: int, mode: str, connect_timeout: bool,
    streams: int = 1, json_stream: bool = False, bind: tuple[str | None, str | None] = (None, None),
) -> str:  # fmt: skip
    """sh program: print our PID, then become the iperf3 client; ``mode`` is "bidir",
    "forward" or "reverse"; ``streams`` parallel streams each way (-P); ``json_stream``: one
    JSON event a line, each second as it ends (iperf3 >= 3.17); ``bind``: the client's own
    address (-B) and interface (--bind-dev), either or both."""
    flag = {"bidir": " --bidir", "forward": "", "reverse": " -R"}[mode]
    if check_streams(streams) > 1:
        flag += f" -P {streams}"
    timeout = f" --connect-timeout {CONNECT_TIMEOUT_MS}" if connect_timeout else ""
    addr = shlex.quote(check_address(address))
    json = " -J --json-stream" if json_stream else " -J"
    return (
        f"echo $$; exec iperf3 -c {addr} -p {check_port(port)}{bind_options(*bind)}{flag}{json} "
        f"-t {check_duration(seconds)}{timeout} 2>&1"
    )


def udp_probe_script(address: str, port: int, payload: int, blocks: int) -> str:
    """sh program: print our PID, then become an iperf3 UDP client sending ``blocks``
    datagrams of ``payload`` bytes with don't-fragment (iperf3 3.10 and later), paced at
    2 Mbit/s so the server counts them before the test ends, and printing the server's
    report (its "receiver" line says how many arrived)."""
    if isinstance(payload, bool) or not isinstance(payload, int) or not 0 < payload <= MAX_PING_PAYLOAD:
        raise ProbeError(f"not a datagram size: {payload!r}")
    if isinstance(blocks, bool) or not isinstance(blocks, int) or not 0 < blocks <= 1000:
        raise ProbeError(f"not a datagram count: {blocks!r}")
    addr = shlex.quote(check_address(address))
    return (
        f"echo $$; exec iperf3 -c {addr} -p {check_port(port)} -u --dont-fragment "
        f"-l {payload} -k {blocks} -b 2M -J --get-server-output 2>&1"
    )


def kill_script(pid: int, grace_s: float = 2.0) -> str:
    """TERM, wait up to ``grace_s`` for the process to go, then KILL. Exit 0 either way."""
    if isinstance(pid, bool) or not isinstance(pid, int) or pid <= 1:
        raise ProbeError(f"not a process id: {pid!r}")
    tries = max(1, int(grace_s * 10))
    return (
        f"kill {pid} 2>/dev/null || exit 0; i=0; "
        f"while kill -0 {pid} 2>/dev/null && [ $i -lt {tries} ]; do sleep 0.1; i=$((i+1)); done; "
        f"kill -9 {pid} 2>/dev/null; exit 0"
    )


# Every TCP socket of the host, to tell when a test's last ones have gone (probe/lingering.py):
# Linux's ss, else netstat (the BSDs, macOS, illumos; a Linux without iproute2).
SOCKETS_SCRIPT = "ss -tan 2>/dev/null || netstat -an 2>/dev/null"


# The path MTU probe: one ping per size, each with don't-fragment and one echo request, all
# started at once on the sending host; per ping a line "r SIZE STATUS", and for the first
# size (the one whose answer says whether ping works, and the round trip time) ping's first
# and last lines after it. Each OS's ping command is its row's in oses.PINGS.
PING_MISSING = "noping"
MAX_PING_PAYLOAD = 65507


def ping_script(flavour: str, address: str, probes: list[tuple[int, float]]) -> str:
    """sh program: ``probes`` is (ICMP payload bytes, seconds to wait for the reply) per ping.
    Prints ``noping`` when there is no ping on PATH."""
    if flavour not in PINGS:
        raise ProbeError(f"no ping template for {flavour!r}")
    addr = shlex.quote(check_address(address))
    parts = [f"command -v ping >/dev/null 2>&1 || {{ echo {PING_MISSING}; exit 0; }}"]
    for n, (size, wait) in enumerate(probes):
        if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= MAX_PING_PAYLOAD:
            raise ProbeError(f"not a ping size: {size!r}")
        if not 0 < wait <= 10:
            raise ProbeError(f"not a ping wait: {wait!r}")
        ping = PINGS[flavour].command.format(
            size=size, addr=addr, wait_s=f"{wait:.3f}", wait_ms=int(wait * 1000), wait_whole=max(1, math.ceil(wait))
        )
        if n == 0:
            parts.append(
                f"(e=$({ping} 2>&1); r=$?; "
                f"echo \"r {size} $r $(printf '%s\\n' \"$e\" | sed -n '1p;$p' | tr '\\n' ' ')\") &"
            )
        else:  # one process per ping: a round's cost is mostly starting them
            parts.append(f'{{ {ping} >/dev/null 2>&1; echo "r {size} $?"; }} &')
    parts.append("wait")
    return "\n".join(parts)
