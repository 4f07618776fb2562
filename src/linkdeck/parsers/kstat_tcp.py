"""illumos and Solaris TCP counters: ``kstat -p tcp:0:tcp`` (``tcp:0:tcp:retransSegs<TAB>42``)
and ``netstat -s -P tcp`` (two ``tcpRetransSegs =42`` pairs a line), which name the same MIB
counters (netstat with a ``tcp`` prefix).

outSegs counts every segment sent (as Linux's OutSegs and the BSDs' "packets sent" do), and
is 64-bit; outDataSegs, the classic Solaris denominator, is a 32-bit count of data segments
only, used where outSegs is missing.
"""

from __future__ import annotations

import re

from ..core.tcpstats import TcpCounters
from . import numbers
from .parse_error import ParseError
from .registry import Entry

KSTAT_COMMAND = "kstat -p tcp:0:tcp"
NETSTAT_COMMAND = "netstat -s -P tcp"
FIELDS = {
    "outSegs": "out_segs",
    "retransSegs": "retrans_segs",
    "inSegs": "in_segs",
    "timRetrans": "timeouts",
    "listenDrop": "listen_drops",
    "inErrs": "in_errs",
}
# The kstat selector the illumos sampler adds to its per-tick kstat (one process, a few lines).
SELECTOR = "tcp:0:tcp:/^(" + "|".join((*FIELDS, "outDataSegs")) + ")$/"
_KSTAT = re.compile(r"tcp:\d+:tcp:(\w+)\s+(\S+)\s*")
_PAIR = re.compile(r"(tcp\w+)\s*=\s*(-?\d+)")


def _counters(values: dict[str, str], command: str) -> TcpCounters:
    if "outSegs" not in values and "outDataSegs" in values:
        values = {**values, "outSegs": values["outDataSegs"]}
    found = {FIELDS[k]: numbers.counter(v, k, command) for k, v in values.items() if k in FIELDS}
    if not found:
        raise ParseError(command, "no TCP counters it knows (retransSegs, outSegs, inSegs …)", "(none)")
    return TcpCounters(**found)


def parse_kstat(text: str, command: str = KSTAT_COMMAND) -> TcpCounters:
    """The ``tcp:N:tcp`` lines of ``kstat -p`` output (other modules' lines are skipped, so
    the sampler's one kstat can carry them beside the link statistics)."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        m = _KSTAT.fullmatch(line.strip())
        if m:
            values.setdefault(m.group(1), m.group(2))
    return _counters(values, command)


def parse_netstat(text: str, command: str = NETSTAT_COMMAND) -> TcpCounters:
    values: dict[str, str] = {}
    for name, value in _PAIR.findall(text):
        values.setdefault(name[3].lower() + name[4:], value)
    return _counters(values, command)


COMMANDS = (
    Entry(
        r"kstat -p (?:'?tcp:0?:tcp(?::\S*)?'?|-m tcp)",
        frozenset({"illumos"}),
        lambda t, o: parse_kstat(t),
        "TCP counters (segments sent, retransmitted; timeouts) — not interfaces",
    ),
    Entry(
        r"netstat -s -P tcp",
        frozenset({"illumos"}),
        lambda t, o: parse_netstat(t),
        "TCP counters (segments sent, retransmitted; timeouts) — not interfaces",
    ),
)
