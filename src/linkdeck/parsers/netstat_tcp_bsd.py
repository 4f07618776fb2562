"""The BSD family's and macOS's TCP counters: ``netstat -s -p tcp``.

One line per counter, a number then words, indented by TABs under the line it belongs to; the
words are the same across FreeBSD (and its appliances), OpenBSD, NetBSD and macOS for the
counters read here, in the singular when the number is 1 (macOS prints the singular always:
"0 packet sent"). Only the lines matched below are read; the rest (hundreds on macOS) are
ignored, so the BSD sampler keeps just these with ``grep`` on the host (GREP_PATTERN).
"""

from __future__ import annotations

import re

from ..core.tcpstats import TcpCounters
from . import numbers
from .parse_error import ParseError
from .registry import Entry

COMMAND = "netstat -s -p tcp"

# words after the number → counter; in_errs is the sum of the three "discarded …" counts
_LINES = (
    (re.compile(r"packets? sent"), "out_segs"),
    (re.compile(r"data packets? \(\d+ bytes?\) retransmitted"), "retrans_segs"),
    (re.compile(r"packets? received"), "in_segs"),
    (re.compile(r"retransmit timeouts?"), "timeouts"),
    (re.compile(r"discarded for bad checksums?"), "in_csum_errs"),
    (re.compile(r"discarded for bad header offset fields?"), "bad_offset"),
    (re.compile(r"discarded because packets? too short"), "too_short"),
    # FreeBSD "discarded due to memory problems", OpenBSD "… memory shortage", macOS
    # "received packets dropped due to low memory": the host had no buffer for them
    (
        re.compile(r"discarded due to memory (?:problems?|shortage)|received packets? dropped due to low memory"),
        "rcv_pruned",
    ),
    (re.compile(r"discarded due to full reassembly queue"), "ofo_drops"),
    (re.compile(r"listen queue overflows?"), "listen_drops"),
)
# What the sampler keeps of the output (grep -E on the host): the line ends of the above.
GREP_PATTERN = (
    r"packets? sent$|bytes?\) retransmitted$|packets? received$|retransmit timeouts?$|bad checksums?$"
    r"|header offset fields?$|packets? too short$|memory (problems?|shortage)$|to low memory$|reassembly queue$"
    r"|listen queue overflows?$"
)
_LINE = re.compile(r"\s*(\S+) (.+?)\s*")


def parse(text: str, command: str = COMMAND) -> TcpCounters:
    """The counters this output tells; ParseError when it tells neither segments sent nor
    received (not this command's output)."""
    found: dict[str, int] = {}
    for line in text.splitlines():
        m = _LINE.fullmatch(line)
        if not m or not m.group(1)[:1].isdigit():
            continue  # "tcp:", blank lines, the other protocols' headers
        words = m.group(2)
        for pattern, name in _LINES:
            if pattern.fullmatch(words) and name not in found:  # the first (outermost) wins
                found[name] = numbers.counter(m.group(1), words, command, line)
                break
    if "out_segs" not in found and "in_segs" not in found:
        raise ParseError(
            command, "no 'packets sent' or 'packets received' line", numbers.shown(text[:80]) or "(nothing)"
        )
    errs = [found.pop(k) for k in ("bad_offset", "too_short") if k in found]
    if "in_csum_errs" in found or errs:
        found["in_errs"] = found.get("in_csum_errs", 0) + sum(errs)
    return TcpCounters(**found)


def _parse_entry(text: str, os_name: str) -> TcpCounters:
    return parse(text)


COMMANDS = (
    Entry(
        r"netstat -s -p tcp",
        frozenset({"bsd"}),
        _parse_entry,
        "TCP counters (segments sent, retransmitted, received in error) — not interfaces",
    ),
)
